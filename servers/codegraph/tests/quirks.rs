//! The graph rules of SPEC.md §1, one quirk at a time, on small repositories.

mod common;

use common::{edges_of, graph_of, targets};
use navbench_codegraph::graph::NodeKind;

#[test]
fn redefined_names_get_one_node_and_one_contains_edge_per_definition() {
    let g = graph_of(&[(
        "m.py",
        "class A:\n    @property\n    def v(self):\n        return get()\n\n    @v.setter\n    def v(self, x):\n        put()\n",
    )]);
    assert_eq!(
        targets(&g, "m.py:A", "contains"),
        ["m.py:A.v", "m.py:A.v"],
        "one contains edge per definition"
    );
    // The last definition wins for lines and for the calls analysed.
    assert_eq!(g.node_by_id("m.py:A.v").and_then(|n| n.lines), Some((7, 8)));
    let node = g.node_by_id("m.py:A.v").expect("node");
    assert_eq!(
        node.code.as_ref().map(|c| c.as_str()),
        Some("def v(self, x):\n        put()")
    );
    assert!(
        targets(&g, "m.py:A.v", "invokes").is_empty(),
        "get/put are unknown names"
    );
}

#[test]
fn init_methods_and_their_contents_are_skipped_but_feed_the_class() {
    let g = graph_of(&[(
        "m.py",
        "\
def helper():
    pass

class A:
    def __init__(self):
        import os
        def local():
            pass
        helper()

class B:
    async def __init__(self):
        pass

def __init__():
    pass
",
    )]);
    assert!(g.node_by_id("m.py:A.__init__").is_none());
    assert!(g.node_by_id("m.py:A.__init__.local").is_none());
    assert!(
        g.node_by_id("m.py:B.__init__").is_some(),
        "async __init__ is kept"
    );
    assert!(
        g.node_by_id("m.py:__init__").is_some(),
        "module-level __init__ is kept"
    );
    assert_eq!(targets(&g, "m.py:A", "invokes"), ["m.py:helper"]);
}

#[test]
fn relative_imports_resolve_from_the_file_path() {
    let g = graph_of(&[
        ("__init__.py", "def x():\n    pass\n"),
        ("root.py", "from . import x\nfrom . import nothing\n"),
        ("pkg/__init__.py", "from . import a\n"),
        ("pkg/a.py", "def fa():\n    pass\n"),
        ("pkg/sub/__init__.py", ""),
        (
            "pkg/sub/b.py",
            "from .. import a\nfrom ..a import fa\nfrom ... import root\n",
        ),
    ]);
    // Root-level `from . import x` has module "": `<repo>/__init__.py`, entity x.
    assert_eq!(
        targets(&g, "root.py", "imports"),
        ["__init__.py", "__init__.py:x"],
        "a missing name falls back to the file"
    );
    assert_eq!(targets(&g, "pkg/__init__.py", "imports"), ["pkg/a.py"]);
    // `from ... import root` in pkg/sub/b.py also has module "": `.root` would be
    // the absolute `/root.py`, so it falls back to `<repo>/__init__.py`.
    assert_eq!(
        targets(&g, "pkg/sub/b.py", "imports"),
        ["__init__.py", "pkg/a.py", "pkg/a.py:fa"]
    );
}

#[test]
fn from_import_prefers_submodule_then_entity_then_file() {
    let g = graph_of(&[
        ("m/__init__.py", "def e():\n    pass\nCONST = 1\n"),
        ("m/sub.py", ""),
        (
            "use.py",
            "from m import sub, e, CONST, missing\nfrom m import *\nimport m.sub as s\nimport os\n",
        ),
    ]);
    assert_eq!(
        edges_of(&g, "imports"),
        [
            "use.py -> m/__init__.py",
            "use.py -> m/__init__.py",
            "use.py -> m/__init__.py",
            "use.py -> m/__init__.py:e",
            "use.py -> m/sub.py",
            "use.py -> m/sub.py as s",
        ]
    );
}

#[test]
fn submodule_that_is_no_node_blocks_the_fallback() {
    // Symlinked files (and files in skipped directories) exist on disk but are
    // not nodes; a name resolving to such a file produces no edge at all.
    let g = graph_of(&[
        ("m/__init__.py", "def x():\n    pass\n"),
        ("m/x/__init__.py", "print 'py2'\n"),
        ("use.py", "from m import x\n"),
    ]);
    // m/x/__init__.py is an (orphan) node, so the submodule edge exists.
    assert_eq!(targets(&g, "use.py", "imports"), ["m/x/__init__.py"]);

    let tmp = tempfile::tempdir().expect("tempdir");
    common::write_files(
        tmp.path(),
        &[
            ("m/__init__.py", b"def x():\n    pass\n"),
            ("use.py", b"from m import x\n"),
        ],
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("__init__.py", tmp.path().join("m/x.py")).expect("symlink");
        let g = navbench_codegraph::builder::build_graph(tmp.path()).expect("build");
        assert!(g.node_by_id("m/x.py").is_none());
        assert!(
            targets(&g, "use.py", "imports").is_empty(),
            "m.x resolves to the symlink m/x.py, which is not a node: no fallback to m:x"
        );
    }
}

#[test]
fn unresolved_names_fall_back_to_every_node_with_that_short_name() {
    let g = graph_of(&[
        (
            "a.py",
            "def run():\n    go()\n    recurse()\n\ndef recurse():\n    recurse()\n",
        ),
        ("b.py", "def go():\n    pass\n"),
        ("c.py", "class go:\n    pass\n"),
        ("tests/t.py", "def go():\n    py()\n"),
    ]);
    assert_eq!(
        targets(&g, "a.py:run", "invokes"),
        ["a.py:recurse", "b.py:go", "c.py:go", "tests/t.py:go"]
    );
    assert_eq!(
        targets(&g, "a.py:recurse", "invokes"),
        ["a.py:recurse"],
        "self-loop"
    );
    // Every file id has the short name `py`.
    assert_eq!(
        targets(&g, "tests/t.py:go", "invokes"),
        ["a.py", "b.py", "c.py", "tests/t.py"]
    );
}

#[test]
fn local_candidates_shadow_the_global_fallback() {
    let g = graph_of(&[
        (
            "a.py",
            "from b import helper\n\nclass Engine:\n    def run(self):\n        self.stop()\n        helper()\n        Engine()\n    def stop(self):\n        pass\n",
        ),
        ("b.py", "def helper():\n    pass\ndef stop():\n    pass\n"),
        ("c.py", "def stop():\n    pass\n"),
    ]);
    assert_eq!(
        targets(&g, "a.py:Engine.run", "invokes"),
        // `Engine` is the caller's own ancestor: not a local candidate, so global.
        ["a.py:Engine", "a.py:Engine.stop", "b.py:helper"]
    );
}

#[test]
fn syntax_errors_and_boms_make_orphan_file_nodes() {
    let g = graph_of(&[
        ("ok.py", "def f():\n    pass\n"),
        ("py2.py", "def f():\n    print 'x'\n"),
        ("bom.py", "\u{feff}def f():\n    pass\n"),
        ("broken.py", "def f(:\n"),
    ]);
    for orphan in ["py2.py", "bom.py", "broken.py"] {
        assert_eq!(g.node_by_id(orphan).map(|n| n.kind), Some(NodeKind::File));
        assert!(g.index_of(&format!("{orphan}:f")).is_none());
        let ix = g.index_of(orphan).expect("node");
        assert!(
            g.predecessors(ix).is_empty(),
            "{orphan} has no contains edge"
        );
    }
    assert_eq!(targets(&g, "/", "contains"), ["ok.py"]);
}

#[test]
fn undecodable_files_get_no_node_but_keep_their_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    common::write_files(tmp.path(), &[("d/latin1.py", b"# caf\xe9\n")]);
    let g = navbench_codegraph::builder::build_graph(tmp.path()).expect("build");
    assert!(g.node_by_id("d/latin1.py").is_none());
    assert!(
        g.node_by_id("d").is_some(),
        "a .py name keeps the directory"
    );
}

#[test]
fn directories_without_python_are_pruned_by_string_prefix() {
    let g = graph_of(&[
        ("foo/readme.txt", "x"),
        ("foobar/m.py", ""),
        ("zdocs/readme.txt", "x"),
        ("pkg/empty/readme.txt", "x"),
        ("pkg/sub/deep/m.py", ""),
        (".github/w.py", ""),
        ("x.git/m.py", ""),
        (".venv/lib.py", ""),
    ]);
    let dirs: Vec<&str> = g
        .node_indices()
        .map(|ix| g.node(ix))
        .filter(|n| n.kind == NodeKind::Directory)
        .map(|n| n.id.as_str())
        .collect();
    assert_eq!(
        dirs,
        [
            "/",
            ".venv",
            "foo",
            "foobar",
            "pkg",
            "pkg/sub",
            "pkg/sub/deep"
        ]
    );
}

#[test]
fn crlf_files_keep_python_line_numbers() {
    let g = graph_of(&[(
        "m.py",
        "def a():\r\n    pass\r\n\r\n\r\ndef b():\r\n    a()\r\n",
    )]);
    assert_eq!(g.node_by_id("m.py:b").and_then(|n| n.lines), Some((5, 6)));
    assert_eq!(targets(&g, "m.py:b", "invokes"), ["m.py:a"]);
}

#[test]
fn aliases_add_candidates_and_can_duplicate_edges() {
    let g = graph_of(&[
        ("lib.py", "class A:\n    pass\ndef f():\n    pass\n"),
        (
            "use.py",
            "from lib import A as A\nfrom lib import f as g\nimport lib as L\n\ndef run():\n    A()\n    g()\n    L()\n",
        ),
    ]);
    assert_eq!(
        targets(&g, "use.py:run", "invokes"),
        ["lib.py", "lib.py:A", "lib.py:A", "lib.py:f"]
    );
}

#[test]
fn large_numeric_tables_do_not_change_the_graph() {
    let table: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    let src = format!(
        "TABLE = (\n    {},\n)\n\n\ndef after():\n    return helper()\n\n\ndef helper():\n    pass\n",
        table.join(",\n    ")
    );
    let g = graph_of(&[("t.py", &src)]);
    assert_eq!(
        g.node_by_id("t.py:after").and_then(|n| n.lines),
        Some((205, 206))
    );
    assert_eq!(targets(&g, "t.py:after", "invokes"), ["t.py:helper"]);
    let code = g
        .node_by_id("t.py")
        .and_then(|n| n.code.clone())
        .expect("code");
    assert_eq!(code.as_str(), src, "file code is the original text");
}
