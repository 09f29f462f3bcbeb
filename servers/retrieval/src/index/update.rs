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
use crate::encoder::{EncoderKind, TextEncoder};

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
            // The chunks are sorted by file, so those under `p/` are one run.
            let prefix = format!("{p}/");
            let from = self.chunks.partition_point(|c| c.file < prefix);
            for c in self.chunks[from..]
                .iter()
                .take_while(|c| c.file.starts_with(&prefix))
            {
                remove.insert(c.file.clone());
            }
            if abs.is_file() && self.compiled.accepts(p) {
                to_chunk.push(p.clone());
            }
        }
        let mut lap = Laps::start();
        let fresh = chunk_files(root, &to_chunk);
        lap.mark("chunk");
        let n_files = fresh.len();
        let new_chunks: Vec<Chunk> = fresh.into_iter().flat_map(|(_, c)| c).collect();
        let new_hashes: Vec<u128> = new_chunks
            .iter()
            .map(|c| content_hash(&embed_text(c)))
            .collect();
        let (embedded, reused) = self.embed_missing(&new_chunks, &new_hashes, embedder, None)?;
        lap.mark("embed");
        let totals = self.totals_after(&remove, &new_chunks)?;
        lap.mark("bm25_totals");
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
            self.opstamp = writer.commit()?;
            writer.wait_merging_threads()?;
        }
        self.reader.reload()?;
        lap.mark("tantivy");
        self.bm25_totals = totals;
        let mut touched = remove;
        touched.extend(new_chunks.iter().map(|c| c.file.clone()));
        let kept = std::mem::take(&mut self.chunks)
            .into_iter()
            .zip(std::mem::take(&mut self.hashes))
            .filter(|(c, _)| !touched.contains(&c.file));
        let (chunks, hashes) = merge_in(kept, new_chunks.into_iter().zip(new_hashes).collect());
        self.set_chunks(chunks, hashes)?;
        lap.mark("install");
        self.persist_changed(&touched)?;
        lap.mark("persist");
        tracing::debug!(laps = %lap, files = touched.len(), "index updated");
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

    /// Embeds the chunks whose text (content hash `hashes[i]`) has no vector in the
    /// index or its cache, reporting to `progress`; returns (embedded, reused).
    pub(super) fn embed_missing(
        &mut self,
        chunks: &[Chunk],
        hashes: &[u128],
        embedder: &dyn TextEncoder,
        progress: Option<&progress::IndexProgress>,
    ) -> Result<(usize, usize), IndexError> {
        let mut todo: Vec<(u128, String)> = Vec::new();
        let mut queued = HashSet::new();
        let mut reused = 0;
        for (c, &h) in chunks.iter().zip(hashes) {
            if self.has_vector(h) {
                reused += 1;
            } else if queued.insert(h) {
                todo.push((h, embed_text(c)));
            } else {
                reused += 1;
            }
        }
        let t0 = Instant::now();
        let shared = EmbeddingCache::shared_dir(embedder);
        if let Some(dir) = shared
            .as_ref()
            .filter(|_| reads_packs(embedder, todo.len()))
        {
            // Another process may have embedded these since this index loaded.
            self.cache.add_shared(dir);
            let before = todo.len();
            todo.retain(|(h, _)| !self.has_vector(*h));
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

    /// Whether the vector of content hash `h` is at hand (installed or cached).
    fn has_vector(&self, h: u128) -> bool {
        self.row_of.contains_key(&h) || self.cache.map.contains_key(&h)
    }

    /// Installs `chunks` with their content hashes, rebuilding the vector matrix from
    /// the installed rows and the cache; vectors of chunks that leave the index stay in
    /// the cache (bounded), so a file changed back embeds nothing.
    pub(super) fn set_chunks(
        &mut self,
        chunks: Vec<Chunk>,
        hashes: Vec<u128>,
    ) -> Result<(), IndexError> {
        let dim = self.dim;
        let mut vectors = Vec::with_capacity(chunks.len() * dim);
        for (c, h) in chunks.iter().zip(&hashes) {
            let v: &[f32] = match self.row_of.get(h) {
                Some(&r) => &self.vectors[r * dim..(r + 1) * dim],
                None => self.cache.map.get(h).ok_or_else(|| IndexError::Corrupt {
                    dir: self.dir.clone(),
                    reason: format!("no vector for chunk {}", c.id),
                })?,
            };
            vectors.extend_from_slice(v);
        }
        let keep: rustc_hash::FxHashSet<u128> = hashes.iter().copied().collect();
        for (h, &r) in &self.row_of {
            if !keep.contains(h) {
                let old = self.vectors[r * dim..(r + 1) * dim].into();
                self.cache.map.insert(*h, old);
            }
        }
        self.cache.map.retain(|h, _| !keep.contains(h));
        self.cache.prune(chunks.len());
        self.vectors = vectors;
        self.install_rows(chunks, hashes);
        Ok(())
    }

    /// Installs `chunks` and their hashes over the rows already in `vectors`: the id
    /// map and the hash → row map.
    pub(super) fn install_rows(&mut self, chunks: Vec<Chunk>, hashes: Vec<u128>) {
        self.by_id = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        let mut row_of =
            rustc_hash::FxHashMap::with_capacity_and_hasher(hashes.len(), Default::default());
        for (i, h) in hashes.iter().enumerate() {
            row_of.entry(*h).or_insert(i);
        }
        self.row_of = row_of;
        self.hashes = hashes;
        self.chunks = chunks;
    }
}

/// The kept chunks (in order: by path, then start line) with `fresh` merged in
/// (sorted first), so every chunk moves once; each with its content hash.
fn merge_in(
    kept: impl Iterator<Item = (Chunk, u128)>,
    mut fresh: Vec<(Chunk, u128)>,
) -> (Vec<Chunk>, Vec<u128>) {
    fresh.sort_by_cached_key(|(c, _)| (c.file.clone(), c.start_line));
    let n = kept.size_hint().1.unwrap_or(0) + fresh.len();
    let mut fresh = fresh.into_iter().peekable();
    let (mut chunks, mut hashes) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (c, h) in kept {
        while let Some((f, fh)) =
            fresh.next_if(|(f, _)| (&f.file, f.start_line) < (&c.file, c.start_line))
        {
            chunks.push(f);
            hashes.push(fh);
        }
        chunks.push(c);
        hashes.push(h);
    }
    for (f, fh) in fresh {
        chunks.push(f);
        hashes.push(fh);
    }
    (chunks, hashes)
}

/// Milliseconds per named step, for the debug log of an update.
struct Laps {
    last: Instant,
    laps: Vec<(&'static str, u128)>,
}

impl Laps {
    fn start() -> Laps {
        Laps {
            last: Instant::now(),
            laps: Vec::new(),
        }
    }

    fn mark(&mut self, name: &'static str) {
        self.laps.push((name, self.last.elapsed().as_millis()));
        self.last = Instant::now();
    }
}

impl std::fmt::Display for Laps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, ms)) in self.laps.iter().enumerate() {
            write!(f, "{}{name} {ms} ms", if i > 0 { ", " } else { "" })?;
        }
        Ok(())
    }
}

/// Whether embedding `todo` texts is worth reading the shared packs for: always for
/// MiniLM (a forward pass per text), for the static encoder (a table lookup per token)
/// only for a cold build's many texts, since reading every pack costs more than
/// embedding a few hundred texts. The static encoder embeds each text alone, so a
/// vector is the same whether read or computed.
fn reads_packs(embedder: &dyn TextEncoder, todo: usize) -> bool {
    match embedder.kind() {
        EncoderKind::Minilm => todo > 0,
        EncoderKind::Static => todo >= STATIC_PACK_MIN,
    }
}

/// Texts the static encoder embeds before the shared packs are read instead.
const STATIC_PACK_MIN: usize = 2048;
