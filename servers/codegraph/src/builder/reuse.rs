//! The per-file store: extraction results kept between builds, so that a build of a
//! tree that differs from an earlier one in a few files parses only those files.
//!
//! What a file contributes to the graph before the global phases (its entities,
//! imports, called and inherited names, or why `ast.parse` rejects it) is a function
//! of its repo-relative path and its text alone ([`super::extract::extract`]). A
//! [`FileKey`] is the xxh3-128 of both, so an entry can be reused for any tree that
//! holds the same file at the same path: renames, moves and a file going back to an
//! old version all look the entry up by content. The global phases (file and entity
//! imports, invokes, inherits) always run again over the merged results, which is why
//! the graph equals a fresh build.
//!
//! Layout: `<dir>/<xxh3 of the key table>.pack`, one pack per build that parsed
//! something, holding the entries of every file of that build's tree:
//!
//! ```text
//! header  "NBCGFILE" | format u32 | table_len u64 | table_sum u64 | blobs_len u64 | blobs_sum u64
//! table   extractor identity (str) | n u64 | n × (key u128, offset u64, len u64), sorted by key
//! blobs   the encoded entries (super::encode)
//! ```
//!
//! A build reads the header and table of every pack (a few kB each), picks the pack
//! that holds most of its files (the last build of the same repository, in practice;
//! no repository name is needed, and trees of other repositories match nothing),
//! then reads and checks that pack's blobs. Packs are written to a temporary file and
//! renamed into place, never modified, and any pack that is damaged, of another
//! format or removed under a reader is ignored: concurrent servers, even on one
//! store, can only cost each other work, never correctness. The store is bounded: at
//! most [`FileStore::max_packs`] packs and [`FileStore::max_bytes`] bytes, the least
//! recently used removed first (using a pack refreshes its modification time).

use std::fs;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use super::encode::{self, EXTRACT_FORMAT};
use super::extract::Extracted;
use crate::cache::{CacheError, Reader, Writer, corrupt};

const MAGIC: &[u8; 8] = b"NBCGFILE";
/// Version of the pack layout above.
const PACK_FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 8 * 4;
/// Bytes of one table row: key, offset, length.
const ROW_LEN: usize = 16 + 8 + 8;
/// Temporary files older than this are left over by a crashed writer.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// The identity of a file's extraction input: xxh3-128 of its repo-relative path and
/// its text (as the extractor reads it).
pub(crate) type FileKey = u128;

/// The key of the file `id` with text `text`.
pub(crate) fn file_key(id: &str, text: &str) -> FileKey {
    let mut h = Xxh3::new();
    h.update(&(id.len() as u64).to_le_bytes());
    h.update(id.as_bytes());
    h.update(text.as_bytes());
    h.digest128()
}

/// What the store's packs must have been written by: this very build of the tool
/// ([`crate::cache::build_identity`]), the entries' kind and format (`entries`, e.g.
/// `extract/1`) and the pack format.
fn pack_identity(entries: &str) -> String {
    format!(
        "{} {entries} pack/{PACK_FORMAT}",
        crate::cache::build_identity()
    )
}

/// A directory of packs of per-file extraction results (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStore {
    /// The directory (created on first write).
    pub dir: PathBuf,
    /// Packs kept at most (the most recently used ones).
    pub max_packs: usize,
    /// Total size of the packs kept at most, in bytes (the newest pack is always kept).
    pub max_bytes: u64,
    /// What the entries are and their format (`extract/1`: the builder's
    /// extractions): part of every pack's identity, so a store of one kind of entry
    /// never serves another.
    pub(crate) entries: String,
}

impl FileStore {
    /// A store in `dir` keeping at most 8 packs and 1 GiB: a few recent trees of
    /// each of two or three repositories built side by side.
    pub fn new(dir: impl Into<PathBuf>) -> FileStore {
        FileStore::of_entries(dir, format!("extract/{EXTRACT_FORMAT}"))
    }

    /// A store of entries of another kind than graph extractions (`entries` names
    /// it and its format, e.g. `functions/1`), with [`FileStore::new`]'s bounds.
    pub(crate) fn of_entries(dir: impl Into<PathBuf>, entries: String) -> FileStore {
        FileStore {
            dir: dir.into(),
            max_packs: 8,
            max_bytes: 1 << 30,
            entries,
        }
    }

    /// The pack holding most of `keys` (ties: the most recently used), read and
    /// checked; `None` when no pack holds any of them. Problems are logged, never
    /// returned: without a pack every file is parsed.
    pub(crate) fn best_pack(&self, keys: &[FileKey]) -> Option<Pack> {
        // Newest first, so that a stable sort by hits breaks ties by recency.
        let mut candidates: Vec<(usize, PathBuf, PackHead)> = Vec::new();
        for (path, _, _) in self.packs() {
            match PackHead::read(&path, &self.entries) {
                Ok(head) => {
                    let hits = keys.iter().filter(|k| head.find(**k).is_some()).count();
                    if hits > 0 {
                        candidates.push((hits, path, head));
                    }
                }
                Err(e) => tracing::debug!(path = %path.display(), error = %e, "pack not usable"),
            }
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        // A pack damaged or removed since its table was read: try the next one.
        for (hits, path, head) in candidates {
            match head.load_blobs(&path) {
                Ok(pack) => {
                    tracing::debug!(path = %path.display(), hits, files = keys.len(), "reusing a pack");
                    // Mark it used for eviction; a failure only makes it look older.
                    let _ = fs::File::options()
                        .append(true)
                        .open(&path)
                        .and_then(|f| f.set_modified(SystemTime::now()));
                    return Some(pack);
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "ignoring a damaged pack")
                }
            }
        }
        None
    }

    /// Writes a pack of `entries` (key and encoded extraction; duplicates of a key
    /// are dropped) atomically, then evicts packs beyond the bounds. Returns its path.
    pub(crate) fn save(&self, mut entries: Vec<(FileKey, Vec<u8>)>) -> io::Result<PathBuf> {
        entries.sort_unstable_by_key(|(k, _)| *k);
        entries.dedup_by_key(|(k, _)| *k);
        let mut table = Writer(Vec::with_capacity(64 + entries.len() * ROW_LEN));
        table.str(&pack_identity(&self.entries));
        table.u64(entries.len() as u64);
        let mut offset = 0u64;
        for (k, blob) in &entries {
            table.0.extend_from_slice(&k.to_le_bytes());
            table.u64(offset);
            table.u64(blob.len() as u64);
            offset += blob.len() as u64;
        }
        let mut blob_hash = Xxh3::new();
        for (_, blob) in &entries {
            blob_hash.update(blob);
        }
        let table_sum = xxh3_64(&table.0);
        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&PACK_FORMAT.to_le_bytes());
        header.extend_from_slice(&(table.0.len() as u64).to_le_bytes());
        header.extend_from_slice(&table_sum.to_le_bytes());
        header.extend_from_slice(&offset.to_le_bytes());
        header.extend_from_slice(&blob_hash.digest().to_le_bytes());

        fs::create_dir_all(&self.dir)?;
        let path = self.dir.join(format!("{table_sum:016x}.pack"));
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!("pack.tmp-{}-{n}", std::process::id()));
        let written = (|| {
            let mut f = io::BufWriter::new(fs::File::create(&tmp)?);
            f.write_all(&header)?;
            f.write_all(&table.0)?;
            for (_, blob) in &entries {
                f.write_all(blob)?;
            }
            // No fsync: a pack cut short by a crash fails its checksums and is ignored.
            f.into_inner().map_err(|e| e.into_error())?;
            fs::rename(&tmp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written?;
        self.evict(&path);
        Ok(path)
    }

    /// The packs in the store with their modification time and size, newest first.
    fn packs(&self) -> Vec<(PathBuf, SystemTime, u64)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut packs: Vec<(PathBuf, SystemTime, u64)> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((e.path(), meta.modified().ok()?, meta.len()))
            })
            .collect();
        packs.sort_by_key(|p| std::cmp::Reverse(p.1));
        packs
    }

    /// Removes the least recently used packs beyond the bounds (never `keep`, the
    /// pack just written) and temporary files of crashed writers.
    fn evict(&self, keep: &Path) {
        let mut count = 0usize;
        let mut bytes = 0u64;
        for (path, _, size) in self.packs() {
            let is_kept = path == keep;
            if is_kept || (count < self.max_packs && bytes + size <= self.max_bytes) {
                count += 1;
                bytes += size;
                continue;
            }
            tracing::debug!(path = %path.display(), "evicting a pack");
            let _ = fs::remove_file(&path);
        }
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_TMP);
            if old && e.file_name().to_string_lossy().starts_with("pack.tmp-") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// A pack's header and key table, read without its blobs.
struct PackHead {
    /// Length of header and table: where the blobs start.
    blobs_at: usize,
    blobs_len: usize,
    blobs_sum: u64,
    /// `(key, offset, len)`, sorted by key.
    rows: Vec<(FileKey, usize, usize)>,
}

impl PackHead {
    fn read(path: &Path, entries: &str) -> Result<PackHead, CacheError> {
        let mut f = fs::File::open(path)?;
        let mut header = [0u8; HEADER_LEN];
        f.read_exact(&mut header)?;
        if &header[..8] != MAGIC {
            return Err(corrupt("bad magic"));
        }
        let mut h = Reader {
            buf: &header[8..],
            pos: 0,
        };
        if h.u32()? != PACK_FORMAT {
            return Err(CacheError::Stale("another pack format".into()));
        }
        let table_len = h.usize()?;
        let table_sum = h.u64()?;
        let blobs_len = h.usize()?;
        let blobs_sum = h.u64()?;
        let mut table = Vec::new();
        f.take(table_len as u64).read_to_end(&mut table)?;
        if table.len() != table_len || xxh3_64(&table) != table_sum {
            return Err(corrupt("key table damaged"));
        }
        let mut r = Reader {
            buf: &table,
            pos: 0,
        };
        let identity = r.str()?;
        if identity != pack_identity(entries) {
            return Err(CacheError::Stale(format!("written by {identity}")));
        }
        let n = r.usize()?;
        if n.checked_mul(ROW_LEN) != Some(table.len() - r.pos) {
            return Err(corrupt("key table length"));
        }
        let mut rows = Vec::with_capacity(n);
        for _ in 0..n {
            let mut k = [0u8; 16];
            k.copy_from_slice(r.take(16)?);
            let (offset, len) = (r.usize()?, r.usize()?);
            if offset.checked_add(len).is_none_or(|end| end > blobs_len) {
                return Err(corrupt("entry outside the blobs"));
            }
            rows.push((u128::from_le_bytes(k), offset, len));
        }
        Ok(PackHead {
            blobs_at: HEADER_LEN + table_len,
            blobs_len,
            blobs_sum,
            rows,
        })
    }

    /// The row of `key`.
    fn find(&self, key: FileKey) -> Option<(usize, usize)> {
        let i = self.rows.binary_search_by_key(&key, |r| r.0).ok()?;
        Some((self.rows[i].1, self.rows[i].2))
    }

    /// Reads and checks the blobs.
    fn load_blobs(self, path: &Path) -> Result<Pack, CacheError> {
        let bytes = fs::read(path)?;
        let blobs = bytes
            .get(self.blobs_at..)
            .filter(|b| b.len() == self.blobs_len)
            .ok_or_else(|| corrupt("blobs length mismatch"))?;
        if xxh3_64(blobs) != self.blobs_sum {
            return Err(corrupt("blobs checksum mismatch"));
        }
        Ok(Pack {
            blobs: blobs.to_vec(),
            head: self,
        })
    }
}

/// A pack read and checked: extraction results by [`FileKey`].
pub(crate) struct Pack {
    head: PackHead,
    blobs: Vec<u8>,
}

impl Pack {
    /// The encoded entry of `key`, if the pack holds one.
    pub(crate) fn blob(&self, key: FileKey) -> Option<&[u8]> {
        let (offset, len) = self.head.find(key)?;
        self.blobs.get(offset..offset + len)
    }

    /// The extraction of the file with `key` and `text`, if the pack has a usable one.
    pub(crate) fn get(&self, key: FileKey, text: &str) -> Option<Extracted> {
        match encode::decode(self.blob(key)?, text) {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!(error = %e, "ignoring a damaged pack entry; parsing the file");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::extract::extract;

    fn entry(id: &str, text: &str) -> (FileKey, Vec<u8>) {
        let mut w = Writer(Vec::new());
        encode::encode(&mut w, &extract(id, text));
        (file_key(id, text), w.0)
    }

    #[test]
    fn the_pack_with_most_files_is_chosen_and_damage_is_ignored() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = FileStore::new(tmp.path());
        let files = [("a.py", "def a(): pass\n"), ("b.py", "class B: pass\n")];
        let small = store.save(vec![entry("a.py", files[0].1)]).expect("save");
        let big = store
            .save(files.iter().map(|(i, t)| entry(i, t)).collect())
            .expect("save");
        let keys: Vec<FileKey> = files.iter().map(|(i, t)| file_key(i, t)).collect();
        let pack = store.best_pack(&keys).expect("a pack");
        assert!(pack.get(keys[1], files[1].1).is_some());
        // The same text at another path is another key.
        assert!(pack.get(file_key("c.py", files[1].1), files[1].1).is_none());
        assert!(store.best_pack(&[file_key("z.py", "")]).is_none());

        // A damaged blob: the big pack is refused and the next best one is used.
        let mut bytes = fs::read(&big).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(&big, bytes).expect("write");
        let pack = store.best_pack(&keys).expect("the small pack");
        assert!(pack.get(keys[0], files[0].1).is_some());
        assert!(pack.get(keys[1], files[1].1).is_none());
        fs::remove_file(&small).expect("rm");
        assert!(store.best_pack(&keys).is_none());
    }

    #[test]
    fn eviction_keeps_the_most_recently_used_packs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = FileStore {
            max_packs: 2,
            ..FileStore::new(tmp.path())
        };
        let paths: Vec<PathBuf> = (0..4)
            .map(|i| {
                let text = format!("def f{i}(): pass\n");
                let p = store.save(vec![entry("m.py", &text)]).expect("save");
                // Distinct modification times, oldest first.
                let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + i);
                fs::File::options()
                    .append(true)
                    .open(&p)
                    .and_then(|f| f.set_modified(t))
                    .expect("set mtime");
                p
            })
            .collect();
        let left: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
        assert_eq!(left, [false, false, true, true]);
    }
}
