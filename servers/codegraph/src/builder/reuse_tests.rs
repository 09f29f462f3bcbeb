//! A build that reuses stored extractions gives the same graph as a fresh build:
//! on a sequence of trees with edits, renames, deletions, a class moved to another
//! module (callers updated), and a tree going back to an old version; and with two
//! repositories building side by side on one store.

use std::fs;
use std::path::Path;

use super::*;
use crate::export;

/// The exported tables, then every node (insertion order, code included) and every
/// edge in insertion order: equal dumps mean equal graphs, indices included.
fn dump(g: &CodeGraph) -> String {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    export::write_nodes(g, &mut nodes).expect("nodes");
    export::write_edges(g, &mut edges).expect("edges");
    let mut s = String::from_utf8(nodes).expect("utf8") + &String::from_utf8(edges).expect("utf8");
    for ix in g.node_indices() {
        let n = g.node(ix);
        let code = n.code.as_ref().map(|c| c.as_str());
        s += &format!("{} {} {:?} {:?}\n", n.id, n.kind, n.lines, code);
    }
    for (a, b, e) in g.edges() {
        s += &format!("{} {} {:?}\n", a.index(), b.index(), e);
    }
    s
}

/// Makes `root` hold exactly `files` (path, content); everything else is removed.
fn write_tree(root: &Path, files: &[(&str, &[u8])]) {
    for entry in fs::read_dir(root).expect("list") {
        let p = entry.expect("entry").path();
        if p.is_dir() {
            fs::remove_dir_all(&p).expect("rm dir");
        } else {
            fs::remove_file(&p).expect("rm file");
        }
    }
    for (rel, content) in files {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, content).expect("write");
    }
}

/// Builds `root` fresh and with `store`; asserts equal graphs; returns the report of
/// the build with the store.
fn check_equal(root: &Path, store: &FileStore) -> BuildReport {
    let (fresh, fresh_report) = build_graph_with(root, &BuildOptions::default()).expect("fresh");
    assert_eq!(fresh_report.reused, 0);
    let options = BuildOptions {
        reuse: Some(store.clone()),
        ..BuildOptions::default()
    };
    let (incremental, report) = build_graph_with(root, &options).expect("incremental");
    assert_eq!(dump(&incremental), dump(&fresh));
    assert_eq!(report.rejected, fresh_report.rejected);
    assert_eq!(report.undecodable, fresh_report.undecodable);
    assert_eq!(report.reused + report.parsed, fresh_report.parsed);
    report
}

const INIT: &[u8] = b"from .models import Model\n";
const MODELS_V1: &[u8] = b"\
import os
class Base:
    def save(self):
        return os.getcwd()
class Model(Base):
    def run(self):
        return Helper().help()
class Helper:
    def help(self):
        return 1
";
const VIEWS_V1: &[u8] = b"\
from .models import Helper, Model
def view():
    return Helper().help() + Model().run()
";
const UTIL: &[u8] = b"from . import models\ndef util():\n    return models.Base()\n";
const OLD: &[u8] = b"def legacy():\n    pass\n";

fn tree_v1() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("pkg/__init__.py", INIT),
        ("pkg/models.py", MODELS_V1),
        ("pkg/views.py", VIEWS_V1),
        ("pkg/util.py", UTIL),
        ("scripts/old.py", OLD),
        ("scripts/py2.py", b"print 'hello'\n"),
        ("pkg/latin1.py", b"# caf\xe9\n"),
        ("README.md", b"readme\n"),
    ]
}

#[test]
fn incremental_builds_equal_fresh_ones_across_edits_renames_deletions_and_moves() {
    let repo = tempfile::tempdir().expect("repo");
    let cache = tempfile::tempdir().expect("cache");
    let store = FileStore::new(cache.path().join("files"));
    let root = repo.path();

    // v1: nothing stored yet; the six decodable files are parsed.
    write_tree(root, &tree_v1());
    let r = check_equal(root, &store);
    assert_eq!((r.reused, r.parsed), (0, 6));
    // The same tree again: nothing to parse.
    let r = check_equal(root, &store);
    assert_eq!((r.reused, r.parsed), (6, 0));

    // v2: pkg/util.py moved to lib/tools.py (same text: parsed again, its path
    // anchors its relative imports), scripts/ deleted (and its directory node with it), Helper
    // moved to its own module with its callers updated, and one function edited.
    let models_v2: &[u8] = b"\
import os
from .helpers import Helper
class Base:
    def save(self):
        return os.getcwd()
class Model(Base):
    def run(self):
        return Helper().help() + 1
";
    let helpers: &[u8] = b"class Helper:\n    def help(self):\n        return 1\n";
    let views_v2: &[u8] = b"\
from .helpers import Helper
from .models import Model
def view():
    return Helper().help() + Model().run()
";
    write_tree(
        root,
        &[
            ("pkg/__init__.py", INIT),
            ("pkg/models.py", models_v2),
            ("pkg/helpers.py", helpers),
            ("pkg/views.py", views_v2),
            ("lib/tools.py", UTIL),
            ("pkg/latin1.py", b"# caf\xe9\n"),
        ],
    );
    let r = check_equal(root, &store);
    assert_eq!((r.reused, r.parsed), (1, 4));
    let (g, _) = build_graph_with(root, &BuildOptions::default()).expect("graph");
    assert!(g.contains_id("pkg/helpers.py:Helper.help"));
    assert!(!g.contains_id("pkg/models.py:Helper"));
    assert!(!g.contains_id("scripts"));

    // v3: back to v1, whose extractions are still stored.
    write_tree(root, &tree_v1());
    let r = check_equal(root, &store);
    assert_eq!((r.reused, r.parsed), (6, 0));
}

#[test]
fn two_repositories_building_at_once_on_one_store_get_their_own_graphs() {
    let cache = tempfile::tempdir().expect("cache");
    let store = FileStore::new(cache.path().join("files"));
    let a = tempfile::tempdir().expect("a");
    let b = tempfile::tempdir().expect("b");
    write_tree(a.path(), &tree_v1());
    // Same paths, other contents: nothing of the first repository may leak in.
    write_tree(
        b.path(),
        &[
            ("pkg/__init__.py", b"X = 1\n"),
            (
                "pkg/models.py",
                b"class Model:\n    def run(self):\n        return go()\ndef go():\n    pass\n",
            ),
            ("pkg/views.py", VIEWS_V1),
        ],
    );
    std::thread::scope(|s| {
        for root in [a.path(), b.path()] {
            let store = &store;
            s.spawn(move || {
                for round in 0..6 {
                    // Each round edits one file, so both keep writing packs.
                    fs::write(root.join("pkg/extra.py"), format!("def e{round}(): pass\n"))
                        .expect("write");
                    check_equal(root, store);
                }
            });
        }
    });
    let packs = fs::read_dir(&store.dir).expect("list").count();
    assert!(packs <= store.max_packs, "{packs} files in the store");
}
