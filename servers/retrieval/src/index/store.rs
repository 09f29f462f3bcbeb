//! The persisted part of a [`RepoIndex`] beside tantivy's directory: the chunk store,
//! segments of per-file records ([`super::segments`]: chunks, content hashes, vectors)
//! and the live set `store.live` ([`Live`]: the model, the filter, the BM25 token
//! totals, the tantivy commit the store matches, and each live file's record), and
//! [`RepoIndex::open`], which reads them back.
//!
//! Persisting is by difference ([`RepoIndex::persist_changed`]): the records of the
//! files an update touched go to one new segment, the live set is rewritten (a small
//! list, one line per file) and segments no live record uses any more are deleted.
//! Records of files changed or removed since a segment was written are its garbage;
//! once the garbage passes [`MAX_GARBAGE`] of the segments' bytes, or there are more
//! than [`MAX_SEGMENTS`] segments, the store is compacted: every live record written
//! to one new segment ([`RepoIndex::persist_all`], which a cold build uses too).
//!
//! Crash safety: a segment and the live set are each written under a temporary name
//! and renamed into place, the segment first, so the live set on disk only ever names
//! complete segments. The live set records the tantivy commit (opstamp) it goes with,
//! so an index whose tantivy commit and chunk store come from different moments (a
//! crash between the two) is refused; so is any record that fails its frame, a
//! segment shorter than the live set says (a torn write), or a missing one. Refused
//! means [`IndexError::Corrupt`]: the caller builds the index again, reusing the
//! vectors of every intact record ([`super::segments::salvage`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::Path;

use navbench_server_support::frame;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::{Index, ReloadPolicy};

use super::bm25::{Bm25Totals, Fields, register_tokenizers, schema};
use super::embedding_cache::EmbeddingCache;
use super::segments::{self, FileRecord, Loc, SegmentWriter};
use super::{FileFilter, IndexError, RepoIndex, io_err};
use crate::encoder::{EncoderKind, TextEncoder};

/// Version of the persisted store: 2 added the split-identifier BM25 fields (`code`,
/// `code_name`), 3 the BM25 token totals of the live documents, 4 replaced
/// `chunks.json` and the vector file with segments and a live set; a store of another
/// version is rebuilt.
const STORE_VERSION: u32 = 4;
/// Magic of the live set's frame.
const LIVE_MAGIC: &[u8; 8] = b"NBRLIVE1";
/// The live set's file name.
const LIVE: &str = "store.live";
/// Share of the segments' bytes that may be garbage before the store is compacted.
pub(super) const MAX_GARBAGE: f64 = 0.25;
/// Segments kept before the store is compacted (each update adds at most one).
pub(super) const MAX_SEGMENTS: usize = 16;

/// Where the store's records are: each live file's record, the segments in use and
/// their sizes, and the next segment's number.
#[derive(Debug, Clone, Default)]
pub(super) struct DiskState {
    /// Live file → its record.
    pub(super) files: HashMap<String, Loc>,
    /// Segment number → size in bytes, for every segment a live record is in.
    pub(super) segments: BTreeMap<u64, u64>,
    /// Number of the next segment written.
    pub(super) next_seg: u64,
}

impl DiskState {
    /// Bytes of the segments that no live record holds.
    pub(super) fn garbage(&self) -> u64 {
        let total: u64 = self.segments.values().sum();
        let live: u64 = self.files.values().map(|l| l.len).sum();
        total.saturating_sub(live)
    }
}

/// The persisted live set (`store.live`, JSON inside a checked frame).
#[derive(Serialize, Deserialize)]
struct Live {
    version: u32,
    model_id: String,
    dim: usize,
    filter: FileFilter,
    bm25: Bm25Totals,
    /// The tantivy commit these chunks go with.
    opstamp: u64,
    next_seg: u64,
    /// Segment number → size.
    segments: BTreeMap<u64, u64>,
    /// Live files in chunk order, each with its record.
    files: Vec<(String, Loc)>,
}

impl Live {
    /// Reads `dir`'s live set and checks it belongs to `embedder`'s model and this
    /// version.
    fn read(dir: &Path, embedder: &dyn TextEncoder) -> Result<Live, IndexError> {
        let corrupt = |reason: String| IndexError::Corrupt {
            dir: dir.to_path_buf(),
            reason,
        };
        let path = dir.join(LIVE);
        let bytes = fs::read(&path).map_err(|e| corrupt(format!("{}: {e}", path.display())))?;
        let payload = frame::unframe(&bytes, LIVE_MAGIC, STORE_VERSION)
            .map_err(|e| corrupt(format!("{LIVE}: {e}")))?;
        let live: Live =
            serde_json::from_slice(payload).map_err(|e| corrupt(format!("{LIVE}: {e}")))?;
        let built_by = EncoderKind::of_model_id(&live.model_id);
        if built_by != embedder.kind() {
            return Err(IndexError::EncoderMismatch {
                dir: dir.to_path_buf(),
                store: built_by.name(),
                wanted: embedder.kind().name(),
            });
        }
        if live.model_id != embedder.model_id() || live.dim != embedder.dim() {
            return Err(corrupt("it was built with another embedding model".into()));
        }
        Ok(live)
    }
}

impl RepoIndex {
    /// Reloads an index persisted by [`RepoIndex::build`] or an update. A missing,
    /// damaged or inconsistent store (see the [module docs](self)), or one made with
    /// another model, is [`IndexError::Corrupt`]: the caller rebuilds.
    pub fn open(dir: &Path, embedder: &dyn TextEncoder) -> Result<RepoIndex, IndexError> {
        let corrupt = |reason: String| IndexError::Corrupt {
            dir: dir.to_path_buf(),
            reason,
        };
        let started = std::time::Instant::now();
        let live = Live::read(dir, embedder)?;
        let compiled = live.filter.compile()?;
        let tdir = dir.join("tantivy");
        let index = Index::open_in_dir(&tdir).map_err(|e| corrupt(format!("tantivy: {e}")))?;
        register_tokenizers(&index);
        let fields = fields_of(&index).map_err(corrupt)?;
        let opstamp = index.load_metas()?.opstamp;
        if opstamp != live.opstamp {
            return Err(corrupt(format!(
                "BM25 index at commit {opstamp}, chunk store at {}",
                live.opstamp
            )));
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let opened_bm25 = started.elapsed();
        let (chunks, hashes, vectors) =
            read_records(dir, &live, live.dim).map_err(|e| corrupt(e.to_string()))?;
        let read = started.elapsed();
        if reader.searcher().num_docs() as usize != chunks.len() {
            return Err(corrupt("BM25 index and chunks disagree".into()));
        }
        let disk = DiskState {
            files: live.files.into_iter().collect(),
            segments: live.segments,
            next_seg: live.next_seg,
        };
        let mut idx = RepoIndex {
            dir: dir.to_path_buf(),
            filter: live.filter,
            compiled,
            chunks: Vec::new(),
            hashes: Vec::new(),
            row_of: Default::default(),
            by_id: HashMap::new(),
            dim: live.dim,
            vectors,
            model_id: live.model_id,
            cache: EmbeddingCache::new(live.dim),
            index,
            reader,
            fields,
            bm25_totals: live.bm25,
            opstamp,
            disk,
        };
        idx.install_rows(chunks, hashes);
        tracing::debug!(
            live_and_bm25_ms = opened_bm25.as_millis() as u64,
            records_ms = (read - opened_bm25).as_millis() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            chunks = idx.chunks.len(),
            "index opened"
        );
        Ok(idx)
    }

    /// Writes every file's record to one new segment and the live set naming them,
    /// then deletes every other segment (and the files of store version 3): a cold
    /// build's store, or a compaction.
    pub(super) fn persist_all(&mut self) -> Result<(), IndexError> {
        let seq = self
            .disk
            .next_seg
            .max(segments::segments_in(&self.dir).last().map_or(0, |s| s + 1));
        let mut w = SegmentWriter::create(&self.dir, seq)?;
        let mut files = HashMap::new();
        for (file, range) in self.file_ranges() {
            files.insert(file.to_string(), w.append(&self.encode_range(range))?);
        }
        let size = w.finish()?;
        self.disk = DiskState {
            files,
            segments: BTreeMap::from([(seq, size)]),
            next_seg: seq + 1,
        };
        self.write_live()?;
        for old in ["chunks.json", "chunks.json.tmp"] {
            let _ = fs::remove_file(self.dir.join(old));
        }
        let _ = fs::remove_file(EmbeddingCache::path(&self.dir, &self.model_id));
        self.remove_unused_segments();
        Ok(())
    }

    /// Persists an update that replaced the chunks of the files in `touched`: their
    /// records (for those that still have chunks) go to one new segment, the others
    /// leave the live set; compacts instead when the garbage or the segment count
    /// passes its bound (see the [module docs](self)).
    pub(super) fn persist_changed(&mut self, touched: &HashSet<String>) -> Result<(), IndexError> {
        let ranges: Vec<(String, std::ops::Range<usize>)> = self
            .file_ranges()
            .filter(|(f, _)| touched.contains(*f))
            .map(|(f, r)| (f.to_string(), r))
            .collect();
        let mut disk = self.disk.clone();
        for f in touched {
            disk.files.remove(f);
        }
        if !ranges.is_empty() {
            let seq = disk.next_seg;
            let mut w = SegmentWriter::create(&self.dir, seq)?;
            for (file, range) in ranges {
                let loc = w.append(&self.encode_range(range))?;
                disk.files.insert(file, loc);
            }
            let size = w.finish()?;
            disk.segments.insert(seq, size);
            disk.next_seg = seq + 1;
        }
        let used: HashSet<u64> = disk.files.values().map(|l| l.seg).collect();
        disk.segments.retain(|s, _| used.contains(s));
        let total: u64 = disk.segments.values().sum();
        let compact = disk.segments.len() > MAX_SEGMENTS
            || disk.garbage() as f64 > MAX_GARBAGE * total as f64;
        self.disk = disk;
        if compact {
            tracing::info!(dir = %self.dir.display(), "compacting the chunk store");
            return self.persist_all();
        }
        self.write_live()?;
        self.remove_unused_segments();
        Ok(())
    }

    /// Each file's chunk range, in chunk order (a file's chunks are contiguous).
    fn file_ranges(&self) -> impl Iterator<Item = (&str, std::ops::Range<usize>)> {
        let mut start = 0;
        std::iter::from_fn(move || {
            let first = self.chunks.get(start)?;
            let end = start
                + self.chunks[start..]
                    .iter()
                    .take_while(|c| c.file == first.file)
                    .count();
            let range = start..end;
            start = end;
            Some((first.file.as_str(), range))
        })
    }

    /// The record payload of the chunks in `range`.
    fn encode_range(&self, range: std::ops::Range<usize>) -> Vec<u8> {
        let vectors = &self.vectors[range.start * self.dim..range.end * self.dim];
        segments::encode_file(&self.chunks[range.clone()], &self.hashes[range], vectors)
    }

    /// Writes the live set (atomically: temporary file, then rename).
    fn write_live(&self) -> Result<(), IndexError> {
        let mut files = Vec::with_capacity(self.disk.files.len());
        for (file, _) in self.file_ranges() {
            let loc = self
                .disk
                .files
                .get(file)
                .ok_or_else(|| IndexError::Corrupt {
                    dir: self.dir.clone(),
                    reason: format!("no record for {file}"),
                })?;
            files.push((file.to_string(), *loc));
        }
        let live = Live {
            version: STORE_VERSION,
            model_id: self.model_id.clone(),
            dim: self.dim,
            filter: self.filter.clone(),
            bm25: self.bm25_totals,
            opstamp: self.opstamp,
            next_seg: self.disk.next_seg,
            segments: self.disk.segments.clone(),
            files,
        };
        let json = serde_json::to_vec(&live).map_err(|e| IndexError::Io {
            path: self.dir.join(LIVE),
            source: std::io::Error::other(e),
        })?;
        let path = self.dir.join(LIVE);
        let tmp = self.dir.join(format!("{LIVE}.{}.tmp", std::process::id()));
        fs::write(&tmp, frame::frame(LIVE_MAGIC, STORE_VERSION, &json)).map_err(io_err(&tmp))?;
        fs::rename(&tmp, &path).map_err(io_err(&path))
    }

    /// Deletes the segments of this directory that the live set does not name (in a
    /// directory seeded from a base these are links: the base keeps its own).
    fn remove_unused_segments(&self) {
        for seq in segments::segments_in(&self.dir) {
            if !self.disk.segments.contains_key(&seq) {
                let _ = fs::remove_file(segments::seg_path(&self.dir, seq));
            }
        }
    }
}

/// The BM25 fields of an opened tantivy index, checked against [`schema`].
fn fields_of(index: &Index) -> Result<Fields, String> {
    let (expected, _) = schema();
    let sch = index.schema();
    let field = |name: &str| {
        sch.get_field(name)
            .map_err(|_| format!("tantivy field '{name}' missing"))
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
        return Err("tantivy schema differs".into());
    }
    Ok(fields)
}

/// The live records of `live`, decoded in its file order (files in parallel): chunks,
/// content hashes, vectors.
type Rows = (Vec<crate::chunk::Chunk>, Vec<u128>, Vec<f32>);

fn read_records(dir: &Path, live: &Live, dim: usize) -> Result<Rows, String> {
    let mut bytes: HashMap<u64, memmap2::Mmap> = HashMap::new();
    for (&seq, &size) in &live.segments {
        let path = segments::seg_path(dir, seq);
        let f = fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: a segment is renamed into place complete and never written again
        // (updates write new segments, compaction writes a new one and unlinks the
        // old, which leaves a mapping intact), so its bytes do not change while
        // mapped. Every record read from the map is checked against its checksum.
        let b =
            unsafe { memmap2::Mmap::map(&f) }.map_err(|e| format!("{}: {e}", path.display()))?;
        if b.len() as u64 != size {
            return Err(format!(
                "{} has {} bytes, the store expects {size} (a torn write)",
                path.display(),
                b.len()
            ));
        }
        bytes.insert(seq, b);
    }
    let records: Vec<FileRecord<'_>> = live
        .files
        .par_iter()
        .map(|(file, loc)| {
            let seg = bytes
                .get(&loc.seg)
                .ok_or_else(|| format!("{file}: segment {} is not in the store", loc.seg))?;
            let payload = segments::record_at(seg, *loc).map_err(|e| format!("{file}: {e}"))?;
            let rec = segments::decode_file(payload, dim).map_err(|e| format!("{file}: {e}"))?;
            if rec.chunks.iter().any(|c| &c.file != file) {
                return Err(format!("{file}: its record holds another file's chunks"));
            }
            Ok(rec)
        })
        .collect::<Result<_, String>>()?;
    let n: usize = records.iter().map(|r| r.chunks.len()).sum();
    let (mut chunks, mut hashes, mut vectors) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        vec![0f32; n * dim],
    );
    let mut row = 0;
    for r in records {
        let rows = r.chunks.len();
        r.vectors_into(&mut vectors[row * dim..(row + rows) * dim]);
        row += rows;
        chunks.extend(r.chunks);
        hashes.extend(r.hashes);
    }
    Ok((chunks, hashes, vectors))
}
