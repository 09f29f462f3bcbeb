//! Python parsing with tree-sitter, and the entity model that localization is scored on.
//!
//! [`parse_tree`] gives the raw tree-sitter tree. [`parse_module`] turns source into a
//! [`ParsedModule`]: every class and function ([`Entity`]) with Python-`ast` line numbers,
//! plus the line ranges that LocAgent's gold rules skip (imports, class docstrings,
//! top-level assignments).
//!
//! # Line semantics (identical to CPython's `ast`)
//! - [`Entity::start_line`] is the line of the `def`/`class` keyword (of `async` for
//!   `async def`), i.e. `ast` `lineno`: decorators are not included. The first
//!   decorator's line is [`Entity::decorated_start_line`].
//! - [`Entity::end_line`] is `ast` `end_lineno`: the last line of the last token of the
//!   body, so trailing comments and blank lines are never part of an entity.
//! - Lines are 1-based. A lone carriage return counts as a line break (as with Python's
//!   universal newlines); `\r\n` is one line break.
//!
//! # Entities
//! Every `class` and `def` anywhere in the file is an entity, including methods,
//! nested functions, classes local to functions, definitions under `if`/`try`/`with`/...
//! and every method called `__init__` (LocAgent's graph builder leaves `Cls.__init__`
//! out, §1.3 of the spec; graph code has to apply that rule itself). The qualified name
//! joins every enclosing class and function name, as LocAgent's graph ids do:
//! `Cls.meth`, `func.inner`, `Cls.Inner.m`. A definition under a compound statement at
//! module level is still top level (`qualname` = its name), but [`Entity::conditional`]
//! records that it is not a direct member of its scope's body.
//!
//! # Gold rules
//! [`ParsedModule::gold_unit_at`] maps a line the way LocAgent's
//! `get_module_from_line_number_with_file_structure` does, with `merge_init=True`
//! (which is how the published SWE-bench Lite gold was made: an edit inside
//! `Blueprint.__init__` is gold function `Blueprint`). The rule, with classes and
//! functions taken in `ast.walk` (breadth-first) order, see [`ParsedModule::walk_order`]:
//! 1. For each class, for each *direct* method (a `def` statement directly in the class
//!    body): if the method's `[start_line, end_line]` holds the line, the unit is
//!    `Cls.meth`, or `Cls` when the method is `__init__`. Nested functions inside a method
//!    are part of the method.
//! 2. Otherwise, if the class's range holds the line, the line belongs to no unit
//!    (class-level code, decorators of methods, methods of nested classes).
//! 3. Then, for each function that is not excluded (below), if its range holds the line
//!    the unit is the function's bare name (outermost function first).
//!
//! A function defined under `if`/`try`/`with`/... at module level is a function like any
//! other (`path:func`, as in LocAgent's graph); a `def` under `if` inside a class body
//! is not a direct method, so its lines map to nothing.
//!
//! Quirks kept on purpose, because they are what the gold contains:
//! - A function is excluded from step 3 when, at the moment `ast.walk` reaches it, some
//!   class already reached has a direct method with the same name.
//! - Classes local to a function are classes too: a line in `f.Local.m` maps to
//!   `Local.m` (not a graph id), and a line elsewhere in `Local` maps to nothing.
//! - Decorator lines belong to no unit (they precede `start_line`).
//!
//! # Validation
//! Compared with CPython 3.11/3.12 `ast` on 15,281 `.py` files (the five dev
//! repositories at their dev base commits and HEAD): entities, qualified names, all
//! three line numbers, `walk_order`, import and class-docstring ranges and the gold unit
//! of every line agree on every file both accept. [`ParsedModule::has_syntax_errors`]
//! disagrees only on deliberately broken test data (tokenizer errors, undeclared
//! encodings, `*x` as a whole assignment value) and syntax newer than Python 3.12.

use std::collections::{HashSet, VecDeque};

use tree_sitter::{Node, Point};

/// Parses Python source into a tree-sitter tree.
///
/// tree-sitter always produces a tree, even for invalid input (with `ERROR` nodes);
/// callers that need to know use [`tree_sitter::Node::has_error`] on the root.
pub fn parse_tree(source: &str) -> tree_sitter::Tree {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("the bundled tree-sitter-python grammar matches the tree-sitter ABI");
    parser
        .parse(source, None)
        .expect("parsing without a timeout or cancellation flag always yields a tree")
}

/// Whether an [`Entity`] is a class or a function (methods are functions, as in
/// LocAgent's graph).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityKind {
    /// A `class` statement.
    Class,
    /// A `def` or `async def` statement, at any nesting level.
    Function,
}

/// One class or function definition, with `ast`-compatible line numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// Class or function.
    pub kind: EntityKind,
    /// The bare name (`meth`).
    pub name: String,
    /// Dotted names of every enclosing class and function, then the name: `Cls.meth`,
    /// `func.inner`, `Cls.Inner.m`. This is the part after `:` in LocAgent's node ids.
    pub qualname: String,
    /// 1-based line of the `def`/`class` keyword (`async` for `async def`), after any
    /// decorators; Python's `ast` `lineno`.
    pub start_line: usize,
    /// 1-based last line of the definition; Python's `ast` `end_lineno`.
    pub end_line: usize,
    /// 1-based line of the first decorator, or `start_line` when undecorated.
    pub decorated_start_line: usize,
    /// Index of the enclosing entity in [`ParsedModule::entities`], if any.
    pub parent: Option<usize>,
    /// `async def`.
    pub is_async: bool,
    /// Number of enclosing entities (0 for a top-level class or function).
    pub depth: usize,
    /// True when the definition sits inside a compound statement (`if`, `try`, `for`,
    /// `while`, `with`, `match`) within its parent's body or the module, rather than
    /// directly in it. A conditional `def` in a class body is not one of the class's
    /// direct methods for the gold rules.
    pub conditional: bool,
}

impl Entity {
    /// LocAgent-style node id of this entity in file `path`: `path:qualname`.
    pub fn id(&self, path: &str) -> String {
        format!("{path}:{}", self.qualname)
    }

    /// Whether `line` lies in `[start_line, end_line]`.
    pub fn contains_line(&self, line: usize) -> bool {
        self.start_line <= line && line <= self.end_line
    }
}

/// An inclusive range of 1-based lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    /// First line.
    pub start: usize,
    /// Last line (inclusive).
    pub end: usize,
}

impl LineRange {
    /// Whether `line` lies in the range.
    pub fn contains(&self, line: usize) -> bool {
        self.start <= line && line <= self.end
    }
}

/// What LocAgent's gold rules attribute a line to (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GoldUnit {
    /// A line in a direct method other than `__init__`: `Cls.meth`.
    Method {
        /// The class's bare name.
        class: String,
        /// The method's bare name.
        method: String,
    },
    /// A line in a class's direct `__init__` method: counted as the class itself.
    Init {
        /// The class's bare name.
        class: String,
    },
    /// A line in a function that is not a direct method: its bare name.
    Function {
        /// The function's bare name (not its qualified name).
        name: String,
    },
}

impl GoldUnit {
    /// The function-level name: `Cls.meth`, `Cls` (for `__init__`) or `func`.
    pub fn function_name(&self) -> String {
        match self {
            GoldUnit::Method { class, method } => format!("{class}.{method}"),
            GoldUnit::Init { class } => class.clone(),
            GoldUnit::Function { name } => name.clone(),
        }
    }

    /// The module-level name: the class for methods and `__init__`, else the function.
    pub fn module_name(&self) -> &str {
        match self {
            GoldUnit::Method { class, .. } | GoldUnit::Init { class } => class,
            GoldUnit::Function { name } => name,
        }
    }
}

/// A Python file reduced to what localization needs: its entities and the line ranges
/// LocAgent's gold rules look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedModule {
    /// Every class and function, in source (pre-)order: a parent precedes its children.
    pub entities: Vec<Entity>,
    /// Indices into `entities` in the order Python's `ast.walk` (breadth first over the
    /// whole syntax tree) reaches them; the gold rules depend on this order.
    pub walk_order: Vec<usize>,
    /// tree-sitter found errors, or the file has what CPython 3 rejects although
    /// tree-sitter accepts it: Python 2 syntax (`print x`, `exec code`, `except E, e:`,
    /// `raise E, msg`, `<>`, `10L`, `0777`, `ur''`), truncated `\x`/`\u`/`\U`/`\N{`
    /// escapes, empty suites, indented module-level statements, and indentation that
    /// mixes tabs and spaces inconsistently (`TabError`).
    pub has_syntax_errors: bool,
    /// Every `import` / `from … import` statement anywhere in the file (`ast` ranges).
    pub imports: Vec<LineRange>,
    /// Module-level statement lines (`;`-joined simple statements count as one) whose
    /// first statement is an assignment or annotated assignment.
    pub top_level_assignments: Vec<LineRange>,
    /// Class docstrings, with LocAgent's approximate range: from the docstring
    /// statement's first line, as many lines as `ast.get_docstring` (cleaned) has.
    /// Empty docstrings are not listed.
    pub class_docstrings: Vec<LineRange>,
    /// Number of lines in the source (a final line without a newline counts).
    pub line_count: usize,
    /// Direct methods (entity indices, source order) per entity; empty for functions.
    direct_methods: Vec<Vec<usize>>,
    /// Classes in walk order.
    gold_classes: Vec<usize>,
    /// Functions in walk order that the gold rules consider (see the module docs).
    gold_functions: Vec<usize>,
}

/// Parses Python source into a [`ParsedModule`].
///
/// Never fails: invalid source yields whatever tree-sitter recovered, with
/// [`ParsedModule::has_syntax_errors`] set. Callers that need `ast.parse` semantics
/// (such as the gold rules, where LocAgent gives up on such files) check that flag.
pub fn parse_module(source: &str) -> ParsedModule {
    // Python counts a lone `\r` as a line break; tree-sitter does not. Replacing it by
    // `\n` keeps every byte offset and makes the row numbers agree with `ast`.
    let normalized;
    let text = if source.contains('\r') {
        normalized = normalize_lone_cr(source);
        normalized.as_str()
    } else {
        source
    };
    let tree = parse_tree(text);
    let root = tree.root_node();
    let mut b = Builder {
        src: text.as_bytes(),
        entities: Vec::new(),
        class_docstrings: Vec::new(),
    };
    let module_children = b.visit_block(root, None, 0, "", false);
    let walk_order = breadth_first(module_children);

    let mut imports = Vec::new();
    let mut invalid = false;
    collect_imports(root, text.as_bytes(), &mut imports, &mut invalid);
    let top_level_assignments = top_level_assignments(root);

    let mut direct_methods = vec![Vec::new(); b.entities.len()];
    for (i, e) in b.entities.iter().enumerate() {
        if let Some(p) = e.parent
            && e.kind == EntityKind::Function
            && !e.conditional
            && b.entities[p].kind == EntityKind::Class
        {
            direct_methods[p].push(i);
        }
    }
    let mut gold_classes = Vec::new();
    let mut gold_functions = Vec::new();
    let mut method_names: HashSet<&str> = HashSet::new();
    for &i in &walk_order {
        let e = &b.entities[i];
        match e.kind {
            EntityKind::Class => {
                gold_classes.push(i);
                for &m in &direct_methods[i] {
                    method_names.insert(b.entities[m].name.as_str());
                }
            }
            EntityKind::Function => {
                if !method_names.contains(e.name.as_str()) {
                    gold_functions.push(i);
                }
            }
        }
    }

    let line_count = text.lines().count();
    ParsedModule {
        entities: b.entities,
        walk_order,
        has_syntax_errors: root.has_error() || invalid,
        imports,
        top_level_assignments,
        class_docstrings: b.class_docstrings,
        line_count,
        direct_methods,
        gold_classes,
        gold_functions,
    }
}

impl ParsedModule {
    /// The innermost entity whose `[start_line, end_line]` holds `line`.
    pub fn innermost_at(&self, line: usize) -> Option<&Entity> {
        // Ancestors precede descendants in pre-order, so the last hit is the innermost.
        self.entities.iter().rev().find(|e| e.contains_line(line))
    }

    /// The direct methods of entity `index` (a class), in source order.
    pub fn direct_methods(&self, index: usize) -> impl Iterator<Item = &Entity> {
        self.direct_methods
            .get(index)
            .into_iter()
            .flatten()
            .map(|&m| &self.entities[m])
    }

    /// The gold unit (LocAgent's rules, see the module docs) that `line` belongs to.
    pub fn gold_unit_at(&self, line: usize) -> Option<GoldUnit> {
        for &c in &self.gold_classes {
            let class = &self.entities[c];
            for m in self.direct_methods(c) {
                if m.contains_line(line) {
                    return Some(if m.name == "__init__" {
                        GoldUnit::Init {
                            class: class.name.clone(),
                        }
                    } else {
                        GoldUnit::Method {
                            class: class.name.clone(),
                            method: m.name.clone(),
                        }
                    });
                }
            }
            if class.contains_line(line) {
                return None;
            }
        }
        self.gold_functions
            .iter()
            .map(|&f| &self.entities[f])
            .find(|f| f.contains_line(line))
            .map(|f| GoldUnit::Function {
                name: f.name.clone(),
            })
    }

    /// Whether `unit` exists in this module by LocAgent's `check_moduel_existed`: a
    /// function by bare name among the functions the gold rules consider; a method when
    /// the first class of that name (walk order) has a direct method of that name; an
    /// `__init__` unit when any class has that name.
    pub fn gold_unit_exists(&self, unit: &GoldUnit) -> bool {
        match unit {
            GoldUnit::Function { name } => self
                .gold_functions
                .iter()
                .any(|&f| self.entities[f].name == *name),
            GoldUnit::Method { class, method } => self
                .gold_classes
                .iter()
                .find(|&&c| self.entities[c].name == *class)
                .is_some_and(|&c| self.direct_methods(c).any(|m| m.name == *method)),
            GoldUnit::Init { class } => self
                .gold_classes
                .iter()
                .any(|&c| self.entities[c].name == *class),
        }
    }

    /// LocAgent gold *function* id for `line` in file `path`: `path:Cls.meth`,
    /// `path:Cls` (inside `Cls.__init__`) or `path:func`.
    pub fn function_id_at(&self, path: &str, line: usize) -> Option<String> {
        self.gold_unit_at(line)
            .map(|u| format!("{path}:{}", u.function_name()))
    }

    /// LocAgent gold *module* id for `line` in file `path`: `path:Cls` or `path:func`.
    pub fn module_id_at(&self, path: &str, line: usize) -> Option<String> {
        self.gold_unit_at(line)
            .map(|u| format!("{path}:{}", u.module_name()))
    }

    /// Whether `line` is part of an import statement.
    pub fn is_import_line(&self, line: usize) -> bool {
        self.imports.iter().any(|r| r.contains(line))
    }

    /// Whether `line` is in a class docstring range (LocAgent's approximation).
    pub fn is_class_docstring_line(&self, line: usize) -> bool {
        self.class_docstrings.iter().any(|r| r.contains(line))
    }

    /// Whether `line` is part of a module-level assignment statement line.
    pub fn is_top_level_assignment_line(&self, line: usize) -> bool {
        self.top_level_assignments.iter().any(|r| r.contains(line))
    }
}

/// Replaces every `\r` not followed by `\n` with `\n` (same byte length).
fn normalize_lone_cr(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    for (i, ch) in source.char_indices() {
        if ch == '\r' && bytes.get(i + 1) != Some(&b'\n') {
            out.push('\n');
        } else {
            out.push(ch);
        }
    }
    out
}

/// A node of Python's syntax tree reduced to what decides `ast.walk` order of
/// definitions: definitions and the statement nodes that can contain them.
enum WalkNode {
    Def(usize, Vec<WalkNode>),
    Other(Vec<WalkNode>),
}

fn breadth_first(roots: Vec<WalkNode>) -> Vec<usize> {
    let mut order = Vec::new();
    let mut queue: VecDeque<WalkNode> = roots.into();
    while let Some(node) = queue.pop_front() {
        match node {
            WalkNode::Def(i, children) => {
                order.push(i);
                queue.extend(children);
            }
            WalkNode::Other(children) => queue.extend(children),
        }
    }
    order
}

struct Builder<'a> {
    src: &'a [u8],
    entities: Vec<Entity>,
    class_docstrings: Vec<LineRange>,
}

impl Builder<'_> {
    fn text(&self, node: Node) -> &str {
        std::str::from_utf8(&self.src[node.start_byte()..node.end_byte()]).unwrap_or("")
    }

    /// Visits the statements of a block (or the module, or an `ERROR` node), returning
    /// their walk nodes in order.
    fn visit_block(
        &mut self,
        container: Node,
        parent: Option<usize>,
        depth: usize,
        prefix: &str,
        conditional: bool,
    ) -> Vec<WalkNode> {
        let mut out = Vec::new();
        let mut cursor = container.walk();
        let children: Vec<Node> = container.named_children(&mut cursor).collect();
        for stmt in children {
            if stmt.is_extra() {
                continue;
            }
            if let Some(w) = self.visit_statement(stmt, parent, depth, prefix, conditional) {
                out.push(w);
            }
        }
        out
    }

    fn visit_statement(
        &mut self,
        stmt: Node,
        parent: Option<usize>,
        depth: usize,
        prefix: &str,
        conditional: bool,
    ) -> Option<WalkNode> {
        // Statements inside a compound statement are not direct members of the scope.
        let inner = |b: &mut Self, block: Option<Node>| -> Vec<WalkNode> {
            match block {
                Some(block) => b.visit_block(block, parent, depth, prefix, true),
                None => Vec::new(),
            }
        };
        match stmt.kind() {
            "function_definition" | "class_definition" => {
                Some(self.visit_definition(stmt, None, parent, depth, prefix, conditional))
            }
            "decorated_definition" => {
                let def = stmt.child_by_field_name("definition")?;
                Some(self.visit_definition(def, Some(stmt), parent, depth, prefix, conditional))
            }
            "if_statement" => {
                // `elif` is an `If` nested in the previous `orelse`; `else` bodies are
                // the `orelse` of the innermost `If`.
                let body = inner(self, stmt.child_by_field_name("consequence"));
                let mut chain: Vec<Vec<WalkNode>> = vec![body];
                let mut cursor = stmt.walk();
                let alternatives: Vec<Node> = stmt
                    .children_by_field_name("alternative", &mut cursor)
                    .collect();
                for alt in alternatives {
                    match alt.kind() {
                        "elif_clause" => {
                            let b = inner(self, alt.child_by_field_name("consequence"));
                            chain.push(b);
                        }
                        _ => {
                            let b = inner(self, alt.child_by_field_name("body"));
                            if let Some(last) = chain.last_mut() {
                                last.extend(b);
                            }
                        }
                    }
                }
                let mut node: Option<WalkNode> = None;
                while let Some(mut children) = chain.pop() {
                    if let Some(n) = node.take() {
                        children.push(n);
                    }
                    node = Some(WalkNode::Other(children));
                }
                node
            }
            "for_statement" | "while_statement" => {
                let mut children = inner(self, stmt.child_by_field_name("body"));
                if let Some(alt) = stmt.child_by_field_name("alternative") {
                    children.extend(inner(self, alt.child_by_field_name("body")));
                }
                Some(WalkNode::Other(children))
            }
            "with_statement" => Some(WalkNode::Other(inner(
                self,
                stmt.child_by_field_name("body"),
            ))),
            "try_statement" => {
                let mut children = inner(self, stmt.child_by_field_name("body"));
                let mut cursor = stmt.walk();
                let parts: Vec<Node> = stmt.named_children(&mut cursor).collect();
                for part in parts {
                    match part.kind() {
                        "except_clause" | "except_group_clause" => {
                            // An `ExceptHandler` node sits between `Try` and its body.
                            let block = last_block(part);
                            children.push(WalkNode::Other(inner(self, block)));
                        }
                        "else_clause" => {
                            children.extend(inner(self, part.child_by_field_name("body")))
                        }
                        "finally_clause" => children.extend(inner(self, last_block(part))),
                        _ => {}
                    }
                }
                Some(WalkNode::Other(children))
            }
            "match_statement" => {
                let mut children = Vec::new();
                if let Some(body) = stmt.child_by_field_name("body") {
                    let mut cursor = body.walk();
                    let cases: Vec<Node> = body.named_children(&mut cursor).collect();
                    for case in cases {
                        if case.kind() == "case_clause" {
                            // A `match_case` node sits between `Match` and its body.
                            let b = inner(self, case.child_by_field_name("consequence"));
                            children.push(WalkNode::Other(b));
                        }
                    }
                }
                Some(WalkNode::Other(children))
            }
            "ERROR" => {
                // Recovery: definitions tree-sitter could still make out.
                let children = inner(self, Some(stmt));
                Some(WalkNode::Other(children))
            }
            _ => None,
        }
    }

    fn visit_definition(
        &mut self,
        def: Node,
        decorated: Option<Node>,
        parent: Option<usize>,
        depth: usize,
        prefix: &str,
        conditional: bool,
    ) -> WalkNode {
        let kind = if def.kind() == "class_definition" {
            EntityKind::Class
        } else {
            EntityKind::Function
        };
        let name = def
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let qualname = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let start_line = def.start_position().row + 1;
        let end_line = ast_end(def).row + 1;
        let decorated_start_line = decorated.map_or(start_line, |d| d.start_position().row + 1);
        let is_async = def.child(0).is_some_and(|c| c.kind() == "async");
        let index = self.entities.len();
        self.entities.push(Entity {
            kind,
            name,
            qualname: qualname.clone(),
            start_line,
            end_line,
            decorated_start_line,
            parent,
            is_async,
            depth,
            conditional,
        });
        let body = def.child_by_field_name("body");
        if kind == EntityKind::Class
            && let Some(range) = body.and_then(|b| self.class_docstring(b))
        {
            self.class_docstrings.push(range);
        }
        let children = match body {
            Some(body) => self.visit_block(body, Some(index), depth + 1, &qualname, false),
            None => Vec::new(),
        };
        WalkNode::Def(index, children)
    }

    /// LocAgent's class-docstring range for a class body, if it has a docstring.
    fn class_docstring(&self, body: Node) -> Option<LineRange> {
        let mut cursor = body.walk();
        let first = body.named_children(&mut cursor).find(|n| !n.is_extra())?;
        if first.kind() != "expression_statement" || first.child_count() != 1 {
            return None;
        }
        let value = docstring_value(first.child(0)?, self.src)?;
        let cleaned = cleandoc(&value);
        if cleaned.is_empty() {
            return None;
        }
        let start = first.start_position().row + 1;
        let lines = splitlines_count(&cleaned);
        Some(LineRange {
            start,
            end: start + lines.saturating_sub(1),
        })
    }
}

/// The block child of an `except`/`finally` clause (it has no field name).
fn last_block(clause: Node) -> Option<Node> {
    let mut cursor = clause.walk();
    let blocks: Vec<Node> = clause
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "block")
        .collect();
    blocks.last().copied()
}

/// Where Python's `ast` ends a node: the end of its last token that is not a comment
/// (tree-sitter may extend a block over trailing comments).
fn ast_end(node: Node) -> Point {
    let mut current = node;
    loop {
        let mut next = None;
        for i in (0..current.child_count()).rev() {
            if let Some(child) = current.child(i) {
                if child.is_extra() || child.start_byte() == child.end_byte() {
                    continue;
                }
                next = Some(child);
                break;
            }
        }
        match next {
            Some(child) => current = child,
            None => return current.end_position(),
        }
    }
}

/// Every import statement anywhere; also notes what tree-sitter accepts but CPython 3
/// rejects (see [`rejected_by_cpython`] and [`indentation_is_inconsistent`]).
fn collect_imports(root: Node, src: &[u8], imports: &mut Vec<LineRange>, invalid: &mut bool) {
    let mut logical_rows = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if starts_logical_line(node, src) {
            logical_rows.push(node.start_position().row);
        }
        match node.kind() {
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                imports.push(LineRange {
                    start: node.start_position().row + 1,
                    end: ast_end(node).row + 1,
                });
            }
            _ => {
                if rejected_by_cpython(node, src) {
                    *invalid = true;
                }
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    imports.sort_by_key(|r| (r.start, r.end));
    logical_rows.sort_unstable();
    logical_rows.dedup();
    if indentation_is_inconsistent(&logical_rows, src) {
        *invalid = true;
    }
}

/// Node kinds that begin a logical line when they are the first token on their row.
const LINE_STARTERS: &[&str] = &[
    "future_import_statement",
    "import_statement",
    "import_from_statement",
    "print_statement",
    "assert_statement",
    "expression_statement",
    "return_statement",
    "delete_statement",
    "raise_statement",
    "pass_statement",
    "break_statement",
    "continue_statement",
    "global_statement",
    "nonlocal_statement",
    "exec_statement",
    "type_alias_statement",
    "if_statement",
    "elif_clause",
    "else_clause",
    "for_statement",
    "while_statement",
    "try_statement",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "with_statement",
    "function_definition",
    "class_definition",
    "decorated_definition",
    "decorator",
    "match_statement",
    "case_clause",
];

fn starts_logical_line(node: Node, src: &[u8]) -> bool {
    if !LINE_STARTERS.contains(&node.kind()) {
        return false;
    }
    let start = node.start_byte();
    let line_start = src[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    src[line_start..start]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
}

/// What tree-sitter-python accepts (it also parses Python 2 and recovers silently in a
/// few places) but CPython 3's parser rejects.
fn rejected_by_cpython(node: Node, src: &[u8]) -> bool {
    let text = |n: Node| std::str::from_utf8(&src[n.start_byte()..n.end_byte()]).unwrap_or("");
    let has_child = |kind: &str| {
        let mut cursor = node.walk();
        node.children(&mut cursor).any(|c| c.kind() == kind)
    };
    match node.kind() {
        // `print >>f, x` is also a valid Python 3 expression, and so is anything whose
        // first argument starts with `(` (a call of `print`); `print x` is not.
        "print_statement" => {
            node.named_child(0).is_none_or(|c| c.kind() != "chevron")
                && !node.child(1).is_some_and(|c| text(c).starts_with('('))
        }
        "exec_statement" => true,
        // `except E, e:` and `raise E, msg`.
        "except_clause" => has_child(","),
        "raise_statement" => has_child("expression_list"),
        // `x <> y`.
        "comparison_operator" => has_child("<>"),
        // `10L`, `0777`.
        "integer" => {
            let t = text(node);
            t.ends_with(['l', 'L'])
                || (t.len() > 1
                    && t.starts_with('0')
                    && t.bytes().all(|b| b.is_ascii_digit() || b == b'_')
                    && t.bytes().any(|b| (b'1'..=b'9').contains(&b)))
        }
        "string" => {
            // `ur""` and `bu""`: `u` combines with no other prefix letter.
            let start = node.child(0).map(text).unwrap_or_default();
            let letters: String = start
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            (letters.len() > 1 && letters.to_ascii_lowercase().contains('u'))
                || has_invalid_escape(node, src)
        }
        // `f(a=1, b)`, `f(**kw, b)`, `f(**kw, *args)`.
        "argument_list" => {
            let (mut keyword, mut double_star) = (false, false);
            let mut cursor = node.walk();
            for arg in node.named_children(&mut cursor) {
                if arg.is_extra() {
                    continue;
                }
                match arg.kind() {
                    "keyword_argument" => keyword = true,
                    "dictionary_splat" => double_star = true,
                    "list_splat" if double_star => return true,
                    "list_splat" => {}
                    // A bare generator argument can only be the sole argument.
                    _ if keyword || double_star => return true,
                    _ => {}
                }
            }
            false
        }
        // A suite without any statement (`def f():` followed by a dedented line).
        "block" => {
            let mut cursor = node.walk();
            !node.named_children(&mut cursor).any(|c| !c.is_extra())
        }
        // A statement indented at module level ("unexpected indent").
        "module" => {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            children.iter().any(|c| {
                !c.is_extra() && c.start_position().column > 0 && starts_logical_line(*c, src)
            })
        }
        _ => false,
    }
}

/// CPython's tokenizer check on indentation: measured with tabs to multiples of 8 and
/// with tabs as 1 column, the two must order every logical line's indentation the same
/// way, else `TabError` (or `IndentationError` for a dedent to no enclosing level).
fn indentation_is_inconsistent(rows: &[usize], src: &[u8]) -> bool {
    let mut line_starts = vec![0usize];
    line_starts.extend(
        src.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1),
    );
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    for &row in rows {
        let Some(&start) = line_starts.get(row) else {
            continue;
        };
        let (mut col, mut alt) = (0usize, 0usize);
        for &b in &src[start..] {
            match b {
                b' ' => {
                    col += 1;
                    alt += 1;
                }
                b'\t' => {
                    col = (col / 8 + 1) * 8;
                    alt += 1;
                }
                b'\x0c' => {
                    col = 0;
                    alt = 0;
                }
                _ => break,
            }
        }
        let &(top_col, top_alt) = stack.last().unwrap_or(&(0, 0));
        if col == top_col {
            if alt != top_alt {
                return true;
            }
        } else if col > top_col {
            if alt <= top_alt {
                return true;
            }
            stack.push((col, alt));
        } else {
            while stack.len() > 1 && stack.last().is_some_and(|&(c, _)| col < c) {
                stack.pop();
            }
            if stack.last() != Some(&(col, alt)) {
                return true;
            }
        }
    }
    false
}

/// Whether a string literal holds an escape that CPython's tokenizer rejects
/// (`"\user"`: truncated `\uXXXX`). Unknown `\N{…}` names are not detected.
fn has_invalid_escape(string: Node, src: &[u8]) -> bool {
    let text = |n: Node| std::str::from_utf8(&src[n.start_byte()..n.end_byte()]).unwrap_or("");
    let Some(start) = string.child(0) else {
        return false;
    };
    let prefix = text(start).to_ascii_lowercase();
    if prefix.contains('r') {
        return false;
    }
    let bytes = prefix.contains('b');
    let mut cursor = string.walk();
    for part in string.named_children(&mut cursor) {
        if part.kind() != "string_content" {
            continue;
        }
        let chars: Vec<char> = text(part).chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '\\' {
                i += 1;
                continue;
            }
            let hex = |n: usize| {
                chars.len() > i + 1 + n
                    && chars[i + 2..i + 2 + n].iter().all(char::is_ascii_hexdigit)
            };
            let ok = match chars.get(i + 1) {
                Some('x') => hex(2),
                Some('u') if !bytes => hex(4),
                Some('U') if !bytes => {
                    hex(8)
                        && u32::from_str_radix(&chars[i + 2..i + 10].iter().collect::<String>(), 16)
                            .is_ok_and(|v| v <= 0x10FFFF)
                }
                Some('N') if !bytes => {
                    chars.get(i + 2) == Some(&'{') && chars[i + 2..].contains(&'}')
                }
                _ => true,
            };
            if !ok {
                return true;
            }
            i += 2;
        }
    }
    false
}

/// Module-level statement lines whose first statement is an (annotated) assignment,
/// the way libcst's `SimpleStatementLine` groups `;`-separated statements.
fn top_level_assignments(root: Node) -> Vec<LineRange> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let children: Vec<Node> = root.children(&mut cursor).collect();
    let mut i = 0;
    while i < children.len() {
        let first = children[i];
        if first.is_extra() || !first.is_named() {
            i += 1;
            continue;
        }
        // Extend over `; stmt` pairs that continue the same logical line.
        let mut last = first;
        let mut j = i + 1;
        while j + 1 < children.len() && children[j].kind() == ";" && children[j + 1].is_named() {
            let next = children[j + 1];
            if next.is_extra() || next.start_position().row != children[j].end_position().row {
                break;
            }
            last = next;
            j += 2;
        }
        let is_assignment = first.kind() == "expression_statement"
            && first.child(0).is_some_and(|c| c.kind() == "assignment");
        if is_assignment {
            out.push(LineRange {
                start: first.start_position().row + 1,
                end: ast_end(last).row + 1,
            });
        }
        i = j.max(i + 1);
    }
    out
}

/// The value of a docstring expression as `ast.get_docstring` sees it: a `str`
/// constant, possibly parenthesised or implicitly concatenated. f-strings (a
/// `JoinedStr`) and bytes are not docstrings.
fn docstring_value(expr: Node, src: &[u8]) -> Option<String> {
    match expr.kind() {
        "parenthesized_expression" => {
            if expr.named_child_count() != 1 {
                return None;
            }
            docstring_value(expr.named_child(0)?, src)
        }
        "string" => string_literal_value(expr, src),
        "concatenated_string" => {
            let mut out = String::new();
            let mut cursor = expr.walk();
            for part in expr.named_children(&mut cursor) {
                if part.is_extra() {
                    continue;
                }
                out.push_str(&string_literal_value(part, src)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// Evaluates one (non-f, non-bytes) string literal token.
fn string_literal_value(node: Node, src: &[u8]) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let text = std::str::from_utf8(&src[node.start_byte()..node.end_byte()]).ok()?;
    let quote_at = text.find(['"', '\''])?;
    let prefix = text[..quote_at].to_ascii_lowercase();
    if prefix.contains('f') || prefix.contains('b') || prefix.contains('t') {
        return None;
    }
    let rest = &text[quote_at..];
    let quote = if rest.starts_with("\"\"\"") {
        "\"\"\""
    } else if rest.starts_with("'''") {
        "'''"
    } else {
        &rest[..1]
    };
    if rest.len() < 2 * quote.len() || !rest.ends_with(quote) {
        return None;
    }
    let body = &rest[quote.len()..rest.len() - quote.len()];
    // The tokenizer reads source with universal newlines.
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    if prefix.contains('r') {
        Some(body)
    } else {
        Some(unescape(&body))
    }
}

/// Python's escape processing for a non-raw `str` literal. `\N{…}` resolves only the
/// names of line-break and space characters (the only ones that can change a
/// docstring's line count); other names become a placeholder letter.
fn unescape(body: &str) -> String {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' || i + 1 >= chars.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = chars[i + 1];
        i += 2;
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3 && i < chars.len() && chars[i].is_digit(8) {
                    value = value * 8 + chars[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                out.push(char::from_u32(value).unwrap_or('?'));
            }
            'x' | 'u' | 'U' => {
                let width = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars[i..].iter().take(width).collect();
                match u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(ch) if digits.len() == width => {
                        out.push(ch);
                        i += width;
                    }
                    // Invalid escapes are syntax errors in Python; keep the text.
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            'N' if chars.get(i) == Some(&'{') => {
                let close = chars[i..].iter().position(|&c| c == '}');
                match close {
                    Some(len) => {
                        let name: String = chars[i + 1..i + len].iter().collect();
                        out.push(named_char(&name));
                        i += len + 1;
                    }
                    None => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

fn named_char(name: &str) -> char {
    match name.to_ascii_uppercase().as_str() {
        "LINE FEED" | "LF" | "NEW LINE" | "END OF LINE" | "EOL" | "NL" => '\n',
        "CARRIAGE RETURN" | "CR" => '\r',
        "CHARACTER TABULATION" | "TAB" | "HORIZONTAL TABULATION" | "HT" => '\t',
        "LINE TABULATION" | "VT" | "VERTICAL TABULATION" => '\x0b',
        "FORM FEED" | "FF" => '\x0c',
        "INFORMATION SEPARATOR FOUR" | "FILE SEPARATOR" | "FS" => '\x1c',
        "INFORMATION SEPARATOR THREE" | "GROUP SEPARATOR" | "GS" => '\x1d',
        "INFORMATION SEPARATOR TWO" | "RECORD SEPARATOR" | "RS" => '\x1e',
        "INFORMATION SEPARATOR ONE" | "UNIT SEPARATOR" | "US" => '\x1f',
        "NEXT LINE" | "NEXT LINE (NEL)" | "NEL" => '\u{85}',
        "LINE SEPARATOR" => '\u{2028}',
        "PARAGRAPH SEPARATOR" => '\u{2029}',
        "SPACE" | "SP" => ' ',
        "NO-BREAK SPACE" | "NBSP" => '\u{a0}',
        _ => 'x',
    }
}

/// Python's `str.isspace`.
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.expandtabs()` with the default tab size 8.
fn expandtabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut column = 0usize;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            _ => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// CPython 3.12's `inspect.cleandoc`, as used by `ast.get_docstring(clean=True)`.
fn cleandoc(doc: &str) -> String {
    let expanded = expandtabs(doc);
    let mut lines: Vec<Vec<char>> = expanded.split('\n').map(|l| l.chars().collect()).collect();
    let mut margin = usize::MAX;
    for line in lines.iter().skip(1) {
        let content = line.iter().skip_while(|&&c| py_isspace(c)).count();
        if content > 0 {
            margin = margin.min(line.len() - content);
        }
    }
    if let Some(first) = lines.first_mut() {
        let skip = first.iter().take_while(|&&c| py_isspace(c)).count();
        first.drain(..skip);
    }
    if margin < usize::MAX {
        for line in lines.iter_mut().skip(1) {
            let cut = margin.min(line.len());
            line.drain(..cut);
        }
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let leading = lines.iter().take_while(|l| l.is_empty()).count();
    lines.drain(..leading);
    lines
        .iter()
        .map(|l| l.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `len(s.splitlines())` with Python's line boundaries.
fn splitlines_count(s: &str) -> usize {
    let chars: Vec<char> = s.chars().collect();
    let mut count = 0;
    let mut i = 0;
    let mut line_has_content = false;
    while i < chars.len() {
        let c = chars[i];
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if is_break {
            count += 1;
            line_has_content = false;
            if c == '\r' && chars.get(i + 1) == Some(&'\n') {
                i += 1;
            }
        } else {
            line_has_content = true;
        }
        i += 1;
    }
    if line_has_content {
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(m: &'a ParsedModule, qualname: &str) -> &'a Entity {
        m.entities
            .iter()
            .find(|e| e.qualname == qualname)
            .unwrap_or_else(|| panic!("no entity {qualname}"))
    }

    fn lines(e: &Entity) -> (usize, usize, usize) {
        (e.decorated_start_line, e.start_line, e.end_line)
    }

    #[test]
    fn python_entities_have_ast_line_numbers() {
        let src = "\
import os

@deco
@other(
    1)
def top(a,
        b):
    x = 1

    # trailing comment
    return x
    # another


class Cls(Base):
    \"\"\"Doc.\"\"\"

    @property
    def val(self):
        return 1

    async def run(self):
        def inner():
            pass
        return inner

    class Inner:
        def m(self): pass
";
        let m = parse_module(src);
        assert!(!m.has_syntax_errors);
        let q: Vec<&str> = m.entities.iter().map(|e| e.qualname.as_str()).collect();
        assert_eq!(
            q,
            [
                "top",
                "Cls",
                "Cls.val",
                "Cls.run",
                "Cls.run.inner",
                "Cls.Inner",
                "Cls.Inner.m"
            ]
        );
        assert_eq!(lines(find(&m, "top")), (3, 6, 11));
        assert_eq!(lines(find(&m, "Cls")), (15, 15, 28));
        assert_eq!(lines(find(&m, "Cls.val")), (18, 19, 20));
        let run = find(&m, "Cls.run");
        assert_eq!(lines(run), (22, 22, 25));
        assert!(run.is_async);
        assert_eq!(run.depth, 1);
        assert_eq!(run.parent, Some(1));
        assert_eq!(find(&m, "Cls.run.inner").depth, 2);
        assert_eq!(lines(find(&m, "Cls.Inner.m")), (28, 28, 28));
        assert_eq!(m.imports, [LineRange { start: 1, end: 1 }]);
        assert_eq!(m.class_docstrings, [LineRange { start: 16, end: 16 }]);
        assert_eq!(
            m.innermost_at(24).map(|e| e.qualname.as_str()),
            Some("Cls.run.inner")
        );
        assert_eq!(m.innermost_at(21).map(|e| e.qualname.as_str()), Some("Cls"));
        assert_eq!(m.innermost_at(4), None);
        assert_eq!(m.line_count, 28);
    }

    #[test]
    fn python_gold_units_follow_locagent_rules() {
        let src = "\
class A:
    x = 1

    def __init__(self):
        def helper():
            pass

    def meth(self):
        return [
            1,
        ]

    class Nested:
        def deep(self):
            pass

    if True:
        def cond(self):
            pass


def meth():
    pass


def outer():
    class Local:
        def lm(self):
            pass
        y = 2
    return 1
";
        let m = parse_module(src);
        let unit = |line| m.gold_unit_at(line).map(|u| u.function_name());
        assert_eq!(unit(2), None, "class-level code");
        assert_eq!(unit(5), Some("A".into()), "__init__ maps to the class");
        assert_eq!(unit(10), Some("A.meth".into()));
        assert_eq!(unit(14), None, "methods of nested classes give nothing");
        assert_eq!(unit(18), None, "conditional methods are not direct methods");
        // `meth` is excluded: class `A` (reached first by ast.walk) has a method `meth`.
        assert_eq!(unit(22), None);
        assert_eq!(unit(28), Some("Local.lm".into()));
        assert_eq!(unit(29), Some("Local.lm".into()));
        assert_eq!(unit(30), None, "class-level code of a local class");
        assert_eq!(unit(31), Some("outer".into()));
        assert_eq!(m.module_id_at("p.py", 10).as_deref(), Some("p.py:A"));
        assert_eq!(m.function_id_at("p.py", 5).as_deref(), Some("p.py:A"));
        assert_eq!(
            m.function_id_at("p.py", 28).as_deref(),
            Some("p.py:Local.lm")
        );
        assert!(m.gold_unit_exists(&GoldUnit::Init { class: "A".into() }));
        assert!(m.gold_unit_exists(&GoldUnit::Method {
            class: "A".into(),
            method: "meth".into()
        }));
        assert!(!m.gold_unit_exists(&GoldUnit::Function {
            name: "meth".into()
        }));
        assert!(m.gold_unit_exists(&GoldUnit::Function {
            name: "outer".into()
        }));
        let cond = find(&m, "A.cond");
        assert!(cond.conditional);
        assert_eq!(cond.parent, Some(0));
    }

    #[test]
    fn python_walk_order_is_breadth_first_over_the_ast() {
        let src = "\
if X:
    def f1(): pass
elif Y:
    def f2(): pass
else:
    def f3(): pass

class C:
    def f1(self): pass

def g():
    def h(): pass

try:
    def t(): pass
except E:
    def handler(): pass
";
        let m = parse_module(src);
        let order: Vec<&str> = m
            .walk_order
            .iter()
            .map(|&i| m.entities[i].qualname.as_str())
            .collect();
        // Depth 1: C, g. Depth 2: f1 (if body), C.f1, g.h, t. Depth 3: f2 and f3 (elif
        // is an If nested in the outer orelse, else is its orelse), handler (inside an
        // ExceptHandler).
        assert_eq!(
            order,
            ["C", "g", "f1", "C.f1", "g.h", "t", "f2", "f3", "handler"]
        );
        // Module-level `f1` comes after class `C` defined a method `f1`: excluded.
        assert_eq!(m.gold_unit_at(2), None);
        assert_eq!(
            m.gold_unit_at(4).map(|u| u.function_name()),
            Some("f2".into())
        );
    }

    #[test]
    fn python_ranges_for_imports_assignments_and_docstrings() {
        let src = "\
from a import (
    b,
    c,  # comment
)
X = 1; y = 2
Z: int = (
    3
)
W += 1
foo(); V = 1

class K:
    '''
    First line.

        indented
    '''
    def m(self):
        import json
        return json


class E:
    (\"one\\n\"
     \"two\\nthree\")
    pass


class F:
    f\"not a docstring\"


class G:
    '''   '''
";
        let m = parse_module(src);
        assert!(!m.has_syntax_errors);
        assert_eq!(
            m.imports,
            [
                LineRange { start: 1, end: 4 },
                LineRange { start: 19, end: 19 }
            ]
        );
        assert_eq!(
            m.top_level_assignments,
            [
                LineRange { start: 5, end: 5 },
                LineRange { start: 6, end: 8 }
            ]
        );
        // cleandoc drops the blank first and last lines: 3 lines from line 13.
        assert_eq!(
            m.class_docstrings,
            [
                LineRange { start: 13, end: 15 },
                LineRange { start: 24, end: 26 }
            ]
        );
        assert!(m.is_import_line(3));
        assert!(m.is_class_docstring_line(15));
        assert!(!m.is_class_docstring_line(16));
        assert!(m.is_top_level_assignment_line(7));
    }

    #[test]
    fn python_syntax_errors_and_python2_are_flagged() {
        assert!(parse_module("def f(:\n    pass\n").has_syntax_errors);
        assert!(parse_module("print 'hello'\n").has_syntax_errors);
        assert!(!parse_module("print('hello')\n").has_syntax_errors);
        assert!(parse_module("x = '\\user'\n").has_syntax_errors);
        for bad in [
            "try:\n    pass\nexcept E, e:\n    pass\n",
            "raise E, 'message'\n",
            "x = 1 <> 2\n",
            "x = 10L\n",
            "x = 0777\n",
            "x = ur'a'\n",
            "exec 'code'\n",
            "def f():\nx = 1\n",
            "    x = 1\n",
            "if x:\n\ty = 1\n        z = 2\n",
            "f(a=1, b)\n",
            "f(**kw, *args)\n",
        ] {
            assert!(parse_module(bad).has_syntax_errors, "{bad:?}");
        }
        for good in [
            "print >> sys.stderr, 'x'\n",
            "print (a), b\n",
            "x = 0; y = 00; z = 0_0; w = 0x1F\n",
            "x = u'a' + rb'b' + Rb'c'\n",
            "if x:\n\ty = 1\n\tz = 2\nelse:\n        w = 3\n",
            "def f():\n    '''doc\n  text'''\n    return 1\n",
            "x = 1; y = 2\n",
            "f(a, *b, c=1, *d, **e, f=2)\n",
            "f(a=1, # comment\n  b=2, \\\n  c=3)\n",
            "class A(B, metaclass=M):\n    pass\n",
        ] {
            assert!(!parse_module(good).has_syntax_errors, "{good:?}");
        }
        assert!(
            !parse_module("x = r'\\user' + b'\\user' + '\\\\user' + '\\u00e9'\n").has_syntax_errors
        );
        let m = parse_module("");
        assert!(m.entities.is_empty());
        assert_eq!(m.line_count, 0);
    }

    #[test]
    fn python_crlf_and_lone_cr_count_lines_like_python() {
        let m = parse_module("x = 1\r\ndef f():\r\n    pass\r\n");
        assert_eq!(lines(find(&m, "f")), (2, 2, 3));
        let m = parse_module("x = 1\rdef f():\r    pass\r");
        assert_eq!(lines(find(&m, "f")), (2, 2, 3));
    }

    #[test]
    fn python_match_and_with_bodies_hold_definitions() {
        let src = "\
match x:
    case 1:
        def one(): pass
with open(p) as fh:
    async def two():
        await y
";
        let m = parse_module(src);
        assert!(!m.has_syntax_errors);
        assert_eq!(lines(find(&m, "one")), (3, 3, 3));
        let two = find(&m, "two");
        assert!(two.is_async && two.conditional);
        assert_eq!(lines(two), (5, 5, 6));
    }

    #[test]
    fn python_cleandoc_matches_cpython() {
        assert_eq!(cleandoc("\n    a\n      b\n    "), "a\n  b");
        assert_eq!(cleandoc("  x  "), "x  ");
        assert_eq!(cleandoc("a\n\tb"), "a\nb");
        assert_eq!(splitlines_count("a\nb\n"), 2);
        assert_eq!(splitlines_count("a\r\nb\x0cc"), 3);
        assert_eq!(splitlines_count(""), 0);
        assert_eq!(
            unescape("a\\nb\\\nc\\x41\\101\\N{LINE SEPARATOR}\\q"),
            "a\nbcAA\u{2028}\\q"
        );
    }
}
