//! Python files: one chunk per top-level function, class and method, and module
//! chunks for the code between them (see the parent module's docs).
//!
//! Parsing, newline handling and imports come from the Python front end
//! (`navbench_python`); the chunk boundaries are this module's own rule: a chunk ends
//! where tree-sitter ends the statement (trailing comments inside the block included),
//! not where `ast` does.

use std::collections::HashSet;

use navbench_python::tree::{definition_of, last_row};
use tree_sitter::Node;

use super::meta::{collect_events, import_bindings, meta_for, node_text};
use super::{Chunk, ChunkKind, MAX_CLASS_LINES};

struct Def<'t> {
    node: Node<'t>,
    /// Row of the first decorator (or of the def/class keyword).
    start_row: usize,
    end_row: usize,
    qualname: String,
    kind: ChunkKind,
    /// For methods: the text of the class line(s) (decorators excluded).
    class_line: Option<String>,
}

/// Statements of a compound statement's bodies (if/elif/else/try/except/finally/with/
/// for/while) that can hold definitions still at the current level.
fn nested_blocks(node: Node) -> Vec<Node> {
    let mut blocks = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "block" => blocks.push(child),
            "elif_clause"
            | "else_clause"
            | "except_clause"
            | "except_group_clause"
            | "finally_clause" => blocks.extend(nested_blocks(child)),
            _ => {}
        }
    }
    blocks
}

const COMPOUND: &[&str] = &[
    "if_statement",
    "try_statement",
    "with_statement",
    "for_statement",
    "while_statement",
];

fn collect_defs<'t>(
    block: Node<'t>,
    src: &[u8],
    prefix: &str,
    class_line: Option<&str>,
    out: &mut Vec<Def<'t>>,
) {
    let mut cursor = block.walk();
    for stmt in block.named_children(&mut cursor) {
        if let Some(def) = definition_of(stmt) {
            let Some(name) = def.child_by_field_name("name") else {
                continue;
            };
            let name = node_text(name, src);
            let qualname = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            };
            let is_class = def.kind() == "class_definition";
            let kind = match (is_class, class_line.is_some()) {
                (true, _) => ChunkKind::Class,
                (false, true) => ChunkKind::Method,
                (false, false) => ChunkKind::Function,
            };
            out.push(Def {
                node: def,
                start_row: stmt.start_position().row,
                end_row: last_row(stmt),
                qualname: qualname.clone(),
                kind,
                class_line: class_line.map(str::to_string),
            });
            if is_class && let Some(body) = def.child_by_field_name("body") {
                let header = class_header(def, src);
                collect_defs(body, src, &qualname, Some(&header), out);
            }
        } else if class_line.is_none() && COMPOUND.contains(&stmt.kind()) {
            for b in nested_blocks(stmt) {
                collect_defs(b, src, prefix, None, out);
            }
        }
    }
}

/// The class statement's header text up to and including the `:`, with the class's
/// own indentation kept.
fn class_header(class: Node, src: &[u8]) -> String {
    let start = class.start_byte();
    let end = class
        .child_by_field_name("body")
        .map_or(class.end_byte(), |b| b.start_byte());
    let line_start = src[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let text = std::str::from_utf8(&src[line_start..end]).unwrap_or("");
    text.trim_end().to_string()
}

pub(super) fn python_chunks(rel_path: &str, text: &str) -> Vec<Chunk> {
    // A lone `\r` is a line break for Python, not for tree-sitter; turning it into
    // `\n` keeps byte offsets and aligns rows with lines (`\r\n` stays as it is).
    let text = navbench_python::lone_cr_as_newline(text);
    let text = text.as_ref();
    let src = text.as_bytes();
    let tree = navbench_python::parse_tree(text);
    let root = tree.root_node();
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let mut defs = Vec::new();
    collect_defs(root, src, "", None, &mut defs);
    let mut events = Vec::new();
    collect_events(root, src, false, &mut events);
    events.sort_by_key(|(r, _)| *r);
    let bindings = import_bindings(root, text);

    let slice = |s: usize, e: usize| -> String {
        lines
            .get(s..=e.min(lines.len().saturating_sub(1)))
            .map(|l| l.join("\n"))
            .unwrap_or_default()
    };
    let mut chunks = Vec::new();
    let mut covered = vec![false; lines.len() + 1];
    for d in &defs {
        let (s, e) = (d.start_row, d.end_row.min(lines.len().saturating_sub(1)));
        if d.class_line.is_none() || d.kind == ChunkKind::Class {
            // Top-level definitions (and nested classes, inside their class) cover lines.
            for c in covered.iter_mut().take(e + 1).skip(s) {
                *c = true;
            }
        }
        let content = match d.kind {
            ChunkKind::Method => {
                let header = d.class_line.as_deref().unwrap_or("");
                format!("{header}\n{}", slice(s, e))
            }
            ChunkKind::Class if e + 1 - s > MAX_CLASS_LINES => class_outline(d, src, &lines),
            _ => slice(s, e),
        };
        let meta = meta_for(&events, &bindings, s, e);
        chunks.push(Chunk {
            id: String::new(),
            file: rel_path.to_string(),
            start_line: s + 1,
            end_line: e + 1,
            kind: d.kind,
            name: Some(d.qualname.clone()),
            content,
            meta,
        });
    }
    // Module-level code: maximal runs of uncovered lines, split at statement starts.
    let mut stmt_starts = HashSet::new();
    let mut cursor = root.walk();
    for stmt in root.named_children(&mut cursor) {
        stmt_starts.insert(stmt.start_position().row);
    }
    let blank = |l: usize| lines[l].trim().is_empty();
    let pieces = super::module_pieces(
        0,
        lines.len() - 1,
        |l| covered[l],
        blank,
        |r| stmt_starts.contains(&r),
    );
    for (ts, te) in pieces {
        chunks.push(Chunk {
            id: String::new(),
            file: rel_path.to_string(),
            start_line: ts + 1,
            end_line: te + 1,
            kind: ChunkKind::Module,
            name: None,
            content: slice(ts, te),
            meta: meta_for(&events, &bindings, ts, te),
        });
    }
    chunks
}

/// Outline of a long class: header (with decorators), then class-level statements and
/// method signatures (decorators + `def ...:` + `...`), bounded to MAX_CLASS_LINES.
fn class_outline(d: &Def, src: &[u8], lines: &[&str]) -> String {
    let mut out: Vec<String> = Vec::new();
    let body = d.node.child_by_field_name("body");
    let body_row = body.map_or(d.end_row, |b| b.start_position().row);
    // Header: from the first decorator to the line before the body starts (or the
    // class line itself when the body starts on it).
    let header_end = if body_row > d.node.start_position().row {
        body_row - 1
    } else {
        d.node.start_position().row
    };
    for l in lines.iter().take(header_end + 1).skip(d.start_row) {
        out.push((*l).to_string());
    }
    if let Some(body) = body {
        let mut cursor = body.walk();
        for stmt in body.named_children(&mut cursor) {
            if out.len() >= MAX_CLASS_LINES {
                out.push("    ...".into());
                break;
            }
            let srow = stmt.start_position().row;
            if let Some(def) = definition_of(stmt) {
                let sig_end =
                    def.child_by_field_name("body")
                        .map_or(def.start_position().row, |b| {
                            b.start_position()
                                .row
                                .saturating_sub(1)
                                .max(def.start_position().row)
                        });
                for l in lines.iter().take(sig_end + 1).skip(srow) {
                    out.push((*l).to_string());
                }
                let indent: String = lines
                    .get(def.start_position().row)
                    .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
                    .unwrap_or_default();
                out.push(format!("{indent}    ..."));
            } else {
                let erow = last_row(stmt).min(srow + 5);
                for l in lines.iter().take(erow + 1).skip(srow) {
                    out.push((*l).to_string());
                }
            }
        }
    }
    let _ = src;
    out.join("\n")
}
