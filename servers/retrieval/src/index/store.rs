//! The persisted part of a [`RepoIndex`] beside tantivy's directory and the
//! embedding cache: `chunks.json` ([`Store`]: the chunks, the filter, the model id and
//! the BM25 token totals), and [`RepoIndex::open`], which reads all three back.

use std::collections::HashMap;
use std::fs;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use tantivy::{Index, ReloadPolicy};

use super::bm25::{Bm25Totals, Fields, register_tokenizers, schema};
use super::embedding_cache::{EmbeddingCache, content_hash, embed_text};
use super::{FileFilter, IndexError, RepoIndex, io_err};
use crate::chunk::Chunk;
use crate::encoder::{EncoderKind, TextEncoder};

/// Version of the persisted store: 2 added the split-identifier BM25 fields (`code`,
/// `code_name`), 3 the BM25 token totals of the live documents; a store of another
/// version is rebuilt.
const STORE_VERSION: u32 = 3;

/// The persisted `chunks.json` (read back whole).
#[derive(Deserialize)]
pub(super) struct Store {
    version: u32,
    model_id: String,
    dim: usize,
    filter: FileFilter,
    chunks: Vec<Chunk>,
    bm25: Bm25Totals,
}

/// [`Store`] as written, borrowing the index's chunks.
#[derive(Serialize)]
struct StoreRef<'a> {
    version: u32,
    model_id: &'a str,
    dim: usize,
    filter: &'a FileFilter,
    chunks: &'a [Chunk],
    bm25: Bm25Totals,
}

impl Store {
    /// Reads `dir/chunks.json` and checks it belongs to `embedder`'s model and this
    /// version.
    fn read(dir: &Path, embedder: &dyn TextEncoder) -> Result<Store, IndexError> {
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
        Ok(store)
    }
}

impl RepoIndex {
    /// Reloads an index persisted by [`RepoIndex::build`]. A missing, corrupt or
    /// inconsistent store, or one made with another model, is [`IndexError::Corrupt`]
    /// (the caller rebuilds). Vectors missing from the embedding cache (a damaged one
    /// was dropped on load) are computed again and the cache saved.
    pub fn open(dir: &Path, embedder: &dyn TextEncoder) -> Result<RepoIndex, IndexError> {
        let corrupt = |reason: String| IndexError::Corrupt {
            dir: dir.to_path_buf(),
            reason,
        };
        let store = Store::read(dir, embedder)?;
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
            bm25_totals: store.bm25,
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

    /// Writes the embedding cache and `chunks.json` (atomically: temporary file, then
    /// rename).
    pub(super) fn persist(&self) -> Result<(), IndexError> {
        self.cache
            .save(&EmbeddingCache::path(&self.dir, &self.model_id))?;
        let store = StoreRef {
            version: STORE_VERSION,
            model_id: &self.model_id,
            dim: self.dim,
            filter: &self.filter,
            chunks: &self.chunks,
            bm25: self.bm25_totals,
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
}
