//! Graph exploration: `get_dependencies` (a DOT subgraph) and `explore_tree` (a tree
//! view), with the start-entity validation and traversal options they share.

use super::*;
use crate::graph::NodeIndex;
use crate::traverse::subgraph::traverse_graph;
use crate::traverse::tree::traverse_tree;
use crate::traverse::{
    TraverseOptions, parse_depth, parse_direction, parse_edge_kinds, parse_node_kinds,
};

/// Normalizes a start entity as `_validate_graph_explorer_inputs` does.
fn normalize_root(name: &str) -> String {
    let name = name.trim();
    let mut root = if name == "/" {
        name.to_string()
    } else {
        name.trim_matches('/').to_string()
    };
    if let Some(stripped) = root.strip_suffix(".__init__") {
        root = stripped.to_string();
    }
    if root.is_empty() {
        root = "/".to_string();
    }
    root
}

/// Validates start entities: the valid ones, the hints text (SPEC.md §4.8) and the invalid list.
fn validate_roots(
    repo: &Repository,
    names: &[String],
) -> (Vec<NodeIndex>, String, Vec<InvalidEntity>) {
    let g = &repo.graph;
    let mut valid = Vec::new();
    let mut hints = String::new();
    let mut invalid = Vec::new();
    for name in names {
        let root = normalize_root(name);
        match g.find(&root, true) {
            None => {
                let (cands, source) = candidates_for(repo, &root);
                if cands.is_empty() {
                    hints += &format!(
                        "The entity name `{root}` is invalid. There are no possible candidate entities in record.\n"
                    );
                } else {
                    hints += &format!(
                        "The entity name `{root}` is invalid. Based on your input, here are some candidate entities you might be referring to:\n"
                    );
                    for &c in &cands {
                        hints += &format!("{}: `{}`\n", g.kind(c), g.id(c));
                    }
                    hints += &format!("Source: {source}\n\n");
                }
                invalid.push(InvalidEntity {
                    name: root,
                    reason: "unknown".into(),
                    candidates: cands.iter().map(|&c| g.id(c).to_string()).collect(),
                });
            }
            Some(ix) if g.is_test(ix) => {
                hints += &format!(
                    "No results for the test entity: `{root}`. Please do not include any test entities.\n\n"
                );
                invalid.push(InvalidEntity {
                    name: root,
                    reason: "test".into(),
                    candidates: Vec::new(),
                });
            }
            Some(ix) => {
                if !valid.contains(&ix) {
                    valid.push(ix);
                }
            }
        }
    }
    (valid, hints, invalid)
}

/// Parses the shared traversal arguments.
fn traverse_options(
    direction: Option<&str>,
    default_direction: crate::traverse::Direction,
    depth: Option<i64>,
    entity_types: Option<&[String]>,
    dependency_types: Option<&[String]>,
) -> Result<TraverseOptions, ToolError> {
    let direction = match direction {
        Some(d) => parse_direction(d.trim()).map_err(invalid)?,
        None => default_direction,
    };
    let hops = parse_depth(depth.unwrap_or(2)).map_err(invalid)?;
    let node_types = match entity_types.filter(|t| !t.is_empty()) {
        Some(t) => Some(parse_node_kinds(t).map_err(invalid)?),
        None => None,
    };
    let edge_types = match dependency_types.filter(|t| !t.is_empty()) {
        Some(t) => Some(parse_edge_kinds(t).map_err(invalid)?),
        None => None,
    };
    Ok(TraverseOptions {
        direction,
        hops,
        node_types,
        edge_types,
    })
}

impl CodegraphTools {
    /// `get_dependencies`: the DOT subgraph around the entities (SPEC.md §2.5, §4.8).
    pub fn get_dependencies(
        &self,
        args: &GetDependenciesArgs,
    ) -> Result<ToolOutput<DependenciesOutput>, ToolError> {
        let repo = self.repo()?;
        let entities = clean_terms(
            &args.entities,
            "entities",
            "[\"pkg/module.py:Class.method\"] or [\"/\"]",
        )?;
        let opts = traverse_options(
            args.direction.as_deref(),
            crate::traverse::Direction::Both,
            args.depth,
            args.entity_types.as_deref(),
            args.dependency_types.as_deref(),
        )?;
        let (roots, hints, invalid_list) = validate_roots(&repo, &entities);
        let g = &repo.graph;
        let sub = traverse_graph(g, &roots, &opts);
        let edges = sub.edges();
        let total_edges = edges.len();
        let cap = self.limits.max_graph_edges;
        let mut text = if total_edges > cap {
            // Keep the first `cap` edges and the nodes they (or the roots) touch.
            let kept = &edges[..cap];
            let mut shown: Vec<NodeIndex> = Vec::new();
            for &n in sub.nodes() {
                if roots.contains(&n) || kept.iter().any(|(u, v, _)| *u == n || *v == n) {
                    shown.push(n);
                }
            }
            let mut s = String::from("digraph {\n");
            for &n in &shown {
                s += &format!("\"{}\";\n", g.id(n));
            }
            for (u, v, k) in kept {
                s += &format!("\"{}\" -> \"{}\" [type={}];\n", g.id(*u), g.id(*v), k);
            }
            s += &format!(
                "// ... {} more edges ({} more nodes) not shown; narrow the query with depth, direction, entity_types or dependency_types\n}}",
                total_edges - cap,
                sub.node_count() - shown.len()
            );
            s
        } else {
            sub.to_dot(g)
        };
        if !hints.trim().is_empty() {
            text += "\n\n";
            text += &hints;
        }
        let shown_edges = &edges[..total_edges.min(cap)];
        let data = DependenciesOutput {
            roots: roots.iter().map(|&r| g.id(r).to_string()).collect(),
            direction: opts.direction.to_string(),
            depth: opts.hops,
            nodes: sub
                .nodes()
                .iter()
                .filter(|&&n| {
                    total_edges <= cap
                        || roots.contains(&n)
                        || shown_edges.iter().any(|(u, v, _)| *u == n || *v == n)
                })
                .map(|&n| GraphNode {
                    id: g.id(n).to_string(),
                    r#type: g.kind(n).to_string(),
                })
                .collect(),
            edges: shown_edges
                .iter()
                .map(|(u, v, k)| GraphEdge {
                    source: g.id(*u).to_string(),
                    target: g.id(*v).to_string(),
                    r#type: k.to_string(),
                })
                .collect(),
            total_edges,
            truncated_edges: total_edges.saturating_sub(cap),
            invalid: invalid_list,
        };
        Ok(ToolOutput {
            text: text.trim().to_string(),
            is_error: roots.is_empty(),
            meta: None,
            data,
        })
    }

    /// `explore_tree`: the tree view around one entity (SPEC.md §2.4).
    pub fn explore_tree(
        &self,
        args: &ExploreTreeArgs,
    ) -> Result<ToolOutput<TreeOutput>, ToolError> {
        let repo = self.repo()?;
        let path = args.path.clone().unwrap_or_else(|| "/".to_string());
        let opts = traverse_options(
            args.direction.as_deref(),
            crate::traverse::Direction::Downstream,
            args.depth,
            args.entity_types.as_deref(),
            args.dependency_types.as_deref(),
        )?;
        let (roots, hints, invalid_list) = validate_roots(&repo, &[path]);
        let g = &repo.graph;
        let mut data = TreeOutput {
            root: None,
            direction: opts.direction.to_string(),
            depth: opts.hops,
            lines: Vec::new(),
            truncated_lines: 0,
            invalid: invalid_list,
        };
        let mut text = String::new();
        if let Some(&root) = roots.first() {
            let tree = traverse_tree(g, root, &opts);
            let cap = self.limits.max_tree_lines;
            let total = tree.lines.len();
            let shown = total.min(cap);
            text = tree.lines[..shown].join("\n");
            if shown < total {
                text += &format!(
                    "\n... [{} more lines not shown; reduce depth, or filter with entity_types / dependency_types, or explore a child entity]",
                    total - shown
                );
            }
            data.root = Some(g.id(root).to_string());
            data.truncated_lines = total - shown;
            data.lines = tree.rows[..shown]
                .iter()
                .map(|r| TreeLine {
                    depth: r.depth,
                    relation: r.relation.clone(),
                    id: g.id(r.node).to_string(),
                    r#type: g.kind(r.node).to_string(),
                })
                .collect();
        }
        if !hints.trim().is_empty() {
            text += "\n\n";
            text += &hints;
        }
        Ok(ToolOutput {
            text: text.trim().to_string(),
            is_error: roots.is_empty(),
            meta: None,
            data,
        })
    }
}
