//! Per-file extraction: everything the graph needs from one file's syntax, computed
//! independently of other files (so files are processed in parallel).
//!
//! Reproduces, on a tree-sitter tree, what the original computes with `ast`:
//! - `CodeAnalyzer` (SPEC.md §1.3): classes and functions with dotted qualified
//!   names, `__init__` methods (and everything inside them) skipped;
//! - `find_imports` on the whole file (SPEC.md §1.4): every import, in `ast.walk`
//!   (breadth-first) order;
//! - for the last definition of each qualified name (the one whose code the graph
//!   keeps): `analyze_invokes` / `analyze_init` (SPEC.md §1.5): called names,
//!   base-class names, and the imports that are direct children of the body.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use tree_sitter::Node;

use navbench_python::reject::Checker;
use navbench_python::tree::{
    Kind, Visitor, ast_end, call_name, call_plain_name, is_async_def, kind, name_or_attr,
    named_children, preorder, text, unparenthesize, walk,
};

use super::imports::{FromNames, ImportStmt};
use super::tables;
use crate::graph::NodeKind;

/// One class or function definition, in `CodeAnalyzer` visit order.
#[derive(Debug, Clone)]
pub(crate) struct EntityDef {
    /// Dotted qualified name (`Cls.meth.inner`).
    pub qualname: String,
    /// Class or function.
    pub kind: NodeKind,
    /// 1-based `lineno` (the `def`/`class` line) and `end_lineno`.
    pub lines: (u32, u32),
    /// Byte range of `ast.get_source_segment`.
    pub range: Range<usize>,
    /// Present on the last definition of each qualified name only.
    pub analysis: Option<EntityAnalysis>,
}

/// What the invoke/inherit phase reads from an entity's (last) definition.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntityAnalysis {
    /// Imports that are direct children of the body (for a class: of the class
    /// body, then of its first `__init__`'s body), in source order.
    pub imports: Vec<ImportStmt>,
    /// Distinct called names.
    pub invokes: BTreeSet<String>,
    /// Distinct base-class names (classes only).
    pub inherits: BTreeSet<String>,
}

/// The result of extracting one file that `ast.parse` accepts.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParsedFile {
    /// Every class/function definition, in visit (source pre-)order.
    pub entities: Vec<EntityDef>,
    /// Every import in the file, in `ast.walk` order.
    pub imports: Vec<ImportStmt>,
}

/// Extraction outcome for one file's text.
#[derive(Debug, Clone)]
pub(crate) enum Extracted {
    /// `ast.parse` accepts the file.
    Parsed(ParsedFile),
    /// `ast.parse` would raise; the file becomes an orphan node. The string says why.
    Rejected(String),
}

/// Extracts one file. `file_id` is its repo-relative path (used to resolve
/// relative imports); `src` its text as Python's text mode reads it.
pub(crate) fn extract(file_id: &str, src: &str) -> Extracted {
    extract_with(file_id, src, |_| {})
}

/// [`extract`], handing the syntax tree to `on_tree` when it is the tree of `src`
/// itself (not of a copy with numeric tables blanked), so that another consumer can
/// use this parse instead of parsing the file again.
pub(crate) fn extract_with(
    file_id: &str,
    src: &str,
    on_tree: impl FnOnce(&tree_sitter::Tree),
) -> Extracted {
    // Same byte offsets and lines as `src`; only numeric table contents differ.
    let blanked = tables::blank_numeric_tables(src);
    let tree = navbench_python::parse_tree(blanked.as_deref().unwrap_or(src));
    if blanked.is_none() {
        on_tree(&tree);
    }
    let src = blanked.as_deref().unwrap_or(src);
    let root = tree.root_node();
    // One walk checks what CPython rejects and extracts (a separate rejection pass
    // would walk the tree twice).
    let mut checked = Checked {
        check: Checker::new(root, src),
        pass: Pass::new(src),
    };
    if !checked.check.rejected() {
        walk(root, &mut checked);
    }
    if let Some(reason) = checked.check.finish(root) {
        return Extracted::Rejected(reason);
    }
    checked.pass.finish(file_id)
}

/// The walk of [`extract`]: the rejection check and the extraction [`Pass`] fed the
/// same nodes. It descends wherever the check needs to (everywhere but string
/// contents), so the pass also sees the insides of imports, where it finds nothing.
/// Once the check rejects the file, the pass stops: its result is not used.
struct Checked<'t, 's> {
    check: Checker<'s>,
    pass: Pass<'t, 's>,
}

impl<'t> Visitor<'t> for Checked<'t, '_> {
    fn enter(&mut self, node: Node<'t>) -> bool {
        let k = kind(node);
        let descend = self.check.visit(node, k);
        if self.check.rejected() {
            return false;
        }
        self.pass.enter(node, k);
        descend
    }

    fn exit(&mut self, node: Node<'t>) {
        if !self.check.rejected() {
            self.pass.exit(node);
        }
    }
}

/// Per-node state of the walk, parallel to the cursor's path.
struct Frame {
    kind: Kind,
    /// The `ast` depth of this node if it is a statement (for a block: of its
    /// statements).
    depth: u32,
    /// For an `if` statement: `elif` clauses seen so far.
    elifs: u32,
    /// False inside a skipped `__init__`: definitions there are not entities.
    record: bool,
    pushed_name: bool,
    pushed_scope: bool,
    pushed_init: bool,
}

/// A definition scope: calls are attributed to the innermost one.
struct Scope {
    kind: Kind,
    /// The entity, if this definition is one.
    entity: Option<usize>,
    /// For a class entity: the node id of its first direct `def __init__` (or of
    /// the `decorated_definition` wrapping it).
    init_wrapper: Option<usize>,
}

/// One definition occurrence and what the walk attributed to it.
struct EntityRec<'t, 's> {
    def: EntityDef,
    node: Node<'t>,
    invokes: BTreeSet<&'s str>,
    inherits: BTreeSet<&'s str>,
    /// For a class: its first direct `def __init__`.
    init: Option<Node<'t>>,
}

/// The single walk over a file's tree (which CPython accepts): definitions (with the
/// `CodeAnalyzer` name stack), imports (with their `ast` depth), and calls
/// attributed as `analyze_invokes`/`analyze_init` would.
struct Pass<'t, 's> {
    src: &'s str,
    frames: Vec<Frame>,
    names: Vec<(&'s str, NodeKind)>,
    scopes: Vec<Scope>,
    /// Class entities whose first `__init__` encloses the current node.
    inits: Vec<usize>,
    entities: Vec<EntityRec<'t, 's>>,
    imports: Vec<(u32, Node<'t>)>,
}

impl<'t, 's> Pass<'t, 's> {
    fn new(src: &'s str) -> Self {
        Pass {
            src,
            frames: Vec::with_capacity(64),
            names: Vec::new(),
            scopes: Vec::new(),
            inits: Vec::new(),
            entities: Vec::new(),
            imports: Vec::new(),
        }
    }

    /// Enters `node`, of kind `k` (its children are visited unless it is a string's
    /// content).
    fn enter(&mut self, node: Node<'t>, k: Kind) {
        let (depth, record) = match self.frames.last_mut() {
            None => (1, true),
            Some(p) => {
                let d = p.depth;
                let depth = match (p.kind, k) {
                    (Kind::MatchStatement | Kind::Module | Kind::Block, Kind::Block) => d,
                    (
                        Kind::ExceptClause | Kind::ExceptGroupClause | Kind::CaseClause,
                        Kind::Block,
                    ) => d + 2,
                    (_, Kind::Block) => d + 1,
                    (Kind::IfStatement, Kind::ElifClause) => {
                        p.elifs += 1;
                        d + p.elifs
                    }
                    (Kind::IfStatement, Kind::ElseClause) => d + p.elifs,
                    _ => d,
                };
                (depth, p.record)
            }
        };
        let mut frame = Frame {
            kind: k,
            depth,
            elifs: 0,
            record,
            pushed_name: false,
            pushed_scope: false,
            pushed_init: false,
        };
        match k {
            k if k.is_import() => self.imports.push((depth, node)),
            Kind::Call => {
                if let Some(name) = call_name(node, self.src) {
                    if let Some(Scope {
                        kind: Kind::FunctionDefinition,
                        entity: Some(e),
                        ..
                    }) = self.scopes.last()
                    {
                        self.entities[*e].invokes.insert(name);
                    }
                    for &c in &self.inits {
                        self.entities[c].invokes.insert(name);
                    }
                }
            }
            Kind::DecoratedDefinition | Kind::FunctionDefinition | Kind::ClassDefinition => {
                self.enter_definition(node, k, &mut frame);
            }
            _ => {}
        }
        self.frames.push(frame);
    }

    fn enter_definition(&mut self, node: Node<'t>, k: Kind, frame: &mut Frame) {
        // The first `__init__` of the enclosing class starts here?
        if let Some(Scope {
            entity: Some(class),
            init_wrapper: Some(w),
            ..
        }) = self.scopes.last()
            && *w == node.id()
        {
            self.inits.push(*class);
            frame.pushed_init = true;
        }
        let mut scope = Scope {
            kind: k,
            entity: None,
            init_wrapper: None,
        };
        if k != Kind::DecoratedDefinition
            && frame.record
            && let Some(name_node) = node.child_by_field_name("name")
        {
            let name = text(name_node, self.src);
            let ekind = if k == Kind::ClassDefinition {
                NodeKind::Class
            } else {
                NodeKind::Function
            };
            if ekind == NodeKind::Function
                && name == "__init__"
                && !is_async_def(node)
                && self
                    .names
                    .last()
                    .is_some_and(|(_, k)| *k == NodeKind::Class)
            {
                // `visit_FunctionDef` returns without visiting the body: nothing
                // inside is an entity (its imports still count for the file).
                frame.record = false;
            } else {
                let mut qualname = String::new();
                for (n, _) in &self.names {
                    qualname.push_str(n);
                    qualname.push('.');
                }
                qualname.push_str(name);
                let end = ast_end(node);
                let (end_byte, end_row) = (end.byte, end.point.row);
                let mut rec = EntityRec {
                    def: EntityDef {
                        qualname,
                        kind: ekind,
                        lines: (node.start_position().row as u32 + 1, end_row as u32 + 1),
                        range: node.start_byte()..end_byte,
                        analysis: None,
                    },
                    node,
                    invokes: BTreeSet::new(),
                    inherits: BTreeSet::new(),
                    init: None,
                };
                if ekind == NodeKind::Class {
                    scope.init_wrapper = self.class_analysis(node, &mut rec);
                }
                scope.entity = Some(self.entities.len());
                self.entities.push(rec);
                self.names.push((name, ekind));
                frame.pushed_name = true;
            }
        }
        self.scopes.push(scope);
        frame.pushed_scope = true;
    }

    /// `analyze_init`'s parts that need no walk: base names, the first direct
    /// `def __init__` (not async) and its decorators (`process_decorator_node`).
    /// Returns the node id of the `__init__` (or of its decorated wrapper).
    fn class_analysis(&self, class: Node<'t>, rec: &mut EntityRec<'t, 's>) -> Option<usize> {
        let src = self.src;
        if let Some(bases) = class.child_by_field_name("superclasses") {
            for base in named_children(bases) {
                if let Some(name) = name_or_attr(base, src) {
                    rec.inherits.insert(name);
                }
            }
        }
        let body = class.child_by_field_name("body")?;
        let (init, wrapper) = named_children(body).find_map(|item| {
            let (def, wrapper) = match item.kind() {
                "function_definition" => (item, item),
                "decorated_definition" => (item.child_by_field_name("definition")?, item),
                _ => return None,
            };
            let is_init = def.kind() == "function_definition"
                && !is_async_def(def)
                && def
                    .child_by_field_name("name")
                    .is_some_and(|n| text(n, src) == "__init__");
            is_init.then_some((def, wrapper))
        })?;
        rec.init = Some(init);
        if wrapper.kind() == "decorated_definition" {
            for dec in named_children(wrapper).filter(|c| c.kind() == "decorator") {
                let Some(expr) = named_children(dec).next() else {
                    continue;
                };
                let expr = unparenthesize(expr);
                if expr.kind() == "identifier" {
                    rec.invokes.insert(text(expr, src));
                    continue;
                }
                preorder(expr, |n| {
                    match n.kind() {
                        "call" => {
                            if let Some(name) = call_plain_name(n, src) {
                                rec.invokes.insert(name);
                            }
                        }
                        "attribute" => {
                            if let Some(attr) = n.child_by_field_name("attribute") {
                                rec.invokes.insert(text(attr, src));
                            }
                        }
                        _ => {}
                    }
                    true
                });
            }
        }
        Some(wrapper.id())
    }

    fn exit(&mut self, _node: Node<'t>) {
        let Some(f) = self.frames.pop() else { return };
        if f.pushed_name {
            self.names.pop();
        }
        if f.pushed_scope {
            self.scopes.pop();
        }
        if f.pushed_init {
            self.inits.pop();
        }
    }

    fn finish(self, file_id: &str) -> Extracted {
        let src = self.src;
        // `ast.walk` is breadth-first; imports are statements and statement-bearing
        // fields come in source order, so BFS order is (depth, source position).
        let mut imports = self.imports;
        imports.sort_by_key(|(depth, _)| *depth);
        let imports = imports
            .into_iter()
            .filter_map(|(_, n)| ImportStmt::from_node(n, src, file_id))
            .collect();

        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, e) in self.entities.iter().enumerate() {
            last.insert(e.def.qualname.as_str(), i);
        }
        let mut is_last = vec![false; self.entities.len()];
        for &i in last.values() {
            is_last[i] = true;
        }
        let entities = self
            .entities
            .into_iter()
            .zip(is_last)
            .map(|(rec, is_last)| {
                let mut def = rec.def;
                if is_last {
                    let mut a = EntityAnalysis::default();
                    direct_imports(rec.node, src, file_id, &mut a.imports);
                    if let Some(init) = rec.init {
                        direct_imports(init, src, file_id, &mut a.imports);
                    }
                    a.invokes = rec.invokes.into_iter().map(str::to_string).collect();
                    a.inherits = rec.inherits.into_iter().map(str::to_string).collect();
                    def.analysis = Some(a);
                }
                def
            })
            .collect();
        Extracted::Parsed(ParsedFile { entities, imports })
    }
}

/// Import statements that are direct children of a def's/class's body.
fn direct_imports(def: Node<'_>, src: &str, file_id: &str, out: &mut Vec<ImportStmt>) {
    let Some(body) = def.child_by_field_name("body") else {
        return;
    };
    for stmt in named_children(body) {
        if kind(stmt).is_import()
            && let Some(imp) = ImportStmt::from_node(stmt, src, file_id)
        {
            out.push(imp);
        }
    }
}

impl ImportStmt {
    /// Builds the import record `find_imports` makes from an import statement.
    /// `file_id` anchors relative imports.
    pub(crate) fn from_node(stmt: Node<'_>, src: &str, file_id: &str) -> Option<ImportStmt> {
        let imp = navbench_python::imports::import_of(stmt, src)?;
        if !imp.is_from {
            return Some(ImportStmt::Import(imp.names));
        }
        let module = if imp.level > 0 {
            super::imports::relative_module(file_id, imp.level, imp.module.as_deref())
        } else {
            imp.module.unwrap_or_default()
        };
        let names = if imp.star {
            FromNames::Star
        } else {
            FromNames::Names(imp.names)
        };
        Some(ImportStmt::From { module, names })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(file_id: &str, src: &str) -> ParsedFile {
        match extract(file_id, src) {
            Extracted::Parsed(p) => p,
            Extracted::Rejected(r) => panic!("rejected: {r}"),
        }
    }

    #[test]
    fn qualified_names_lines_and_init_skip() {
        let src = "\
@deco
class A(B, mod.C, (D), Generic[T], metaclass=M):
    def __init__(self):
        def hidden(): pass
    async def __init__(self):
        pass
    @property
    def val(self):
        return 1
    @val.setter
    def val(self, v):
        pass
    # trailing comment

def __init__():
    def inner():
        class Local:
            def m(self): pass
";
        let p = parsed("a.py", src);
        let got: Vec<(&str, NodeKind, (u32, u32))> = p
            .entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind, e.lines))
            .collect();
        assert_eq!(
            got,
            vec![
                ("A", NodeKind::Class, (2, 12)),
                ("A.__init__", NodeKind::Function, (5, 6)),
                ("A.val", NodeKind::Function, (8, 9)),
                ("A.val", NodeKind::Function, (11, 12)),
                ("__init__", NodeKind::Function, (15, 18)),
                ("__init__.inner", NodeKind::Function, (16, 18)),
                ("__init__.inner.Local", NodeKind::Class, (17, 18)),
                ("__init__.inner.Local.m", NodeKind::Function, (18, 18)),
            ]
        );
        assert!(p.entities[2].analysis.is_none());
        assert!(p.entities[3].analysis.is_some());
        let a = p.entities[0].analysis.as_ref().expect("class analysis");
        let inherits: Vec<&str> = a.inherits.iter().map(String::as_str).collect();
        assert_eq!(inherits, vec!["B", "C", "D"]);
        assert_eq!(
            &src[p.entities[3].range.clone()],
            "def val(self, v):\n        pass"
        );
    }

    #[test]
    fn function_calls_skip_nested_defs_but_not_lambdas() {
        let src = "\
def f(a=default()) -> ret():
    x.y.z()
    (paren)()
    super().__init__()
    g()[0]()
    h = lambda: in_lambda()
    def nested():
        not_me()
    @dec_not_me()
    def nested2(): pass
    class K(Base):
        also_not_me()
";
        let p = parsed("a.py", src);
        let a = p.entities[0].analysis.as_ref().expect("analysis");
        let got: Vec<&str> = a.invokes.iter().map(String::as_str).collect();
        assert_eq!(
            got,
            vec![
                "__init__",
                "default",
                "g",
                "in_lambda",
                "paren",
                "ret",
                "super",
                "z"
            ]
        );
    }

    #[test]
    fn class_invokes_come_from_first_init_only() {
        let src = "\
class A:
    import os
    from . import sib
    x = class_level()
    @decorator.attr(arg.value, fn())
    def __init__(self, d=dflt()):
        from .m import thing
        self.setup()
        def inner():
            nested_call()
    def __init__(self):
        second()
    def other(self):
        other_call()
";
        let p = parsed("pkg/a.py", src);
        let a = p.entities[0].analysis.as_ref().expect("analysis");
        let got: Vec<&str> = a.invokes.iter().map(String::as_str).collect();
        assert_eq!(
            got,
            vec!["attr", "dflt", "fn", "nested_call", "setup", "value"]
        );
        assert_eq!(a.imports.len(), 3);
    }

    #[test]
    fn file_imports_are_in_breadth_first_order() {
        let src = "\
import a
def f():
    import d
if x:
    import c
try:
    pass
except E:
    import e
import b
";
        let p = parsed("m.py", src);
        let modules: Vec<String> = p
            .imports
            .iter()
            .map(|i| match i {
                ImportStmt::Import(n) => n[0].0.clone(),
                ImportStmt::From { module, .. } => module.clone(),
            })
            .collect();
        assert_eq!(modules, vec!["a", "b", "d", "c", "e"]);
    }

    #[test]
    fn rejected_files() {
        assert!(matches!(
            extract("a.py", "print 'hi'\n"),
            Extracted::Rejected(_)
        ));
        assert!(matches!(
            extract("a.py", "\u{feff}x = 1\n"),
            Extracted::Rejected(_)
        ));
    }
}
