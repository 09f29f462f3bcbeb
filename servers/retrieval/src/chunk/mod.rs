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
//! Decorators belong to their definition's chunk.
//!
//! TypeScript/TSX, JavaScript/JSX, Java, Go and Rust sources (the extensions
//! [`navbench_lang::language_for_path`] recognizes: `.ts .tsx .mts .cts .js .jsx .mjs
//! .cjs .java .go .rs`) are chunked by that crate's front end's definitions, in the
//! same shapes (`code`):
//! - a [`ChunkKind::Function`] chunk per file-level function (nested functions,
//!   closures and callbacks stay inside it; functions in a TS `namespace` or Rust
//!   inline `mod` are file-level, named `ns.f`);
//! - a [`ChunkKind::Class`] chunk per type — class, interface, struct, enum, trait,
//!   type alias, Go named type — and per Rust `impl` block (named by its type, so a
//!   struct and its `impl`s share a name); longer than [`MAX_CLASS_LINES`], its
//!   content is an outline (header, fields and other member lines, each member
//!   definition's signature and `...`), its lines still the whole span;
//! - a [`ChunkKind::Method`] chunk per method, constructor or interface/trait method
//!   signature, whose content starts with its type's header line(s) (`export class
//!   Client extends Base {`, `impl<T> fmt::Display for Stack<T> {`); Go methods and
//!   JS `Type.prototype.m = function` belong to their type by the front end's
//!   container (named `Type.m`, prefixed with the type's header when this file
//!   declares it), Rust `impl` methods to the `impl` block they sit in;
//! - [`ChunkKind::Module`] chunks for the code between file-level definitions
//!   (imports, constants, statements; namespace and `mod` braces), at most
//!   [`MAX_MODULE_LINES`] lines each, split after a blank line where possible.
//!
//! Doc comments and Rust `#[attributes]` directly above a definition belong to its
//! chunk (its first line moves up to them). Definitions inside a function belong to
//! that function's chunk. A minified or generated file (non-blank lines averaging
//! more than 250 bytes: a JS bundle) gives no chunks.
//!
//! Other indexable text files (Markdown, reST, plain text, TOML/INI/CFG/YAML) become
//! [`ChunkKind::Text`] chunks of at most [`MAX_TEXT_LINES`] lines / [`MAX_TEXT_CHARS`]
//! characters, starting a new chunk at headings where possible.
//!
//! Every chunk carries [`ChunkMeta`]: the calls it makes (dotted as written:
//! `self._merge`, `os.path.join`), the imports it uses (the file's imports whose bound
//! name occurs in the chunk, as full dotted paths: `requests.utils.to_key_val_list`,
//! relative ones keep their dots: `.compat.urlparse`), the exception types it handles,
//! its line count, and the annotated types (parameters, returns, annotated assignments).
//! For the other languages the front ends give no call, exception or type facts, so
//! `calls`, `exceptions_handled` and `types` stay empty; `imports_used` lists the
//! module paths as written (`./http`, `java.util.List`, `net/http`,
//! `std::collections::HashMap`) of the file's imports whose bound name occurs in the
//! chunk (see `imports` for how a bound name is read), and the line count is set.

mod code;
mod imports;
mod meta;
mod python;
mod text;

use std::collections::HashSet;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Module-level code runs longer than this are split (at statement starts if possible).
pub const MAX_MODULE_LINES: usize = 60;
/// Classes longer than this are represented by an outline instead of their full text.
pub const MAX_CLASS_LINES: usize = 60;
/// Maximum lines of a text chunk.
pub const MAX_TEXT_LINES: usize = 40;
/// Maximum characters of a text chunk (a single longer line is cut).
pub const MAX_TEXT_CHARS: usize = 2000;

/// Module code of a file: the maximal runs of lines in `first..=last` that no
/// definition chunk covers, split into pieces of at most [`MAX_MODULE_LINES`] lines,
/// each with blank lines trimmed at both ends (all-blank pieces are dropped).
///
/// A long run breaks before the last line `r` in the piece where `may_start(r)` holds
/// (Python: a statement starts there; other languages: a blank line precedes it), else
/// at the limit. Both chunkers share it; they differ only in their line numbering
/// (Python 0-based, the others 1-based) and in `may_start`.
fn module_pieces(
    first: usize,
    last: usize,
    covered: impl Fn(usize) -> bool,
    blank: impl Fn(usize) -> bool,
    may_start: impl Fn(usize) -> bool,
) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut line = first;
    while line <= last {
        if covered(line) || blank(line) {
            line += 1;
            continue;
        }
        let mut end = line;
        while end < last && !covered(end + 1) {
            end += 1;
        }
        let mut s = line;
        while s <= end {
            let mut e = end;
            if e + 1 - s > MAX_MODULE_LINES {
                let limit = s + MAX_MODULE_LINES;
                e = (s + 1..limit)
                    .rev()
                    .find(|&r| may_start(r))
                    .map_or(limit - 1, |r| r - 1);
            }
            let (mut ts, mut te) = (s, e);
            while ts < te && blank(ts) {
                ts += 1;
            }
            while te > ts && blank(te) {
                te -= 1;
            }
            if !blank(ts) {
                pieces.push((ts, te));
            }
            s = e + 1;
        }
        line = end + 1;
    }
    pieces
}

/// What a chunk covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    /// A top-level function (with its nested functions).
    Function,
    /// A method; content starts with its class's (type's, `impl`'s) header line.
    Method,
    /// A class or other type, or a Rust `impl` block (full text, or an outline for
    /// long ones).
    Class,
    /// Module-level code between definitions.
    Module,
    /// A piece of a text file (Markdown, reST, plain text, config).
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

/// The front end that chunks `rel_path` when it is a source file of a language other
/// than Python that `navbench_lang` reads (by extension, case-sensitive as
/// [`navbench_lang::language_for_path`] matches it). Python keeps its own chunker.
pub fn code_language(rel_path: &str) -> Option<&'static dyn navbench_lang::Language> {
    navbench_lang::language_for_path(rel_path).filter(|l| l.name() != "python")
}

/// Whether a file is chunked at all: Python sources, the other languages' sources
/// ([`code_language`]) and the text formats listed in the module docs.
pub fn is_indexable(rel_path: &str) -> bool {
    extension(rel_path)
        .is_some_and(|e| PY_EXT.contains(&e.as_str()) || TEXT_EXT.contains(&e.as_str()))
        || code_language(rel_path).is_some()
}

/// Splits one file into chunks (see the module docs). Non-indexable paths and empty
/// files give no chunks. Chunks are ordered by start line.
pub fn chunk_file(rel_path: &str, text: &str) -> Vec<Chunk> {
    let Some(ext) = extension(rel_path) else {
        return Vec::new();
    };
    let mut chunks = if PY_EXT.contains(&ext.as_str()) {
        python::python_chunks(rel_path, text)
    } else if let Some(lang) = code_language(rel_path) {
        code::code_chunks(rel_path, text, lang)
    } else if TEXT_EXT.contains(&ext.as_str()) {
        text::text_chunks(
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

#[cfg(test)]
mod tests;
