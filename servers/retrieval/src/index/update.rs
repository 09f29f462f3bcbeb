//! Keeping a [`RepoIndex`] current: [`RepoIndex::update_files`] applies the files
//! added, changed or removed (their chunks deleted from and added to tantivy, vectors
//! embedded only for chunk texts not cached, BM25 token totals adjusted), and the
//! vector side shared with a cold build (embedding the missing texts, installing the
//! chunks with their vectors).

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use tantivy::{TantivyDocument, Term};

use super::bm25::{Bm25Totals, tantivy_doc};
use super::embedding_cache::{EmbeddingCache, content_hash, embed_text};
use super::{IndexError, IndexStats, RepoIndex, chunk_files, embed_group, progress};
use crate::chunk::Chunk;
use crate::encoder::TextEncoder;

impl RepoIndex {
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
        let totals = self.totals_after(&remove, &new_chunks)?;
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
        self.bm25_totals = totals;
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

    /// The BM25 token totals once the chunks of the files in `remove` are gone and
    /// `added` are in: each chunk's tokens counted by the field analyzers (see
    /// [`super::bm25`]). Totals that would go negative belong to another index: an
    /// error, so the caller rebuilds.
    fn totals_after(
        &self,
        remove: &HashSet<String>,
        added: &[Chunk],
    ) -> Result<Bm25Totals, IndexError> {
        let mut totals = self.bm25_totals;
        for c in self.chunks.iter().filter(|c| remove.contains(&c.file)) {
            let t = Bm25Totals::of_chunk(&self.index, self.fields, c)?;
            totals.sub(&t).ok_or_else(|| IndexError::Corrupt {
                dir: self.dir.clone(),
                reason: "BM25 token totals disagree with the chunks".into(),
            })?;
        }
        for c in added {
            totals.add(&Bm25Totals::of_chunk(&self.index, self.fields, c)?);
        }
        Ok(totals)
    }

    /// Embeds the chunks whose text is not cached, reporting to `progress`; returns
    /// (embedded, reused).
    pub(super) fn embed_missing(
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
    pub(super) fn set_chunks(&mut self, chunks: Vec<Chunk>) -> Result<(), IndexError> {
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
}
