//! Tests of the chunkers.

use super::*;

const SRC: &str = r#""""Module docstring."""
import os
import os.path as osp
from .utils import to_key_val_list, merge as m
from typing import Optional

TIMEOUT = 5


def helper(x: int) -> Optional[str]:
    try:
        return osp.join(str(x))
    except (ValueError, KeyError) as e:
        raise
    except OSError:
        return None


@decorator
class Session(Base):
    """A session."""

    retries: int = 3

    def __init__(self):
        self.x = helper(1)

    def send(self, req):
        def inner():
            return to_key_val_list(req)
        return self._merge(inner(), m(req))

    class Inner:
        def deep(self):
            return os.getcwd()


if True:
    def compat():
        pass

print("done")
"#;

fn by_name<'a>(chunks: &'a [Chunk], name: &str) -> &'a Chunk {
    chunks
        .iter()
        .find(|c| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no chunk {name}: {chunks:#?}"))
}

#[test]
fn python_functions_methods_classes_and_module_code() {
    let chunks = chunk_file("pkg/sessions.py", SRC);
    let names: Vec<(&str, ChunkKind)> = chunks
        .iter()
        .filter_map(|c| c.name.as_deref().map(|n| (n, c.kind)))
        .collect();
    assert_eq!(
        names,
        [
            ("helper", ChunkKind::Function),
            ("Session", ChunkKind::Class),
            ("Session.__init__", ChunkKind::Method),
            ("Session.send", ChunkKind::Method),
            ("Session.Inner", ChunkKind::Class),
            ("Session.Inner.deep", ChunkKind::Method),
            ("compat", ChunkKind::Function),
        ]
    );
    let helper = by_name(&chunks, "helper");
    assert_eq!((helper.start_line, helper.end_line), (10, 16));
    assert_eq!(helper.id, "pkg/sessions.py:10-16");
    let session = by_name(&chunks, "Session");
    assert_eq!((session.start_line, session.end_line), (19, 35));
    assert!(
        session
            .content
            .starts_with("@decorator\nclass Session(Base):")
    );
    let send = by_name(&chunks, "Session.send");
    assert!(
        send.content
            .starts_with("class Session(Base):\n    def send(self, req):"),
        "{}",
        send.content
    );
    assert_eq!((send.start_line, send.end_line), (28, 31));
    let deep = by_name(&chunks, "Session.Inner.deep");
    assert!(
        deep.content
            .starts_with("    class Inner:\n        def deep"),
        "{}",
        deep.content
    );

    let modules: Vec<(usize, usize)> = chunks
        .iter()
        .filter(|c| c.kind == ChunkKind::Module)
        .map(|c| (c.start_line, c.end_line))
        .collect();
    // Imports + constant; the `if True:` line; the trailing print.
    assert_eq!(modules, [(1, 7), (38, 38), (42, 42)]);
}

#[test]
fn python_metadata() {
    let chunks = chunk_file("pkg/sessions.py", SRC);
    let helper = by_name(&chunks, "helper");
    assert_eq!(helper.meta.calls, ["osp.join", "str"]);
    assert_eq!(
        helper.meta.exceptions_handled,
        ["ValueError", "KeyError", "OSError"]
    );
    assert_eq!(helper.meta.types, ["int", "Optional[str]"]);
    assert_eq!(helper.meta.imports_used, ["os.path", "typing.Optional"]);
    assert_eq!(helper.meta.complexity, 7);
    let send = by_name(&chunks, "Session.send");
    assert_eq!(
        send.meta.calls,
        ["to_key_val_list", "self._merge", "inner", "m"]
    );
    assert_eq!(
        send.meta.imports_used,
        [".utils.to_key_val_list", ".utils.merge"]
    );
    let session = by_name(&chunks, "Session");
    assert!(session.meta.types.contains(&"int".to_string()));
    let module = chunks.iter().find(|c| c.kind == ChunkKind::Module).unwrap();
    assert!(module.meta.calls.is_empty());
}

#[test]
fn long_class_becomes_an_outline() {
    let mut src = String::from("class Big:\n    \"\"\"Doc.\"\"\"\n    x = 1\n");
    for i in 0..30 {
        src.push_str(&format!(
            "\n    @property\n    def m{i}(self, a: int):\n        a += 1\n        return a\n"
        ));
    }
    let chunks = chunk_file("big.py", &src);
    let class = by_name(&chunks, "Big");
    assert_eq!(class.start_line, 1);
    assert_eq!(class.end_line, src.lines().count());
    assert!(class.content.contains("def m0(self, a: int):"));
    assert!(!class.content.contains("a += 1"));
    assert!(class.content.lines().count() <= MAX_CLASS_LINES + 2);
    assert_eq!(
        chunks
            .iter()
            .filter(|c| c.kind == ChunkKind::Method)
            .count(),
        30
    );
}

#[test]
fn long_module_code_is_split_at_statements() {
    let src: String = (0..150).map(|i| format!("X{i} = {i}\n")).collect();
    let chunks = chunk_file("consts.py", &src);
    assert!(chunks.len() >= 3);
    assert!(
        chunks
            .iter()
            .all(|c| c.end_line + 1 - c.start_line <= MAX_MODULE_LINES)
    );
    assert_eq!(chunks.first().map(|c| c.start_line), Some(1));
    assert_eq!(chunks.last().map(|c| c.end_line), Some(150));
}

#[test]
fn broken_python_still_chunks() {
    let chunks = chunk_file(
        "bad.py",
        "def ok():\n    return 1\n\ndef broken(:\n    pass\n",
    );
    assert!(chunks.iter().any(|c| c.name.as_deref() == Some("ok")));
    assert!(chunk_file("empty.py", "\n\n").is_empty());
}

#[test]
fn markdown_is_split_at_headings_and_bounded() {
    let mut md =
        String::from("# Title\n\nIntro text.\n\n## Install\n\npip install x\n\n## Usage\n\n");
    for i in 0..100 {
        md.push_str(&format!("line {i} of usage\n"));
    }
    let chunks = chunk_file("docs/README.md", &md);
    assert!(
        chunks
            .iter()
            .all(|c| c.kind == ChunkKind::Text && c.name.is_none())
    );
    assert_eq!(chunks[0].content, "# Title\n\nIntro text.");
    assert!(chunks[1].content.starts_with("## Install"));
    assert!(
        chunks
            .iter()
            .all(|c| c.end_line + 1 - c.start_line <= MAX_TEXT_LINES)
    );
    let huge = "x".repeat(10_000);
    let c = chunk_file("a.txt", &huge);
    assert_eq!(c.len(), 1);
    assert!(c[0].content.len() <= MAX_TEXT_CHARS * 2);
}

#[test]
fn indexable_and_kind_names() {
    assert!(is_indexable("a/b.py"));
    assert!(is_indexable("README.rst"));
    assert!(is_indexable("setup.cfg"));
    assert!(!is_indexable("img.png"));
    assert!(!is_indexable(".py"));
    assert!(!is_indexable("Makefile"));
    assert_eq!("Method".parse::<ChunkKind>(), Ok(ChunkKind::Method));
    assert!("fn".parse::<ChunkKind>().is_err());
    assert_eq!(
        serde_json::to_string(&ChunkKind::Class).unwrap(),
        "\"class\""
    );
}
