//! Writing a graph as the reference TSV files (`../shared/reference/README.md`).
//!
//! - nodes: `id \t type \t start_line \t end_line`, sorted by id (line fields
//!   empty for directories and files);
//! - edges: `source \t target \t type \t alias`, sorted by (source, target, type),
//!   duplicates kept, ties in insertion order (the order the original adds them,
//!   which decides the order of parallel `imports` edges with different aliases).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::graph::CodeGraph;

/// Writes the node table.
pub fn write_nodes(graph: &CodeGraph, out: &mut impl Write) -> io::Result<()> {
    let mut nodes: Vec<_> = graph.node_indices().map(|ix| graph.node(ix)).collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    for n in nodes {
        match n.lines {
            Some((s, e)) => writeln!(out, "{}\t{}\t{s}\t{e}", n.id, n.kind)?,
            None => writeln!(out, "{}\t{}\t\t", n.id, n.kind)?,
        }
    }
    Ok(())
}

/// Writes the edge table.
pub fn write_edges(graph: &CodeGraph, out: &mut impl Write) -> io::Result<()> {
    let mut edges: Vec<_> = graph
        .edges()
        .map(|(s, t, e)| (graph.node(s).id.as_str(), graph.node(t).id.as_str(), e))
        .collect();
    // Stable: equal keys keep insertion order.
    edges.sort_by(|a, b| (a.0, a.1, a.2.kind.as_str()).cmp(&(b.0, b.1, b.2.kind.as_str())));
    for (s, t, e) in edges {
        writeln!(
            out,
            "{s}\t{t}\t{}\t{}",
            e.kind,
            e.alias.as_deref().unwrap_or("")
        )?;
    }
    Ok(())
}

/// Writes `PREFIX.nodes.tsv` and `PREFIX.edges.tsv`; returns their paths.
pub fn write_tsv(graph: &CodeGraph, prefix: &Path) -> io::Result<(PathBuf, PathBuf)> {
    let with_suffix = |suffix: &str| {
        let mut s = prefix.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    let nodes_path = with_suffix(".nodes.tsv");
    let edges_path = with_suffix(".edges.tsv");
    let create = |p: &Path| {
        File::create(p)
            .map(BufWriter::new)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", p.display())))
    };
    let mut w = create(&nodes_path)?;
    write_nodes(graph, &mut w)?;
    w.flush()?;
    let mut w = create(&edges_path)?;
    write_edges(graph, &mut w)?;
    w.flush()?;
    Ok((nodes_path, edges_path))
}
