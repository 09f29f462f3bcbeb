//! A repository's search index: chunk vectors (exact cosine) fused with tantivy BM25.
//!
//! [`RepoIndex::build`] walks a repository (`.gitignore`-aware, see
//! [`navbench_server_support::walk`]), chunks every indexable file ([`crate::chunk`]), embeds the
//! chunks and writes everything into a directory:
//! - `chunks.json`: the chunks, the [`FileFilter`] and the model id;
//! - `embeddings-<model>.bin`: the embedding cache, content hash → vector, so a rebuild
//!   (a new commit of the same repository) only embeds chunks whose text changed; each
//!   vector is checksummed, and one that fails is computed again (by
//!   [`RepoIndex::open`] too);
//! - `tantivy/`: the BM25 index (chunk text, qualified name and path).
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
//! cache, and updates tantivy by deleting and re-adding those files' documents.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use navbench_server_support::timings::{Part, TimingsRecorder};
use navbench_server_support::walk::{FileGlob, WalkOptions, walk_files};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TEXT, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

use crate::chunk::{Chunk, ChunkKind, code_language, is_indexable};
use crate::encoder::{EncoderKind, TextEncoder};
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
/// Version of the persisted store: 2 added the split-identifier BM25 fields (`code`,
/// `code_name`); a store of another version is rebuilt.
const STORE_VERSION: u32 = 2;
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

/// The persisted `chunks.json`.
#[derive(Serialize, Deserialize)]
struct Store {
    version: u32,
    model_id: String,
    dim: usize,
    filter: FileFilter,
    chunks: Vec<Chunk>,
}

/// BM25 document fields. A chunk's text and name go either to `body`/`name` (tantivy's
/// default analyzer) or to `code`/`code_name` (the split-identifier analyzer,
/// [`code_tokens`]), by [`splits_identifiers`].
#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    file: Field,
    body: Field,
    name: Field,
    code: Field,
    code_name: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let id = b.add_text_field("id", STRING | STORED);
    let file = b.add_text_field("file", STRING);
    let body = b.add_text_field("body", TEXT);
    let name = b.add_text_field("name", TEXT);
    // Frequencies, no positions: the BM25 query is a bag of terms.
    let split = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(code_tokens::CODE_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let code = b.add_text_field("code", split.clone());
    let code_name = b.add_text_field("code_name", split);
    (
        b.build(),
        Fields {
            id,
            file,
            body,
            name,
            code,
            code_name,
        },
    )
}

/// Registers the split-identifier analyzer the `code` fields name; every opened or
/// created index needs it before it is written or searched.
fn register_tokenizers(index: &Index) {
    index
        .tokenizers()
        .register(code_tokens::CODE_TOKENIZER, code_tokens::code_analyzer());
}

/// Whether a chunk's text is indexed with split identifiers: chunks of the languages
/// other than Python ([`code_language`]). Python and text chunks keep tantivy's
/// default analyzer, so the Python baselines measured with it stay as they were (see
/// the [module docs](self)).
pub fn splits_identifiers(c: &Chunk) -> bool {
    code_language(&c.file).is_some()
}

fn tantivy_doc(f: Fields, c: &Chunk) -> TantivyDocument {
    let (body, name) = if splits_identifiers(c) {
        (f.code, f.code_name)
    } else {
        (f.body, f.name)
    };
    let mut doc = TantivyDocument::default();
    doc.add_text(f.id, &c.id);
    doc.add_text(f.file, &c.file);
    doc.add_text(body, format!("{}\n{}", c.file, c.content));
    if let Some(n) = &c.name {
        doc.add_text(name, n);
    }
    doc
}

/// A repository's persisted, searchable index (see the [module docs](self)).
pub struct RepoIndex {
    dir: PathBuf,
    filter: FileFilter,
    compiled: CompiledFilter,
    chunks: Vec<Chunk>,
    by_id: HashMap<String, usize>,
    dim: usize,
    /// Row-major `chunks.len() × dim`, L2-normalized rows.
    vectors: Vec<f32>,
    model_id: String,
    cache: EmbeddingCache,
    index: Index,
    reader: IndexReader,
    fields: Fields,
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
    /// Walks `root` (`.gitignore`-aware), chunks the files `filter` accepts, embeds
    /// chunks not in the embedding cache of `dir`, builds the vector matrix and the BM25
    /// index, and persists everything into `dir` (replacing an older index there).
    pub fn build(
        root: &Path,
        filter: &FileFilter,
        embedder: &dyn TextEncoder,
        dir: &Path,
    ) -> Result<(RepoIndex, IndexStats), IndexError> {
        RepoIndex::build_timed(root, filter, embedder, dir, &TimingsRecorder::default())
    }

    /// [`RepoIndex::build`], adding each part's time to `timings` (fingerprint: the
    /// walk; parse: chunking; vectors: the embedding cache and embedding; text: the
    /// tantivy index; write: the chunk store).
    pub fn build_timed(
        root: &Path,
        filter: &FileFilter,
        embedder: &dyn TextEncoder,
        dir: &Path,
        timings: &TimingsRecorder,
    ) -> Result<(RepoIndex, IndexStats), IndexError> {
        let t0 = Instant::now();
        let tracker = progress::Tracker::start(dir);
        let progress = tracker.progress();
        let compiled = filter.compile()?;
        let files: Vec<String> = timings.time(Part::Fingerprint, || {
            Ok::<_, IndexError>(
                walk_files(root, &WalkOptions::default())?
                    .into_iter()
                    .map(|f| f.rel)
                    .filter(|rel| compiled.accepts(rel))
                    .collect(),
            )
        })?;
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        progress.set_stage("chunking");
        let per_file = timings.time(Part::Parse, || {
            let per_file = chunk_files(root, &files);
            chunk_cache::evict();
            per_file
        });
        let n_files = per_file.len();
        let chunks: Vec<Chunk> = per_file.into_iter().flat_map(|(_, c)| c).collect();
        let started = Instant::now();
        let mut cache = EmbeddingCache::load(
            &EmbeddingCache::path(dir, embedder.model_id()),
            embedder.dim(),
        );
        if let Some(shared) = EmbeddingCache::shared_dir(embedder) {
            cache.add_shared(&shared);
        }
        timings.add(Part::Vectors, started.elapsed());
        let started = Instant::now();
        let tdir = dir.join("tantivy");
        if tdir.exists() {
            fs::remove_dir_all(&tdir).map_err(io_err(&tdir))?;
        }
        fs::create_dir_all(&tdir).map_err(io_err(&tdir))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(&tdir, schema)?;
        register_tokenizers(&index);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let mut idx = RepoIndex {
            dir: dir.to_path_buf(),
            filter: filter.clone(),
            compiled,
            chunks: Vec::new(),
            by_id: HashMap::new(),
            dim: embedder.dim(),
            vectors: Vec::new(),
            model_id: embedder.model_id().to_string(),
            cache,
            index,
            reader,
            fields,
        };
        timings.add(Part::Text, started.elapsed());
        let (embedded, reused) = timings.time(Part::Vectors, || {
            idx.embed_missing(&chunks, embedder, Some(progress))
        })?;
        progress.set_stage("bm25");
        let started = Instant::now();
        {
            let mut writer = idx
                .index
                .writer_with_num_threads::<TantivyDocument>(1, 50_000_000)?;
            for c in &chunks {
                writer.add_document(tantivy_doc(fields, c))?;
            }
            writer.commit()?;
            writer.wait_merging_threads()?;
        }
        idx.reader.reload()?;
        timings.add(Part::Text, started.elapsed());
        progress.set_stage("saving");
        timings.time(Part::Write, || {
            idx.set_chunks(chunks)?;
            idx.persist()
        })?;
        let stats = IndexStats {
            files: n_files,
            chunks: idx.chunks.len(),
            embedded,
            reused,
            elapsed_ms: t0.elapsed().as_millis() as u64,
        };
        tracing::info!(dir = %dir.display(), ?stats, "index built");
        Ok((idx, stats))
    }

    /// Reloads an index persisted by [`RepoIndex::build`]. A missing, corrupt or
    /// inconsistent store, or one made with another model, is [`IndexError::Corrupt`]
    /// (the caller rebuilds). Vectors missing from the embedding cache (a damaged one
    /// was dropped on load) are computed again and the cache saved.
    pub fn open(dir: &Path, embedder: &dyn TextEncoder) -> Result<RepoIndex, IndexError> {
        let corrupt = |reason: String| IndexError::Corrupt {
            dir: dir.to_path_buf(),
            reason,
        };
        let path = dir.join("chunks.json");
        let f = fs::File::open(&path).map_err(|e| corrupt(format!("{}: {e}", path.display())))?;
        let store: Store = serde_json::from_reader(BufReader::new(f))
            .map_err(|e| corrupt(format!("chunks.json: {e}")))?;
        if store.version != STORE_VERSION {
            return Err(corrupt(format!(
                "store version {} (expected {STORE_VERSION})",
                store.version
            )));
        }
        let built_by = EncoderKind::of_model_id(&store.model_id);
        if built_by != embedder.kind() {
            return Err(IndexError::EncoderMismatch {
                dir: dir.to_path_buf(),
                store: built_by.name(),
                wanted: embedder.kind().name(),
            });
        }
        if store.model_id != embedder.model_id() || store.dim != embedder.dim() {
            return Err(corrupt("it was built with another embedding model".into()));
        }
        let compiled = store.filter.compile()?;
        let cache = EmbeddingCache::load(&EmbeddingCache::path(dir, &store.model_id), store.dim);
        let tdir = dir.join("tantivy");
        let index = Index::open_in_dir(&tdir).map_err(|e| corrupt(format!("tantivy: {e}")))?;
        register_tokenizers(&index);
        let (expected, _) = schema();
        let sch = index.schema();
        let field = |name: &str| {
            sch.get_field(name)
                .map_err(|_| corrupt(format!("tantivy field '{name}' missing")))
        };
        let fields = Fields {
            id: field("id")?,
            file: field("file")?,
            body: field("body")?,
            name: field("name")?,
            code: field("code")?,
            code_name: field("code_name")?,
        };
        if sch.num_fields() != expected.num_fields() {
            return Err(corrupt("tantivy schema differs".into()));
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        if reader.searcher().num_docs() as usize != store.chunks.len() {
            return Err(corrupt("BM25 index and chunks disagree".into()));
        }
        let mut idx = RepoIndex {
            dir: dir.to_path_buf(),
            filter: store.filter,
            compiled,
            chunks: Vec::new(),
            by_id: HashMap::new(),
            dim: store.dim,
            vectors: Vec::new(),
            model_id: store.model_id,
            cache,
            index,
            reader,
            fields,
        };
        let missing = store
            .chunks
            .iter()
            .filter(|c| !idx.cache.map.contains_key(&content_hash(&embed_text(c))))
            .count();
        if missing > 0 {
            tracing::warn!(dir = %dir.display(), missing, "vectors missing from the embedding cache; computing them again");
            idx.embed_missing(&store.chunks, embedder, None)?;
        }
        idx.set_chunks(store.chunks)
            .map_err(|_| corrupt("embedding cache lacks vectors for some chunks".into()))?;
        if missing > 0 {
            idx.cache
                .save(&EmbeddingCache::path(&idx.dir, &idx.model_id))?;
        }
        Ok(idx)
    }

    /// Re-chunks the given repository-relative paths (a path missing on disk, or no
    /// longer accepted by the filter, is removed; a missing directory removes every
    /// file under it), embeds only chunks not in the cache, updates BM25 and persists.
    pub fn update_files(
        &mut self,
        root: &Path,
        changed: &[String],
        embedder: &dyn TextEncoder,
    ) -> Result<IndexStats, IndexError> {
        let t0 = Instant::now();
        if embedder.model_id() != self.model_id {
            return Err(IndexError::Corrupt {
                dir: self.dir.clone(),
                reason: "update with another embedding model than the index was built with".into(),
            });
        }
        let changed: Vec<String> = changed
            .iter()
            .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_string())
            .filter(|p| !p.is_empty())
            .collect();
        // Files whose chunks go away: every changed path, and files under a changed
        // path that is no longer a directory.
        let mut remove: HashSet<String> = HashSet::new();
        let mut to_chunk = Vec::new();
        for p in &changed {
            let abs = root.join(p);
            if abs.is_dir() {
                continue;
            }
            remove.insert(p.clone());
            let prefix = format!("{p}/");
            for c in &self.chunks {
                if c.file.starts_with(&prefix) {
                    remove.insert(c.file.clone());
                }
            }
            if abs.is_file() && self.compiled.accepts(p) {
                to_chunk.push(p.clone());
            }
        }
        let fresh = chunk_files(root, &to_chunk);
        let n_files = fresh.len();
        let new_chunks: Vec<Chunk> = fresh.into_iter().flat_map(|(_, c)| c).collect();
        let (embedded, reused) = self.embed_missing(&new_chunks, embedder, None)?;
        {
            let mut writer = self
                .index
                .writer_with_num_threads::<TantivyDocument>(1, 15_000_000)?;
            for f in &remove {
                writer.delete_term(Term::from_field_text(self.fields.file, f));
            }
            for c in &new_chunks {
                writer.add_document(tantivy_doc(self.fields, c))?;
            }
            writer.commit()?;
            writer.wait_merging_threads()?;
        }
        self.reader.reload()?;
        let mut chunks: Vec<Chunk> = std::mem::take(&mut self.chunks)
            .into_iter()
            .filter(|c| !remove.contains(&c.file))
            .collect();
        chunks.extend(new_chunks);
        chunks.sort_by(|a, b| (&a.file, a.start_line).cmp(&(&b.file, b.start_line)));
        self.set_chunks(chunks)?;
        self.persist()?;
        Ok(IndexStats {
            files: n_files,
            chunks: self.chunks.len(),
            embedded,
            reused,
            elapsed_ms: t0.elapsed().as_millis() as u64,
        })
    }

    /// Embeds the chunks whose text is not cached, reporting to `progress`; returns
    /// (embedded, reused).
    fn embed_missing(
        &mut self,
        chunks: &[Chunk],
        embedder: &dyn TextEncoder,
        progress: Option<&progress::IndexProgress>,
    ) -> Result<(usize, usize), IndexError> {
        let mut todo: Vec<(u128, String)> = Vec::new();
        let mut queued = HashSet::new();
        let mut reused = 0;
        for c in chunks {
            let text = embed_text(c);
            let h = content_hash(&text);
            if self.cache.map.contains_key(&h) {
                reused += 1;
            } else if queued.insert(h) {
                todo.push((h, text));
            } else {
                reused += 1;
            }
        }
        let t0 = Instant::now();
        let shared = EmbeddingCache::shared_dir(embedder);
        if let Some(dir) = &shared {
            // Another process may have embedded these since this index loaded.
            self.cache.add_shared(dir);
            let before = todo.len();
            todo.retain(|(h, _)| !self.cache.map.contains_key(h));
            reused += before - todo.len();
        }
        // Longest first, so texts of like lengths share a forward pass and little of it
        // is padding (ties by hash: the grouping stays deterministic).
        todo.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let total = todo.len();
        let own = progress::IndexProgress::default();
        let progress = progress.unwrap_or(&own);
        progress.set_total(total);
        progress.set_stage("embedding");
        for group in todo.chunks(embed_group(embedder.kind())) {
            let texts: Vec<&str> = group.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = embedder.embed(&texts)?;
            for ((h, _), v) in group.iter().zip(vectors) {
                self.cache.map.insert(*h, v.into_boxed_slice());
            }
            // Share each group as it is done, so vectors survive an interrupted build.
            if let Some(dir) = &shared {
                let keys: Vec<u128> = group.iter().map(|(h, _)| *h).collect();
                if let Err(e) = self.cache.write_pack(dir, &keys) {
                    tracing::warn!(error = %e, "could not share the new vectors");
                }
            }
            progress.add_done(group.len());
            let s = progress.snapshot();
            tracing::info!(
                done = s.chunks_embedded,
                total,
                secs = t0.elapsed().as_secs_f32(),
                rate = format!("{:.1}/s", s.chunks_per_sec),
                eta_secs = s.eta_secs.map(|e| e.round()),
                "embedding chunks"
            );
        }

        Ok((total, reused))
    }

    /// Installs `chunks`, rebuilding the id map and the vector matrix from the cache.
    fn set_chunks(&mut self, chunks: Vec<Chunk>) -> Result<(), IndexError> {
        let mut vectors = Vec::with_capacity(chunks.len() * self.dim);
        let mut keep = HashSet::with_capacity(chunks.len());
        for c in &chunks {
            let h = content_hash(&embed_text(c));
            let v = self.cache.map.get(&h).ok_or_else(|| IndexError::Corrupt {
                dir: self.dir.clone(),
                reason: format!("no vector for chunk {}", c.id),
            })?;
            vectors.extend_from_slice(v);
            keep.insert(h);
        }
        self.cache.prune(&keep);
        self.by_id = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        self.vectors = vectors;
        self.chunks = chunks;
        Ok(())
    }

    fn persist(&self) -> Result<(), IndexError> {
        self.cache
            .save(&EmbeddingCache::path(&self.dir, &self.model_id))?;
        let store = Store {
            version: STORE_VERSION,
            model_id: self.model_id.clone(),
            dim: self.dim,
            filter: self.filter.clone(),
            chunks: self.chunks.clone(),
        };
        let path = self.dir.join("chunks.json");
        let tmp = self.dir.join("chunks.json.tmp");
        {
            let f = fs::File::create(&tmp).map_err(io_err(&tmp))?;
            let mut w = BufWriter::new(f);
            serde_json::to_writer(&mut w, &store).map_err(|e| IndexError::Io {
                path: tmp.clone(),
                source: std::io::Error::other(e),
            })?;
            w.flush().map_err(io_err(&tmp))?;
        }
        fs::rename(&tmp, &path).map_err(io_err(&path))
    }

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

pub mod chunk_cache;
pub mod code_tokens;
mod embedding_cache;
pub mod progress;
mod search;

use embedding_cache::{EmbeddingCache, content_hash, embed_text};
pub use search::cosine_scores;

#[cfg(test)]
mod split_tests;
#[cfg(test)]
mod tests;
