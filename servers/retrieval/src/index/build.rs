//! [`RepoIndex::build`]: a cold build of a repository's index (walk, chunk, embed,
//! BM25, persist), each part timed for the `timings_ms` of the indexing call.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::Instant;

use navbench_server_support::timings::{Part, TimingsRecorder};
use navbench_server_support::walk::{WalkOptions, walk_files};
use tantivy::{Index, ReloadPolicy, TantivyDocument};

use super::bm25::{Bm25Totals, register_tokenizers, schema, tantivy_doc};
use super::embedding_cache::{EmbeddingCache, content_hash, embed_text};
use super::{
    FileFilter, IndexError, IndexStats, RepoIndex, chunk_cache, chunk_files, io_err, progress,
    segments,
};
use crate::chunk::Chunk;
use crate::encoder::TextEncoder;

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
        let mut idx = RepoIndex::empty(filter, embedder, dir, timings)?;
        let (embedded, reused, hashes) = timings.time(Part::Vectors, || {
            let hashes: Vec<u128> = chunks
                .iter()
                .map(|c| content_hash(&embed_text(c)))
                .collect();
            let (embedded, reused) =
                idx.embed_missing(&chunks, &hashes, embedder, Some(progress))?;
            Ok::<_, IndexError>((embedded, reused, hashes))
        })?;
        progress.set_stage("bm25");
        timings.time(Part::Text, || idx.write_bm25(&chunks))?;
        progress.set_stage("saving");
        timings.time(Part::Write, || {
            idx.set_chunks(chunks, hashes)?;
            idx.persist_all()
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

    /// An index in `dir` with no chunk yet: the embedding cache loaded (vectors: the
    /// intact records of the store already in `dir`, the vector file of store version
    /// 3, then the encoder's shared packs), a fresh tantivy directory (text).
    fn empty(
        filter: &FileFilter,
        embedder: &dyn TextEncoder,
        dir: &Path,
        timings: &TimingsRecorder,
    ) -> Result<RepoIndex, IndexError> {
        let started = Instant::now();
        let mut cache = EmbeddingCache::load(
            &EmbeddingCache::path(dir, embedder.model_id()),
            embedder.dim(),
        );
        for (h, v) in segments::salvage(dir, embedder.dim()) {
            cache.map.entry(h).or_insert(v);
        }
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
        let idx = RepoIndex {
            dir: dir.to_path_buf(),
            filter: filter.clone(),
            compiled: filter.compile()?,
            chunks: Vec::new(),
            hashes: Vec::new(),
            row_of: Default::default(),
            by_id: HashMap::new(),
            dim: embedder.dim(),
            vectors: Vec::new(),
            model_id: embedder.model_id().to_string(),
            cache,
            index,
            reader,
            fields,
            bm25_totals: Bm25Totals::default(),
            opstamp: 0,
            disk: Default::default(),
        };
        timings.add(Part::Text, started.elapsed());
        Ok(idx)
    }

    /// Adds every chunk's document to the (empty) tantivy index and takes the token
    /// totals from its segments, exact as they hold no deleted document.
    fn write_bm25(&mut self, chunks: &[Chunk]) -> Result<(), IndexError> {
        {
            let mut writer = self
                .index
                .writer_with_num_threads::<TantivyDocument>(1, 50_000_000)?;
            for c in chunks {
                writer.add_document(tantivy_doc(self.fields, c))?;
            }
            self.opstamp = writer.commit()?;
            writer.wait_merging_threads()?;
        }
        self.reader.reload()?;
        self.bm25_totals = Bm25Totals::from_segments(&self.reader.searcher(), self.fields)?;
        Ok(())
    }
}
