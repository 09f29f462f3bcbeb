//! Golden test against the original LocAgent builder.
//!
//! `tests/fixtures/quirks/repo` plus a few files this test creates (a UTF-8 BOM,
//! CRLF line endings, invalid UTF-8, dot-directories, a symlink; they cannot be
//! committed reliably) form a small repository that exercises the quirks of
//! SPEC.md §1. `tests/fixtures/quirks/expected.{nodes,edges}.tsv` are the output of
//! the original `build_graph(repo, global_import=True)` (LocAgent a5e28dd,
//! CPython 3.11, networkx 3.4.2) on that repository, with `os.walk` sorted (the
//! original's order is the filesystem's). See `tests/fixtures/quirks/README.md`
//! for how to regenerate them.

mod common;

use std::fs;
use std::path::Path;

use navbench_codegraph::builder::build_graph;

/// Copies the committed fixture and adds the special files.
fn materialize(dst: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quirks/repo");
    copy_dir(&src, dst);
    common::write_files(
        dst,
        &[
            ("bom.py", "\u{feff}def bom_func():\n    pass\n".as_bytes()),
            (
                "crlf.py",
                b"def crlf_a():\r\n    pass\r\n\r\n\r\ndef crlf_b():\r\n    crlf_a()\r\n",
            ),
            ("latin1.py", b"# caf\xe9\ndef latin():\n    pass\n"),
            ("nbsp.py", "x =\u{a0}1\n".as_bytes()),
            (".github/workflow.py", b"def gh():\n    pass\n"),
            ("a.gitlab/x.py", b"def gitlab():\n    pass\n"),
            (".tox/t.py", b"def tox():\n    helper()\n"),
        ],
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink("util.py", dst.join("pkg/link.py")).expect("symlink");
}

fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).expect("mkdir");
    for entry in fs::read_dir(src).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let to = dst.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            fs::copy(entry.path(), &to).expect("copy fixture file");
        }
    }
}

#[cfg(unix)]
#[test]
fn quirks_fixture_matches_the_original() {
    // Set CODEGRAPH_MATERIALIZE=DIR to write the repository there (to run the
    // original on it) instead of comparing.
    if let Some(dir) = std::env::var_os("CODEGRAPH_MATERIALIZE") {
        materialize(Path::new(&dir));
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    // The original's output holds no dot-directory in paths, nor does this root.
    let root = tmp.path().join("repo");
    materialize(&root);
    let graph = build_graph(&root).expect("build");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quirks");
    let expected_nodes =
        fs::read_to_string(fixtures.join("expected.nodes.tsv")).expect("expected nodes");
    let expected_edges =
        fs::read_to_string(fixtures.join("expected.edges.tsv")).expect("expected edges");
    let nodes = common::nodes_tsv(&graph);
    let edges = common::edges_tsv(&graph);
    assert_eq!(
        nodes, expected_nodes,
        "node table differs from the original's"
    );
    assert_eq!(
        edges, expected_edges,
        "edge table differs from the original's"
    );
}
