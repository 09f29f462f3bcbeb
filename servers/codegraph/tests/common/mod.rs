//! Helpers shared by the integration tests: writing small repositories and
//! rendering graphs as sorted text.

#![allow(dead_code)]

use std::fs;
use std::path::Path;

use navbench_codegraph::builder::build_graph;
use navbench_codegraph::export::{write_edges, write_nodes};
use navbench_codegraph::graph::CodeGraph;

/// Writes `files` (path, content) under `root`, creating directories.
pub fn write_files(root: &Path, files: &[(&str, &[u8])]) {
    for (rel, content) in files {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).expect("create fixture directory");
        }
        fs::write(&p, content).expect("write fixture file");
    }
}

/// Builds the graph of a fresh temporary repository holding `files`.
pub fn graph_of(files: &[(&str, &str)]) -> CodeGraph {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bytes: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
    write_files(tmp.path(), &bytes);
    build_graph(tmp.path()).expect("build graph")
}

/// The node table, as the export writes it.
pub fn nodes_tsv(g: &CodeGraph) -> String {
    let mut out = Vec::new();
    write_nodes(g, &mut out).expect("write nodes");
    String::from_utf8(out).expect("utf-8")
}

/// The edge table, as the export writes it.
pub fn edges_tsv(g: &CodeGraph) -> String {
    let mut out = Vec::new();
    write_edges(g, &mut out).expect("write edges");
    String::from_utf8(out).expect("utf-8")
}

/// Edges of one type as `source -> target` lines (duplicates kept, sorted).
pub fn edges_of(g: &CodeGraph, kind: &str) -> Vec<String> {
    let mut v: Vec<String> = g
        .edges()
        .filter(|(_, _, e)| e.kind.as_str() == kind)
        .map(|(s, t, e)| match &e.alias {
            Some(a) => format!("{} -> {} as {a}", g.node(s).id, g.node(t).id),
            None => format!("{} -> {}", g.node(s).id, g.node(t).id),
        })
        .collect();
    v.sort();
    v
}

/// Edges of one type leaving `source`, as target ids (duplicates kept, sorted).
pub fn targets(g: &CodeGraph, source: &str, kind: &str) -> Vec<String> {
    let prefix = format!("{source} -> ");
    edges_of(g, kind)
        .into_iter()
        .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .collect()
}
