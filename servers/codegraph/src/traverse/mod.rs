//! LocAgent's graph traversal (`dependency_graph/traverse_graph.py`, SPEC.md §2).
//!
//! [`RepoGraph`] wraps a [`CodeGraph`] with what every traversal call needs,
//! precomputed once: neighbour lists in networkx order, the test-file flag of every
//! node, and the entity-name dictionaries of `RepoEntitySearcher`. On top of it:
//!
//! - [`searcher`]: `RepoEntitySearcher` (`has_node`, `get_node_data`, the global name
//!   dictionaries) and `RepoDependencySearcher.get_neighbors`;
//! - [`tree`]: `traverse_tree_structure`, the indented tree the agent mostly reads;
//! - [`subgraph`]: `traverse_graph_structure` and its encodings (pydot DOT, the
//!   default, plus `raw` and `incident`);
//!
//! `traverse_json_structure` is not ported: the original never calls it
//! (`return_json = False`), see FIDELITY.md.
//!
//! Options shared by the traversals are in [`TraverseOptions`]; [`parse_direction`],
//! [`parse_node_kinds`] and [`parse_edge_kinds`] validate agent input with the
//! original's messages.

pub mod searcher;
pub mod subgraph;
pub mod tree;

use rustc_hash::FxHashMap as HashMap;
use std::fmt;

use crate::graph::{CodeGraph, EdgeKind, NodeIndex, NodeKind, file_part};

/// `is_test_file(nid)`: lower-case the file part of the id, split it on spaces,
/// underscores and slashes, and report whether any piece starts with `test`
/// (SPEC.md §2.1; `django/test/client.py` and `a/testbed.py` count, `conftest.py` not).
pub fn is_test_file(nid: &str) -> bool {
    file_part(nid)
        .to_lowercase()
        .split([' ', '_', '/'])
        .any(|w| w.starts_with("test"))
}

/// Traversal direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Follow edges forward (what the entity contains, calls, imports, inherits).
    Downstream,
    /// Follow edges backward (what contains, calls, imports or inherits the entity).
    Upstream,
    /// Both ways from the start entity, then onward in the direction of each branch.
    Both,
}

impl Direction {
    /// The original's name of the direction.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Downstream => "downstream",
            Direction::Upstream => "upstream",
            Direction::Both => "both",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a direction: the original's `downstream`/`upstream`/`both`, plus the
/// aliases `outgoing` (= downstream) and `incoming` (= upstream). The error is the
/// original's assertion text, extended with the aliases.
pub fn parse_direction(s: &str) -> Result<Direction, String> {
    match s {
        "downstream" | "outgoing" => Ok(Direction::Downstream),
        "upstream" | "incoming" => Ok(Direction::Upstream),
        "both" => Ok(Direction::Both),
        _ => Err(format!(
            "Invalid value for `direction`: Expected one of 'downstream', 'upstream', and 'both'. Received: '{s}'. \
             ('outgoing' and 'incoming' are accepted as aliases of 'downstream' and 'upstream'.)"
        )),
    }
}

/// Validates a traversal depth: -1 (unlimited, i.e. 20) or a non-negative integer.
/// Returns the effective number of hops.
pub fn parse_depth(depth: i64) -> Result<usize, String> {
    match depth {
        -1 => Ok(20),
        d if d >= 0 => Ok(usize::try_from(d).unwrap_or(usize::MAX)),
        d => Err(format!(
            "Invalid value for `traversal_depth`: It must be either -1 or a non-negative integer (>= 0). Received: {d}."
        )),
    }
}

/// Parses entity (node) type names; unknown names are an error (the original's
/// check is dead code, see FIDELITY.md).
pub fn parse_node_kinds(names: &[String]) -> Result<Vec<NodeKind>, String> {
    const ALL: [NodeKind; 4] = [
        NodeKind::Directory,
        NodeKind::File,
        NodeKind::Class,
        NodeKind::Function,
    ];
    let mut invalid = Vec::new();
    let mut kinds = Vec::new();
    for n in names {
        match ALL.iter().find(|k| k.as_str() == n) {
            Some(&k) => kinds.push(k),
            None => invalid.push(n.clone()),
        }
    }
    if invalid.is_empty() {
        Ok(kinds)
    } else {
        Err(format!(
            "Invalid node types {invalid:?} in node_type_filter. Expected node type in ['directory', 'file', 'class', 'function'] (methods are 'function')"
        ))
    }
}

/// Parses dependency (edge) type names with the original's error text.
pub fn parse_edge_kinds(names: &[String]) -> Result<Vec<EdgeKind>, String> {
    let mut invalid = Vec::new();
    let mut kinds = Vec::new();
    for n in names {
        match EdgeKind::parse(n) {
            Some(k) => kinds.push(k),
            None => invalid.push(n.clone()),
        }
    }
    if invalid.is_empty() {
        Ok(kinds)
    } else {
        Err(format!(
            "Invalid edge types {invalid:?} in edge_type_filter. Expected edge type in ['contains', 'inherits', 'invokes', 'imports']"
        ))
    }
}

/// What a traversal follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraverseOptions {
    /// Direction from the start entity.
    pub direction: Direction,
    /// Hops (already mapped from -1 to 20).
    pub hops: usize,
    /// Neighbour node types to keep (`None`: all).
    pub node_types: Option<Vec<NodeKind>>,
    /// Edge types to follow (`None`: all).
    pub edge_types: Option<Vec<EdgeKind>>,
}

impl Default for TraverseOptions {
    /// Downstream, 2 hops, no filters (the defaults of `explore_tree_structure`).
    fn default() -> Self {
        TraverseOptions {
            direction: Direction::Downstream,
            hops: 2,
            node_types: None,
            edge_types: None,
        }
    }
}

/// A neighbour entry: the node at the other end and the edge type.
pub type Adjacent = (NodeIndex, EdgeKind);

/// A [`CodeGraph`] with precomputed neighbour lists, test flags and name indexes
/// (plus a lazily filled cache of skeletons, which cost a parse).
#[derive(Debug)]
pub struct RepoGraph {
    graph: CodeGraph,
    skeletons: std::sync::Mutex<HashMap<NodeIndex, std::sync::Arc<str>>>,
    out: Vec<Box<[Adjacent]>>,
    inc: Vec<Box<[Adjacent]>>,
    test: Vec<bool>,
    names: HashMap<String, Vec<NodeIndex>>,
    names_lower: HashMap<String, Vec<NodeIndex>>,
}

/// What [`RepoGraph`] precomputes from its graph: the neighbour lists in networkx
/// order, the test flags and the name dictionaries. Computed from a borrowed graph
/// ([`RepoGraphParts::of`]) so that `init_repository` can compute it beside the other
/// indexes of the same graph.
#[derive(Debug)]
pub struct RepoGraphParts {
    out: Vec<Box<[Adjacent]>>,
    inc: Vec<Box<[Adjacent]>>,
    test: Vec<bool>,
    names: HashMap<String, Vec<NodeIndex>>,
    names_lower: HashMap<String, Vec<NodeIndex>>,
}

impl RepoGraphParts {
    /// The parts of `graph` (the neighbour lists and the name dictionaries in
    /// parallel).
    pub fn of(graph: &CodeGraph) -> RepoGraphParts {
        let boxed = |lists: Vec<Vec<Adjacent>>| -> Vec<Box<[Adjacent]>> {
            lists.into_iter().map(Vec::into_boxed_slice).collect()
        };
        let ((out, inc), (test, names, names_lower)) = rayon::join(
            || {
                let adjacency = graph.nx_adjacency();
                (boxed(adjacency.out), boxed(adjacency.inc))
            },
            || name_dictionaries(graph),
        );
        RepoGraphParts {
            out,
            inc,
            test,
            names,
            names_lower,
        }
    }
}

/// Name → nodes maps of `RepoEntitySearcher`.
type Names = HashMap<String, Vec<NodeIndex>>;

/// Every node's test flag, and the name dictionaries (exact and lower-case) of the
/// non-test nodes, in node order.
fn name_dictionaries(graph: &CodeGraph) -> (Vec<bool>, Names, Names) {
    let mut test = Vec::with_capacity(graph.node_count());
    let mut names: Names = HashMap::default();
    let mut names_lower: Names = HashMap::default();
    for ix in graph.node_indices() {
        let id = &graph.node(ix).id;
        let is_test = is_test_file(id);
        test.push(is_test);
        if is_test {
            continue;
        }
        for key in name_keys(id) {
            names_lower.entry(key.to_lowercase()).or_default().push(ix);
            names.entry(key.to_string()).or_default().push(ix);
        }
    }
    (test, names, names_lower)
}

impl RepoGraph {
    /// Precomputes everything for `graph`.
    pub fn new(graph: CodeGraph) -> RepoGraph {
        let parts = RepoGraphParts::of(&graph);
        RepoGraph::from_parts(graph, parts)
    }

    /// The graph with what [`RepoGraphParts::of`] computed from it (which can run
    /// beside other work that borrows the graph, before the graph is moved here).
    pub fn from_parts(graph: CodeGraph, parts: RepoGraphParts) -> RepoGraph {
        let RepoGraphParts {
            out,
            inc,
            test,
            names,
            names_lower,
        } = parts;
        RepoGraph {
            graph,
            skeletons: std::sync::Mutex::new(HashMap::default()),
            out,
            inc,
            test,
            names,
            names_lower,
        }
    }

    /// The wrapped graph.
    pub fn graph(&self) -> &CodeGraph {
        &self.graph
    }

    /// Outgoing `(target, edge type)` entries of `ix`, networkx order.
    pub fn out(&self, ix: NodeIndex) -> &[Adjacent] {
        self.out.get(ix.index()).map_or(&[], |v| v)
    }

    /// Incoming `(source, edge type)` entries of `ix`, networkx order.
    pub fn inc(&self, ix: NodeIndex) -> &[Adjacent] {
        self.inc.get(ix.index()).map_or(&[], |v| v)
    }

    /// True if the node's id is a test id ([`is_test_file`]).
    pub fn is_test(&self, ix: NodeIndex) -> bool {
        self.test.get(ix.index()).copied().unwrap_or(false)
    }

    /// The node's id.
    pub fn id(&self, ix: NodeIndex) -> &str {
        &self.graph.node(ix).id
    }

    /// The node's type.
    pub fn kind(&self, ix: NodeIndex) -> NodeKind {
        self.graph.node(ix).kind
    }

    /// The skeleton of the node's code ([`crate::format::skeleton::skeleton`]),
    /// computed once per node.
    pub fn skeleton(&self, ix: NodeIndex) -> std::sync::Arc<str> {
        if let Ok(cache) = self.skeletons.lock()
            && let Some(s) = cache.get(&ix)
        {
            return std::sync::Arc::clone(s);
        }
        let code = self.graph.node(ix).code.as_ref().map_or("", |c| c.as_str());
        let s: std::sync::Arc<str> = crate::format::skeleton::skeleton(code).into();
        if let Ok(mut cache) = self.skeletons.lock() {
            cache.insert(ix, std::sync::Arc::clone(&s));
        }
        s
    }

    /// `global_name_dict[key]` (non-test nodes, graph order).
    pub fn by_name(&self, key: &str) -> Option<&[NodeIndex]> {
        self.names.get(key).map(Vec::as_slice)
    }

    /// `global_name_dict_lowercase[key]`.
    pub fn by_name_lower(&self, key: &str) -> Option<&[NodeIndex]> {
        self.names_lower.get(key).map(Vec::as_slice)
    }
}

/// The keys under which `RepoEntitySearcher.global_name_dict` files an id: basename
/// and stem for `.py` ids (and file ids of the other languages: `app.tsx`, `app`),
/// the short name for ids with `:`, none for directories.
fn name_keys(id: &str) -> Vec<&str> {
    let source_stem = || {
        navbench_lang::language_for_path(id)
            .filter(|_| !id.contains(':'))
            .and_then(|_| id.rsplit_once('.').map(|(stem, _)| stem))
    };
    if let Some(stem_path) = id.strip_suffix(".py").or_else(source_stem) {
        let base = id.rsplit('/').next().unwrap_or(id);
        let stem = stem_path.rsplit('/').next().unwrap_or(stem_path);
        vec![base, stem]
    } else if id.contains(':') {
        vec![crate::graph::short_name(id)]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_file_rule() {
        for (id, want) in [
            ("tests/x.py", true),
            ("a/test_b.py", true),
            ("pkg/testing/u.py", true),
            ("test.py", true),
            ("django/test/client.py", true),
            ("a/testbed.py", true),
            ("conftest.py", false),
            ("pytest_x/a.py", false),
            ("tests", true),
            ("a/b.py:test_x", false),
            ("My Tests/a.py", true),
        ] {
            assert_eq!(is_test_file(id), want, "{id}");
        }
    }

    #[test]
    fn validation_messages() {
        assert_eq!(parse_direction("incoming"), Ok(Direction::Upstream));
        assert!(
            parse_direction("up")
                .unwrap_err()
                .starts_with("Invalid value for `direction`")
        );
        assert_eq!(parse_depth(-1), Ok(20));
        assert_eq!(parse_depth(0), Ok(0));
        assert!(parse_depth(-2).unwrap_err().contains("Received: -2."));
        assert!(
            parse_edge_kinds(&["calls".into()])
                .unwrap_err()
                .starts_with("Invalid edge types [\"calls\"]")
        );
        assert_eq!(
            parse_node_kinds(&["class".into(), "function".into()]),
            Ok(vec![NodeKind::Class, NodeKind::Function])
        );
        assert!(parse_node_kinds(&["method".into()]).is_err());
    }

    #[test]
    fn name_keys_follow_the_original() {
        assert_eq!(name_keys("a/core.py"), ["core.py", "core"]);
        assert_eq!(name_keys("a/core.py:C.m"), ["m"]);
        assert!(name_keys("a/b").is_empty());
    }
}
