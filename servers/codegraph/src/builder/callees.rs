//! Resolving called and inherited names to nodes (SPEC.md §1.5, §1.6):
//! `find_all_possible_callee`, the fuzzy `callee_name_dict`, and the global name
//! fallback.
//!
//! Everything here reads the graph after all nodes, `contains` edges and
//! file-level `imports` edges exist; it never reads entity-level edges, so the
//! result does not depend on the order entities are processed in, and entities
//! are resolved in parallel.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use petgraph::visit::EdgeRef;

use crate::graph::{CodeGraph, EdgeKind, NodeIndex, NodeKind, short_name};

/// Read-only indexes over the graph used to resolve names.
pub(crate) struct Scopes<'g> {
    graph: &'g CodeGraph,
    /// Distinct `contains` children of each node, in first-link order.
    children: Vec<Vec<NodeIndex>>,
    /// The first `contains` parent of each node.
    parent: Vec<Option<NodeIndex>>,
    /// For file nodes: their `imports` out-edges `(target, alias)` in networkx order.
    imports_out: Vec<Vec<(NodeIndex, Option<&'g str>)>>,
    /// `global_name_dict`: short name → every node with it, in node order.
    global: HashMap<&'g str, Vec<NodeIndex>>,
    /// The short name of each node.
    short: Vec<&'g str>,
}

/// What an `__init__.py` file contributes to the file-level candidates of the
/// files that reach it ([`Scopes::init_scope`]).
pub(crate) struct InitScope<'g> {
    by_name: HashMap<&'g str, Vec<NodeIndex>>,
    aliases: Vec<(&'g str, NodeIndex)>,
}

/// What a file contributes to the candidates of each entity inside it: the
/// contents of the files it imports (and of the `__init__.py` files reachable
/// through imports), and the aliases of those imports.
pub(crate) struct FileScope<'g> {
    by_name: HashMap<&'g str, Vec<NodeIndex>>,
    alias: HashMap<&'g str, NodeIndex>,
}

impl<'g> Scopes<'g> {
    /// Indexes `graph` (which must hold all nodes, `contains` edges and file-level
    /// `imports` edges).
    pub(crate) fn new(graph: &'g CodeGraph) -> Scopes<'g> {
        let n = graph.node_count();
        let mut children = vec![Vec::new(); n];
        let mut parent = vec![None; n];
        let mut imports_out = vec![Vec::new(); n];
        for (s, t, e) in graph.edges() {
            if e.kind == EdgeKind::Contains {
                let ch: &mut Vec<NodeIndex> = &mut children[s.index()];
                if !ch.contains(&t) {
                    ch.push(t);
                }
                parent[t.index()].get_or_insert(s);
            }
        }
        for ix in graph.node_indices() {
            if graph.node(ix).kind == NodeKind::File {
                imports_out[ix.index()] = graph
                    .out_edges(ix)
                    .into_iter()
                    .filter(|e| e.weight().kind == EdgeKind::Imports)
                    .map(|e| (e.target(), e.weight().alias.as_deref()))
                    .collect();
            }
        }
        let short: Vec<&'g str> = graph
            .node_indices()
            .map(|ix| short_name(&graph.node(ix).id))
            .collect();
        let mut global: HashMap<&'g str, Vec<NodeIndex>> = HashMap::default();
        for ix in graph.node_indices() {
            // Nodes of other languages' files are not Python names (their edges are
            // `super::polyglot_links`'s); in a Python-only tree this skips nothing.
            let node = graph.node(ix);
            if node.kind != NodeKind::Directory
                && !crate::graph::file_part(&node.id).ends_with(".py")
            {
                continue;
            }
            global.entry(short[ix.index()]).or_default().push(ix);
        }
        Scopes {
            graph,
            children,
            parent,
            imports_out,
            global,
            short,
        }
    }

    fn kind(&self, ix: NodeIndex) -> NodeKind {
        self.graph.node(ix).kind
    }

    fn short(&self, ix: NodeIndex) -> &'g str {
        self.short[ix.index()]
    }

    /// `get_inner_nodes(query, src)`: the `contains` children of `src` other than
    /// `query`, each child class followed by its own inner nodes.
    fn inner(&self, query: NodeIndex, src: NodeIndex, out: &mut Vec<NodeIndex>) {
        for &child in &self.children[src.index()] {
            if child != query {
                out.push(child);
                if self.kind(child) == NodeKind::Class {
                    self.inner(query, child, out);
                }
            }
        }
    }

    /// What `__init__.py` file `init` adds to the file-level candidates of every
    /// file that reaches it through imports: its inner nodes, then the inner nodes
    /// and definitions its imports name, grouped by short name; and its import
    /// aliases in order. It does not depend on the importing file (that file is never
    /// a `contains` child of `init` or of a class), so it is computed once per
    /// `__init__.py` rather than once per file that reaches it: sympy's package
    /// `__init__` files re-export thousands of names to every module.
    pub(crate) fn init_scope(&self, init: NodeIndex) -> InitScope<'g> {
        let mut cands = Vec::new();
        // No node is `NodeIndex::end()`: nothing is excluded.
        self.inner(NodeIndex::end(), init, &mut cands);
        let mut aliases = Vec::new();
        self.visit_imports(init, &mut cands, &mut aliases);
        InitScope {
            by_name: self.group(cands),
            aliases,
        }
    }

    /// The candidates `src`'s imports add (`inner` nodes of imported files and
    /// classes, imported classes and functions), and their aliases in order.
    fn visit_imports(
        &self,
        src: NodeIndex,
        cands: &mut Vec<NodeIndex>,
        aliases: &mut Vec<(&'g str, NodeIndex)>,
    ) {
        for &(d, a) in &self.imports_out[src.index()] {
            if let Some(a) = a {
                aliases.push((a, d));
            }
            let k = self.kind(d);
            if matches!(k, NodeKind::File | NodeKind::Class) {
                self.inner(src, d, cands);
            }
            if matches!(k, NodeKind::Function | NodeKind::Class) {
                cands.push(d);
            }
        }
    }

    /// Candidates grouped by short name, each group in node order without repeats.
    fn group(&self, mut cands: Vec<NodeIndex>) -> HashMap<&'g str, Vec<NodeIndex>> {
        cands.sort_unstable();
        cands.dedup();
        let mut by_name: HashMap<&'g str, Vec<NodeIndex>> = HashMap::default();
        for c in cands {
            by_name.entry(self.short(c)).or_default().push(c);
        }
        by_name
    }

    /// The `__init__.py` files `file` reaches through file-level imports, in the
    /// original's discovery order.
    fn reached_inits(&self, file: NodeIndex) -> Vec<NodeIndex> {
        let mut file_list: Vec<NodeIndex> = Vec::new();
        let mut stack = vec![file];
        while let Some(x) = stack.pop() {
            for &(d, _) in &self.imports_out[x.index()] {
                if d != file
                    && !file_list.contains(&d)
                    && self.kind(d) == NodeKind::File
                    && self.graph.node(d).id.ends_with("__init__.py")
                {
                    file_list.push(d);
                    stack.push(d);
                }
            }
        }
        file_list
    }

    /// The file-level part of `find_all_possible_callee` for file `file`, for the
    /// names in `needed` only (the names its entities call or inherit from: nothing
    /// else is ever looked up in it), with the contributions of `__init__.py` files
    /// taken from `inits` ([`Scopes::init_scope`]; computed here when missing). The
    /// candidates of each name are those of the original's whole candidate list.
    pub(crate) fn file_scope(
        &self,
        file: NodeIndex,
        needed: &HashSet<&str>,
        inits: &HashMap<NodeIndex, InitScope<'g>>,
    ) -> FileScope<'g> {
        let file_list = self.reached_inits(file);
        let computed: Vec<(NodeIndex, InitScope<'g>)> = file_list
            .iter()
            .filter(|i| !inits.contains_key(*i))
            .map(|&i| (i, self.init_scope(i)))
            .collect();
        let reached: Vec<&InitScope<'g>> = file_list
            .iter()
            .filter_map(|i| {
                inits
                    .get(i)
                    .or_else(|| computed.iter().find(|(c, _)| c == i).map(|(_, s)| s))
            })
            .collect();
        let mut own = Vec::new();
        let mut alias: HashMap<&'g str, NodeIndex> = HashMap::default();
        for s in &reached {
            alias.extend(s.aliases.iter().copied());
        }
        let mut own_aliases = Vec::new();
        self.visit_imports(file, &mut own, &mut own_aliases);
        alias.extend(own_aliases);
        own.retain(|&c| needed.contains(self.short(c)));
        let mut by_name = self.group(own);
        for name in needed {
            let mut key: Option<&'g str> = None;
            let mut extra: Vec<NodeIndex> = Vec::new();
            for s in &reached {
                if let Some((k, v)) = s.by_name.get_key_value(*name) {
                    key = Some(*k);
                    extra.extend(v);
                }
            }
            let Some(key) = key else { continue };
            let list = by_name.entry(key).or_default();
            list.extend(extra);
            list.sort_unstable();
            list.dedup();
        }
        FileScope { by_name, alias }
    }

    /// The local part of `find_all_possible_callee` for entity `node`: its own
    /// nested definitions and, walking up, the siblings of each enclosing scope.
    /// Returns the candidates and the file the walk ended at.
    pub(crate) fn local(&self, node: NodeIndex) -> (Vec<NodeIndex>, Option<NodeIndex>) {
        let mut out = Vec::new();
        let (mut pre, mut cur) = (node, node);
        loop {
            self.inner(pre, cur, &mut out);
            if self.kind(cur) == NodeKind::File {
                return (out, Some(cur));
            }
            pre = cur;
            match self.parent[cur.index()] {
                Some(p) => cur = p,
                None => return (out, None),
            }
        }
    }

    /// The `invokes`/`inherits` targets of one entity: for each distinct name,
    /// every candidate with that short name plus the alias target (if any), or,
    /// when there is none and `global_import` is on, every node in the repository
    /// with that short name.
    pub(crate) fn resolve_names(
        &self,
        local: &[NodeIndex],
        scope: Option<&FileScope<'g>>,
        names: &BTreeSet<String>,
        global_import: bool,
    ) -> Vec<NodeIndex> {
        let mut out = Vec::new();
        for name in names {
            let name = name.as_str();
            let mut targets: Vec<NodeIndex> = local
                .iter()
                .copied()
                .filter(|&c| self.short(c) == name)
                .collect();
            if let Some(v) = scope.and_then(|s| s.by_name.get(name)) {
                targets.extend(v);
            }
            targets.sort_unstable();
            targets.dedup();
            if let Some(&a) = scope.and_then(|s| s.alias.get(name)) {
                targets.push(a);
            }
            if targets.is_empty()
                && global_import
                && let Some(v) = self.global.get(name)
            {
                targets.extend(v);
            }
            out.extend(targets);
        }
        out
    }
}
