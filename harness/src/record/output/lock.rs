//! [`RunLock`]: one `navbench run` per run directory at a time. Two runs appending to
//! the same `--out` interleave their rows (each also repairs the other's half-written
//! row as torn), so a second run is refused at once, naming the process that holds it.
//!
//! The lock is an advisory `flock` on `run.lock` in the run directory, held for the
//! run's life. The kernel releases it when the process ends, however it ends: a
//! SIGKILLed run leaves at most the file, never a lock. The holder writes its pid into
//! the file so the refusal can name it, and removes the file when it finishes. An
//! acquirer that locked a file which the previous holder removed meanwhile (the path
//! now names another file, or none) lets go and tries again, so two runs can never
//! both hold "the" lock through two different files.
//!
//! Only `run` writes a run directory; `merge`, `report` and `compare` only read them
//! and take no lock. The lock needs Unix (`flock`); elsewhere it is not taken.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

/// The lock file's name inside the run directory.
pub const LOCK_FILE: &str = "run.lock";

/// Exclusive use of one run directory; released (and `run.lock` removed) on drop.
#[derive(Debug)]
pub struct RunLock {
    dir: PathBuf,
    path: PathBuf,
    /// Held open for the lock's life (the `flock` belongs to this open file).
    _file: File,
    /// The directory did not exist before: removed on drop if the run left it empty.
    created_dir: bool,
}

impl RunLock {
    /// Creates `dir` if needed and locks it, or fails at once when another process
    /// holds it, naming that process's pid.
    pub fn acquire(dir: &Path) -> anyhow::Result<RunLock> {
        let created_dir = !dir.exists();
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create output dir {}: {e}; pass a writable --out",
                dir.display()
            )
        })?;
        let path = dir.join(LOCK_FILE);
        // A removed-and-recreated lock file can only be met a few times in a row, and
        // only while other runs start and finish on the same directory.
        for _ in 0..16 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "cannot open the run lock {}: {e}; --out must be a writable directory (pass another --out)",
                        path.display()
                    )
                })?;
            if !try_lock(&file).map_err(|e| {
                anyhow::anyhow!(
                    "cannot lock {}: {e}; put --out on a local file system that supports locks",
                    path.display()
                )
            })? {
                return Err(held_by_another(dir, &path, &mut file));
            }
            if !still_at(&file, &path) {
                continue;
            }
            let written = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| writeln!(file, "{}", std::process::id()));
            if let Err(e) = written {
                tracing::warn!(path = %path.display(), "cannot write this run's pid into the lock file: {e}");
            }
            return Ok(RunLock {
                dir: dir.to_path_buf(),
                path,
                _file: file,
                created_dir,
            });
        }
        anyhow::bail!(
            "cannot lock {}: other runs keep removing and recreating it; let them finish, or pass another --out",
            path.display()
        )
    }

    /// The locked run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Removed while still locked (the file closes after this), so a run starting
        // now either is refused by this lock or opens a new file.
        let _ = std::fs::remove_file(&self.path);
        if self.created_dir {
            // Only succeeds when empty: a run refused before writing anything leaves
            // no directory behind.
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// The refusal when another process holds the lock, with its pid when it wrote one.
fn held_by_another(dir: &Path, path: &Path, file: &mut File) -> anyhow::Error {
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    let holder = match text.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "another process (its pid is not written yet)".to_string(),
    };
    anyhow::anyhow!(
        "--out {} is in use by another navbench run: {holder} holds {}. Two runs on one directory would interleave their rows; wait for that run to finish (or stop it), or pass another --out",
        dir.display(),
        path.display()
    )
}

/// Takes the exclusive lock without waiting: `Ok(false)` when another holds it.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd as _;
    loop {
        // SAFETY: flock(2) on a descriptor this `File` owns; no memory is involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e),
        }
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

/// Whether `path` still names the file `file` has open (the previous holder may have
/// removed it between our open and our lock).
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_at(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let held = RunLock::acquire(&dir).unwrap();
        let pid = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert_eq!(pid.trim(), std::process::id().to_string());
        // flock locks belong to open files: a second open in this process conflicts
        // just as another process's would.
        let e = RunLock::acquire(&dir).unwrap_err().to_string();
        assert!(
            e.contains(&format!("process {}", std::process::id())),
            "{e}"
        );
        assert!(e.contains("--out"), "{e}");
        drop(held);
        assert!(!dir.join(LOCK_FILE).exists());
        let again = RunLock::acquire(&dir).unwrap();
        drop(again);
    }

    #[test]
    fn a_refused_run_leaves_no_new_directory_and_keeps_an_old_one() {
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("fresh");
        drop(RunLock::acquire(&fresh).unwrap());
        assert!(!fresh.exists());
        let kept = tmp.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        drop(RunLock::acquire(&kept).unwrap());
        assert!(kept.exists());
    }

    #[test]
    fn a_lock_file_left_by_a_dead_run_is_no_lock() {
        let tmp = tempfile::tempdir().unwrap();
        // What a SIGKILLed run leaves: the file with its pid, but no flock.
        std::fs::write(tmp.path().join(LOCK_FILE), "999999999\n").unwrap();
        let lock = RunLock::acquire(tmp.path()).unwrap();
        let pid = std::fs::read_to_string(tmp.path().join(LOCK_FILE)).unwrap();
        assert_eq!(pid, format!("{}\n", std::process::id()));
        drop(lock);
    }
}
