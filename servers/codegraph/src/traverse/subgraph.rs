//! `traverse_graph_structure` (SPEC.md §2.5): the subgraph around a set of roots and
//! its text encodings.
//!
//! The walk pops its frontier from the end (so it is depth-first, despite the
//! original's "BFS" comment), skips visited nodes and nodes at `|level| >= hops`,
//! and with `both` fans out both ways only at level 0. Edges are stored with the
//! type index as key, so parallel edges of one type collapse and an edge reached
//! from both ends is stored once. [`Subgraph::to_dot`] reproduces the pydot text the
//! agent receives.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::graph::{EdgeKind, NodeIndex};

use super::{Direction, RepoGraph, TraverseOptions};

/// A networkx-like `MultiDiGraph` keyed by edge type: nodes in insertion order,
/// per node its targets in first-link order, per target its edge types in
/// insertion order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subgraph {
    nodes: Vec<NodeIndex>,
    pos: HashMap<NodeIndex, usize>,
    adj: Vec<Vec<(NodeIndex, Vec<EdgeKind>)>>,
}

impl Subgraph {
    fn add_node(&mut self, n: NodeIndex) -> usize {
        if let Some(&p) = self.pos.get(&n) {
            return p;
        }
        let p = self.nodes.len();
        self.nodes.push(n);
        self.pos.insert(n, p);
        self.adj.push(Vec::new());
        p
    }

    fn add_edge(&mut self, u: NodeIndex, v: NodeIndex, kind: EdgeKind) {
        let pu = self.add_node(u);
        self.add_node(v);
        let targets = &mut self.adj[pu];
        match targets.iter_mut().find(|(t, _)| *t == v) {
            Some((_, kinds)) => {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            None => targets.push((v, vec![kind])),
        }
    }

    /// Nodes in insertion order (roots first).
    pub fn nodes(&self) -> &[NodeIndex] {
        &self.nodes
    }

    /// Edges in `subG.edges()` order: by source node order, then first-link order
    /// of targets, then key insertion order.
    pub fn edges(&self) -> Vec<(NodeIndex, NodeIndex, EdgeKind)> {
        let mut out = Vec::new();
        for (i, &u) in self.nodes.iter().enumerate() {
            for (v, kinds) in &self.adj[i] {
                for &k in kinds {
                    out.push((u, *v, k));
                }
            }
        }
        out
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The pydot encoding the original returns (after removing `key=N, ` and the
    /// trailing newline): node lines first, then edge lines; `""` for no nodes.
    pub fn to_dot(&self, g: &RepoGraph) -> String {
        if self.nodes.is_empty() {
            return String::new();
        }
        let mut s = String::from("digraph {\n");
        for &n in &self.nodes {
            let _ = writeln!(s, "\"{}\";", g.id(n));
        }
        for (u, v, k) in self.edges() {
            let _ = writeln!(s, "\"{}\" -> \"{}\" [type={}];", g.id(u), g.id(v), k);
        }
        s.push('}');
        s
    }

    /// The `raw` encoding: the Python repr of `list(subG.edges(data='type'))`.
    pub fn to_raw(&self, g: &RepoGraph) -> String {
        let items: Vec<String> = self
            .edges()
            .into_iter()
            .map(|(u, v, k)| format!("({}, {}, '{}')", py_str(g.id(u)), py_str(g.id(v)), k))
            .collect();
        format!("[{}]", items.join(", "))
    }

    /// The `incident` encoding (SPEC.md §2.5): one sentence per node with out-edges.
    pub fn to_incident(&self, g: &RepoGraph) -> String {
        let mut blocks = Vec::new();
        for (i, &u) in self.nodes.iter().enumerate() {
            // etype -> ntype -> neighbours, each in first-seen order
            let mut groups: Vec<(EdgeKind, ByType)> = Vec::new();
            for (v, kinds) in &self.adj[i] {
                let ntype = g.kind(*v).as_str();
                for &k in kinds {
                    let gi = match groups.iter().position(|(e, _)| *e == k) {
                        Some(p) => p,
                        None => {
                            groups.push((k, Vec::new()));
                            groups.len() - 1
                        }
                    };
                    let by_type = &mut groups[gi].1;
                    match by_type.iter_mut().find(|(t, _)| *t == ntype) {
                        Some((_, list)) => list.push(*v),
                        None => by_type.push((ntype, vec![*v])),
                    }
                }
            }
            if groups.is_empty() {
                continue;
            }
            let mut s = format!("{} \"{}\" ", g.kind(u), g.id(u));
            for (k, by_type) in &groups {
                let _ = write!(s, "{k} ");
                for (ntype, list) in by_type {
                    let quoted: Vec<String> =
                        list.iter().map(|n| format!("\"{}\"", g.id(*n))).collect();
                    let _ = write!(s, "{ntype} {} ", quoted.join(","));
                }
                s.pop();
                s.push_str("; and ");
            }
            s.truncate(s.len() - "; and ".len());
            s.push('.');
            blocks.push(s);
        }
        blocks.join("\n\n")
    }
}

/// Neighbours grouped by node type, in first-seen order.
type ByType = Vec<(&'static str, Vec<NodeIndex>)>;

/// Python's `repr` of a str, for the ids that occur in practice (single quotes
/// unless the text holds a single quote and no double quote).
fn py_str(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{}\"", s.replace('\\', "\\\\"))
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// Walks the graph from `roots` (SPEC.md §2.5) and returns the subgraph.
pub fn traverse_graph(g: &RepoGraph, roots: &[NodeIndex], opts: &TraverseOptions) -> Subgraph {
    let mut sub = Subgraph::default();
    for &r in roots {
        sub.add_node(r);
    }
    let hops = i64::try_from(opts.hops).unwrap_or(i64::MAX);
    let mut frontier: Vec<(NodeIndex, i64)> = roots.iter().map(|&r| (r, 0)).collect();
    let mut visited: HashSet<NodeIndex> = HashSet::new();
    let ntypes = opts.node_types.as_deref();
    let etypes = opts.edge_types.as_deref();
    while let Some((nid, level)) = frontier.pop() {
        if visited.contains(&nid) || level.abs() >= hops {
            continue;
        }
        visited.insert(nid);
        let forward = level > 0
            || (level == 0 && matches!(opts.direction, Direction::Downstream | Direction::Both));
        let backward = level < 0
            || (level == 0 && matches!(opts.direction, Direction::Upstream | Direction::Both));
        if forward {
            for (n, k) in g.neighbors(nid, true, ntypes, etypes, true) {
                frontier.push((n, level + 1));
                sub.add_edge(nid, n, k);
            }
        }
        if backward {
            for (n, k) in g.neighbors(nid, false, ntypes, etypes, true) {
                frontier.push((n, level - 1));
                sub.add_edge(n, nid, k);
            }
        }
    }
    sub
}
