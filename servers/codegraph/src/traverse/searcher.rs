//! `RepoEntitySearcher` and `RepoDependencySearcher` (SPEC.md §2.2, §2.3).

use crate::graph::{EdgeKind, NodeIndex, NodeKind};

use super::RepoGraph;

/// What `get_node_data` reports about a node (without the code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeData {
    /// The node.
    pub node: NodeIndex,
    /// Its type.
    pub kind: NodeKind,
    /// `(start_line, end_line)`, present only when the node has non-empty code:
    /// the entity's lines, or `(1, len(code.split("\n")))` for a file (so a file
    /// ending in a newline counts one extra, empty line).
    pub lines: Option<(u32, u32)>,
}

impl RepoGraph {
    /// `has_node(nid, include_test)`: the node's index, or `None` when it does not
    /// exist or is a test id and `include_test` is false.
    pub fn find(&self, nid: &str, include_test: bool) -> Option<NodeIndex> {
        let ix = self.graph().index_of(nid)?;
        (include_test || !self.is_test(ix)).then_some(ix)
    }

    /// `get_node_data([nid])[0]` without the code content.
    pub fn node_data(&self, ix: NodeIndex) -> NodeData {
        let node = self.graph().node(ix);
        let code = node.code.as_ref().map(|c| c.as_str()).unwrap_or("");
        let lines = if code.is_empty() {
            None
        } else if let Some(lines) = node.lines {
            Some(lines)
        } else if node.kind == NodeKind::File {
            Some((1, line_count(code)))
        } else {
            None
        };
        NodeData {
            node: ix,
            kind: node.kind,
            lines,
        }
    }

    /// `RepoDependencySearcher.get_neighbors`: for each distinct neighbour (networkx
    /// order) that passes `node_types` and (when `ignore_test`) is not a test id,
    /// one entry per parallel edge whose type passes `edge_types`. A neighbour can
    /// appear several times. As in the original, an empty filter list means no
    /// filter here.
    pub fn neighbors(
        &self,
        ix: NodeIndex,
        forward: bool,
        node_types: Option<&[NodeKind]>,
        edge_types: Option<&[EdgeKind]>,
        ignore_test: bool,
    ) -> Vec<(NodeIndex, EdgeKind)> {
        let adj = if forward { self.out(ix) } else { self.inc(ix) };
        let node_types = node_types.filter(|f| !f.is_empty());
        let edge_types = edge_types.filter(|f| !f.is_empty());
        adj.iter()
            .filter(|(n, kind)| {
                node_types.is_none_or(|f| f.contains(&self.kind(*n)))
                    && !(ignore_test && self.is_test(*n))
                    && edge_types.is_none_or(|f| f.contains(kind))
            })
            .copied()
            .collect()
    }
}

/// `len(code.split("\n"))`.
pub fn line_count(code: &str) -> u32 {
    u32::try_from(code.matches('\n').count() + 1).unwrap_or(u32::MAX)
}
