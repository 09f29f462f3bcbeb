//! A repository's search index: chunk vectors (exact cosine) fused with tantivy BM25.
//!
//! [`RepoIndex::build`] walks a repository (`.gitignore`-aware, see
//! [`navbench_server_support::walk`]), chunks every indexable file ([`crate::chunk`]), embeds the
//! chunks and writes everything into a directory:
//! - the chunk store ([`store`]): segments of per-file records (`seg-<n>.bin`: a
//!   file's chunks, their content hashes and vectors, each record checksummed; see
//!   [`segments`]) and the live set `store.live` (the [`FileFilter`], the model id,
//!   the BM25 token totals, the tantivy commit it matches, each live file's record);
//! - `tantivy/`: the BM25 index (chunk text, qualified name and path).
//!
//! Vectors are keyed by content hash (the embedding cache's key), so a rebuild or an
//! update embeds only chunks whose text has no vector in the index, its in-memory
//! cache or the shared packs (`embedding_cache`); a rebuild over a damaged store
//! reuses the vectors of every intact record.
//!
//! # BM25 fields and tokenizers
//! A chunk's path + text and its qualified name are indexed in one of two pairs of
//! fields. Chunks of TypeScript/JavaScript, Java, Go and Rust files go to `code` /
//! `code_name`, read by the split-identifier analyzer ([`code_tokens`]:
//! `getHTTPResponse2` → `gethttpresponse2 get http response 2`), because these
//! languages name things in camelCase and PascalCase, which tantivy's default analyzer
//! keeps whole, so a query word never matched a part of a name. Python and text
//! chunks stay in `body` / `name` with tantivy's default analyzer (split at
//! non-alphanumerics, lowercased), exactly as before: the harness's Python baselines
//! were measured with it, and splitting Python's names too changes its rankings (the
//! test `split_tests::python_bm25_is_unchanged_and_splitting_it_would_change_the_ranking`
//! shows both), which would need a new baseline run to judge. A query is read by both
//! analyzers, each pair queried with its own terms, so in a Python-only repository
//! the scores are the old ones. [`splits_identifiers`] is the one place that decides.
//!
//! Search ([`RepoIndex::search`]) scores every chunk by cosine similarity against the
//! query vector (the vectors are L2-normalized rows of one contiguous `f32` matrix, so
//! this is a dot product per row: exact, no approximate index needed at repository
//! scale) and runs a BM25 query over tantivy; the two rankings are fused by reciprocal
//! rank fusion, `Σ w/(60 + rank)` (`w` = 1, except the static encoder's vector ranking,
//! [`STATIC_VECTOR_WEIGHT`]), normalized so that first in both lists scores 1. The
//! static encoder's vector side embeds the query without its fenced code blocks
//! (`search::vector_query`); BM25 always reads the whole query.
//!
//! [`RepoIndex::update_files`] re-chunks a set of files, embeds only chunks not in the
//! index or the cache, updates tantivy by deleting and re-adding those files'
//! documents, and persists by difference: those files' records in one new segment,
//! compacted once garbage passes a bound ([`store`]). BM25
//! is scored with the live documents' exact statistics and equal scores are ordered
//! by chunk, so an updated index ranks exactly as a cold build of the same tree
//! ([`bm25`] says why tantivy's own statistics would not); the chunks keep the cold
//! build's order (by path, then start line), so vector ties fall alike too.
//!
//! By concept: [`build`] (the cold build), [`update`] (updates, embedding, installing
//! chunks and vectors), [`store`] (the live set, persisting by difference,
//! [`RepoIndex::open`]), [`segments`] (the records on disk), [`bm25`] (the
//! tantivy schema and scoring), [`search`] (the hybrid search), the caches
//! ([`chunk_cache`], `embedding_cache`) and [`progress`].

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use navbench_server_support::walk::FileGlob;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::{Index, IndexReader};

use crate::chunk::{Chunk, ChunkKind, code_language, is_indexable};
use crate::encoder::EncoderKind;
use crate::model::ModelError;

/// A 1-based rank and the score behind it.
type RankScore = (usize, f32);

/// Reciprocal rank fusion constant.
pub const RRF_K: f32 = 60.0;
/// Weight of the static encoder's vector ranking in the fusion (BM25's and MiniLM's
/// are 1); see `search::vector_weight`. Chosen on `mini` and the dev split (0.3, 0.5,
/// 0.7 and 1 tried; 0.5 was best or tied on file Acc@5 and function Acc@10 on both).
pub const STATIC_VECTOR_WEIGHT: f32 = 0.5;
/// Files larger than this are not indexed (generated data, vendored bundles).
pub const MAX_FILE_BYTES: u64 = 1_000_000;
/// Candidates taken from each ranking before fusion (at least).
const MIN_CANDIDATES: usize = 100;
/// Chunks embedded per call (progress is reported, and new vectors shared, between
/// calls): the transformer's groups take seconds, the static table's a few
/// milliseconds. Fixed sizes, so the same chunks are always batched together.
const fn embed_group(kind: EncoderKind) -> usize {
    match kind {
        EncoderKind::Minilm => 128,
        EncoderKind::Static => 8192,
    }
}

/// Which files of a repository are indexed: globs with the syntax of
/// [`navbench_server_support::walk`] (`*.py`, `src/**`, `tests/`). An empty `include` means every
/// indexable file; `exclude` wins over `include`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFilter {
    /// Keep only files matching one of these (empty: all).
    pub include: Vec<String>,
    /// Drop files matching any of these.
    pub exclude: Vec<String>,
}

impl FileFilter {
    /// Compiles the globs; an invalid glob is an [`IndexError::InvalidGlob`].
    pub fn compile(&self) -> Result<CompiledFilter, IndexError> {
        let comp = |v: &[String]| {
            v.iter()
                .map(|p| {
                    FileGlob::new(p).map_err(|e| IndexError::InvalidGlob {
                        pattern: p.clone(),
                        reason: e.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(CompiledFilter {
            include: comp(&self.include)?,
            exclude: comp(&self.exclude)?,
        })
    }
}

/// A [`FileFilter`] ready to match paths.
#[derive(Debug, Clone)]
pub struct CompiledFilter {
    include: Vec<FileGlob>,
    exclude: Vec<FileGlob>,
}

impl CompiledFilter {
    /// Whether the repository-relative path is indexed: indexable by
    /// [`is_indexable`], included, not excluded.
    pub fn accepts(&self, rel: &str) -> bool {
        is_indexable(rel)
            && (self.include.is_empty() || self.include.iter().any(|g| g.is_match(rel)))
            && !self.exclude.iter().any(|g| g.is_match(rel))
    }
}

/// How [`RepoIndex::search`] selects and limits results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// Number of results to return.
    pub top_k: usize,
    /// Only files matching this: a glob when it contains `*`, `?` or `[`, otherwise a
    /// substring of the path.
    pub file_filter: Option<String>,
    /// Only chunks of this kind.
    pub chunk_kind: Option<ChunkKind>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            top_k: 10,
            file_filter: None,
            chunk_kind: None,
        }
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index into [`RepoIndex::chunks`].
    pub chunk: usize,
    /// Fused score in `0..=1` (1: first in both rankings).
    pub score: f32,
    /// 1-based rank in the semantic (cosine) ranking, if among its candidates.
    pub vector_rank: Option<usize>,
    /// 1-based rank in the BM25 ranking, if among its candidates.
    pub bm25_rank: Option<usize>,
    /// Why it matched, e.g. `semantic #2 (cos 0.61) + keyword #1 (bm25 7.2)`.
    pub reason: String,
}

/// What a build or update did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Files indexed (build) or re-chunked (update).
    pub files: usize,
    /// Chunks in the index afterwards.
    pub chunks: usize,
    /// Chunks newly embedded.
    pub embedded: usize,
    /// Chunks whose vector came from the cache.
    pub reused: usize,
    /// Wall time.
    pub elapsed_ms: u64,
}

/// Why an index could not be built, opened, updated or searched.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A file filter glob does not parse.
    #[error("invalid file pattern '{pattern}': {reason}")]
    InvalidGlob {
        /// The pattern.
        pattern: String,
        /// Why.
        reason: String,
    },
    /// The repository root cannot be walked.
    #[error("cannot list the repository files: {0}")]
    Walk(#[from] navbench_server_support::walk::WalkError),
    /// Reading or writing the index directory failed.
    #[error("cannot access '{}': {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The persisted index is unreadable or belongs to another model; rebuild it.
    #[error("the index in '{}' cannot be used ({reason}); rebuild it (index_repository / update_repository)", dir.display())]
    Corrupt {
        /// The index directory.
        dir: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The store was built by the other encoder (`--encoder`); it is never read as
    /// this one's.
    #[error("the index in '{}' was built with the {store} encoder, and this server runs the {wanted} encoder; its vectors cannot be mixed. Run the server with --encoder {store}, or give it another --data-dir, or delete the directory to rebuild it with {wanted}", dir.display())]
    EncoderMismatch {
        /// The index directory.
        dir: PathBuf,
        /// The encoder that built the store.
        store: &'static str,
        /// The encoder of this server.
        wanted: &'static str,
    },
    /// Embedding failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// tantivy failed.
    #[error("BM25 index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError + '_ {
    move |source| IndexError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether a chunk's text is indexed with split identifiers: chunks of the languages
/// other than Python ([`code_language`]). Python and text chunks keep tantivy's
/// default analyzer, so the Python baselines measured with it stay as they were (see
/// the [module docs](self)).
pub fn splits_identifiers(c: &Chunk) -> bool {
    code_language(&c.file).is_some()
}

/// A repository's persisted, searchable index (see the [module docs](self)).
pub struct RepoIndex {
    dir: PathBuf,
    filter: FileFilter,
    compiled: CompiledFilter,
    chunks: Vec<Chunk>,
    /// Each chunk's content hash (of [`embedding_cache::embed_text`]), the key of its
    /// vector.
    hashes: Vec<u128>,
    /// Content hash → its row in `vectors` (the first chunk with that hash).
    row_of: rustc_hash::FxHashMap<u128, usize>,
    by_id: HashMap<String, usize>,
    dim: usize,
    /// Row-major `chunks.len() × dim`, L2-normalized rows.
    vectors: Vec<f32>,
    model_id: String,
    /// Vectors not in `vectors`: computed for chunks not installed yet, read from the
    /// shared packs, or of chunks an update removed.
    cache: EmbeddingCache,
    index: Index,
    reader: IndexReader,
    /// Tokens per BM25 field over the live documents (see [`bm25`]).
    bm25_totals: bm25::Bm25Totals,
    fields: Fields,
    /// The tantivy commit the chunks match (persisted with them).
    opstamp: u64,
    /// Where the chunk store's records are ([`store`]).
    disk: store::DiskState,
}

impl std::fmt::Debug for RepoIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepoIndex")
            .field("dir", &self.dir)
            .field("chunks", &self.chunks.len())
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

/// Reads and chunks files in parallel; unreadable, non-UTF-8 and oversized files are
/// skipped (logged).
fn chunk_files(root: &Path, rels: &[String]) -> Vec<(String, Vec<Chunk>)> {
    rels.par_iter()
        .filter_map(|rel| {
            let abs = root.join(rel);
            let meta = fs::metadata(&abs).ok()?;
            if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
                tracing::debug!(file = %rel, "skipped (not a file or too large)");
                return None;
            }
            let bytes = fs::read(&abs).ok()?;
            let Ok(text) = String::from_utf8(bytes) else {
                tracing::debug!(file = %rel, "skipped (not UTF-8)");
                return None;
            };
            Some((rel.clone(), chunk_cache::chunks_of(rel, &text)))
        })
        .collect()
}

impl RepoIndex {
    /// Every chunk, ordered by file then start line.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The chunk with this id (`<file>:<start>-<end>`).
    pub fn chunk_by_id(&self, id: &str) -> Option<&Chunk> {
        self.by_id.get(id).map(|&i| &self.chunks[i])
    }

    /// The indexed files (those with at least one chunk), sorted.
    pub fn files(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.chunks.iter().map(|c| c.file.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The file filter the index was built with.
    pub fn filter(&self) -> &FileFilter {
        &self.filter
    }

    /// Whether `rel` would be indexed under this index's filter.
    pub fn accepts(&self, rel: &str) -> bool {
        self.compiled.accepts(rel)
    }

    /// The directory the index is persisted in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

mod bm25;
mod build;
pub mod chunk_cache;
pub mod code_tokens;
mod embedding_cache;
pub mod progress;
mod search;
mod segments;
mod store;
mod update;

use bm25::Fields;
use embedding_cache::EmbeddingCache;
pub use search::cosine_scores;

#[cfg(test)]
mod split_tests;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;
