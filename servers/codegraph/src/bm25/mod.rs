//! BM25 code search as LocAgent does it (SPEC.md §3.3–3.4): llama-index-retrievers-bm25 0.4.0
//! over bm25s 0.2.3, on EpicSplitter chunks ([`crate::chunk`]).
//!
//! - [`Bm25Index`]: content search over a repository's chunks. Postings and the chunk store
//!   live in tantivy (in memory, or on disk with [`Bm25Index::save`]/[`Bm25Index::open`]);
//!   scoring is our own reproduction of bm25s' BM25 ([`scoring`]): method `lucene`,
//!   k1 = 1.5, b = 0.75, float32.
//! - [`ModuleIndex`]: the entity-id retriever, built from a list of node ids, on
//!   [`DocIndex`] (in-memory BM25 over token lists, which the per-function retriever
//!   of [`crate::functions`] uses too).
//! - [`tokenize`]: bm25s' tokenizer (lower-case, `\w\w+` words, 33 stop words, Snowball
//!   English stems).
//!
//! Deliberate differences from the original (its plain defects): an empty query or one
//! with no indexed word returns no hits with an [`EmptyReason`] instead of crashing or
//! returning arbitrary zero-score chunks; `top_k` larger than the corpus is fine; ties are
//! ordered by corpus position instead of arbitrarily.
//!
//! ```no_run
//! use navbench_codegraph::bm25::Bm25Index;
//! let index = Bm25Index::build(std::path::Path::new("/path/to/repo"))?;
//! for hit in index.search("session redirect cookies", 10)?.hits {
//!     println!("{}:{}-{} {:.4}", hit.file, hit.start_line, hit.end_line, hit.score);
//! }
//! # Ok::<(), navbench_codegraph::bm25::Bm25Error>(())
//! ```

pub mod docs;
pub mod index;
mod memory;
pub mod module;
pub mod scoring;
pub mod tokenize;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use docs::{DocIndex, DocIndexBuilder};
pub use index::{Bm25Index, EmptyReason, Hit, SearchResults, source_fingerprint};
pub use module::{ModuleHit, ModuleIndex};

/// Errors of the BM25 index.
#[derive(Debug, thiserror::Error)]
pub enum Bm25Error {
    /// Chunking the repository failed.
    #[error("chunking failed: {0}")]
    Chunk(#[from] crate::chunk::ChunkError),
    /// tantivy failed.
    #[error("index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Reading the index failed.
    #[error("index I/O error: {0}")]
    IndexIo(#[from] std::io::Error),
    /// Writing or reading a file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// (De)serializing failed.
    #[error("serialization error: {0}")]
    Json(#[from] serde_json::Error),
    /// A saved index is missing parts, from another format version, or damaged; rebuild it.
    #[error("BM25 index in {dir} is unusable ({reason}); rebuild it")]
    Corrupt {
        /// The index directory.
        dir: PathBuf,
        /// What is wrong.
        reason: String,
    },
}
