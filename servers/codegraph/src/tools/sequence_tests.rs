//! Over a sequence of real git commits (the mini repository with edits, added,
//! removed and renamed modules, a reverted file, a module CPython rejects, and
//! TypeScript / JavaScript files beside the Python ones, which `auto` leaves out of a
//! mostly-Python tree's graph and content index), a server whose cache holds
//! the earlier commits answers every tool exactly as a server that starts from
//! nothing: the same graph tables, and the same text and structured results of
//! `explore_tree`, `search_code`, `search_entities`, `get_dependencies`, `get_code`
//! and `get_code_snippet`. Each tree is a checkout of its own, and each init a new
//! server on the shared cache, as a benchmark run makes them. The last commits change
//! what names in unchanged files resolve to (a call and an import that resolve to
//! nothing, then to a module added later, then to nothing again when it is removed),
//! and every tree is initialized a second time on the warm cache (a graph cache
//! hit, the files' texts read back from the tree).

use std::path::Path;

use serde::Serialize;

use super::*;
use crate::test_git::{checkout, commit};

/// A tool's answer as text: its text and structured result, or its error.
fn show<T: Serialize>(r: Result<ToolOutput<T>, ToolError>) -> String {
    match r {
        Ok(out) => format!(
            "{}\n{}\nerror={}\n",
            out.text,
            serde_json::to_string(&out.data).expect("json"),
            out.is_error
        ),
        Err(e) => format!("ERR {e}\n"),
    }
}

/// The TypeScript and JavaScript files of mini's `web` project, under `web/`.
fn web_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/mini/polyglot/web");
    [
        "src/cart.ts",
        "src/coupon.ts",
        "lib/router.js",
        "lib/throttle.js",
    ]
    .iter()
    .map(|rel| {
        let text = std::fs::read_to_string(root.join(rel)).expect("read web file");
        (format!("web/{rel}"), text)
    })
    .collect()
}

/// Three more commits after `trees`' last: a call and an import of names defined
/// nowhere (in files the next commits leave alone), then the module defining them
/// (so those unchanged files' calls and imports resolve to it), then that module
/// removed again.
fn resolution_commits(trees: &mut Vec<Vec<(String, String)>>) {
    let Some(mut t) = trees.last().cloned() else {
        return;
    };
    t.push((
        "shopkeep/late_user.py".into(),
        "import shopkeep.late\nfrom shopkeep.late import late_helper\n\n\ndef use_late():\n    return late_helper() + shopkeep.late.late_helper()\n".into(),
    ));
    t.push((
        "shopkeep/later.py".into(),
        "def uses_later():\n    return later_helper()\n".into(),
    ));
    t.sort();
    trees.push(t.clone());
    t.push((
        "shopkeep/late.py".into(),
        "def late_helper():\n    return 1\n\n\ndef later_helper():\n    return 2\n".into(),
    ));
    t.sort();
    trees.push(t.clone());
    t.retain(|(p, _)| p != "shopkeep/late.py");
    trees.push(t);
}

/// The trees: the per-function tests' sequence and [`resolution_commits`], with the
/// web files from the second commit on (one of them edited in the fourth, one
/// removed from the fifth).
fn trees() -> Vec<Vec<(String, String)>> {
    let web = web_files();
    let mut trees = crate::functions::incremental_tests::commits();
    resolution_commits(&mut trees);
    for (i, t) in trees.iter_mut().enumerate().skip(1) {
        for (p, text) in &web {
            let mut text = text.clone();
            if i >= 3 && p.ends_with("cart.ts") {
                text.push_str("\nexport function cartWeight(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n");
            }
            if i >= 4 && p.ends_with("throttle.js") {
                continue;
            }
            t.push((p.clone(), text));
        }
        t.sort();
    }
    trees
}

/// Every tool's answers for the initialized repository of `tools`, for the entities
/// `ids` (taken from the cold graph, the same for both servers).
fn answers(tools: &CodegraphTools, ids: &[String]) -> String {
    let repo = tools.repo().expect("initialized");
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    crate::export::write_nodes(repo.graph.graph(), &mut nodes).expect("nodes");
    crate::export::write_edges(repo.graph.graph(), &mut edges).expect("edges");
    let mut out =
        String::from_utf8(nodes).expect("utf8") + &String::from_utf8(edges).expect("utf8");
    for (path, direction) in [("/", "downstream"), ("shopkeep", "downstream")] {
        out += &show(tools.explore_tree(&ExploreTreeArgs {
            path: Some(path.to_string()),
            depth: Some(-1),
            direction: Some(direction.to_string()),
            entity_types: None,
            dependency_types: None,
        }));
    }
    let queries: [&[&str]; 5] = [
        &["money allocate cents"],
        &["tax rounding", "ledger"],
        &["loyalty points redeem"],
        &["cart total coupon"],
        &["inventory reservation", "throttle router"],
    ];
    for q in queries {
        let query: Vec<String> = q.iter().map(|s| s.to_string()).collect();
        out += &show(tools.search_code(&SearchCodeArgs {
            query: query.clone(),
            top_k: Some(10),
            file_pattern: None,
        }));
        out += &show(tools.search_entities(&SearchEntitiesArgs {
            query,
            top_k: Some(10),
            entity_type: None,
        }));
    }
    for id in ids {
        for direction in ["downstream", "upstream"] {
            out += &show(tools.get_dependencies(&GetDependenciesArgs {
                entities: vec![id.clone()],
                direction: Some(direction.to_string()),
                depth: Some(2),
                entity_types: None,
                dependency_types: None,
            }));
        }
        out += &show(tools.get_code(&GetCodeArgs {
            entities: vec![id.clone()],
        }));
    }
    if let Some(file) = ids.iter().find(|id| id.ends_with(".py")) {
        out += &show(tools.get_code_snippet(&GetCodeSnippetArgs {
            file: file.clone(),
            start_line: 1,
            end_line: 12,
        }));
    }
    out
}

/// Every fifth node of the graph (directories, files and entities alike), and an
/// id no tree has (the tools' hints for unknown ids).
fn sample_ids(tools: &CodegraphTools) -> Vec<String> {
    let repo = tools.repo().expect("initialized");
    let g = repo.graph.graph();
    let mut ids: Vec<String> = g
        .node_indices()
        .step_by(5)
        .map(|ix| g.node(ix).id.clone())
        .collect();
    ids.push("shopkeep/missing.py:Nothing".to_string());
    ids
}

fn init(tools: &CodegraphTools, root: &str) -> InitOutput {
    tools
        .init_repository(&InitRepositoryArgs {
            repo_path: root.to_string(),
            force_rebuild: None,
        })
        .expect("init_repository")
        .data
}

#[test]
fn warm_servers_answer_every_tool_as_cold_ones_over_a_sequence_of_commits() {
    let work = tempfile::tempdir().expect("tempdir");
    let origin = work.path().join("origin");
    let repo = git2::Repository::init(&origin).expect("init");
    let warm_cache = work.path().join("warm");
    let trees = trees();
    assert_eq!(trees.len(), 8);
    for (i, files) in trees.iter().enumerate() {
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let oid = commit(&repo, &refs, &format!("commit {i}"));
        let root = checkout(&origin, oid, &work.path().join(format!("tree{i}")));
        let cold = CodegraphTools::new(work.path().join(format!("cold{i}")), Limits::default());
        let cold_init = init(&cold, &root);
        let ids = sample_ids(&cold);
        if i >= 5 {
            // What the unchanged files' names resolve to follows `late.py`.
            let repo = cold.repo().expect("initialized");
            let g = repo.graph.graph();
            let calls = |from: &str| -> Vec<String> {
                let ix = g.index_of(from).expect("the caller is a node");
                g.out_edges(ix)
                    .iter()
                    .filter(|e| e.weight().kind != crate::graph::EdgeKind::Contains)
                    .map(|e| g.node(crate::graph::EdgeRef::target(e)).id.clone())
                    .collect()
            };
            let resolved = i == 6;
            assert_eq!(
                calls("shopkeep/late_user.py:use_late")
                    .contains(&"shopkeep/late.py:late_helper".to_string()),
                resolved,
                "commit {i}"
            );
            assert_eq!(
                calls("shopkeep/later.py:uses_later")
                    .contains(&"shopkeep/late.py:later_helper".to_string()),
                resolved,
                "commit {i}"
            );
        }
        let expected = answers(&cold, &ids);
        // A new server process on the shared cache, as a benchmark run starts one
        // per instance.
        let warm = CodegraphTools::new(warm_cache.clone(), Limits::default());
        let warm_init = init(&warm, &root);
        assert_eq!(
            (warm_init.nodes, warm_init.edges, &warm_init.languages),
            (cold_init.nodes, cold_init.edges, &cold_init.languages),
            "commit {i}"
        );
        assert_eq!(answers(&warm, &ids), expected, "commit {i}");
        // The same tree again: the graph from its cache entry.
        let again = CodegraphTools::new(warm_cache.clone(), Limits::default());
        assert_eq!(init(&again, &root).cache, "hit", "commit {i}");
        assert_eq!(answers(&again, &ids), expected, "commit {i}: a hit");
        assert!(
            expected.contains("score"),
            "commit {i}: some search matched"
        );
    }
}
