//! The embedding cache: vectors by content hash, persisted per model, so re-indexing
//! embeds only chunks whose text changed; optionally shared across processes and trees
//! through pack files (one writer per file, so writers never touch each other's).
//!
//! Both `embeddings-<model>.bin` and the `*.pack` files are records files of the
//! shared frame ([`navbench_server_support::frame::RecordWriter`]): one record per
//! vector (content hash, then the vector), each with its own checksum, so a flipped
//! bit drops that vector alone, which is then computed again, instead of serving a
//! wrong vector or throwing away hours of MiniLM work. Files of the first format
//! (`NBEMB001`: no checksums) are still read; a cache file is rewritten in the checked
//! format the next time it is saved, a pack is left as it is (packs are never
//! rewritten).

use std::collections::HashMap;
use std::fs;
use std::io::{BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};

use navbench_server_support::frame::{RecordReader, RecordWriter};

use super::{IndexError, io_err};
use crate::chunk::Chunk;
use crate::encoder::TextEncoder;

/// Magic of the checked format (records files of the shared frame).
const MAGIC: &[u8; 8] = b"NBEMBREC";
/// Version of the checked format.
const VERSION: u32 = 1;
/// Magic of the first, unchecked format: magic, dimension (u64), then (hash, vector)
/// pairs with no checksum.
const LEGACY_MAGIC: &[u8; 8] = b"NBEMB001";
/// Bytes of a record's key (the xxh3-128 content hash).
const KEY_LEN: usize = 16;

/// Content hash → vector, persisted per model.
#[derive(Default)]
pub(super) struct EmbeddingCache {
    dim: usize,
    pub(super) map: HashMap<u128, Box<[f32]>>,
}

/// What loading a file found besides its vectors.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Loaded {
    /// Vectors dropped because their checksum failed (or cut short at the end).
    pub(super) damaged: usize,
    /// The file was of the first, unchecked format.
    pub(super) legacy: bool,
}

fn vector_of(bytes: &[u8]) -> Box<[f32]> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn key_of(bytes: &[u8]) -> u128 {
    let mut key = [0u8; KEY_LEN];
    key.copy_from_slice(&bytes[..KEY_LEN]);
    u128::from_le_bytes(key)
}

impl EmbeddingCache {
    /// An empty cache of vectors of `dim`.
    pub(super) fn new(dim: usize) -> EmbeddingCache {
        EmbeddingCache {
            dim,
            map: HashMap::new(),
        }
    }

    /// The vector file of index store version 3 (`embeddings-<model>.bin`), still read
    /// by a cold build in its directory so an upgrade embeds nothing again.
    pub(super) fn path(dir: &Path, model_id: &str) -> PathBuf {
        let short: String = model_id.chars().take(16).collect();
        dir.join(format!("embeddings-{short}.bin"))
    }

    /// Loads the cache; a missing or unreadable file gives an empty cache, a damaged
    /// vector is left out (see [`EmbeddingCache::load_checked`]).
    pub(super) fn load(path: &Path, dim: usize) -> EmbeddingCache {
        EmbeddingCache::load_checked(path, dim).0
    }

    /// Loads the cache and says what was damaged. A file of another dimension (or
    /// model) gives an empty cache.
    pub(super) fn load_checked(path: &Path, dim: usize) -> (EmbeddingCache, Loaded) {
        let mut cache = EmbeddingCache {
            dim,
            map: HashMap::new(),
        };
        let mut loaded = Loaded::default();
        let Ok(f) = fs::File::open(path) else {
            return (cache, loaded);
        };
        let mut r = BufReader::new(f);
        let mut magic = [0u8; 8];
        if r.read_exact(&mut magic).is_err() {
            tracing::warn!(path = %path.display(), "embedding cache unreadable; starting empty");
            return (cache, loaded);
        }
        if &magic == LEGACY_MAGIC {
            loaded.legacy = true;
            cache.read_legacy(r);
            return (cache, loaded);
        }
        let mut records = match RecordReader::new((&magic[..]).chain(r), MAGIC, VERSION) {
            Ok(records) => records,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "embedding cache unreadable; starting empty");
                return (cache, loaded);
            }
        };
        if records.record_len() != KEY_LEN + 4 * dim {
            // Vectors of another dimension: another model's, of no use here.
            return (cache, loaded);
        }
        while let Some(record) = records.next_record() {
            match record {
                Ok(bytes) => {
                    cache
                        .map
                        .insert(key_of(bytes), vector_of(&bytes[KEY_LEN..]));
                }
                Err(_) => loaded.damaged += 1,
            }
        }
        if loaded.damaged > 0 {
            tracing::warn!(
                path = %path.display(),
                damaged = loaded.damaged,
                "damaged vectors in the embedding cache (checksum mismatch or cut short) were dropped; they are computed again"
            );
        }
        (cache, loaded)
    }

    /// The rest of a first-format file after its magic: the dimension, then pairs.
    fn read_legacy(&mut self, mut r: impl Read) {
        let mut dim = [0u8; 8];
        if r.read_exact(&mut dim).is_err() || u64::from_le_bytes(dim) != self.dim as u64 {
            return;
        }
        let mut buf = vec![0u8; KEY_LEN + self.dim * 4];
        while r.read_exact(&mut buf).is_ok() {
            self.map.insert(key_of(&buf), vector_of(&buf[KEY_LEN..]));
        }
    }

    /// Writes the cache in the checked format, atomically (a temporary file of this
    /// process, renamed over `path`).
    pub(super) fn save(&self, path: &Path) -> Result<(), IndexError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!("{name}.{}.tmp", std::process::id()));
        {
            let f = fs::File::create(&tmp).map_err(io_err(&tmp))?;
            let mut w =
                RecordWriter::new(BufWriter::new(f), MAGIC, VERSION, KEY_LEN + 4 * self.dim)
                    .map_err(io_err(&tmp))?;
            let mut keys: Vec<&u128> = self.map.keys().collect();
            keys.sort();
            let mut record = Vec::with_capacity(KEY_LEN + 4 * self.dim);
            for k in keys {
                record.clear();
                record.extend_from_slice(&k.to_le_bytes());
                for x in self.map[k].iter() {
                    record.extend_from_slice(&x.to_le_bytes());
                }
                w.write(&record).map_err(io_err(&tmp))?;
            }
            w.finish().map_err(io_err(&tmp))?;
        }
        fs::rename(&tmp, path).map_err(io_err(path))
    }

    /// The shared pack directory of `embedder`'s model, if it has a shared cache.
    pub(super) fn shared_dir(embedder: &dyn TextEncoder) -> Option<PathBuf> {
        let id: String = embedder
            .model_id()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        embedder.shared_cache().map(|d| d.join(id))
    }

    /// Adds the vectors of every pack in `dir` (see [`crate::model::Embedder::with_shared_cache`]);
    /// unreadable packs are skipped with a warning, damaged vectors left out, never
    /// trusted.
    pub(super) fn add_shared(&mut self, dir: &Path) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut packs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "pack"))
            .collect();
        packs.sort();
        for pack in packs {
            let (loaded, report) = EmbeddingCache::load_checked(&pack, self.dim);
            if report.damaged > 0 {
                // Rewritten without the damaged vectors (atomically; a pack's content
                // never changes otherwise), so the damage is reported once.
                if let Err(e) = loaded.save(&pack) {
                    tracing::warn!(pack = %pack.display(), error = %e, "cannot rewrite a damaged pack");
                }
            }
            for (k, v) in loaded.map {
                self.map.entry(k).or_insert(v);
            }
        }
    }

    /// Writes `keys` (just computed) as a new pack under `dir`, atomically.
    pub(super) fn write_pack(&self, dir: &Path, keys: &[u128]) -> Result<(), IndexError> {
        if keys.is_empty() {
            return Ok(());
        }
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = dir.join(format!("{nanos:032}-{}.pack", std::process::id()));
        let pack = EmbeddingCache {
            dim: self.dim,
            map: keys
                .iter()
                .filter_map(|k| self.map.get(k).map(|v| (*k, v.clone())))
                .collect(),
        };
        pack.save(&path)
    }

    /// Empties the cache once it holds more vectors than the index it serves
    /// (`installed` chunks) and a thousand more: what it holds then is mostly history.
    pub(super) fn prune(&mut self, installed: usize) {
        if self.map.len() > installed + 1000 {
            self.map.clear();
        }
    }
}

/// The text embedded for a chunk: path, kind and name give the model context.
pub(super) fn embed_text(c: &Chunk) -> String {
    format!(
        "{} {} {}\n{}",
        c.file,
        c.kind,
        c.name.as_deref().unwrap_or(""),
        c.content
    )
}

pub(super) fn content_hash(text: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use navbench_server_support::frame::{HEADER_LEN, RECORD_CHECKSUM_LEN};

    fn sample() -> EmbeddingCache {
        let map = (1u128..=3)
            .map(|k| {
                (
                    k << 64 | k,
                    (0..4).map(|i| k as f32 + i as f32 / 8.0).collect(),
                )
            })
            .collect();
        EmbeddingCache { dim: 4, map }
    }

    /// Offset of byte `at` of record `i` (0-based) in a checked file of `sample()`.
    fn record_byte(i: usize, at: usize) -> usize {
        HEADER_LEN + i * (KEY_LEN + 16 + RECORD_CHECKSUM_LEN) + at
    }

    #[test]
    fn a_flipped_bit_drops_that_vector_only() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("embeddings-x.bin");
        let cache = sample();
        cache.save(&path).unwrap();
        let (back, report) = EmbeddingCache::load_checked(&path, 4);
        assert_eq!(report, Loaded::default());
        assert_eq!(back.map, cache.map);
        // One bit of the second vector's third float.
        let mut bytes = fs::read(&path).unwrap();
        bytes[record_byte(1, KEY_LEN + 9)] ^= 0x04;
        fs::write(&path, &bytes).unwrap();
        let (back, report) = EmbeddingCache::load_checked(&path, 4);
        assert_eq!(report.damaged, 1);
        let mut expected = cache.map.clone();
        expected.remove(&(2u128 << 64 | 2));
        assert_eq!(back.map, expected);
        // A file of another dimension holds nothing for this one.
        assert!(EmbeddingCache::load(&path, 8).map.is_empty());
    }

    #[test]
    fn the_first_format_still_reads_and_is_saved_checked() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("embeddings-x.bin");
        let cache = sample();
        // The first format, as it was written: magic, dimension, (hash, vector) pairs.
        let mut old = LEGACY_MAGIC.to_vec();
        old.extend_from_slice(&4u64.to_le_bytes());
        let mut keys: Vec<&u128> = cache.map.keys().collect();
        keys.sort();
        for k in keys {
            old.extend_from_slice(&k.to_le_bytes());
            for x in cache.map[k].iter() {
                old.extend_from_slice(&x.to_le_bytes());
            }
        }
        fs::write(&path, &old).unwrap();
        let (back, report) = EmbeddingCache::load_checked(&path, 4);
        assert!(report.legacy);
        assert_eq!(back.map, cache.map);
        assert!(EmbeddingCache::load(&path, 8).map.is_empty());
        back.save(&path).unwrap();
        assert_eq!(&fs::read(&path).unwrap()[..8], MAGIC);
        let (again, report) = EmbeddingCache::load_checked(&path, 4);
        assert_eq!(report, Loaded::default());
        assert_eq!(again.map, cache.map);
    }

    #[test]
    fn a_damaged_pack_loses_that_vector_and_is_repaired() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = sample();
        let keys: Vec<u128> = cache.map.keys().copied().collect();
        cache.write_pack(tmp.path(), &keys).unwrap();
        let pack = fs::read_dir(tmp.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut bytes = fs::read(&pack).unwrap();
        // The first record's checksum.
        bytes[record_byte(0, KEY_LEN + 16 + 2)] ^= 0x80;
        fs::write(&pack, &bytes).unwrap();
        let mut shared = EmbeddingCache {
            dim: 4,
            map: HashMap::new(),
        };
        shared.add_shared(tmp.path());
        assert_eq!(shared.map.len(), 2);
        assert!(!shared.map.contains_key(&(1u128 << 64 | 1)));
        let (repaired, report) = EmbeddingCache::load_checked(&pack, 4);
        assert_eq!(report, Loaded::default());
        assert_eq!(repaired.map, shared.map);
        // No temporary file is left beside the packs.
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
