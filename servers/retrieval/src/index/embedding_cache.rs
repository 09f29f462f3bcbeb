//! The embedding cache: vectors by content hash, persisted per model, so re-indexing
//! embeds only chunks whose text changed; optionally shared across processes and trees
//! through pack files (one writer per file, so writers never touch each other's).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::{CACHE_MAGIC, IndexError, io_err};
use crate::chunk::Chunk;
use crate::encoder::TextEncoder;

/// Content hash → vector, persisted per model.
#[derive(Default)]
pub(super) struct EmbeddingCache {
    dim: usize,
    pub(super) map: HashMap<u128, Box<[f32]>>,
}

impl EmbeddingCache {
    pub(super) fn path(dir: &Path, model_id: &str) -> PathBuf {
        let short: String = model_id.chars().take(16).collect();
        dir.join(format!("embeddings-{short}.bin"))
    }

    /// Loads the cache; a missing or unreadable file gives an empty cache.
    pub(super) fn load(path: &Path, dim: usize) -> EmbeddingCache {
        let mut cache = EmbeddingCache {
            dim,
            map: HashMap::new(),
        };
        let Ok(f) = fs::File::open(path) else {
            return cache;
        };
        let mut r = BufReader::new(f);
        let mut head = [0u8; 16];
        if r.read_exact(&mut head).is_err() || &head[..8] != CACHE_MAGIC {
            tracing::warn!(path = %path.display(), "embedding cache unreadable; starting empty");
            return cache;
        }
        let file_dim = u64::from_le_bytes(head[8..16].try_into().unwrap_or([0; 8])) as usize;
        if file_dim != dim {
            return cache;
        }
        let mut key = [0u8; 16];
        let mut buf = vec![0u8; dim * 4];
        while r.read_exact(&mut key).is_ok() && r.read_exact(&mut buf).is_ok() {
            let v: Box<[f32]> = buf
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            cache.map.insert(u128::from_le_bytes(key), v);
        }
        cache
    }

    pub(super) fn save(&self, path: &Path) -> Result<(), IndexError> {
        let tmp = path.with_extension("bin.tmp");
        {
            let f = fs::File::create(&tmp).map_err(io_err(&tmp))?;
            let mut w = BufWriter::new(f);
            let mut write = |b: &[u8]| w.write_all(b).map_err(io_err(&tmp));
            write(CACHE_MAGIC)?;
            write(&(self.dim as u64).to_le_bytes())?;
            let mut keys: Vec<&u128> = self.map.keys().collect();
            keys.sort();
            for k in keys {
                write(&k.to_le_bytes())?;
                for x in self.map[k].iter() {
                    write(&x.to_le_bytes())?;
                }
            }
            w.flush().map_err(io_err(&tmp))?;
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
    /// unreadable packs are skipped with a warning, never trusted half-read.
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
            let loaded = EmbeddingCache::load(&pack, self.dim);
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

    /// Drops entries not in `keep` once the cache is much larger than the index.
    pub(super) fn prune(&mut self, keep: &HashSet<u128>) {
        if self.map.len() > 2 * keep.len() + 1000 {
            self.map.retain(|k, _| keep.contains(k));
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
