//! The content index: code chunks in tantivy (postings with term frequencies, a doc store
//! for the chunks), scored by bm25s' BM25 ([`super::scoring`]) rather than tantivy's own
//! (which fixes k1 = 1.2 and uses lossy length norms). When the index is built or
//! opened, every posting is scored once into an in-memory `(chunk, score)` list per token
//! (bm25s' precomputed score matrix), so a query only sums lists.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use navbench_lang::family::Selection;
use tantivy::postings::Postings;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{DocAddress, DocSet, Index, TERMINATED, TantivyDocument};

use super::Bm25Error;
use super::scoring::{self, Bm25Params};
use super::tokenize::Tokenizer;
use crate::chunk::{self, Chunk, ChunkConfig};

/// Version of the on-disk format; bump when the schema, the chunker or the tokenizer change.
pub const FORMAT_VERSION: u32 = 1;

const MANIFEST: &str = "navbench-bm25.json";
const TANTIVY_DIR: &str = "tantivy";
const F_TOKENS: &str = "tokens";
const F_ORD: &str = "ord";
const F_LEN: &str = "doc_len";
const F_CHUNK: &str = "chunk";
/// The tantivy writer's memory budget (one thread): a large repository's chunks
/// (sympy's 11k) fit in one segment, and a larger budget only raises peak memory.
const WRITER_MEMORY: usize = 50_000_000;

/// One search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Position of the chunk in corpus order (its id in this index).
    pub chunk_id: usize,
    /// Repo-relative path.
    pub file: String,
    /// First line (1-based).
    pub start_line: usize,
    /// Last line (inclusive).
    pub end_line: usize,
    /// The chunk's span ids, sorted.
    pub span_ids: Vec<String>,
    /// BM25 score (bm25s' float32 value).
    pub score: f32,
    /// The chunk's text.
    pub text: String,
}

/// Why a search returned nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyReason {
    /// The query has no token after lower-casing, splitting and stop-word removal (the
    /// original crashes with `IndexError` here).
    NoQueryTokens,
    /// None of the query's tokens occurs in the index (the original returns arbitrary
    /// zero-score chunks).
    NoMatchingTokens,
    /// The index has no chunks.
    EmptyIndex,
}

impl std::fmt::Display for EmptyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmptyReason::NoQueryTokens => {
                "the query has no searchable word (words of 2+ letters/digits that are not stop words)"
            }
            EmptyReason::NoMatchingTokens => "no word of the query occurs in the indexed code",
            EmptyReason::EmptyIndex => "the index holds no code chunks",
        })
    }
}

/// Search results: hits best first (ties in corpus order), or why there are none.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    /// Hits with a positive score, at most `top_k`.
    pub hits: Vec<Hit>,
    /// Set when `hits` is empty for a reason other than a low `top_k`.
    pub empty_reason: Option<EmptyReason>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Manifest {
    format_version: u32,
    num_chunks: usize,
    avgdl: f64,
    params: Bm25Params,
    /// Fingerprint of the stored chunks (paths, lines, spans, text).
    chunks_fingerprint: String,
    /// Fingerprint of the corpus files the chunks came from (empty when built from chunks).
    source_fingerprint: String,
    /// The build of the server that wrote it ([`crate::cache::build_identity`]): a
    /// rebuilt chunker or tokenizer never reads another build's index.
    #[serde(default)]
    build: String,
}

/// A BM25 index over a repository's code chunks.
pub struct Bm25Index {
    /// The tantivy index the scores were read from; `None` when they were computed
    /// from the terms in memory ([`Bm25Index::build_in_memory`]).
    index: Option<Index>,
    chunks: Vec<Chunk>,
    pub(super) avgdl: f64,
    params: Bm25Params,
    source_fingerprint: String,
    /// Per indexed token: its BM25 score in every chunk holding it, as `(chunk ordinal,
    /// score)` in postings order (segments in order) — bm25s' precomputed score matrix;
    /// a query only sums these lists.
    pub(super) term_scores: TermScores,
    /// The query tokenizer, whose stem cache persists across queries.
    query_tokenizer: std::sync::Mutex<Tokenizer>,
}

impl std::fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25Index")
            .field("chunks", &self.chunks.len())
            .field("avgdl", &self.avgdl)
            .finish()
    }
}

fn schema() -> (Schema, Field, Field, Field, Field) {
    let mut sb = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer("raw")
        .set_index_option(IndexRecordOption::WithFreqs)
        .set_fieldnorms(false);
    let f_tokens = sb.add_text_field(
        F_TOKENS,
        TextOptions::default().set_indexing_options(indexing),
    );
    let f_ord = sb.add_u64_field(F_ORD, FAST | STORED | INDEXED);
    let f_len = sb.add_u64_field(F_LEN, FAST | STORED);
    let f_chunk = sb.add_text_field(F_CHUNK, STORED);
    (sb.build(), f_tokens, f_ord, f_len, f_chunk)
}

/// 64-bit FNV-1a, for fingerprints (stable across platforms and releases).
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Field separator, so that ("ab","c") and ("a","bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
    fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

fn chunks_fingerprint(chunks: &[Chunk], params: Bm25Params) -> String {
    let mut h = Fnv::new();
    h.bytes(&FORMAT_VERSION.to_le_bytes());
    h.bytes(&params.k1.to_le_bytes());
    h.bytes(&params.b.to_le_bytes());
    for c in chunks {
        h.bytes(c.file_path.as_bytes());
        h.bytes(&(c.start_line as u64).to_le_bytes());
        h.bytes(&(c.end_line as u64).to_le_bytes());
        for s in &c.span_ids {
            h.bytes(s.as_bytes());
        }
        h.bytes(c.text.as_bytes());
    }
    h.hex()
}

/// Fingerprint of a repository's corpus files (paths and contents), to tell whether a
/// saved index still describes the tree.
pub fn source_fingerprint(root: &Path) -> Result<String, Bm25Error> {
    let files = chunk::list_corpus_files(root).map_err(chunk::ChunkError::from)?;
    let mut h = Fnv::new();
    h.bytes(&FORMAT_VERSION.to_le_bytes());
    for f in files {
        let bytes = std::fs::read(&f.abs_path).map_err(|source| {
            Bm25Error::Chunk(chunk::ChunkError::Read {
                path: f.abs_path.clone(),
                source,
            })
        })?;
        h.bytes(f.rel_path.as_bytes());
        h.bytes(&bytes);
    }
    Ok(h.hex())
}

fn corrupt(dir: &Path, why: impl Into<String>) -> Bm25Error {
    Bm25Error::Corrupt {
        dir: dir.to_path_buf(),
        reason: why.into(),
    }
}

impl Bm25Index {
    /// Builds the index of the repository at `root` in memory (LocAgent's chunking and
    /// settings), over the repository's languages.
    pub fn build(root: &Path) -> Result<Self, Bm25Error> {
        Self::build_for(root, &Selection::Auto)
    }

    /// [`Bm25Index::build`] over the corpus files of the families `languages` chooses.
    pub fn build_for(root: &Path, languages: &Selection) -> Result<Self, Bm25Error> {
        let (fingerprint, termed) = Self::chunk_tree(root, None, None, languages)?;
        let (chunks, terms): (Vec<Chunk>, Vec<String>) = termed.into_iter().unzip();
        let index = Index::create_in_ram(schema().0);
        Self::fill(&index, &chunks, &terms)?;
        Self::load(
            index,
            Some(chunks),
            Bm25Params::default(),
            fingerprint,
            None,
        )
    }

    /// Builds the index of the repository at `root` straight into `dir` (as
    /// [`Bm25Index::save`] would write it, replacing what is there; one tantivy
    /// indexing pass, not one in memory and one on disk), taking the chunks of
    /// files an earlier build chunked from `store`. The index equals
    /// [`Bm25Index::build_for`]'s with the same `languages`. Files whose chunks
    /// `shared` made from the graph builder's parse are not parsed again.
    pub fn build_saved(
        root: &Path,
        dir: &Path,
        store: Option<&chunk::ChunkStore>,
        shared: Option<&chunk::TreeChunks>,
        languages: &Selection,
    ) -> Result<Self, Bm25Error> {
        let (fingerprint, termed) = Self::chunk_tree(root, store, shared, languages)?;
        let (chunks, terms): (Vec<Chunk>, Vec<String>) = termed.into_iter().unzip();
        let index = Self::create_in(dir)?;
        Self::fill(&index, &chunks, &terms)?;
        let params = Bm25Params::default();
        let idx = Self::load(index, Some(chunks), params, fingerprint, Some(dir))?;
        idx.write_manifest(dir)?;
        Ok(idx)
    }

    /// Builds the index of the repository at `root` in memory, without tantivy
    /// ([`super::memory`]): the chunks and terms of files an earlier build chunked
    /// come from `store`, those of files the graph builder parsed from `shared`, the
    /// rest are chunked now; the scoring statistics are computed over all of them.
    /// It answers every query as [`Bm25Index::build_for`]'s index with the same
    /// `languages` does (same chunks, same scores); it has no source fingerprint and
    /// is not saved: the chunk store is what a later build reuses. With the index,
    /// whether every file's chunks came from `store`.
    pub fn build_in_memory(
        root: &Path,
        store: Option<&chunk::ChunkStore>,
        shared: Option<&chunk::TreeChunks>,
        languages: &Selection,
    ) -> Result<(Self, bool), Bm25Error> {
        let started = std::time::Instant::now();
        let (termed, not_reused) =
            chunk::chunk_repo_counting(root, &ChunkConfig::default(), store, shared, languages)?;
        let (chunks, terms): (Vec<Chunk>, Vec<String>) = termed.into_iter().unzip();
        tracing::debug!(elapsed = ?started.elapsed(), chunks = chunks.len(), "BM25: corpus chunked");
        let params = Bm25Params::default();
        let (term_scores, avgdl) = super::memory::score_terms(&terms, params);
        tracing::debug!(elapsed = ?started.elapsed(), terms = term_scores.len(), "BM25: terms scored in memory");
        let index = Bm25Index {
            index: None,
            chunks,
            avgdl,
            params,
            source_fingerprint: String::new(),
            term_scores,
            query_tokenizer: std::sync::Mutex::new(Tokenizer::new()),
        };
        Ok((index, store.is_some() && not_reused == 0))
    }

    /// The source fingerprint (of every corpus file, so that an edit anywhere makes
    /// the index stale) and the chunks of the tree at `root` in the families
    /// `languages` chooses.
    fn chunk_tree(
        root: &Path,
        store: Option<&chunk::ChunkStore>,
        shared: Option<&chunk::TreeChunks>,
        languages: &Selection,
    ) -> Result<(String, Vec<chunk::store::TermedChunk>), Bm25Error> {
        let started = std::time::Instant::now();
        let fingerprint = source_fingerprint(root)?;
        let config = ChunkConfig::default();
        let chunks = chunk::chunk_repo_with_terms(root, &config, store, shared, languages)?;
        tracing::debug!(elapsed = ?started.elapsed(), chunks = chunks.len(), "BM25: corpus fingerprinted and chunked");
        Ok((fingerprint, chunks))
    }

    /// Builds an in-memory index over the given chunks (in this order).
    pub fn from_chunks(chunks: Vec<Chunk>) -> Result<Self, Bm25Error> {
        let index = Index::create_in_ram(schema().0);
        Self::fill_and_load(index, chunks, Bm25Params::default(), String::new())
    }

    fn fill_and_load(
        index: Index,
        chunks: Vec<Chunk>,
        params: Bm25Params,
        source_fingerprint: String,
    ) -> Result<Self, Bm25Error> {
        Self::fill(&index, &chunks, &all_terms(&chunks))?;
        Self::load(index, Some(chunks), params, source_fingerprint, None)
    }

    /// Writes one document per chunk (in order, with its terms) into `index`, in one
    /// segment. The stored chunks are serialized in parallel, then added in order.
    fn fill(index: &Index, chunks: &[Chunk], terms: &[String]) -> Result<(), Bm25Error> {
        use rayon::prelude::*;
        let started = std::time::Instant::now();
        let (_, f_tokens, f_ord, f_len, f_chunk) = schema();
        let json: Vec<String> = chunks
            .par_iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        // One thread: doc ids follow insertion order in a single segment.
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_MEMORY)?;
        for (ord, (toks, json)) in terms.iter().zip(json).enumerate() {
            let toks = pre_tokenized(toks);
            let len = toks.tokens.len() as u64;
            let mut doc = TantivyDocument::default();
            doc.add_pre_tokenized_text(f_tokens, toks);
            doc.add_u64(f_ord, ord as u64);
            doc.add_u64(f_len, len);
            doc.add_text(f_chunk, json);
            writer.add_document(doc)?;
        }
        tracing::debug!(elapsed = ?started.elapsed(), "BM25: documents added");
        writer.commit()?;
        writer.wait_merging_threads()?;
        tracing::debug!(elapsed = ?started.elapsed(), "BM25: tantivy index written");
        Ok(())
    }

    /// Loads ords, lengths and (unless given) chunks from the index.
    fn load(
        index: Index,
        chunks: Option<Vec<Chunk>>,
        params: Bm25Params,
        source_fingerprint: String,
        dir: Option<&Path>,
    ) -> Result<Self, Bm25Error> {
        let sch = index.schema();
        let field = |name: &str| {
            sch.get_field(name).map_err(|_| {
                corrupt(
                    dir.unwrap_or(Path::new("<memory>")),
                    format!("field `{name}` missing"),
                )
            })
        };
        let f_tokens = field(F_TOKENS)?;
        let f_chunk = field(F_CHUNK)?;
        let reader = index.reader()?;
        let searcher = reader.searcher();
        let n = searcher.num_docs() as usize;
        let mut ords: Vec<Vec<u32>> = Vec::new();
        let mut doc_lens = vec![0u64; n];
        let mut loaded: Vec<Option<Chunk>> = if chunks.is_none() {
            vec![None; n]
        } else {
            Vec::new()
        };
        let where_ = dir.unwrap_or(Path::new("<memory>"));
        for (seg_ord, seg) in searcher.segment_readers().iter().enumerate() {
            let ord_col = seg.fast_fields().u64(F_ORD)?;
            let len_col = seg.fast_fields().u64(F_LEN)?;
            let mut seg_ords = Vec::with_capacity(seg.max_doc() as usize);
            for doc in 0..seg.max_doc() {
                let ord = ord_col
                    .first(doc)
                    .ok_or_else(|| corrupt(where_, "a document has no ordinal"))?
                    as usize;
                if ord >= n {
                    return Err(corrupt(where_, format!("ordinal {ord} out of range")));
                }
                doc_lens[ord] = len_col
                    .first(doc)
                    .ok_or_else(|| corrupt(where_, "a document has no length"))?;
                if chunks.is_none() {
                    let d: TantivyDocument = searcher.doc(DocAddress::new(seg_ord as u32, doc))?;
                    let json = d
                        .get_first(f_chunk)
                        .and_then(|v| v.as_str())
                        .ok_or_else(|| corrupt(where_, "a document has no stored chunk"))?;
                    let c: Chunk = serde_json::from_str(json)
                        .map_err(|e| corrupt(where_, format!("stored chunk unreadable: {e}")))?;
                    loaded[ord] = Some(c);
                }
                seg_ords.push(ord as u32);
            }
            ords.push(seg_ords);
        }
        let chunks = match chunks {
            Some(c) => c,
            None => loaded
                .into_iter()
                .enumerate()
                .map(|(i, c)| c.ok_or_else(|| corrupt(where_, format!("chunk {i} missing"))))
                .collect::<Result<Vec<_>, _>>()?,
        };
        let avgdl = scoring::mean_len(&doc_lens);
        let started = std::time::Instant::now();
        let term_scores = precompute_scores(&searcher, f_tokens, &ords, &doc_lens, avgdl, params)?;
        tracing::debug!(elapsed = ?started.elapsed(), terms = term_scores.len(), "BM25: postings scored");
        Ok(Bm25Index {
            index: Some(index),
            chunks,
            avgdl,
            params,
            source_fingerprint,
            term_scores,
            query_tokenizer: std::sync::Mutex::new(Tokenizer::new()),
        })
    }

    /// The indexed chunks, in corpus order (a hit's `chunk_id` indexes this).
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether the index has no chunks.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Fingerprint of the corpus files the index was built from (empty when it was built
    /// from chunks directly). Compare with [`source_fingerprint`] to detect a stale index.
    pub fn source_fingerprint(&self) -> &str {
        &self.source_fingerprint
    }

    /// Writes the index to `dir` (created if needed; an existing index there is replaced):
    /// a tantivy index in `dir/tantivy` and a manifest with the format version and
    /// fingerprints, written last so that an interrupted save reads as corrupt.
    pub fn save(&self, dir: &Path) -> Result<(), Bm25Error> {
        let index = Self::create_in(dir)?;
        // Re-index into the directory (cheap next to chunking).
        let started = std::time::Instant::now();
        Self::fill(&index, &self.chunks, &all_terms(&self.chunks))?;
        tracing::debug!(elapsed = ?started.elapsed(), "BM25: index re-written to disk");
        self.write_manifest(dir)
    }

    /// An empty tantivy index in `dir/tantivy`, after removing the manifest (first, so
    /// that an interrupted write reads as corrupt) and any earlier index.
    fn create_in(dir: &Path) -> Result<Index, Bm25Error> {
        let io = |e: std::io::Error| Bm25Error::Io {
            path: dir.to_path_buf(),
            source: e,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let manifest_path = dir.join(MANIFEST);
        if manifest_path.exists() {
            std::fs::remove_file(&manifest_path).map_err(io)?;
        }
        let tdir = dir.join(TANTIVY_DIR);
        if tdir.exists() {
            std::fs::remove_dir_all(&tdir).map_err(io)?;
        }
        std::fs::create_dir_all(&tdir).map_err(io)?;
        Ok(Index::create_in_dir(&tdir, schema().0)?)
    }

    /// Writes the manifest of this index into `dir`, atomically (last step of a save).
    fn write_manifest(&self, dir: &Path) -> Result<(), Bm25Error> {
        let io = |e: std::io::Error| Bm25Error::Io {
            path: dir.to_path_buf(),
            source: e,
        };
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            num_chunks: self.chunks.len(),
            avgdl: self.avgdl,
            params: self.params,
            chunks_fingerprint: chunks_fingerprint(&self.chunks, self.params),
            source_fingerprint: self.source_fingerprint.clone(),
            build: crate::cache::build_identity().to_string(),
        };
        let tmp = dir.join(format!("{MANIFEST}.tmp-{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec_pretty(&manifest)?).map_err(io)?;
        std::fs::rename(&tmp, dir.join(MANIFEST)).map_err(io)?;
        Ok(())
    }

    /// Opens an index written by [`Bm25Index::save`]. A missing or unreadable manifest, a
    /// format-version mismatch, a tantivy checksum failure or stored chunks that do not
    /// match the manifest's fingerprint give [`Bm25Error::Corrupt`] (rebuild then).
    pub fn open(dir: &Path) -> Result<Self, Bm25Error> {
        let manifest_path = dir.join(MANIFEST);
        let raw = std::fs::read(&manifest_path)
            .map_err(|e| corrupt(dir, format!("cannot read {}: {e}", manifest_path.display())))?;
        let manifest: Manifest = serde_json::from_slice(&raw)
            .map_err(|e| corrupt(dir, format!("manifest unreadable: {e}")))?;
        if manifest.format_version != FORMAT_VERSION {
            return Err(corrupt(
                dir,
                format!(
                    "format version {} (this build reads {FORMAT_VERSION})",
                    manifest.format_version
                ),
            ));
        }
        if manifest.build != crate::cache::build_identity() {
            return Err(corrupt(
                dir,
                format!(
                    "written by another build of the server ({})",
                    manifest.build
                ),
            ));
        }
        let tdir: PathBuf = dir.join(TANTIVY_DIR);
        let index = Index::open_in_dir(&tdir)
            .map_err(|e| corrupt(dir, format!("tantivy index unreadable: {e}")))?;
        let bad = index
            .validate_checksum()
            .map_err(|e| corrupt(dir, format!("checksum validation failed: {e}")))?;
        if !bad.is_empty() {
            let mut names: Vec<String> = bad.iter().map(|p| p.display().to_string()).collect();
            names.sort();
            return Err(corrupt(
                dir,
                format!("checksum mismatch in {}", names.join(", ")),
            ));
        }
        let idx = Self::load(
            index,
            None,
            manifest.params,
            manifest.source_fingerprint.clone(),
            Some(dir),
        )
        .map_err(|e| match e {
            Bm25Error::Corrupt { .. } => e,
            other => corrupt(dir, other.to_string()),
        })?;
        if idx.chunks.len() != manifest.num_chunks {
            return Err(corrupt(
                dir,
                format!(
                    "{} chunks stored, manifest says {}",
                    idx.chunks.len(),
                    manifest.num_chunks
                ),
            ));
        }
        if chunks_fingerprint(&idx.chunks, idx.params) != manifest.chunks_fingerprint {
            return Err(corrupt(
                dir,
                "stored chunks do not match the manifest fingerprint",
            ));
        }
        Ok(idx)
    }

    /// Opens the index in `dir` if it is intact and was built from the current contents of
    /// `root`; otherwise builds it from `root` and saves it there. Returns the index and
    /// whether it was loaded (true) or rebuilt (false).
    pub fn open_or_build(dir: &Path, root: &Path) -> Result<(Self, bool), Bm25Error> {
        let current = source_fingerprint(root)?;
        match Self::open(dir) {
            Ok(idx) if idx.source_fingerprint == current => return Ok((idx, true)),
            Ok(_) => tracing::info!(dir = %dir.display(), "BM25 index is stale; rebuilding"),
            Err(e) => {
                tracing::info!(dir = %dir.display(), error = %e, "BM25 index unusable; rebuilding")
            }
        }
        let chunks = chunk::chunk_repo(root, &ChunkConfig::default())?;
        let mut idx = Self::from_chunks(chunks)?;
        idx.source_fingerprint = current;
        idx.save(dir)?;
        Ok((idx, false))
    }

    /// The best `top_k` chunks for `query` (bm25s scores; ties in corpus order).
    pub fn search(&self, query: &str, top_k: usize) -> Result<SearchResults, Bm25Error> {
        let empty = |r| SearchResults {
            hits: Vec::new(),
            empty_reason: Some(r),
        };
        if self.chunks.is_empty() {
            return Ok(empty(EmptyReason::EmptyIndex));
        }
        let tokens = {
            let mut tokenizer = self
                .query_tokenizer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if tokenizer.cache_len() > MAX_QUERY_STEMS {
                *tokenizer = Tokenizer::new();
            }
            tokenizer.tokenize(query)
        };
        if tokens.is_empty() {
            return Ok(empty(EmptyReason::NoQueryTokens));
        }
        let scores = self.score_all(&tokens)?;
        let Some(scores) = scores else {
            return Ok(empty(EmptyReason::NoMatchingTokens));
        };
        let hits: Vec<Hit> = scoring::top_k(&scores, top_k)
            .into_iter()
            .map(|(i, score)| {
                let c = &self.chunks[i];
                Hit {
                    chunk_id: i,
                    file: c.file_path.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    span_ids: c.span_ids.clone(),
                    score,
                    text: c.text.clone(),
                }
            })
            .collect();
        Ok(SearchResults {
            hits,
            empty_reason: None,
        })
    }

    /// Scores of every chunk for the (stemmed) query tokens; None when no token is indexed.
    pub fn score_all(&self, tokens: &[String]) -> Result<Option<Vec<f32>>, Bm25Error> {
        let lists: Vec<&[(u32, f32)]> = tokens
            .iter()
            .map(|t| self.term_scores.get(t.as_str()).map_or(&[][..], |l| &l[..]))
            .collect();
        if lists.iter().all(|l| l.is_empty()) {
            return Ok(None);
        }
        let mut scores = vec![0f32; self.chunks.len()];
        for list in lists {
            for &(ord, s) in list {
                scores[ord as usize] += s;
            }
        }
        Ok(Some(scores))
    }

    /// The underlying tantivy index (read-only use); `None` for an index built in
    /// memory.
    pub fn tantivy_index(&self) -> Option<&Index> {
        self.index.as_ref()
    }
}

/// The terms of every chunk, computed in parallel.
fn all_terms(chunks: &[Chunk]) -> Vec<String> {
    use rayon::prelude::*;
    chunks.par_iter().map(chunk::store::terms_of).collect()
}

use super::memory::TermScores;

/// A token's document frequency and `(chunk ordinal, term frequency)` postings.
type RawPostings = (u64, Vec<(u32, u32)>);

/// Query words whose stems are cached before the cache is reset.
const MAX_QUERY_STEMS: usize = 100_000;

/// Every indexed token's `(chunk ordinal, score)` list: document frequency over all
/// segments, then each posting scored as `score_all` used to score it at query time.
fn precompute_scores(
    searcher: &tantivy::Searcher,
    f_tokens: Field,
    ords: &[Vec<u32>],
    doc_lens: &[u64],
    avgdl: f64,
    params: Bm25Params,
) -> Result<TermScores, Bm25Error> {
    let n = doc_lens.len() as u64;
    // Token → (document frequency, (chunk ordinal, term frequency) postings).
    let mut raw: HashMap<Box<str>, RawPostings> = HashMap::new();
    for (seg_ord, seg) in searcher.segment_readers().iter().enumerate() {
        let inv = seg.inverted_index(f_tokens)?;
        let seg_ords = ords.get(seg_ord).map_or(&[][..], |v| &v[..]);
        let mut stream = inv.terms().stream()?;
        while stream.advance() {
            let Ok(token) = std::str::from_utf8(stream.key()) else {
                continue;
            };
            let info = stream.value().clone();
            let entry = raw.entry(Box::from(token)).or_default();
            entry.0 += u64::from(info.doc_freq);
            let mut postings =
                inv.read_postings_from_terminfo(&info, IndexRecordOption::WithFreqs)?;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if let Some(&ord) = seg_ords.get(doc as usize) {
                    entry.1.push((ord, postings.term_freq()));
                }
                doc = postings.advance();
            }
        }
    }
    Ok(raw
        .into_iter()
        .map(|(token, (df, postings))| {
            let idf = scoring::idf(df, n);
            let scored: Box<[(u32, f32)]> = postings
                .into_iter()
                .map(|(ord, tf)| {
                    let len = doc_lens.get(ord as usize).copied().unwrap_or(0);
                    (ord, scoring::term_score(idf, tf, len, avgdl, params))
                })
                .collect();
            (token, scored)
        })
        .collect())
}

/// Terms as [`chunk::store::terms_of`] joins them (single spaces), as tantivy tokens.
fn pre_tokenized(terms: &str) -> PreTokenizedString {
    let mut offset = 0;
    let toks = terms
        .split(' ')
        .filter(|t| !t.is_empty())
        .enumerate()
        .map(|(position, t)| {
            let tok = Token {
                offset_from: offset,
                offset_to: offset + t.len(),
                position,
                text: t.to_string(),
                position_length: 1,
            };
            offset += t.len() + 1;
            tok
        })
        .collect();
    PreTokenizedString {
        text: terms.to_string(),
        tokens: toks,
    }
}
