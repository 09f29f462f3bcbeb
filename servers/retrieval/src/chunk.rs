//! Splitting files into searchable chunks with semantic metadata.
//!
//! Python (`.py`, `.pyi`) is parsed with tree-sitter into:
//! - a [`ChunkKind::Function`] chunk per top-level function (nested functions stay
//!   inside it; definitions under module-level `if`/`try`/`with`/... count as top level);
//! - a [`ChunkKind::Class`] chunk per class, whose content is the whole class when it is
//!   short and otherwise an outline (header, docstring, class-level statements and every
//!   method's signature), since its methods are chunks of their own; its line span is
//!   always the whole class;
//! - a [`ChunkKind::Method`] chunk per method, whose content starts with the class line
//!   (`class Session(SessionRedirectMixin):`) for context;
//! - [`ChunkKind::Module`] chunks for the code between definitions (imports, constants,
//!   module-level statements), at most [`MAX_MODULE_LINES`] lines each.
//!
//! Decorators belong to their definition's chunk. Other indexable text files (Markdown,
//! reST, plain text, TOML/INI/CFG/YAML) become [`ChunkKind::Text`] chunks of at most
//! [`MAX_TEXT_LINES`] lines / [`MAX_TEXT_CHARS`] characters, starting a new chunk at
//! headings where possible.
//!
//! Every chunk carries [`ChunkMeta`]: the calls it makes (dotted as written:
//! `self._merge`, `os.path.join`), the imports it uses (the file's imports whose bound
//! name occurs in the chunk, as full dotted paths: `requests.utils.to_key_val_list`,
//! relative ones keep their dots: `.compat.urlparse`), the exception types it handles,
//! its line count, and the annotated types (parameters, returns, annotated assignments).

use std::collections::HashSet;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// Module-level code runs longer than this are split (at statement starts if possible).
pub const MAX_MODULE_LINES: usize = 60;
/// Classes longer than this are represented by an outline instead of their full text.
pub const MAX_CLASS_LINES: usize = 60;
/// Maximum lines of a text chunk.
pub const MAX_TEXT_LINES: usize = 40;
/// Maximum characters of a text chunk (a single longer line is cut).
pub const MAX_TEXT_CHARS: usize = 2000;
/// Cap on each metadata list, so generated code cannot blow up a chunk's metadata.
const MAX_META: usize = 100;

/// What a chunk covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    /// A top-level function (with its nested functions).
    Function,
    /// A method; content starts with its class line.
    Method,
    /// A class (full text, or an outline for long classes).
    Class,
    /// Module-level code between definitions.
    Module,
    /// A piece of a non-Python text file.
    Text,
}

impl ChunkKind {
    /// The lowercase name used in JSON and tool arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Function => "function",
            ChunkKind::Method => "method",
            ChunkKind::Class => "class",
            ChunkKind::Module => "module",
            ChunkKind::Text => "text",
        }
    }
}

impl std::fmt::Display for ChunkKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown chunk kind name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown chunk type '{0}'; use one of: function, method, class, module, text")]
pub struct UnknownChunkKind(pub String);

impl FromStr for ChunkKind {
    type Err = UnknownChunkKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "function" => Ok(ChunkKind::Function),
            "method" => Ok(ChunkKind::Method),
            "class" => Ok(ChunkKind::Class),
            "module" => Ok(ChunkKind::Module),
            "text" => Ok(ChunkKind::Text),
            _ => Err(UnknownChunkKind(s.to_string())),
        }
    }
}

/// Semantic metadata of a chunk (used by `get_implementation` scopes and shown to agents).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkMeta {
    /// Calls made, dotted as written (`helper`, `self._merge`, `os.path.join`); first
    /// occurrence order, deduplicated.
    pub calls: Vec<String>,
    /// The file's imports that this chunk uses, as full dotted paths.
    pub imports_used: Vec<String>,
    /// Exception types named in `except` clauses.
    pub exceptions_handled: Vec<String>,
    /// Line count of the chunk's span.
    pub complexity: usize,
    /// Annotated types (parameters, return types, annotated assignments), as written.
    pub types: Vec<String>,
}

/// One searchable piece of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Stable id: `<file>:<start>-<end>`.
    pub id: String,
    /// Repository-relative, `/`-separated path.
    pub file: String,
    /// First line (1-based; the first decorator for decorated definitions).
    pub start_line: usize,
    /// Last line (1-based, inclusive).
    pub end_line: usize,
    /// What the chunk covers.
    pub kind: ChunkKind,
    /// Qualified name for functions, methods and classes (`func`, `Class`,
    /// `Class.method`, `Outer.Inner.method`); `None` for module and text chunks.
    pub name: Option<String>,
    /// The text that is searched and shown.
    pub content: String,
    /// Semantic metadata.
    pub meta: ChunkMeta,
}

const PY_EXT: &[&str] = &["py", "pyi"];
const TEXT_EXT: &[&str] = &[
    "md", "markdown", "rst", "txt", "toml", "cfg", "ini", "yaml", "yml",
];

fn extension(rel_path: &str) -> Option<String> {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Whether a file is chunked at all: Python sources and the text formats listed in the
/// module docs.
pub fn is_indexable(rel_path: &str) -> bool {
    extension(rel_path)
        .is_some_and(|e| PY_EXT.contains(&e.as_str()) || TEXT_EXT.contains(&e.as_str()))
}

/// Splits one file into chunks (see the module docs). Non-indexable paths and empty
/// files give no chunks. Chunks are ordered by start line.
pub fn chunk_file(rel_path: &str, text: &str) -> Vec<Chunk> {
    let Some(ext) = extension(rel_path) else {
        return Vec::new();
    };
    let mut chunks = if PY_EXT.contains(&ext.as_str()) {
        python_chunks(rel_path, text)
    } else if TEXT_EXT.contains(&ext.as_str()) {
        text_chunks(
            rel_path,
            text,
            matches!(ext.as_str(), "md" | "markdown" | "rst"),
        )
    } else {
        Vec::new()
    };
    chunks.sort_by_key(|c| (c.start_line, std::cmp::Reverse(c.end_line)));
    let mut seen = HashSet::new();
    for c in &mut chunks {
        let mut id = format!("{rel_path}:{}-{}", c.start_line, c.end_line);
        if !seen.insert(id.clone()) {
            id = format!("{id}:{}", c.name.as_deref().unwrap_or(c.kind.as_str()));
            seen.insert(id.clone());
        }
        c.id = id;
    }
    chunks
}

// ---------------------------------------------------------------------------------
// Text files

fn is_heading(lines: &[&str], i: usize, structured: bool) -> bool {
    if !structured {
        return false;
    }
    let line = lines[i];
    if line.starts_with('#') && !line.starts_with("#!") {
        return true;
    }
    // reST: a title line followed by an underline of punctuation.
    if let Some(next) = lines.get(i + 1) {
        let t = next.trim_end();
        return !line.trim().is_empty()
            && t.len() >= 3
            && t.chars().all(|c| "=-~^\"'`#*+.:_".contains(c))
            && t.chars().all(|c| t.starts_with(c));
    }
    false
}

fn text_chunks(rel_path: &str, text: &str, structured: bool) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = 0;
    let flush = |out: &mut Vec<Chunk>, start: usize, end: usize| {
        // [start, end) zero-based; trim blank lines at both ends.
        let mut s = start;
        let mut e = end;
        while s < e && lines[s].trim().is_empty() {
            s += 1;
        }
        while e > s && lines[e - 1].trim().is_empty() {
            e -= 1;
        }
        if s == e {
            return;
        }
        let mut content = lines[s..e].join("\n");
        if content.len() > MAX_TEXT_CHARS * 2 {
            let mut cut = MAX_TEXT_CHARS * 2;
            while !content.is_char_boundary(cut) {
                cut -= 1;
            }
            content.truncate(cut);
        }
        out.push(Chunk {
            id: String::new(),
            file: rel_path.to_string(),
            start_line: s + 1,
            end_line: e,
            kind: ChunkKind::Text,
            name: None,
            content,
            meta: ChunkMeta {
                complexity: e - s,
                ..ChunkMeta::default()
            },
        });
    };
    for i in 0..lines.len() {
        let n = i - start;
        let full = n >= MAX_TEXT_LINES || (n > 0 && chars + lines[i].len() > MAX_TEXT_CHARS);
        let heading = n >= 3 && is_heading(&lines, i, structured);
        // Prefer a paragraph break once the chunk is reasonably large.
        let para =
            n >= MAX_TEXT_LINES / 2 && lines[i].trim().is_empty() && chars > MAX_TEXT_CHARS / 2;
        if full || heading || para {
            flush(&mut out, start, i);
            start = i;
            chars = 0;
        }
        chars += lines[i].len() + 1;
    }
    flush(&mut out, start, lines.len());
    out
}

// ---------------------------------------------------------------------------------
// Python

/// Something found while walking the tree, positioned at a 0-based row.
enum Event {
    Call(String),
    Except(String),
    Type(String),
    Ident(String),
}

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

fn node_text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.start_byte()..node.end_byte()]).unwrap_or("")
}

/// End row of a node, not counting a trailing newline (tree-sitter ends blocks at
/// column 0 of the next line sometimes).
fn end_row(node: Node) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// Unwraps `decorated_definition` to its definition.
fn definition_of(node: Node) -> Option<Node> {
    match node.kind() {
        "function_definition" | "class_definition" => Some(node),
        "decorated_definition" => node.child_by_field_name("definition"),
        _ => None,
    }
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
                end_row: end_row(stmt),
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

fn collect_events(node: Node, src: &[u8], in_type: bool, out: &mut Vec<(usize, Event)>) {
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

/// The file's import bindings: bound name → full dotted path.
fn import_bindings(root: Node, src: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "import_statement" => {
                let mut c = node.walk();
                for n in node.children_by_field_name("name", &mut c) {
                    match n.kind() {
                        "dotted_name" => {
                            let full = node_text(n, src).to_string();
                            let bound = full.split('.').next().unwrap_or(&full).to_string();
                            out.push((bound, full));
                        }
                        "aliased_import" => {
                            if let (Some(name), Some(alias)) = (
                                n.child_by_field_name("name"),
                                n.child_by_field_name("alias"),
                            ) {
                                out.push((
                                    node_text(alias, src).to_string(),
                                    node_text(name, src).to_string(),
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "import_from_statement" => {
                let module = node
                    .child_by_field_name("module_name")
                    .map(|m| node_text(m, src).to_string())
                    .unwrap_or_default();
                let join = |name: &str| {
                    if module.ends_with('.') || module.is_empty() {
                        format!("{module}{name}")
                    } else {
                        format!("{module}.{name}")
                    }
                };
                let mut c = node.walk();
                for n in node.children_by_field_name("name", &mut c) {
                    match n.kind() {
                        "dotted_name" => {
                            let name = node_text(n, src);
                            out.push((name.to_string(), join(name)));
                        }
                        "aliased_import" => {
                            if let (Some(name), Some(alias)) = (
                                n.child_by_field_name("name"),
                                n.child_by_field_name("alias"),
                            ) {
                                out.push((
                                    node_text(alias, src).to_string(),
                                    join(node_text(name, src)),
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {
                // Reversed, so that popping visits children in source order.
                let mut c = node.walk();
                let children: Vec<Node> = node.named_children(&mut c).collect();
                stack.extend(children.into_iter().rev());
            }
        }
    }
    out
}

fn push_unique(list: &mut Vec<String>, seen: &mut HashSet<String>, item: &str) {
    if list.len() < MAX_META && !item.is_empty() && seen.insert(item.to_string()) {
        list.push(item.to_string());
    }
}

/// Metadata from the events whose row lies in `[start_row, end_row]`.
fn meta_for(
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

fn python_chunks(rel_path: &str, text: &str) -> Vec<Chunk> {
    // As in navbench_python: a lone `\r` is a line break for Python, not for
    // tree-sitter; replacing it keeps byte offsets and aligns rows with lines.
    let normalized;
    let text = if text.contains('\r') {
        normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        normalized.as_str()
    } else {
        text
    };
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
    let bindings = import_bindings(root, src);

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
    let mut i = 0;
    while i < lines.len() {
        if covered[i] || lines[i].trim().is_empty() {
            i += 1;
            continue;
        }
        let mut end = i;
        while end + 1 < lines.len() && !covered[end + 1] {
            end += 1;
        }
        let mut s = i;
        while s <= end {
            let mut e = end;
            if e + 1 - s > MAX_MODULE_LINES {
                let limit = s + MAX_MODULE_LINES;
                e = (s + 1..limit)
                    .rev()
                    .find(|r| stmt_starts.contains(r))
                    .map_or(limit - 1, |r| r - 1);
            }
            let (mut ts, mut te) = (s, e);
            while ts < te && lines[ts].trim().is_empty() {
                ts += 1;
            }
            while te > ts && lines[te].trim().is_empty() {
                te -= 1;
            }
            if !lines[ts].trim().is_empty() {
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
            s = e + 1;
        }
        i = end + 1;
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
                let erow = end_row(stmt).min(srow + 5);
                for l in lines.iter().take(erow + 1).skip(srow) {
                    out.push((*l).to_string());
                }
            }
        }
    }
    let _ = src;
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#""""Module docstring."""
import os
import os.path as osp
from .utils import to_key_val_list, merge as m
from typing import Optional

TIMEOUT = 5


def helper(x: int) -> Optional[str]:
    try:
        return osp.join(str(x))
    except (ValueError, KeyError) as e:
        raise
    except OSError:
        return None


@decorator
class Session(Base):
    """A session."""

    retries: int = 3

    def __init__(self):
        self.x = helper(1)

    def send(self, req):
        def inner():
            return to_key_val_list(req)
        return self._merge(inner(), m(req))

    class Inner:
        def deep(self):
            return os.getcwd()


if True:
    def compat():
        pass

print("done")
"#;

    fn by_name<'a>(chunks: &'a [Chunk], name: &str) -> &'a Chunk {
        chunks
            .iter()
            .find(|c| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no chunk {name}: {chunks:#?}"))
    }

    #[test]
    fn python_functions_methods_classes_and_module_code() {
        let chunks = chunk_file("pkg/sessions.py", SRC);
        let names: Vec<(&str, ChunkKind)> = chunks
            .iter()
            .filter_map(|c| c.name.as_deref().map(|n| (n, c.kind)))
            .collect();
        assert_eq!(
            names,
            [
                ("helper", ChunkKind::Function),
                ("Session", ChunkKind::Class),
                ("Session.__init__", ChunkKind::Method),
                ("Session.send", ChunkKind::Method),
                ("Session.Inner", ChunkKind::Class),
                ("Session.Inner.deep", ChunkKind::Method),
                ("compat", ChunkKind::Function),
            ]
        );
        let helper = by_name(&chunks, "helper");
        assert_eq!((helper.start_line, helper.end_line), (10, 16));
        assert_eq!(helper.id, "pkg/sessions.py:10-16");
        let session = by_name(&chunks, "Session");
        assert_eq!((session.start_line, session.end_line), (19, 35));
        assert!(
            session
                .content
                .starts_with("@decorator\nclass Session(Base):")
        );
        let send = by_name(&chunks, "Session.send");
        assert!(
            send.content
                .starts_with("class Session(Base):\n    def send(self, req):"),
            "{}",
            send.content
        );
        assert_eq!((send.start_line, send.end_line), (28, 31));
        let deep = by_name(&chunks, "Session.Inner.deep");
        assert!(
            deep.content
                .starts_with("    class Inner:\n        def deep"),
            "{}",
            deep.content
        );

        let modules: Vec<(usize, usize)> = chunks
            .iter()
            .filter(|c| c.kind == ChunkKind::Module)
            .map(|c| (c.start_line, c.end_line))
            .collect();
        // Imports + constant; the `if True:` line; the trailing print.
        assert_eq!(modules, [(1, 7), (38, 38), (42, 42)]);
    }

    #[test]
    fn python_metadata() {
        let chunks = chunk_file("pkg/sessions.py", SRC);
        let helper = by_name(&chunks, "helper");
        assert_eq!(helper.meta.calls, ["osp.join", "str"]);
        assert_eq!(
            helper.meta.exceptions_handled,
            ["ValueError", "KeyError", "OSError"]
        );
        assert_eq!(helper.meta.types, ["int", "Optional[str]"]);
        assert_eq!(helper.meta.imports_used, ["os.path", "typing.Optional"]);
        assert_eq!(helper.meta.complexity, 7);
        let send = by_name(&chunks, "Session.send");
        assert_eq!(
            send.meta.calls,
            ["to_key_val_list", "self._merge", "inner", "m"]
        );
        assert_eq!(
            send.meta.imports_used,
            [".utils.to_key_val_list", ".utils.merge"]
        );
        let session = by_name(&chunks, "Session");
        assert!(session.meta.types.contains(&"int".to_string()));
        let module = chunks.iter().find(|c| c.kind == ChunkKind::Module).unwrap();
        assert!(module.meta.calls.is_empty());
    }

    #[test]
    fn long_class_becomes_an_outline() {
        let mut src = String::from("class Big:\n    \"\"\"Doc.\"\"\"\n    x = 1\n");
        for i in 0..30 {
            src.push_str(&format!(
                "\n    @property\n    def m{i}(self, a: int):\n        a += 1\n        return a\n"
            ));
        }
        let chunks = chunk_file("big.py", &src);
        let class = by_name(&chunks, "Big");
        assert_eq!(class.start_line, 1);
        assert_eq!(class.end_line, src.lines().count());
        assert!(class.content.contains("def m0(self, a: int):"));
        assert!(!class.content.contains("a += 1"));
        assert!(class.content.lines().count() <= MAX_CLASS_LINES + 2);
        assert_eq!(
            chunks
                .iter()
                .filter(|c| c.kind == ChunkKind::Method)
                .count(),
            30
        );
    }

    #[test]
    fn long_module_code_is_split_at_statements() {
        let src: String = (0..150).map(|i| format!("X{i} = {i}\n")).collect();
        let chunks = chunk_file("consts.py", &src);
        assert!(chunks.len() >= 3);
        assert!(
            chunks
                .iter()
                .all(|c| c.end_line + 1 - c.start_line <= MAX_MODULE_LINES)
        );
        assert_eq!(chunks.first().map(|c| c.start_line), Some(1));
        assert_eq!(chunks.last().map(|c| c.end_line), Some(150));
    }

    #[test]
    fn broken_python_still_chunks() {
        let chunks = chunk_file(
            "bad.py",
            "def ok():\n    return 1\n\ndef broken(:\n    pass\n",
        );
        assert!(chunks.iter().any(|c| c.name.as_deref() == Some("ok")));
        assert!(chunk_file("empty.py", "\n\n").is_empty());
    }

    #[test]
    fn markdown_is_split_at_headings_and_bounded() {
        let mut md =
            String::from("# Title\n\nIntro text.\n\n## Install\n\npip install x\n\n## Usage\n\n");
        for i in 0..100 {
            md.push_str(&format!("line {i} of usage\n"));
        }
        let chunks = chunk_file("docs/README.md", &md);
        assert!(
            chunks
                .iter()
                .all(|c| c.kind == ChunkKind::Text && c.name.is_none())
        );
        assert_eq!(chunks[0].content, "# Title\n\nIntro text.");
        assert!(chunks[1].content.starts_with("## Install"));
        assert!(
            chunks
                .iter()
                .all(|c| c.end_line + 1 - c.start_line <= MAX_TEXT_LINES)
        );
        let huge = "x".repeat(10_000);
        let c = chunk_file("a.txt", &huge);
        assert_eq!(c.len(), 1);
        assert!(c[0].content.len() <= MAX_TEXT_CHARS * 2);
    }

    #[test]
    fn indexable_and_kind_names() {
        assert!(is_indexable("a/b.py"));
        assert!(is_indexable("README.rst"));
        assert!(is_indexable("setup.cfg"));
        assert!(!is_indexable("img.png"));
        assert!(!is_indexable(".py"));
        assert!(!is_indexable("Makefile"));
        assert_eq!("Method".parse::<ChunkKind>(), Ok(ChunkKind::Method));
        assert!("fn".parse::<ChunkKind>().is_err());
        assert_eq!(
            serde_json::to_string(&ChunkKind::Class).unwrap(),
            "\"class\""
        );
    }
}
