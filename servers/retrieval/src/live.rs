//! Watching a workspace so the index follows the disk.
//!
//! [`watch`] starts a recursive `notify` watcher and a debouncing thread: events are
//! collected until [`DEBOUNCE`] passes without a new one (or [`MAX_BATCH_WAIT`] since
//! the first), then the callback receives the sorted, deduplicated repository-relative
//! paths that were created, modified or removed. Paths under `.git` and files the
//! [`FileFilter`] rejects are dropped; a directory that appears (moved in) is expanded
//! to its files; a path that no longer exists is passed on as is (it may have been an
//! indexed file or a directory of them: [`crate::index::RepoIndex::update_files`]
//! removes both).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use navbench_server_support::walk::{WalkOptions, walk_files};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::index::{CompiledFilter, FileFilter, IndexError};

/// Quiet period that ends a batch of changes.
pub const DEBOUNCE: Duration = Duration::from_millis(200);
/// Longest a batch waits under a continuous stream of events.
pub const MAX_BATCH_WAIT: Duration = Duration::from_secs(2);

/// Why a watcher could not start.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The root is not a directory.
    #[error("cannot watch '{}': not an existing directory", .0.display())]
    NotADirectory(PathBuf),
    /// A filter glob is invalid.
    #[error(transparent)]
    Filter(#[from] IndexError),
    /// The OS watcher failed (e.g. inotify limits: raise fs.inotify.max_user_watches).
    #[error("file watcher error: {0}")]
    Notify(#[from] notify::Error),
    /// The debouncing thread could not be spawned.
    #[error("cannot start the watcher thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A running watcher; dropping it stops watching (pending changes are still delivered).
pub struct Watcher {
    watcher: Option<RecommendedWatcher>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        // Dropping the notify watcher drops its event sender, which ends the thread.
        self.watcher.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Watches `root` recursively and calls `on_change` with debounced batches of changed
/// repository-relative paths (see the [module docs](self)).
pub fn watch(
    root: &Path,
    filter: FileFilter,
    on_change: impl Fn(Vec<String>) + Send + 'static,
) -> Result<Watcher, LiveError> {
    let root = root
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| LiveError::NotADirectory(root.to_path_buf()))?;
    let compiled = filter.compile()?;
    let (tx, rx) = mpsc::channel::<PathBuf>();
    let mut watcher =
        notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
            Ok(ev) => {
                if matches!(ev.kind, EventKind::Access(_)) {
                    return;
                }
                for p in ev.paths {
                    let _ = tx.send(p);
                }
            }
            Err(e) => tracing::warn!("file watcher: {e}"),
        })?;
    watcher.watch(&root, RecursiveMode::Recursive)?;
    let thread_root = root.clone();
    let thread = std::thread::Builder::new()
        .name("navbench-watch".into())
        .spawn(move || {
            loop {
                let Ok(first) = rx.recv() else { return };
                let mut batch = vec![first];
                let start = Instant::now();
                let mut closed = false;
                loop {
                    let left = MAX_BATCH_WAIT.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    match rx.recv_timeout(DEBOUNCE.min(left)) {
                        Ok(p) => batch.push(p),
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => {
                            closed = true;
                            break;
                        }
                    }
                }
                let paths = relevant(&thread_root, &compiled, batch);
                if !paths.is_empty() {
                    tracing::debug!(n = paths.len(), "workspace changed");
                    on_change(paths);
                }
                if closed {
                    return;
                }
            }
        })?;
    Ok(Watcher {
        watcher: Some(watcher),
        thread: Some(thread),
    })
}

/// Relative, filtered, sorted and deduplicated paths of a batch.
fn relevant(root: &Path, filter: &CompiledFilter, batch: Vec<PathBuf>) -> Vec<String> {
    let mut out = BTreeSet::new();
    for abs in batch {
        let Ok(rel) = abs.strip_prefix(root) else {
            continue;
        };
        let rel = rel
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/");
        if rel.is_empty() || rel.split('/').any(|c| c == ".git") {
            continue;
        }
        if abs.is_dir() {
            // A directory moved or created: its files (events for a fresh directory's
            // contents can race the watch being added).
            if let Ok(files) = walk_files(&abs, &WalkOptions::default()) {
                for f in files {
                    let r = format!("{rel}/{}", f.rel);
                    if filter.accepts(&r) {
                        out.insert(r);
                    }
                }
            }
        } else if !abs.exists() || filter.accepts(&rel) {
            out.insert(rel);
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::mpsc::Receiver;

    use super::*;

    fn wait_for(rx: &Receiver<Vec<String>>, want: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(batch) = rx.recv_timeout(Duration::from_millis(200)) {
                if batch.iter().any(|p| p == want) {
                    return batch;
                }
                seen.push(batch);
            }
        }
        panic!("no batch with {want}; saw {seen:?}");
    }

    #[test]
    fn reports_created_modified_and_removed_files_debounced() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("pkg")).unwrap();
        fs::write(dir.path().join("pkg/a.py"), "x = 1\n").unwrap();
        let (tx, rx) = mpsc::channel();
        let filter = FileFilter {
            include: vec![],
            exclude: vec!["skip/".into()],
        };
        let w = watch(dir.path(), filter, move |paths| {
            let _ = tx.send(paths);
        })
        .unwrap();
        // Several quick writes to one file arrive as one batch with one entry.
        for i in 0..5 {
            fs::write(dir.path().join("pkg/a.py"), format!("x = {i}\n")).unwrap();
        }
        fs::write(dir.path().join("notes.bin"), "ignored").unwrap();
        fs::create_dir_all(dir.path().join("skip")).unwrap();
        fs::write(dir.path().join("skip/s.py"), "ignored").unwrap();
        let batch = wait_for(&rx, "pkg/a.py");
        assert_eq!(batch.iter().filter(|p| *p == "pkg/a.py").count(), 1);
        assert!(
            !batch
                .iter()
                .any(|p| p == "notes.bin" || p.starts_with("skip/")),
            "{batch:?}"
        );

        fs::write(dir.path().join("pkg/b.md"), "# new\n").unwrap();
        wait_for(&rx, "pkg/b.md");
        fs::remove_file(dir.path().join("pkg/a.py")).unwrap();
        wait_for(&rx, "pkg/a.py");
        // A directory moved in is expanded to its files.
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(outside.path().join("sub")).unwrap();
        fs::write(outside.path().join("sub/c.py"), "y = 2\n").unwrap();
        if fs::rename(outside.path().join("sub"), dir.path().join("sub")).is_ok() {
            wait_for(&rx, "sub/c.py");
        }
        drop(w);
    }

    #[test]
    fn missing_root_is_an_error() {
        let err = watch(
            Path::new("/nonexistent/navbench"),
            FileFilter::default(),
            |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, LiveError::NotADirectory(_)));
    }
}
