//! BM25 over one document per function: the retrieval baseline of the LocAgent paper
//! (its "BM25" row), served by `navbench-codegraph --tools functions` ([`server`]).
//!
//! The paper ranks a per-function corpus in the CoRNStack / SweRank format
//! ([`corpus`]) with the whole issue text as the query, and its evaluation turns the
//! ranked document ids into files, modules and functions (`eval_metric.py`, `docs`).
//! This module is the retriever; the harness's `bm25` variant does that conversion.
//!
//! Choices the paper leaves open, and why:
//! - BM25 flavour and tokenizer: bm25s 0.2.3 as LocAgent's own code search uses it
//!   ([`crate::bm25`], SPEC.md §3.3): method `lucene`, k1 = 1.5, b = 0.75; lower-case,
//!   `\w\w+` words, bm25s' 33 English stop words, Snowball English stems. It is the BM25
//!   the same authors run elsewhere in the same repository, and this crate already
//!   reproduces it to the float (checked against the original's rankings).
//! - Ties: by corpus position (files by path, then SweRank's order within a file).
//! - Documents with no positive score are never returned.
//!
//! ```
//! use navbench_codegraph::functions::{FunctionIndex, TestFilter};
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("cart.py"), "class Cart:\n    def total(self):\n        return sum(self.prices)\n")?;
//! let index = FunctionIndex::build(dir.path(), TestFilter::Path)?;
//! let hits = index.search("cart total is wrong", 10).hits;
//! assert_eq!(hits[0].id, "cart.py/Cart/total");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod corpus;
pub mod server;
mod store;
mod tools;

use std::path::{Path, PathBuf};
use std::time::Instant;

use navbench_lang::family::Selection;
use navbench_server_support::timings::{Part, TimingsRecorder};
use rayon::prelude::*;

pub use corpus::{FunctionDoc, TestFilter};

use crate::bm25::tokenize::Tokenizer;
use crate::bm25::{DocIndex, DocIndexBuilder};
use crate::builder::FileStore;
use store::FileDocs;

/// Why the per-function index could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FunctionsError {
    /// The tree could not be listed.
    #[error("cannot list the source files under {root}: {source}")]
    Walk {
        /// The repository root.
        root: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What went into an index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorpusStats {
    /// Source files under the root (Python and the `navbench-lang` languages).
    pub source_files: usize,
    /// Of those, left out as tests.
    pub test_files: usize,
    /// Left out because they are not UTF-8.
    pub undecodable_files: usize,
    /// Left out because CPython would not parse them.
    pub unparsable_files: usize,
    /// Documents (functions and methods).
    pub documents: usize,
}

/// A document without its text (what a hit reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocMeta {
    /// SweRank's id: `path.py/Class/method` or `path.py/function`.
    pub id: String,
    /// Repo-relative path.
    pub file: String,
    /// First line (the `def` line).
    pub start_line: usize,
    /// Last line.
    pub end_line: usize,
}

/// One ranked document.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionHit {
    /// SweRank's id: `path.py/Class/method` or `path.py/function`.
    pub id: String,
    /// Repo-relative path.
    pub file: String,
    /// First line (the `def` line).
    pub start_line: usize,
    /// Last line.
    pub end_line: usize,
    /// BM25 score.
    pub score: f32,
}

/// Hits best first, or why there are none.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSearch {
    /// At most `top_k` documents with a positive score.
    pub hits: Vec<FunctionHit>,
    /// Set when nothing scored: what to change.
    pub empty_reason: Option<&'static str>,
}

/// BM25 over a tree's per-function documents.
#[derive(Debug)]
pub struct FunctionIndex {
    root: PathBuf,
    filter: TestFilter,
    docs: Vec<DocMeta>,
    index: DocIndex,
    stats: CorpusStats,
    reused_files: usize,
    build_ms: f64,
}

/// One file's contribution: its documents (read now, or reused from the store), or
/// why it has none.
enum FileOutcome {
    Test,
    Undecodable,
    Read {
        docs: FileDocs,
        key: store::FileKey,
        reused: bool,
    },
}

/// A file's text and store key, or why it is not read.
enum FileText {
    Test,
    Undecodable,
    Text(String, store::FileKey),
}

impl FunctionIndex {
    /// Reads every source file of the repository's languages under `root` (in
    /// parallel) and indexes its documents: a Python project's corpus is the paper's,
    /// `.py` files only (see [`FunctionIndex::build_for`]).
    pub fn build(root: &Path, filter: TestFilter) -> Result<FunctionIndex, FunctionsError> {
        FunctionIndex::build_for(root, filter, &Selection::Auto)
    }

    /// Reads every source file of the families `languages` chooses under `root` and
    /// indexes its documents.
    pub fn build_for(
        root: &Path,
        filter: TestFilter,
        languages: &Selection,
    ) -> Result<FunctionIndex, FunctionsError> {
        FunctionIndex::build_with(root, filter, languages, None, &TimingsRecorder::default())
    }

    /// [`FunctionIndex::build_for`], reusing the documents of files unchanged since a
    /// build that used the per-file store in `store_dir` (see [`store`]; only changed
    /// files are parsed and tokenized, and a new pack is written when any was), and
    /// adding each part's time to `timings`. The index equals a build without store.
    pub fn build_with(
        root: &Path,
        filter: TestFilter,
        languages: &Selection,
        store_dir: Option<&Path>,
        timings: &TimingsRecorder,
    ) -> Result<FunctionIndex, FunctionsError> {
        let started = Instant::now();
        let store = store_dir.map(store::store);
        let (files, texts, pack) = timings.time(Part::Fingerprint, || {
            read_tree(root, filter, languages, store.as_ref())
        })?;
        let outcomes: Vec<FileOutcome> = timings.time(Part::Parse, || {
            files
                .par_iter()
                .zip(texts)
                .map_init(Tokenizer::new, |tokenizer, (f, t)| match t {
                    FileText::Test => FileOutcome::Test,
                    FileText::Undecodable => FileOutcome::Undecodable,
                    FileText::Text(text, key) => {
                        let stored = pack.as_ref().and_then(|p| store::lookup(p, key, &f.rel));
                        let reused = stored.is_some();
                        let docs = stored.unwrap_or_else(|| read_docs(tokenizer, &f.rel, &text));
                        FileOutcome::Read { docs, key, reused }
                    }
                })
                .collect()
        });
        let reused_files = outcomes
            .iter()
            .filter(|o| matches!(o, FileOutcome::Read { reused: true, .. }))
            .count();
        if let Some(store) = &store {
            timings.time(Part::Write, || save(store, pack.as_ref(), &outcomes));
        }
        let (docs, index, stats) = timings.time(Part::Text, || gather(files.len(), outcomes));
        Ok(FunctionIndex {
            root: root.to_path_buf(),
            filter,
            docs,
            index,
            stats,
            reused_files,
            build_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    /// Files whose documents came from the per-file store rather than a parse.
    pub fn reused_files(&self) -> usize {
        self.reused_files
    }

    /// The indexed tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The test filter it was built with.
    pub fn filter(&self) -> TestFilter {
        self.filter
    }

    /// What went into it.
    pub fn stats(&self) -> &CorpusStats {
        &self.stats
    }

    /// Time the build took, in milliseconds.
    pub fn build_ms(&self) -> f64 {
        self.build_ms
    }

    /// The documents in corpus order.
    pub fn documents(&self) -> &[DocMeta] {
        &self.docs
    }

    /// The best `top_k` documents for `query` (the whole issue text, say).
    pub fn search(&self, query: &str, top_k: usize) -> FunctionSearch {
        let tokens = Tokenizer::new().tokenize(query);
        let empty_reason = if self.docs.is_empty() {
            Some("the repository has no function outside test files")
        } else if tokens.is_empty() {
            Some(
                "the query has no searchable word (words of 2+ letters/digits that are not stop words)",
            )
        } else if !tokens.iter().any(|t| self.index.has_token(t)) {
            Some("no word of the query occurs in any function")
        } else {
            None
        };
        let hits = self
            .index
            .search(&tokens, top_k)
            .into_iter()
            .filter_map(|(d, score)| {
                let m = self.docs.get(d)?;
                Some(FunctionHit {
                    id: m.id.clone(),
                    file: m.file.clone(),
                    start_line: m.start_line,
                    end_line: m.end_line,
                    score,
                })
            })
            .collect();
        FunctionSearch { hits, empty_reason }
    }
}

/// A tree's source files, each one's text and store key (or why it is not read),
/// and the store's pack holding most of them.
type TreeFiles = (Vec<corpus::SourceFile>, Vec<FileText>, Option<store::Pack>);

/// The source files of the families `languages` chooses under `root`, each one's
/// text and store key (or why it is not read), and the store's pack holding most
/// of them.
fn read_tree(
    root: &Path,
    filter: TestFilter,
    languages: &Selection,
    store: Option<&FileStore>,
) -> Result<TreeFiles, FunctionsError> {
    let mut files = corpus::source_files(root).map_err(|source| FunctionsError::Walk {
        root: root.to_path_buf(),
        source,
    })?;
    let families = languages.resolve(files.iter().map(|f| f.rel.as_str()));
    files.retain(|f| families.contains(&f.rel));
    let texts: Vec<FileText> = files
        .par_iter()
        .map(|f| {
            if filter.is_test(&f.rel) {
                return FileText::Test;
            }
            match corpus::read_source(&f.abs) {
                None => FileText::Undecodable,
                Some(text) => {
                    let key = store::key(&f.rel, &text);
                    FileText::Text(text, key)
                }
            }
        })
        .collect();
    let pack = store.and_then(|s| {
        let keys: Vec<store::FileKey> = texts
            .iter()
            .filter_map(|t| match t {
                FileText::Text(_, k) => Some(*k),
                _ => None,
            })
            .collect();
        s.best_pack(&keys)
    });
    Ok((files, texts, pack))
}

/// The documents (corpus order), their BM25 index and the corpus statistics of
/// the outcomes of `source_files` files.
fn gather(
    source_files: usize,
    outcomes: Vec<FileOutcome>,
) -> (Vec<DocMeta>, DocIndex, CorpusStats) {
    let mut stats = CorpusStats {
        source_files,
        ..CorpusStats::default()
    };
    let mut docs = Vec::new();
    let mut index = DocIndexBuilder::default();
    for outcome in outcomes {
        match outcome {
            FileOutcome::Test => stats.test_files += 1,
            FileOutcome::Undecodable => stats.undecodable_files += 1,
            FileOutcome::Read {
                docs: FileDocs::Unparsable,
                ..
            } => stats.unparsable_files += 1,
            FileOutcome::Read {
                docs: FileDocs::Docs { vocab, docs: list },
                ..
            } => {
                index.add_file(&vocab, list.iter().map(|(_, t)| &t[..]));
                docs.extend(list.into_iter().map(|(meta, _)| meta));
            }
        }
    }
    stats.documents = docs.len();
    (docs, index.finish(), stats)
}

/// A file's documents and their tokens, read from its text.
fn read_docs(tokenizer: &mut Tokenizer, rel: &str, text: &str) -> FileDocs {
    let Some(docs) = corpus::file_documents(rel, text) else {
        return FileDocs::Unparsable;
    };
    FileDocs::from_tokens(
        docs.into_iter()
            .map(|d| {
                let tokens = tokenizer.tokenize(&d.text);
                let meta = DocMeta {
                    id: d.id,
                    file: d.file,
                    start_line: d.start_line,
                    end_line: d.end_line,
                };
                (meta, tokens)
            })
            .collect(),
    )
}

/// Writes a pack of every read file's entry (reused ones copied from `pack`) when
/// some file was parsed; a failure is logged (the next build parses again).
fn save(store: &FileStore, pack: Option<&store::Pack>, outcomes: &[FileOutcome]) {
    let parsed = outcomes
        .iter()
        .any(|o| matches!(o, FileOutcome::Read { reused: false, .. }));
    if !parsed {
        return;
    }
    let entries: Vec<(store::FileKey, Vec<u8>)> = outcomes
        .par_iter()
        .filter_map(|o| {
            let FileOutcome::Read { docs, key, reused } = o else {
                return None;
            };
            let blob = match (reused, pack.and_then(|p| p.blob(*key))) {
                (true, Some(b)) => b.to_vec(),
                _ => {
                    let mut w = crate::cache::Writer(Vec::new());
                    store::encode(&mut w, docs);
                    w.0
                }
            };
            Some((*key, blob))
        })
        .collect();
    if let Err(e) = store.save(entries) {
        tracing::warn!(dir = %store.dir.display(), error = %e, "cannot write the function corpus store; the next build reads every file again");
    }
}

#[cfg(test)]
pub(crate) mod incremental_tests;
#[cfg(test)]
mod tests;
