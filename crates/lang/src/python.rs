//! Python, by wrapping `navbench-python` (the front end the graph builder and the
//! LocAgent gold rules are validated on): its behaviour is not changed here, only
//! mapped onto [`Definition`].
//!
//! Mapping: a `class` is [`DefKind::Class`]; a `def` directly in a class body (not
//! under `if`/`try`/...) is a [`DefKind::Method`], or a [`DefKind::Constructor`] when
//! it is `__init__`; every other `def` is a [`DefKind::Function`] (nested ones
//! included, `outer.inner`). Lines are `ast`'s (decorators excluded), the syntax verdict
//! is CPython 3.11's. Imports: one entry per imported module (`a.b` for
//! `import a.b as c`, `..p.q` for `from ..p.q import x`). Bases, calls and import
//! bindings are left empty: the graph builder reads them from Python itself.

use navbench_python::{Entity, EntityKind, definitions, lone_cr_as_newline, parse_tree, rejection};
use tree_sitter::Node;

use crate::Language;
use crate::definition::{DefKind, Definition, Import, ParsedFile};
use crate::walk::{self, Grammar, Visit};

/// The Python front end.
pub struct Python;

impl Language for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["py"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        let text = lone_cr_as_newline(source);
        // One tree: imports and code lines from the shared walk over it, definitions
        // and the syntax verdict from navbench-python's readers of the same tree
        // (what `parse_module` would compute from a second parse).
        let tree = parse_tree(&text);
        let mut file = walk::read(self, &tree, &text);
        let root = tree.root_node();
        file.has_syntax_errors = rejection(root, &text).is_some();
        file.definitions = mapped(&definitions(root, text.as_bytes()).entities);
        file
    }
}

/// navbench-python's entities as [`Definition`]s (the mapping in the module docs).
fn mapped(entities: &[Entity]) -> Vec<Definition> {
    entities
        .iter()
        .map(|e| {
            let parent = e.parent.map(|p| &entities[p]);
            let in_class = parent.is_some_and(|p| p.kind == EntityKind::Class);
            let kind = match e.kind {
                EntityKind::Class => DefKind::Class,
                EntityKind::Function if in_class && !e.conditional => {
                    if e.name == "__init__" {
                        DefKind::Constructor
                    } else {
                        DefKind::Method
                    }
                }
                EntityKind::Function => DefKind::Function,
            };
            Definition {
                kind,
                name: e.name.clone(),
                qualname: e.qualname.clone(),
                container: parent.map(|p| p.qualname.clone()),
                parent: e.parent,
                start_line: e.start_line,
                end_line: e.end_line,
                span: e.span.clone(),
                module_level: e.depth == 0,
                bases: Vec::new(),
                calls: Vec::new(),
            }
        })
        .collect()
}

impl Grammar for Python {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_python::LANGUAGE.into()
    }

    fn classify(&self, _node: Node<'_>, _src: &str, _scope: Option<&Definition>) -> Visit {
        Visit::Descend // definitions come from navbench-python
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        let Some(import) = navbench_python::imports::import_of(node, src) else {
            return;
        };
        if import.is_from {
            let dots = ".".repeat(import.level);
            let module = format!("{dots}{}", import.module.unwrap_or_default());
            out.push(walk::import(module, Vec::new()));
        } else {
            out.extend(
                import
                    .names
                    .into_iter()
                    .map(|(name, _)| walk::import(name, Vec::new())),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{modules_of, outline};

    #[test]
    fn python_wraps_navbench_python() {
        let src = "\
import os.path as p, sys
from ..pkg.mod import x  # comment

class A:
    def __init__(self):
        pass

    @property
    def f(self):
        def inner():
            pass

    if True:
        def g(self): pass


def top():
    pass
";
        let file = Python.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Class, "A", 4, 14),
                (DefKind::Constructor, "A.__init__", 5, 6),
                (DefKind::Method, "A.f", 9, 11),
                (DefKind::Function, "A.f.inner", 10, 11),
                (DefKind::Function, "A.g", 14, 14),
                (DefKind::Function, "top", 17, 18),
            ]
        );
        assert_eq!(modules_of(&file), ["os.path", "sys", "..pkg.mod"]);
        assert!(file.has_code(2) && !file.has_code(3));
        assert!(file.definitions[0].module_level && file.definitions[5].module_level);
        assert!(Python.parse("print 'py2'\n").has_syntax_errors);
    }

    /// What `parse` gave before it read one tree: the shared walk over one parse,
    /// definitions and verdict from `parse_module`'s second parse.
    fn parsed_twice(source: &str) -> ParsedFile {
        let text = lone_cr_as_newline(source);
        let mut file = walk::parse(&Python, &text);
        let module = navbench_python::parse_module(source);
        file.has_syntax_errors = module.has_syntax_errors();
        file.definitions = mapped(&module.entities);
        file
    }

    /// Every `.py` file under `dir` (not `.git`, `target`, `node_modules`).
    fn py_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name();
            if matches!(name.to_str(), Some(".git" | "target" | "node_modules")) {
                continue;
            }
            if path.is_dir() {
                py_files(&path, out);
            } else if path.extension().is_some_and(|x| x == "py") {
                out.push(path);
            }
        }
    }

    /// One parse gives what two gave, on every `.py` file of the workspace (the
    /// embedded mini dataset's repository, the harness fixtures), of the tree in
    /// `NAVBENCH_BENCH_TREE` when set, and on edge cases: CRLF, lone CR, syntax errors,
    /// Python 2, an empty file.
    #[test]
    fn python_one_parse_equals_two() {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        py_files(&workspace, &mut files);
        if let Some(tree) = std::env::var_os("NAVBENCH_BENCH_TREE") {
            py_files(std::path::Path::new(&tree), &mut files);
        }
        assert!(files.len() >= 50, "only {} .py files found", files.len());
        let mut sources: Vec<String> = files
            .iter()
            .map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned())
            .collect();
        sources.extend(
            [
                "x = 1\r\ndef f():\r\n    import os\r\n    pass\r\n",
                "x = 1\rdef f():\r    from . import y\r    pass\r",
                "def f(:\n    pass\n",
                "print 'py2'\nimport a.b as c\n",
                "",
                "class A:\n    def __init__(self): pass\n    if X:\n        def g(self): pass\n",
            ]
            .map(String::from),
        );
        let mut definitions = 0;
        for (i, src) in sources.iter().enumerate() {
            let one = Python.parse(src);
            let what = files.get(i).map(|p| p.display().to_string());
            assert_eq!(
                one,
                parsed_twice(src),
                "{}",
                what.unwrap_or_else(|| src.clone())
            );
            definitions += one.definitions.len();
        }
        assert!(definitions > 100, "only {definitions} definitions compared");
    }
}
