//! The dependency graph model: LocAgent's `MultiDiGraph` of directories, files,
//! classes and functions, connected by `contains`, `imports`, `invokes` and
//! `inherits` edges (SPEC.md §1.1).
//!
//! [`CodeGraph`] stores the graph in a [`petgraph::graph::DiGraph`] (parallel edges
//! allowed, so it is a multigraph) plus an index from node id to [`NodeIndex`].
//! Nodes and edges are never removed once added, so indices are stable and their
//! numeric order is the insertion order. Consumers that must reproduce
//! networkx's iteration order (the traversal tools) use [`CodeGraph::out_edges`],
//! [`CodeGraph::successors`] and their `in`/`predecessors` counterparts, which
//! order neighbours the way networkx's adjacency dicts do.

use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, EdgeReference};
pub use petgraph::visit::EdgeRef;

pub use petgraph::graph::NodeIndex;

/// The four node types of LocAgent's graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A directory (`/` is the repository root).
    Directory,
    /// A `.py` file.
    File,
    /// A class, at any nesting depth.
    Class,
    /// A function or method, at any nesting depth (there is no separate method type).
    Function,
}

impl NodeKind {
    /// The type name the original stores in the node's `type` attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Directory => "directory",
            NodeKind::File => "file",
            NodeKind::Class => "class",
            NodeKind::Function => "function",
        }
    }

    /// True for the node types that carry line numbers (classes and functions).
    pub fn is_entity(self) -> bool {
        matches!(self, NodeKind::Class | NodeKind::Function)
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The four edge types, declared in the order of the original's `VALID_EDGE_TYPES`
/// (`contains, inherits, invokes, imports`); [`EdgeKind::key`] is that index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// Directory → directory/file, file → top-level entity, entity → nested entity.
    Contains,
    /// Class → base class (resolved by name, see SPEC.md §1.5).
    Inherits,
    /// Class/function → class/function it calls (resolved by name).
    Invokes,
    /// File/entity → imported file or entity; may carry an alias.
    Imports,
}

impl EdgeKind {
    /// All edge kinds, in `VALID_EDGE_TYPES` order.
    pub const ALL: [EdgeKind; 4] = [
        EdgeKind::Contains,
        EdgeKind::Inherits,
        EdgeKind::Invokes,
        EdgeKind::Imports,
    ];

    /// The type name the original stores in the edge's `type` attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Invokes => "invokes",
            EdgeKind::Imports => "imports",
        }
    }

    /// The edge key the traversal code uses: the index in `VALID_EDGE_TYPES`.
    pub fn key(self) -> usize {
        self as usize
    }

    /// Parses a type name as written by [`EdgeKind::as_str`].
    pub fn parse(s: &str) -> Option<EdgeKind> {
        EdgeKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A node's source code: a byte range of its file's text.
///
/// The text is the file as Python's text mode reads it (UTF-8, universal newlines:
/// `\r\n` and `\r` become `\n`). For a file node the range is the whole text; for a
/// class or function it is what `ast.get_source_segment` returns: from the `def`/
/// `class` keyword (decorators excluded, first line thus de-indented) to the end of
/// the last token of the body.
#[derive(Clone)]
pub struct Code {
    text: Arc<str>,
    range: Range<usize>,
}

impl Code {
    /// Code covering `range` of `text`. Panics in debug builds if the range is not on
    /// char boundaries; builders only produce ranges from parser byte offsets.
    pub fn new(text: Arc<str>, range: Range<usize>) -> Code {
        debug_assert!(text.get(range.clone()).is_some());
        Code { text, range }
    }

    /// Code covering all of `text`.
    pub fn whole(text: Arc<str>) -> Code {
        let range = 0..text.len();
        Code { text, range }
    }

    /// The code as a string slice (empty if the range were ever invalid).
    pub fn as_str(&self) -> &str {
        self.text.get(self.range.clone()).unwrap_or("")
    }

    /// The full text of the file this code belongs to.
    pub fn file_text(&self) -> &Arc<str> {
        &self.text
    }

    /// The byte range of the code within [`Code::file_text`].
    pub fn byte_range(&self) -> Range<usize> {
        self.range.clone()
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Code")
            .field("range", &self.range)
            .field("len", &self.range.len())
            .finish()
    }
}

/// A node: its id, type, and (for files and entities) code; entities also carry
/// 1-based `start_line`/`end_line` (the `def`/`class` line, after decorators, and
/// `end_lineno`).
#[derive(Debug, Clone)]
pub struct Node {
    /// The node id: `/`, a repo-relative directory or file path, or
    /// `<file path>:<dotted qualified name>`.
    pub id: String,
    /// The node type.
    pub kind: NodeKind,
    /// `(start_line, end_line)`, 1-based inclusive; `Some` exactly for classes and functions.
    pub lines: Option<(u32, u32)>,
    /// Source code; `None` for directories.
    pub code: Option<Code>,
}

impl Node {
    /// The part of the id before the first `:` (the file path for entities,
    /// the id itself otherwise), as `nid.split(':')[0]` in the original.
    pub fn file_part(&self) -> &str {
        file_part(&self.id)
    }

    /// The "short name": `nid.split(':')[-1].split('.')[-1]`.
    pub fn short_name(&self) -> &str {
        short_name(&self.id)
    }
}

/// `nid.split(':')[0]`.
pub fn file_part(id: &str) -> &str {
    id.split(':').next().unwrap_or(id)
}

/// `nid.split(':')[-1].split('.')[-1]`: the last dotted component of the last
/// colon-separated part. For a file `a/b.py` this is `py`; for a directory
/// `a/utils` it is `a/utils` (SPEC.md §1.5, item 5).
pub fn short_name(id: &str) -> &str {
    let last = id.rsplit(':').next().unwrap_or(id);
    last.rsplit('.').next().unwrap_or(last)
}

/// An edge: its type and, for `imports` edges, the `as` alias (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The edge type.
    pub kind: EdgeKind,
    /// The `as` name of an `imports` edge; always `None` for other types.
    pub alias: Option<String>,
}

/// LocAgent's dependency graph.
///
/// Build one with [`crate::builder::build_graph`]. Node ids are unique; edges are a
/// multiset (parallel edges of the same type are kept, see SPEC.md §1.3/§1.4).
#[derive(Debug, Default, Clone)]
pub struct CodeGraph {
    graph: DiGraph<Node, Edge>,
    index: HashMap<String, NodeIndex>,
}

impl CodeGraph {
    /// An empty graph.
    pub fn new() -> CodeGraph {
        CodeGraph::default()
    }

    /// Adds a node, or, if the id exists, overwrites its type, lines and code (as
    /// networkx's `add_node` updates attributes). Returns its index.
    pub fn upsert_node(&mut self, node: Node) -> NodeIndex {
        if let Some(&ix) = self.index.get(&node.id) {
            self.graph[ix] = node;
            ix
        } else {
            let id = node.id.clone();
            let ix = self.graph.add_node(node);
            self.index.insert(id, ix);
            ix
        }
    }

    /// Adds a (possibly parallel) edge.
    pub fn add_edge(&mut self, source: NodeIndex, target: NodeIndex, edge: Edge) -> EdgeIndex {
        self.graph.add_edge(source, target, edge)
    }

    /// The index of the node with this id.
    pub fn index_of(&self, id: &str) -> Option<NodeIndex> {
        self.index.get(id).copied()
    }

    /// True if a node with this id exists (`graph.has_node`).
    pub fn contains_id(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    /// The node at `ix`. Panics if `ix` did not come from this graph.
    pub fn node(&self, ix: NodeIndex) -> &Node {
        &self.graph[ix]
    }

    /// The node with this id.
    pub fn node_by_id(&self, id: &str) -> Option<&Node> {
        self.index_of(id).map(|ix| &self.graph[ix])
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Number of edges, parallel edges counted.
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// Node indices in insertion order.
    pub fn node_indices(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph.node_indices()
    }

    /// All edges as `(source, target, edge)` in insertion order.
    pub fn edges(&self) -> impl Iterator<Item = (NodeIndex, NodeIndex, &Edge)> + '_ {
        self.graph
            .raw_edges()
            .iter()
            .map(|e| (e.source(), e.target(), &e.weight))
    }

    /// Outgoing edges of `ix` in networkx `MultiDiGraph` order: grouped by target in
    /// the order each target was first linked from `ix`, then by insertion order.
    pub fn out_edges(&self, ix: NodeIndex) -> Vec<EdgeReference<'_, Edge>> {
        self.nx_ordered(ix, Direction::Outgoing)
    }

    /// Incoming edges of `ix` in networkx order (grouped by source, first-link order).
    pub fn in_edges(&self, ix: NodeIndex) -> Vec<EdgeReference<'_, Edge>> {
        self.nx_ordered(ix, Direction::Incoming)
    }

    /// Distinct successors of `ix` in networkx order (first-link order).
    pub fn successors(&self, ix: NodeIndex) -> Vec<NodeIndex> {
        let mut out: Vec<NodeIndex> = Vec::new();
        for e in self.out_edges(ix) {
            if out.last() != Some(&e.target()) {
                out.push(e.target());
            }
        }
        out
    }

    /// Distinct predecessors of `ix` in networkx order (first-link order).
    pub fn predecessors(&self, ix: NodeIndex) -> Vec<NodeIndex> {
        let mut out: Vec<NodeIndex> = Vec::new();
        for e in self.in_edges(ix) {
            if out.last() != Some(&e.source()) {
                out.push(e.source());
            }
        }
        out
    }

    fn nx_ordered(&self, ix: NodeIndex, dir: Direction) -> Vec<EdgeReference<'_, Edge>> {
        let mut edges: Vec<EdgeReference<'_, Edge>> = self.graph.edges_directed(ix, dir).collect();
        edges.sort_by_key(|e| e.id());
        let other = |e: &EdgeReference<'_, Edge>| match dir {
            Direction::Outgoing => e.target(),
            Direction::Incoming => e.source(),
        };
        // Rank each neighbour by its first edge, then sort stably by that rank.
        let mut first: HashMap<NodeIndex, usize> = HashMap::default();
        for (i, e) in edges.iter().enumerate() {
            first.entry(other(e)).or_insert(i);
        }
        edges.sort_by_key(|e| first[&other(e)]);
        edges
    }

    /// Every node's `(neighbour, edge type)` lists, outgoing and incoming, each in
    /// the order of [`CodeGraph::out_edges`] / [`CodeGraph::in_edges`]: computed for
    /// all nodes in one pass over the edges (in insertion order) instead of one sort
    /// and one hash map per node.
    pub fn nx_adjacency(&self) -> NxAdjacency {
        let n = self.graph.node_count();
        let mut out: Vec<Vec<(NodeIndex, EdgeKind)>> = vec![Vec::new(); n];
        let mut inc: Vec<Vec<(NodeIndex, EdgeKind)>> = vec![Vec::new(); n];
        for e in self.graph.raw_edges() {
            out[e.source().index()].push((e.target(), e.weight.kind));
            inc[e.target().index()].push((e.source(), e.weight.kind));
        }
        let mut rank = vec![u32::MAX; n];
        for list in out.iter_mut().chain(inc.iter_mut()) {
            group_by_first_seen(list, &mut rank);
        }
        NxAdjacency { out, inc }
    }

    /// The underlying petgraph graph, for algorithms.
    pub fn petgraph(&self) -> &DiGraph<Node, Edge> {
        &self.graph
    }

    /// Counts of nodes per type, in [`NodeKind`] order.
    pub fn node_counts(&self) -> [(NodeKind, usize); 4] {
        let mut counts = [
            (NodeKind::Directory, 0),
            (NodeKind::File, 0),
            (NodeKind::Class, 0),
            (NodeKind::Function, 0),
        ];
        for n in self.graph.node_weights() {
            counts[n.kind as usize].1 += 1;
        }
        counts
    }

    /// Counts of edges per type (parallel edges counted), in [`EdgeKind`] order.
    pub fn edge_counts(&self) -> [(EdgeKind, usize); 4] {
        let mut counts = EdgeKind::ALL.map(|k| (k, 0));
        for e in self.graph.edge_weights() {
            counts[e.kind.key()].1 += 1;
        }
        counts
    }
}

/// Every node's neighbour lists in networkx order ([`CodeGraph::nx_adjacency`]).
#[derive(Debug, Clone, Default)]
pub struct NxAdjacency {
    /// Per node: `(target, edge type)` of its outgoing edges.
    pub out: Vec<Vec<(NodeIndex, EdgeKind)>>,
    /// Per node: `(source, edge type)` of its incoming edges.
    pub inc: Vec<Vec<(NodeIndex, EdgeKind)>>,
}

/// Stably groups `list` (in edge insertion order) by neighbour, neighbours in the
/// order first seen: what `nx_ordered` does. `rank` is scratch space indexed by
/// node, all `u32::MAX` on entry and on return.
fn group_by_first_seen(list: &mut [(NodeIndex, EdgeKind)], rank: &mut [u32]) {
    if list.len() < 2 {
        return;
    }
    let mut next = 0u32;
    for (t, _) in list.iter() {
        let r = &mut rank[t.index()];
        if *r == u32::MAX {
            *r = next;
            next += 1;
        }
    }
    // All neighbours distinct: ranks already ascend.
    if next as usize != list.len() {
        list.sort_by_key(|(t, _)| rank[t.index()]);
    }
    for (t, _) in list.iter() {
        rank[t.index()] = u32::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: &str, kind: NodeKind) -> Node {
        Node {
            id: id.to_string(),
            kind,
            lines: None,
            code: None,
        }
    }

    #[test]
    fn short_names_follow_split_rules() {
        assert_eq!(short_name("a/b.py:C.m"), "m");
        assert_eq!(short_name("a/b.py"), "py");
        assert_eq!(short_name("a/utils"), "a/utils");
        assert_eq!(short_name("docs/v1.0"), "0");
        assert_eq!(short_name("/"), "/");
        assert_eq!(file_part("a/b.py:C.m"), "a/b.py");
    }

    #[test]
    fn networkx_neighbour_order_groups_by_first_link() {
        let mut g = CodeGraph::new();
        let a = g.upsert_node(n("a", NodeKind::File));
        let b = g.upsert_node(n("b", NodeKind::File));
        let c = g.upsert_node(n("c", NodeKind::File));
        let e = |kind| Edge { kind, alias: None };
        g.add_edge(a, c, e(EdgeKind::Contains));
        g.add_edge(a, b, e(EdgeKind::Imports));
        g.add_edge(a, c, e(EdgeKind::Imports));
        let order: Vec<(NodeIndex, EdgeKind)> = g
            .out_edges(a)
            .iter()
            .map(|r| (r.target(), r.weight().kind))
            .collect();
        assert_eq!(
            order,
            vec![
                (c, EdgeKind::Contains),
                (c, EdgeKind::Imports),
                (b, EdgeKind::Imports)
            ]
        );
        assert_eq!(g.successors(a), vec![c, b]);
        assert_eq!(g.predecessors(c), vec![a]);
        // upsert overwrites attributes, keeps the index
        let a2 = g.upsert_node(n("a", NodeKind::Directory));
        assert_eq!(a, a2);
        assert_eq!(g.node(a).kind, NodeKind::Directory);
    }
}
