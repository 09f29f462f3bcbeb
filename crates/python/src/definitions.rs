//! The one walk over a file's definitions: every `class` and `def`, with kind,
//! qualified name, `ast` line numbers, byte span, decorators, docstring and enclosing
//! scope, plus the order in which Python's `ast.walk` reaches them.
//!
//! Consumer rules (LocAgent's graph builder skipping `Cls.__init__`, retrieval's chunk
//! boundaries, the harness's gold rules) are built on top of this, not in it.

use std::collections::VecDeque;
use std::ops::Range;

use tree_sitter::Node;

use crate::docstring::{Docstring, docstring};
use crate::tree::ast_end;

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
    /// Bytes from the `def`/`class` keyword (`async`) to `ast`'s end: what
    /// `ast.get_source_segment` returns.
    pub span: Range<usize>,
    /// Byte range of the body block, to `ast`'s end (empty when tree-sitter found none).
    pub body: Range<usize>,
    /// The docstring, if the body starts with one.
    pub docstring: Option<Docstring>,
    /// Index of the enclosing entity in [`Definitions::entities`], if any.
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

/// Every definition of a file, and the order `ast.walk` reaches them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Definitions {
    /// Every class and function, in source (pre-)order: a parent precedes its children.
    pub entities: Vec<Entity>,
    /// Indices into `entities` in the order Python's `ast.walk` (breadth first over the
    /// whole syntax tree) reaches them.
    pub walk_order: Vec<usize>,
}

/// Walks the definitions of a parsed module (`root`, its source `src`). Definitions
/// tree-sitter could still make out inside `ERROR` nodes are included.
pub fn definitions(root: Node<'_>, src: &[u8]) -> Definitions {
    let mut b = Builder {
        src,
        entities: Vec::new(),
    };
    let module_children = b.visit_block(root, None, 0, "", false);
    Definitions {
        walk_order: breadth_first(module_children),
        entities: b.entities,
    }
}

struct Builder<'a> {
    src: &'a [u8],
    entities: Vec<Entity>,
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
        let end = ast_end(def);
        let end_line = end.point.row + 1;
        let body = def.child_by_field_name("body");
        let body_span = body.map_or(end.byte..end.byte, |b| b.start_byte()..ast_end(b).byte);
        let doc = body.and_then(|b| docstring(b, self.src));
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
            span: def.start_byte()..end.byte,
            body: body_span,
            docstring: doc,
            parent,
            is_async,
            depth,
            conditional,
        });
        let children = match body {
            Some(body) => self.visit_block(body, Some(index), depth + 1, &qualname, false),
            None => Vec::new(),
        };
        WalkNode::Def(index, children)
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
