//! Chunks of a file, remembered across trees and processes: consecutive commits of
//! one repository share almost every file, and chunking (a tree-sitter parse and the
//! metadata walk of each file) is most of what rebuilding an index costs once its
//! vectors are cached. A file's chunks are stored under a hash of this build of the
//! server, the file's path and its text, so a cached entry is exactly what
//! [`crate::chunk::chunk_file`] would return for it; anything unreadable is chunked
//! again.
//!
//! The directory is set once per process ([`use_dir`], from `--chunk-cache`); without
//! it nothing is cached. Entries are written atomically (temporary file, then rename),
//! so concurrent servers sharing the directory never read half an entry.
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

use crate::chunk::{Chunk, chunk_file};

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Caches chunks under `dir` for the rest of the process (the first call wins).
pub fn use_dir(dir: PathBuf) {
    if fs::create_dir_all(&dir).is_ok() {
        let _ = DIR.set(dir);
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
    dir.join(&key[..2]).join(format!("{key}.json"))
}

/// The chunks of file `rel` with contents `text`: from the cache when it has them,
/// else chunked (and cached when a directory is set).
pub fn chunks_of(rel: &str, text: &str) -> Vec<Chunk> {
    let Some(dir) = DIR.get() else {
        return chunk_file(rel, text);
    };
    let path = entry_path(dir, rel, text);
    if let Some(chunks) = fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<Chunk>>(&b).ok())
    {
        return chunks;
    }
    let chunks = chunk_file(rel, text);
    if let Err(e) = store(&path, &chunks) {
        tracing::debug!(file = %rel, error = %e, "could not cache the file's chunks");
    }
    chunks
}

fn store(path: &Path, chunks: &[Chunk]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let bytes = serde_json::to_vec(chunks)?;
    // A name of this process and thread, so concurrent writers never share one.
    let tmp = path.with_extension(format!(
        "tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
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
        let stored: Vec<Chunk> = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(stored, chunk_file("c.py", text));
        fs::write(&path, b"{not json").unwrap();
        let back = fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Vec<Chunk>>(&b).ok());
        assert!(back.is_none(), "a damaged entry is not read as chunks");
    }
}
