//! The per-function index built from the per-file store equals a cold build, on a
//! sequence of real git commits of the mini repository (its files as shipped, then
//! edits, an added and a removed file, a rename, a file going back to an old
//! version, a file CPython rejects and a file that stops being rejected): every
//! answer of both tools compared, `search_functions` to the float.

use std::path::Path;

use super::server::{FunctionTools, IndexFunctionsArgs, SearchFunctionsArgs};
use crate::test_git::{checkout, commit};

/// The mini repository's files (path, text), sorted.
fn mini_files() -> Vec<(String, String)> {
    fn walk(root: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(root.join(rel)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                walk(root, &child, out);
            } else {
                out.push((child, std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/mini/repo");
    let mut out = Vec::new();
    walk(&root, "", &mut out);
    out.sort();
    out
}

/// The trees of the sequence: each a full list of files.
pub(crate) fn commits() -> Vec<Vec<(String, String)>> {
    let first = mini_files();
    let py: Vec<String> = first
        .iter()
        .filter(|(p, _)| p.ends_with(".py") && !p.contains("test") && !p.ends_with("__init__.py"))
        .map(|(p, _)| p.clone())
        .collect();
    assert!(py.len() >= 6, "{py:?}");
    let edit = |files: &mut Vec<(String, String)>, path: &str, f: &dyn Fn(&str) -> String| {
        let slot = files.iter_mut().find(|(p, _)| p == path).unwrap();
        slot.1 = f(&slot.1);
    };
    let mut trees = vec![first.clone()];
    // 2: one function added to a module, another module's body changed.
    let mut t = first.clone();
    edit(&mut t, &py[0], &|s| {
        format!(
            "{s}\n\ndef reconcile_ledger(entries):\n    '''Balance the ledger entries.'''\n    return sum(e.amount for e in entries)\n"
        )
    });
    edit(&mut t, &py[1], &|s| s.replace("return", "return  "));
    trees.push(t.clone());
    // 3: a module added, one removed.
    t.push((
        "shopkeep/loyalty.py".into(),
        "class Loyalty:\n    def points(self, order):\n        return int(order.total * 10)\n\n    def redeem(self, points):\n        return points / 100\n".into(),
    ));
    t.retain(|(p, _)| p != &py[2]);
    t.sort();
    trees.push(t.clone());
    // 4: a rename, the first edit reverted, a module CPython rejects.
    let moved = t.iter().position(|(p, _)| p == &py[3]).unwrap();
    t[moved].0 = py[3].replace(".py", "_moved.py");
    let original = first.iter().find(|(p, _)| p == &py[0]).unwrap().1.clone();
    edit(&mut t, &py[0], &|_| original.clone());
    edit(&mut t, &py[4], &|s| format!("{s}\nprint 'python 2'\n"));
    t.sort();
    trees.push(t.clone());
    // 5: the rejected module fixed again, a test file edited (left out either way).
    let fixed = first.iter().find(|(p, _)| p == &py[4]).unwrap().1.clone();
    edit(&mut t, &py[4], &|_| fixed.clone());
    if let Some(test) = t
        .iter_mut()
        .find(|(p, _)| p.starts_with("tests/") && p.ends_with(".py"))
    {
        test.1.push_str("\ndef test_more():\n    assert True\n");
    }
    trees.push(t);
    trees
}

const QUERIES: [&str; 5] = [
    "Money.allocate() can hand out more than the original amount without losing cents",
    "Tax is one cent lower than the accounting system computes rounding",
    "reconcile the ledger entries balance",
    "loyalty points redeem order total",
    "inventory stock reservation release warehouse",
];

/// Everything both tools answer for a tree: the index call's result without its
/// times and reuse count, and each query's text and structured result.
fn answers(tools: &FunctionTools, root: &str) -> (String, usize) {
    let out = tools
        .index_functions(&IndexFunctionsArgs {
            repo_path: root.to_string(),
            test_filter: None,
        })
        .expect("index_functions");
    let mut data = out.data.clone();
    let reused = data.reused_files;
    data.reused_files = 0;
    let first_line = out.text.lines().next().unwrap_or("");
    let mut all = format!(
        "{data:?}\n{}\n",
        first_line.rsplit_once(" in ").map_or(first_line, |p| p.0)
    );
    for q in QUERIES {
        let r = tools
            .search_functions(&SearchFunctionsArgs {
                query: q.to_string(),
                top_k: Some(50),
            })
            .expect("search_functions");
        all += &r.text;
        all += &format!("\n{:?}\n", r.data);
    }
    (all, reused)
}

#[test]
fn functions_index_from_the_store_equals_a_cold_build_over_commits() {
    let work = tempfile::tempdir().unwrap();
    let origin = work.path().join("origin");
    let repo = git2::Repository::init(&origin).unwrap();
    let trees = commits();
    let store = work.path().join("store");
    let mut previous: Option<&Vec<(String, String)>> = None;
    for (i, files) in trees.iter().enumerate() {
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let oid = commit(&repo, &refs, &format!("commit {i}"));
        let root = checkout(&origin, oid, &work.path().join(format!("tree{i}")));
        let (cold, _) = answers(&FunctionTools::new(), &root);
        // A new server process per tree on the same store, as a benchmark run does.
        let (warm, reused) = answers(&FunctionTools::new().with_store(store.clone()), &root);
        assert_eq!(warm, cold, "commit {i}");
        assert!(
            cold.contains("score"),
            "commit {i}: some query matched\n{cold}"
        );
        // Files read (not tests) whose path and text the previous tree held (whose
        // pack the build picks) are reused; the rest, a reverted file too, are read.
        let expected = files
            .iter()
            .filter(|(p, _)| p.ends_with(".py") && !p.to_lowercase().contains("test"))
            .filter(|f| previous.is_some_and(|prev| prev.contains(f)))
            .count();
        assert_eq!(reused, expected, "commit {i}");
        previous = Some(files);
    }
}
