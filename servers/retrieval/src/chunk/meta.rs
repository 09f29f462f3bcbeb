//! Semantic metadata of Python chunks: calls, imports used, exceptions handled, line
//! count and annotated types, from events collected once per file.

use std::collections::HashSet;

use navbench_python::imports::{import_of, is_import};
use navbench_python::tree::preorder;
use tree_sitter::Node;

use super::ChunkMeta;

/// A node's text in the source bytes (empty if it is not UTF-8).
pub(super) fn node_text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.start_byte()..node.end_byte()]).unwrap_or("")
}

/// Cap on each metadata list, so generated code cannot blow up a chunk's metadata.
const MAX_META: usize = 100;

/// Something found while walking the tree, positioned at a 0-based row.
pub(super) enum Event {
    Call(String),
    Except(String),
    Type(String),
    Ident(String),
}

pub(super) fn collect_events(node: Node, src: &[u8], in_type: bool, out: &mut Vec<(usize, Event)>) {
    let row = node.start_position().row;
    match node.kind() {
        "call" => {
            if let Some(f) = node.child_by_field_name("function")
                && matches!(f.kind(), "identifier" | "attribute")
            {
                let t: String = node_text(f, src).split_whitespace().collect();
                out.push((row, Event::Call(t)));
            }
        }
        "except_clause" | "except_group_clause" => {
            let mut cursor = node.walk();
            let values: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
            let values = if values.is_empty() {
                // Older grammar shapes: the first named non-block child.
                let mut c = node.walk();
                node.named_children(&mut c)
                    .filter(|n| n.kind() != "block")
                    .take(1)
                    .collect()
            } else {
                values
            };
            for v in values {
                exception_names(v, src, row, out);
            }
        }
        "type" if !in_type => {
            let t: String = node_text(node, src)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push((row, Event::Type(t)));
        }
        "identifier" => out.push((row, Event::Ident(node_text(node, src).to_string()))),
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        // Import statements bind names; they are not uses.
        if matches!(child.kind(), "import_statement" | "import_from_statement") {
            continue;
        }
        collect_events(child, src, in_type || node.kind() == "type", out);
    }
}

fn exception_names(v: Node, src: &[u8], row: usize, out: &mut Vec<(usize, Event)>) {
    match v.kind() {
        "identifier" | "attribute" => out.push((row, Event::Except(node_text(v, src).to_string()))),
        "tuple" | "parenthesized_expression" | "expression_list" => {
            let mut c = v.walk();
            for n in v.named_children(&mut c) {
                exception_names(n, src, row, out);
            }
        }
        "as_pattern" => {
            if let Some(n) = v.named_child(0) {
                exception_names(n, src, row, out);
            }
        }
        _ => {}
    }
}

/// The file's import bindings: bound name → full dotted path (`from` imports keep a
/// relative module's dots: `.compat.urlparse`). Future imports bind nothing here.
pub(super) fn import_bindings(root: Node, src: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    preorder(root, |node| {
        if !is_import(node) {
            return true;
        }
        let Some(import) =
            import_of(node, src).filter(|_| node.kind() != "future_import_statement")
        else {
            return false;
        };
        if !import.is_from {
            for (full, alias) in import.names {
                match alias {
                    Some(alias) => out.push((alias, full)),
                    None => {
                        let bound = full.split('.').next().unwrap_or(&full).to_string();
                        out.push((bound, full));
                    }
                }
            }
            return false;
        }
        let module = format!(
            "{}{}",
            ".".repeat(import.level),
            import.module.unwrap_or_default()
        );
        let join = |name: &str| {
            if module.ends_with('.') || module.is_empty() {
                format!("{module}{name}")
            } else {
                format!("{module}.{name}")
            }
        };
        for (name, alias) in import.names {
            let full = join(&name);
            out.push((alias.unwrap_or(name), full));
        }
        false
    });
    out
}

fn push_unique(list: &mut Vec<String>, seen: &mut HashSet<String>, item: &str) {
    if list.len() < MAX_META && !item.is_empty() && seen.insert(item.to_string()) {
        list.push(item.to_string());
    }
}

/// Metadata from the events whose row lies in `[start_row, end_row]`.
pub(super) fn meta_for(
    events: &[(usize, Event)],
    bindings: &[(String, String)],
    start_row: usize,
    end_row: usize,
) -> ChunkMeta {
    let from = events.partition_point(|(r, _)| *r < start_row);
    let to = events.partition_point(|(r, _)| *r <= end_row);
    let mut meta = ChunkMeta {
        complexity: end_row + 1 - start_row,
        ..ChunkMeta::default()
    };
    let (mut sc, mut se, mut st) = (HashSet::new(), HashSet::new(), HashSet::new());
    let mut idents: HashSet<&str> = HashSet::new();
    for (_, ev) in &events[from..to] {
        match ev {
            Event::Call(c) => push_unique(&mut meta.calls, &mut sc, c),
            Event::Except(e) => push_unique(&mut meta.exceptions_handled, &mut se, e),
            Event::Type(t) => push_unique(&mut meta.types, &mut st, t),
            Event::Ident(i) => {
                idents.insert(i.as_str());
            }
        }
    }
    let mut si = HashSet::new();
    for (bound, full) in bindings {
        if idents.contains(bound.as_str()) {
            push_unique(&mut meta.imports_used, &mut si, full);
        }
    }
    meta
}
