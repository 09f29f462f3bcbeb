//! Source files of the languages `navbench_lang` reads besides Python (TypeScript/TSX,
//! JavaScript/JSX, Java, Go, Rust): chunks cut at the front end's definitions, with
//! the shapes Python's chunks have (see the parent module's docs for the rules).
//!
//! Everything structural comes from one parse by the language's front end
//! ([`navbench_lang::Language::parse`]): definitions (kind, qualified name, container,
//! parent, lines, byte span), imports and which lines hold code. This module only
//! decides where chunks start and end and what text they show; it walks no syntax
//! tree of its own. The few textual reads it makes (a header's opening `{`, the names
//! an import statement binds, identifiers in a chunk) are documented where they are.

use std::collections::HashSet;

use navbench_lang::{DefKind, Definition, Language, ParsedFile};

use super::imports::{bindings, identifiers};
use super::{Chunk, ChunkKind, ChunkMeta, MAX_CLASS_LINES};

/// Lines of a long type's doc comment kept in its outline.
const MAX_OUTLINE_DOC_LINES: usize = 12;
/// Lines of a declaration searched for the `{` that ends its header (a header that
/// runs longer is shown as its first line).
const MAX_HEADER_LINES: usize = 6;

/// One file's text and parse, with the line table the chunker reads them through.
struct Source<'a> {
    text: &'a str,
    /// Lines without their terminators; index = 1-based line - 1.
    lines: Vec<&'a str>,
    /// Byte offset where each line starts; index = 1-based line - 1.
    starts: Vec<usize>,
    parsed: ParsedFile,
}

impl<'a> Source<'a> {
    fn new(text: &'a str, lang: &dyn Language) -> Source<'a> {
        let lines: Vec<&str> = text.lines().collect();
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Source {
            text,
            lines,
            starts,
            parsed: lang.parse(text),
        }
    }

    /// The text of 1-based line `n` ("" past the end).
    fn line(&self, n: usize) -> &'a str {
        n.checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .copied()
            .unwrap_or("")
    }

    fn blank(&self, n: usize) -> bool {
        self.line(n).trim().is_empty()
    }

    /// Lines `first..=last` (1-based) joined by `\n`.
    fn slice(&self, first: usize, last: usize) -> String {
        let last = last.min(self.lines.len());
        if first == 0 || first > last {
            return String::new();
        }
        self.lines[first - 1..last].join("\n")
    }

    /// The 1-based line holding byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }

    /// A declaration's header as 1-based lines: from the first line naming it
    /// (skipping annotations, decorators and doc comments inside its span) to the line
    /// of its first `{` (a class, struct, impl or function body opening), or that first
    /// line alone when no `{` opens within [`MAX_HEADER_LINES`] (a signature without a
    /// body, `type A = B`, a one-line header).
    fn header(&self, d: &Definition) -> (usize, usize) {
        let last_candidate = d.end_line.min(d.start_line + MAX_HEADER_LINES);
        let first = (d.start_line..=last_candidate)
            .find(|&l| self.line(l).contains(d.name.as_str()))
            .unwrap_or(d.start_line);
        let from = self
            .starts
            .get(first - 1)
            .copied()
            .unwrap_or(d.span.start)
            .max(d.span.start);
        let brace = self
            .text
            .get(from..d.span.end.min(self.text.len()))
            .and_then(|body| body.find('{'))
            .map(|i| self.line_of(from + i));
        match brace {
            Some(b) if b <= first + MAX_HEADER_LINES => (first, b),
            _ => (first, first),
        }
    }
}

/// Average bytes per non-blank line above which a file counts as minified.
const MINIFIED_AVG_LINE_BYTES: usize = 250;

/// Whether a source file looks minified or generated (a JS bundle, a one-line data
/// table): its non-blank lines average more than [`MINIFIED_AVG_LINE_BYTES`]. Such a
/// file is not chunked: one of its lines would make a chunk of hundreds of kilobytes,
/// and its names say nothing. Hand-written code averages a few dozen bytes a line.
fn looks_minified(text: &str) -> bool {
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    lines > 0 && text.len() / lines > MINIFIED_AVG_LINE_BYTES
}

/// What becomes of a definition: a chunk of this kind, or nothing (it belongs to an
/// enclosing function's chunk, or it is a namespace that only prefixes names).
fn role(defs: &[Definition], i: usize) -> Option<ChunkKind> {
    let in_function = ancestors(defs, i).any(|a| a.kind.is_callable());
    if in_function {
        return None;
    }
    match defs[i].kind {
        DefKind::Module => None,
        k if k.is_type_body() => Some(ChunkKind::Class),
        DefKind::Function => Some(ChunkKind::Function),
        _ => Some(ChunkKind::Method),
    }
}

/// The definitions enclosing `defs[i]`, innermost first.
fn ancestors(defs: &[Definition], i: usize) -> impl Iterator<Item = &Definition> {
    std::iter::successors(defs[i].parent.and_then(|p| defs.get(p)), move |d| {
        d.parent.and_then(|p| defs.get(p))
    })
}

/// Whether a chunk of `defs[i]` sits at file level (no enclosing definition but
/// namespaces): its lines are no module code.
fn at_file_level(defs: &[Definition], i: usize) -> bool {
    ancestors(defs, i).all(|a| a.kind == DefKind::Module)
}

/// The first line of a definition's chunk: its own first line, moved up over the doc
/// comments and Rust `#[attributes]` right above it (comment-only lines by the front
/// end's `code_lines`, no blank line in between), so a chunk carries its
/// documentation.
fn chunk_start(src: &Source, d: &Definition) -> usize {
    let mut s = d.start_line;
    while s > 1 {
        let above = src.line(s - 1).trim_start();
        let comment = !above.is_empty() && !src.parsed.has_code(s - 1);
        if comment || above.starts_with("#[") {
            s -= 1;
        } else {
            break;
        }
    }
    s
}

/// Chunks of a source file in language `lang` (see the module docs).
pub(super) fn code_chunks(rel_path: &str, text: &str, lang: &dyn Language) -> Vec<Chunk> {
    if looks_minified(text) {
        tracing::debug!(file = %rel_path, "not chunked: minified or generated");
        return Vec::new();
    }
    let src = Source::new(text, lang);
    if src.lines.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let defs = &src.parsed.definitions;
    let per_line_idents: Vec<Vec<&str>> = src.lines.iter().map(|l| identifiers(l)).collect();
    let binds = bindings(lang.name(), &src.parsed.imports, &src.lines);
    let import_lines: HashSet<usize> = src
        .parsed
        .imports
        .iter()
        .flat_map(|i| i.start_line..=i.end_line)
        .collect();
    // The file's imports the lines `first..=last` use (import statements themselves
    // bind names, they do not use them).
    let meta = |first: usize, last: usize| {
        let used: HashSet<&str> = (first..=last)
            .filter(|l| !import_lines.contains(l))
            .filter_map(|l| per_line_idents.get(l - 1))
            .flatten()
            .copied()
            .collect();
        let mut imports_used: Vec<String> = Vec::new();
        for (name, module) in &binds {
            if used.contains(name.as_str()) && !imports_used.contains(module) {
                imports_used.push(module.clone());
            }
        }
        ChunkMeta {
            imports_used,
            complexity: last + 1 - first,
            ..ChunkMeta::default()
        }
    };
    let mut covered = vec![false; src.lines.len() + 2];
    let mut chunks = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        let Some(kind) = role(defs, i) else {
            continue;
        };
        let (first, last) = (chunk_start(&src, d), d.end_line.min(src.lines.len()));
        if first > last {
            continue;
        }
        if at_file_level(defs, i) {
            for c in covered.iter_mut().take(last + 1).skip(first) {
                *c = true;
            }
        }
        let content = match kind {
            ChunkKind::Method => match type_context(&src, defs, i) {
                Some(header) => format!("{header}\n{}", src.slice(first, last)),
                None => src.slice(first, last),
            },
            ChunkKind::Class if last + 1 - first > MAX_CLASS_LINES => outline(&src, defs, i, first),
            _ => src.slice(first, last),
        };
        chunks.push(Chunk {
            id: String::new(),
            file: rel_path.to_string(),
            start_line: first,
            end_line: last,
            kind,
            name: Some(d.qualname.clone()),
            content,
            meta: meta(first, last),
        });
    }
    for (first, last) in module_runs(&src, &covered) {
        chunks.push(Chunk {
            id: String::new(),
            file: rel_path.to_string(),
            start_line: first,
            end_line: last,
            kind: ChunkKind::Module,
            name: None,
            content: src.slice(first, last),
            meta: meta(first, last),
        });
    }
    chunks
}

/// The header a method's chunk starts with: its enclosing type's or `impl` block's
/// header (`class Router extends Base {`, `impl<T> fmt::Display for Stack<T> {`), or,
/// for a method declared outside its type (a Go method, a JS
/// `Type.prototype.m = function`), the header of the type named by its container when
/// this file declares it. `None` when there is nothing to show.
fn type_context(src: &Source, defs: &[Definition], i: usize) -> Option<String> {
    let d = &defs[i];
    let owner = match d.parent.and_then(|p| defs.get(p)) {
        Some(p) if p.kind.is_type_body() => Some(p),
        Some(_) => None,
        None => {
            let container = d.container.as_deref()?;
            defs.iter()
                .find(|t| t.kind.is_type() && t.qualname == container)
        }
    }?;
    let (first, last) = src.header(owner);
    Some(src.slice(first, last))
}

/// A long type's or `impl` block's chunk text: its doc comment (the first
/// [`MAX_OUTLINE_DOC_LINES`] lines) and header (with its annotations), then its direct
/// members — each member definition as its signature and `...`,
/// other non-comment lines (fields, enum variants, associated items) as they are —
/// and its closing line, at most [`MAX_CLASS_LINES`] lines before a final `...`.
fn outline(src: &Source, defs: &[Definition], i: usize, first: usize) -> String {
    let d = &defs[i];
    let (_, header_end) = src.header(d);
    // The doc comment above the type, at most MAX_OUTLINE_DOC_LINES of it (a class's
    // javadoc can run for a hundred lines), then the declaration up to its `{`.
    let doc_end = d.start_line.min(first + MAX_OUTLINE_DOC_LINES);
    let mut out: Vec<String> = (first..doc_end).map(|l| src.line(l).to_string()).collect();
    if doc_end < d.start_line {
        out.push(format!("{}...", indent(src.line(doc_end))));
    }
    out.extend((d.start_line..=header_end).map(|l| src.line(l).to_string()));
    let members: Vec<&Definition> = defs.iter().filter(|m| m.parent == Some(i)).collect();
    let mut next = 0;
    let mut line = header_end + 1;
    while line < d.end_line {
        if out.len() >= MAX_CLASS_LINES {
            out.push(format!("{}    ...", indent(src.line(d.start_line))));
            break;
        }
        while next < members.len() && members[next].end_line < line {
            next += 1;
        }
        if let Some(m) = members.get(next).filter(|m| m.start_line <= line) {
            let (_, sig_end) = src.header(m);
            let shown = if sig_end < m.end_line {
                sig_end
            } else {
                m.end_line
            };
            out.extend((line..=shown).map(|l| src.line(l).to_string()));
            if shown < m.end_line {
                out.push(format!("{}    ...", indent(src.line(shown))));
            }
            line = m.end_line + 1;
            next += 1;
            continue;
        }
        if src.parsed.has_code(line) {
            out.push(src.line(line).to_string());
        }
        line += 1;
    }
    if d.end_line > header_end {
        out.push(src.line(d.end_line).to_string());
    }
    out.join("\n")
}

/// The leading whitespace of `line`.
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Module code: maximal runs of lines no file-level chunk covers, blank lines trimmed
/// at both ends, split into pieces of at most [`super::MAX_MODULE_LINES`] lines (after a
/// blank line where one falls in the piece, else at the limit). 1-based, inclusive.
fn module_runs(src: &Source, covered: &[bool]) -> Vec<(usize, usize)> {
    super::module_pieces(
        1,
        src.lines.len(),
        |l| covered[l],
        |l| src.blank(l),
        |r| src.blank(r - 1) && !src.blank(r),
    )
}

#[cfg(test)]
mod tests;
