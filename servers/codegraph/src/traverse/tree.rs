//! `traverse_tree_structure` (SPEC.md §2.4): the indented tree view.
//!
//! A depth-first walk with a global visited set and a global set of traversed
//! `(source, type, target)` edges, reproduced with all its consequences: a node is
//! expanded only the first time it is printed, nodes at the last level are printed
//! but their edges are still marked traversed, and with `both` only the root fans
//! out in both directions.

use std::collections::HashSet;

use crate::graph::{EdgeKind, NodeIndex};

use super::{Direction, RepoGraph, TraverseOptions};

/// One printed line of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// Level (0 for the root).
    pub depth: usize,
    /// The edge label that led here (`contains`, `invokes-by`, ...); `None` for the root.
    pub relation: Option<String>,
    /// The node printed.
    pub node: NodeIndex,
}

/// The rendered tree: its text lines and the rows they show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// The lines, to be joined with `\n`.
    pub lines: Vec<String>,
    /// One row per line.
    pub rows: Vec<TreeRow>,
}

impl Tree {
    /// The tree as the original returns it (lines joined with `\n`).
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }
}

struct Walk<'a> {
    g: &'a RepoGraph,
    root: NodeIndex,
    opts: &'a TraverseOptions,
    out: Tree,
    nodes: HashSet<NodeIndex>,
    edges: HashSet<(NodeIndex, EdgeKind, NodeIndex)>,
}

/// Renders the tree around `root` (SPEC.md §2.4).
pub fn traverse_tree(g: &RepoGraph, root: NodeIndex, opts: &TraverseOptions) -> Tree {
    let mut walk = Walk {
        g,
        root,
        opts,
        out: Tree::default(),
        nodes: HashSet::new(),
        edges: HashSet::new(),
    };
    walk.visit(root, "", false, 0, None, opts.direction);
    walk.out
}

impl Walk<'_> {
    fn visit(
        &mut self,
        node: NodeIndex,
        prefix: &str,
        is_last: bool,
        level: usize,
        label: Option<String>,
        edir: Direction,
    ) {
        if level > self.opts.hops {
            return;
        }
        let (new_prefix, edir) = if node == self.root && level == 0 {
            self.out.lines.push(self.g.id(node).to_string());
            (String::new(), self.opts.direction)
        } else {
            let connector = format!(
                "{}{} ── ",
                if is_last { "└── " } else { "├── " },
                label.as_deref().unwrap_or("None")
            );
            self.out
                .lines
                .push(format!("{prefix}{connector}{}", self.g.id(node)));
            let pad = " ".repeat(connector.chars().count().saturating_sub(1));
            (
                format!("{prefix}{}{pad}", if is_last { " " } else { "│" }),
                edir,
            )
        };
        self.out.rows.push(TreeRow {
            depth: level,
            relation: label,
            node,
        });
        if !self.nodes.insert(node) {
            return;
        }

        let node_ok = |n: NodeIndex| {
            self.opts
                .node_types
                .as_ref()
                .is_none_or(|f| f.contains(&self.g.kind(n)))
        };
        let edge_ok = |k: EdgeKind| self.opts.edge_types.as_ref().is_none_or(|f| f.contains(&k));
        let at_root_both = node == self.root && self.opts.direction == Direction::Both;
        let mut entries: Vec<(NodeIndex, EdgeKind, Direction)> = Vec::new();
        if edir == Direction::Downstream || at_root_both {
            for &(nbr, kind) in self.g.out(node) {
                if !node_ok(nbr) || !edge_ok(kind) || self.g.is_test(nbr) {
                    continue;
                }
                if self.edges.insert((node, kind, nbr)) {
                    entries.push((nbr, kind, Direction::Downstream));
                }
            }
        }
        if edir == Direction::Upstream || at_root_both {
            for &(nbr, kind) in self.g.inc(node) {
                if !node_ok(nbr) || !edge_ok(kind) || self.g.is_test(nbr) {
                    continue;
                }
                if self.edges.insert((nbr, kind, node)) {
                    entries.push((nbr, kind, Direction::Upstream));
                }
            }
        }
        let count = entries.len();
        for (i, (nbr, kind, dir)) in entries.into_iter().enumerate() {
            let label = match dir {
                Direction::Upstream => format!("{kind}-by"),
                _ => kind.as_str().to_string(),
            };
            self.visit(
                nbr,
                &new_prefix,
                i + 1 == count,
                level + 1,
                Some(label),
                dir,
            );
        }
    }
}
