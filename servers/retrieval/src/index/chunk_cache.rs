//! Chunks of a file, remembered across trees and processes: consecutive commits of
//! one repository share almost every file, and chunking (a tree-sitter parse and the
//! metadata walk of each file) is most of what rebuilding an index costs once its
//! vectors are cached. A file's chunks are stored under a hash of this build of the
//! server, the file's path and its text, so a cached entry is exactly what
//! [`crate::chunk::chunk_file`] would return for it. An entry is JSON inside the
//! shared checked frame (`navbench_server_support::frame`: magic, format, length,
//! checksum), so a damaged entry, even one whose JSON still parses, is chunked again
//! rather than served.
//!
//! The directory is set once per process ([`use_dir`], from `--chunk-cache`); without
//! it nothing is cached. Entries are written atomically (temporary file, then rename),
//! so concurrent servers sharing the directory never read half an entry.
//!
//! The directory is bounded: after an index build that stored entries, [`evict`]
//! removes the least recently used ones beyond [`MAX_BYTES`] (reading an entry marks
//! it used), sparing those used within [`lru::EVICTION_GRACE`], which a concurrent
//! server may be reading (`navbench_server_support::lru`). An entry removed under a
//! reader is chunked again.
//!
//! ```
//! use navbench_retrieval::index::chunk_cache;
//! let dir = tempfile::tempdir().unwrap();
//! chunk_cache::use_dir(dir.path().to_path_buf());
//! let text = "def f():\n    return 1\n";
//! let fresh = chunk_cache::chunks_of("m.py", text);
//! assert_eq!(chunk_cache::chunks_of("m.py", text), fresh); // read back
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use navbench_server_support::{frame, lru};

use crate::chunk::{Chunk, chunk_file};

static DIR: OnceLock<PathBuf> = OnceLock::new();
/// Entries this process stored since its last [`evict`].
static STORED: AtomicUsize = AtomicUsize::new(0);

/// File name extension of an entry (JSON behind a frame; entries written before the
/// frame, bare JSON, keep the name, so eviction still reaches them).
const ENTRY_EXT: &str = "json";
/// Magic string of an entry's frame.
const MAGIC: &[u8; 8] = b"NBRCHNK1";
/// Version of an entry's payload (JSON of `Vec<Chunk>`); bump when it changes.
const ENTRY_FORMAT: u32 = 1;

/// Total size of the entries kept, 1 GiB. Measured on SWE-bench trees: an entry
/// (JSON) averages ~24 kB, 8 commits of sympy (the largest repository) took ~150 MB
/// and each further commit adds a few MB; so 1 GiB holds the latest tree of every
/// repository of a benchmark (a dozen), and a run that interleaves repositories still
/// reuses most files, while a 300-instance run stays at 1 GiB instead of several.
pub const MAX_BYTES: u64 = 1 << 30;

/// Caches chunks under `dir` for the rest of the process (the first call wins).
pub fn use_dir(dir: PathBuf) {
    if fs::create_dir_all(&dir).is_ok() {
        let _ = DIR.set(dir);
        // Hash the executable (the entries' key) now, beside whatever the process
        // does first, rather than when the first file is chunked.
        let _ = std::thread::Builder::new()
            .name("navbench-build-identity".into())
            .spawn(|| build_identity().len());
    } else {
        tracing::warn!(dir = %dir.display(), "cannot create the chunk cache; chunking every file");
    }
}

/// This build of the server: its version and a hash of its executable, so a rebuilt
/// chunker never reads what another build cached (the version alone when the
/// executable cannot be read).
fn build_identity() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| match navbench_server_support::cache::executable_hash() {
        Some(h) => format!("{} exe:{h:016x}", env!("CARGO_PKG_VERSION")),
        None => env!("CARGO_PKG_VERSION").to_string(),
    })
}

fn entry_path(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(build_identity().as_bytes());
    h.update(&[0]);
    h.update(rel.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    let key = format!("{:032x}", h.digest128());
    dir.join(&key[..2]).join(format!("{key}.{ENTRY_EXT}"))
}

/// The chunks of file `rel` with contents `text`: from the cache when it has them,
/// else chunked (and cached when a directory is set).
pub fn chunks_of(rel: &str, text: &str) -> Vec<Chunk> {
    match DIR.get() {
        Some(dir) => cached_chunks(dir, rel, text),
        None => chunk_file(rel, text),
    }
}

/// [`chunks_of`] with the cache in `dir`: read back (marking the entry used), or
/// chunked and stored when the entry is missing, damaged or was evicted.
fn cached_chunks(dir: &Path, rel: &str, text: &str) -> Vec<Chunk> {
    let path = entry_path(dir, rel, text);
    if let Some(chunks) = lru::read_touching(&path).ok().and_then(|b| decode(&b)) {
        return chunks;
    }
    let chunks = chunk_file(rel, text);
    match store(&path, &chunks) {
        Ok(()) => {
            STORED.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => tracing::debug!(file = %rel, error = %e, "could not cache the file's chunks"),
    }
    chunks
}

/// Bounds the cache directory ([`MAX_BYTES`], least recently used out) when this
/// process stored entries since the last call: an index build calls it once it has
/// chunked its files, so the scan (a stat of every entry) runs once per build that
/// grew the cache, on a thread of its own so the build does not wait.
pub fn evict() {
    let Some(dir) = DIR.get() else { return };
    if STORED.swap(0, Ordering::Relaxed) > 0 {
        lru::evict_in_background(dir.clone(), ENTRY_EXT, MAX_BYTES, lru::EVICTION_GRACE);
    }
}

/// An entry's chunks, or `None` when it is damaged or of another format.
fn decode(bytes: &[u8]) -> Option<Vec<Chunk>> {
    let payload = frame::unframe(bytes, MAGIC, ENTRY_FORMAT).ok()?;
    serde_json::from_slice(payload).ok()
}

fn store(path: &Path, chunks: &[Chunk]) -> std::io::Result<()> {
    let bytes = frame::frame(MAGIC, ENTRY_FORMAT, &serde_json::to_vec(chunks)?);
    lru::write_entry(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_keyed_by_path_and_text_and_a_damaged_one_is_chunked_again() {
        let dir = tempfile::tempdir().unwrap();
        let a = entry_path(dir.path(), "a.py", "x = 1\n");
        assert_ne!(a, entry_path(dir.path(), "b.py", "x = 1\n"));
        assert_ne!(a, entry_path(dir.path(), "a.py", "x = 2\n"));
        let text = "class C:\n    def m(self):\n        return 2\n";
        let path = entry_path(dir.path(), "c.py", text);
        store(&path, &chunk_file("c.py", text)).unwrap();
        let good = fs::read(&path).unwrap();
        assert_eq!(decode(&good), Some(chunk_file("c.py", text)));
        fs::write(&path, b"{not json").unwrap();
        assert_eq!(decode(&fs::read(&path).unwrap()), None);
        assert_eq!(
            cached_chunks(dir.path(), "c.py", text),
            chunk_file("c.py", text)
        );
        assert_eq!(fs::read(&path).unwrap(), good, "the entry is written again");

        // A flipped byte inside the code keeps the JSON valid: the checksum refuses it.
        let at = good.windows(6).rposition(|w| w == b"return").unwrap();
        let mut damaged = good.clone();
        damaged[at] = b'R';
        let payload = &damaged[frame::HEADER_LEN..];
        assert!(serde_json::from_slice::<Vec<Chunk>>(payload).is_ok());
        fs::write(&path, &damaged).unwrap();
        assert_eq!(decode(&damaged), None);
        assert_eq!(
            cached_chunks(dir.path(), "c.py", text),
            chunk_file("c.py", text)
        );
        assert_eq!(fs::read(&path).unwrap(), good);
    }

    /// What [`evict`] runs, with a bound of the test's.
    fn evict_dir(dir: &Path, max_bytes: u64) -> lru::Eviction {
        lru::evict(dir, ENTRY_EXT, max_bytes, lru::EVICTION_GRACE)
    }

    const TEXT: &str = "import os\n\nclass C:\n    def m(self):\n        return os.sep\n";

    /// Sets the modification time of `path` to `secs` seconds ago.
    fn age(path: &Path, secs: u64) {
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        navbench_server_support::lru::mark_used(path, t).expect("set mtime");
    }

    #[test]
    fn eviction_keeps_the_most_recently_used_entries_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<String> = (0..4).map(|i| format!("m{i}.py")).collect();
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|f| {
                assert_eq!(cached_chunks(dir.path(), f, TEXT), chunk_file(f, TEXT));
                entry_path(dir.path(), f, TEXT)
            })
            .collect();
        // Last used an hour ago and more, m0 the oldest; then m0 is read again.
        for (i, p) in paths.iter().enumerate() {
            age(p, 7200 - 600 * i as u64);
        }
        let old = fs::metadata(&paths[3]).unwrap().modified().unwrap();
        assert_eq!(
            cached_chunks(dir.path(), "m0.py", TEXT),
            chunk_file("m0.py", TEXT)
        );
        assert!(
            fs::metadata(&paths[0]).unwrap().modified().unwrap() > old,
            "read marks used"
        );
        let size = fs::metadata(&paths[0]).unwrap().len();
        let e = evict_dir(dir.path(), 2 * size);
        assert_eq!((e.kept, e.removed), (2, 2));
        let left: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
        assert_eq!(left, [true, false, false, true]);
    }

    #[test]
    fn entries_used_within_the_grace_period_are_never_evicted() {
        let dir = tempfile::tempdir().unwrap();
        cached_chunks(dir.path(), "new.py", TEXT);
        cached_chunks(dir.path(), "old.py", TEXT);
        age(&entry_path(dir.path(), "old.py", TEXT), 3600);
        let e = evict_dir(dir.path(), 0);
        assert_eq!((e.kept, e.removed), (1, 1));
        assert!(entry_path(dir.path(), "new.py", TEXT).exists());
    }

    #[test]
    fn an_entry_removed_under_the_cache_is_chunked_again() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = cached_chunks(dir.path(), "m.py", TEXT);
        let path = entry_path(dir.path(), "m.py", TEXT);
        let stored = fs::read(&path).unwrap();
        // Another server's eviction.
        fs::remove_file(&path).unwrap();
        assert_eq!(cached_chunks(dir.path(), "m.py", TEXT), fresh);
        assert_eq!(fs::read(&path).unwrap(), stored, "stored again");
        assert_eq!(fresh, chunk_file("m.py", TEXT));
    }
}
