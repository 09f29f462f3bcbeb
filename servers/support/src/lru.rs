//! Size-bounded directories of cache entries, least recently used removed first.
//!
//! A content-keyed cache (one file per entry, `<dir>/<fan-out dir>/<key>.<ext>`, never
//! modified once renamed into place) grows with every new input. [`read_touching`]
//! reads an entry and refreshes its modification time, which is what "used" means
//! here; [`evict`] removes the least recently used entries until the rest fit in a
//! byte bound, sparing any entry used within a grace period, since another server
//! sharing the directory (`navbench run --jobs 2`) may be about to read what it just
//! wrote. A scan stats every entry, so callers run it once per build that wrote
//! something, not per write, and off the build's path ([`evict_in_background`]). Removing an entry under a reader is harmless: an open
//! file stays readable, and a reader that finds nothing recomputes the entry.
//!
//! ```
//! use std::time::Duration;
//! use navbench_server_support::lru;
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("ab"))?;
//! std::fs::write(dir.path().join("ab/ab12.entry"), b"0123456789")?;
//! assert_eq!(lru::read_touching(&dir.path().join("ab/ab12.entry"))?, b"0123456789");
//! // Over the bound, but used just now: kept.
//! let e = lru::evict(dir.path(), "entry", 4, Duration::from_secs(600));
//! assert_eq!((e.kept, e.removed), (1, 0));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long an entry counts as in use after it was last read or written: longer than
/// a server takes to index a tree (seconds to a few minutes), so entries a concurrent
/// build has just written or read are never taken from under it.
pub const EVICTION_GRACE: Duration = Duration::from_secs(600);

/// Files in the fan-out directories that are not entries (temporary files of a
/// writer) and older than this were left by a crashed writer and are removed.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// What one [`evict`] scan found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Eviction {
    /// Entries left in place.
    pub kept: usize,
    /// Their total size in bytes (file lengths).
    pub kept_bytes: u64,
    /// Entries removed (stale temporary files are not counted).
    pub removed: usize,
    /// Their total size in bytes.
    pub removed_bytes: u64,
}

/// The contents of the entry at `path`, marking it used (its modification time set
/// to now). A failure to mark it is ignored: it only makes the entry look older.
pub fn read_touching(path: &Path) -> io::Result<Vec<u8>> {
    // One open for both: append mode never changes the bytes, and allows the touch.
    let mut f = match fs::File::options().read(true).append(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(e),
        // Not writable (permissions, a read-only mount): read it unmarked.
        Err(_) => return fs::read(path),
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    let _ = f.set_modified(SystemTime::now());
    Ok(bytes)
}

/// Writes the entry at `path` (creating its directory) through a temporary file of this
/// process renamed into place, so a reader, or another server sharing the directory,
/// sees the whole entry or none. The temporary name is unique per process and write,
/// and is not an entry: a leftover one is removed by [`evict`] once it is an hour old.
pub fn write_entry(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy())
        .unwrap_or_default();
    let tmp = parent.join(format!("{name}.tmp-{}-{n}", std::process::id()));
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Records that the entry at `path` was last used at `when` (its modification time):
/// how eviction ages entries, and how tests make an entry look old.
pub fn mark_used(path: &Path, when: SystemTime) -> io::Result<()> {
    fs::File::options()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(when))
}

/// Removes the least recently used entries (files named `*.<ext>` in the immediate
/// subdirectories of `dir`) until those left total at most `max_bytes`, never one
/// used within `grace`; also removes other files there older than an hour (temporary
/// files of crashed writers). Errors are ignored: what cannot be listed or removed stays.
pub fn evict(dir: &Path, ext: &str, max_bytes: u64, grace: Duration) -> Eviction {
    let suffix = format!(".{ext}");
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    for sub in fs::read_dir(dir).into_iter().flatten().flatten() {
        if !sub.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for f in fs::read_dir(sub.path()).into_iter().flatten().flatten() {
            let Ok(meta) = f.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if f.file_name().to_string_lossy().ends_with(&suffix) {
                entries.push((used, meta.len(), f.path()));
            } else if used.elapsed().is_ok_and(|age| age > STALE_TMP) {
                let _ = fs::remove_file(f.path());
            }
        }
    }
    // Newest first: the entries kept are a prefix, plus whatever the grace spares.
    entries.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = Eviction::default();
    for (used, size, path) in entries {
        let recent = used.elapsed().map_or(true, |age| age < grace);
        if recent || out.kept_bytes + size <= max_bytes {
            out.kept += 1;
            out.kept_bytes += size;
        } else if fs::remove_file(&path).is_ok() {
            out.removed += 1;
            out.removed_bytes += size;
        }
    }
    if out.removed > 0 {
        tracing::debug!(dir = %dir.display(), ?out, "evicted least recently used cache entries");
    }
    out
}

/// [`evict`] on a thread of its own, so that a build does not wait for the scan
/// (~0.2 s for 40 000 entries, more when it removes many). A thread that cannot be
/// started is logged and nothing is evicted this time.
pub fn evict_in_background(dir: PathBuf, ext: &'static str, max_bytes: u64, grace: Duration) {
    let spawned = std::thread::Builder::new()
        .name("cache-evict".into())
        .spawn(move || evict(&dir, ext, max_bytes, grace));
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "cannot start the cache eviction thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes entry `name` of `len` bytes last used `age_secs` ago.
    fn entry(dir: &Path, name: &str, len: usize, age_secs: u64) -> PathBuf {
        let sub = dir.join(&name[..2]);
        fs::create_dir_all(&sub).expect("mkdir");
        let p = sub.join(name);
        fs::write(&p, vec![b'x'; len]).expect("write");
        mark_used(&p, SystemTime::now() - Duration::from_secs(age_secs)).expect("set mtime");
        p
    }

    #[test]
    fn eviction_keeps_the_most_recently_used_entries_within_the_bound() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = tmp.path();
        // Oldest first: a0 used 5000 s ago ... a4 1000 s ago; 100 bytes each.
        let paths: Vec<PathBuf> = (0..5)
            .map(|i| entry(d, &format!("a{i}.e"), 100, 5000 - 1000 * i))
            .collect();
        // a0 is read now: the most recently used.
        assert_eq!(read_touching(&paths[0]).expect("read").len(), 100);
        let tmp_file = entry(d, "a9.tmp-1-2", 10, 7200);
        let fresh_tmp = entry(d, "a8.tmp-1-3", 10, 0);
        let e = evict(d, "e", 250, Duration::from_secs(60));
        assert_eq!(e.kept, 2);
        assert_eq!((e.kept_bytes, e.removed, e.removed_bytes), (200, 3, 300));
        let left: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
        assert_eq!(left, [true, false, false, false, true]);
        assert!(!tmp_file.exists(), "a crashed writer's file goes");
        assert!(fresh_tmp.exists(), "a live writer's file stays");
        // Within the bound, nothing more goes.
        assert_eq!(evict(d, "e", 250, Duration::from_secs(60)).removed, 0);
    }

    #[test]
    fn the_grace_period_protects_fresh_entries_beyond_the_bound() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = tmp.path();
        let old = entry(d, "b0.e", 100, 3600);
        let fresh: Vec<PathBuf> = (1..4)
            .map(|i| entry(d, &format!("b{i}.e"), 100, 10))
            .collect();
        let e = evict(d, "e", 50, Duration::from_secs(600));
        assert_eq!((e.kept, e.kept_bytes, e.removed), (3, 300, 1));
        assert!(!old.exists());
        assert!(fresh.iter().all(|p| p.exists()));
    }

    #[test]
    fn reading_a_vanished_entry_is_not_found() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = entry(tmp.path(), "c0.e", 10, 0);
        fs::remove_file(&p).expect("rm");
        let err = read_touching(&p).expect_err("gone");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            evict(tmp.path().join("none").as_path(), "e", 0, Duration::ZERO),
            Eviction::default()
        );
    }
}
