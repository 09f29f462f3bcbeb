//! Progress of the index builds running in this process, so a long build is never
//! silent: [`RepoIndex::build`](super::RepoIndex::build) registers an
//! [`IndexProgress`] under its index directory for as long as it runs ([`Tracker`]),
//! logs the embedding rate and ETA to stderr, and `get_repository_info` and the
//! `index_repository` progress notifications read [`snapshot`] / [`active`].
//!
//! ```
//! use navbench_retrieval::index::progress::{Tracker, snapshot};
//! let dir = std::path::Path::new("/tmp/some-index");
//! {
//!     let t = Tracker::start(dir);
//!     t.progress().set_stage("embedding");
//!     t.progress().set_total(100);
//!     t.progress().add_done(25);
//!     let s = snapshot(dir).unwrap();
//!     assert_eq!((s.chunks_embedded, s.chunks_to_embed), (25, 100));
//! }
//! assert!(snapshot(dir).is_none()); // gone with the build
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How far one build is. Cheap to update from the embedding loop.
#[derive(Debug)]
pub struct IndexProgress {
    started: Instant,
    stage: Mutex<&'static str>,
    /// When the embedding stage started (the rate is measured from there).
    embedding_started: Mutex<Option<Instant>>,
    total: AtomicUsize,
    done: AtomicUsize,
}

impl Default for IndexProgress {
    fn default() -> Self {
        IndexProgress {
            started: Instant::now(),
            stage: Mutex::new("walking"),
            embedding_started: Mutex::new(None),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
        }
    }
}

/// What `get_repository_info` says of a build in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgressSnapshot {
    /// walking, chunking, embedding, bm25 or saving.
    pub stage: String,
    /// Chunks embedded so far by this build.
    pub chunks_embedded: usize,
    /// Chunks this build must embed (those not in the embedding cache).
    pub chunks_to_embed: usize,
    /// Embedding rate so far (chunks per second).
    pub chunks_per_sec: f64,
    /// Seconds left at that rate (absent before the first chunks are done).
    pub eta_secs: Option<f64>,
    /// Seconds since the build started.
    pub elapsed_secs: f64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl IndexProgress {
    /// Enters a stage (embedding starts the rate clock).
    pub fn set_stage(&self, stage: &'static str) {
        *lock(&self.stage) = stage;
        if stage == "embedding" {
            lock(&self.embedding_started).get_or_insert_with(Instant::now);
        }
    }

    /// Sets how many chunks must be embedded.
    pub fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
    }

    /// Counts `n` more chunks embedded.
    pub fn add_done(&self, n: usize) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// The current state, with rate and ETA.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let done = self.done.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        let secs = lock(&self.embedding_started).map_or(0.0, |t| t.elapsed().as_secs_f64());
        let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
        let eta = (rate > 0.0).then(|| total.saturating_sub(done) as f64 / rate);
        ProgressSnapshot {
            stage: lock(&self.stage).to_string(),
            chunks_embedded: done,
            chunks_to_embed: total,
            chunks_per_sec: rate,
            eta_secs: eta,
            elapsed_secs: self.started.elapsed().as_secs_f64(),
        }
    }
}

impl ProgressSnapshot {
    /// Whether the build has chunks to embed, the only work worth a progress
    /// notification. A warm index (every chunk in the embedding cache) and a build still
    /// walking or chunking, its total not yet known, have none: reporting them gave a
    /// client a `chunking: 0/0 chunks embedded` line for every warm tree, which says
    /// nothing but noise in a piped run's log.
    pub fn has_work(&self) -> bool {
        self.chunks_to_embed > 0
    }

    /// One line for logs and progress notifications.
    pub fn line(&self) -> String {
        let eta = self
            .eta_secs
            .map_or(String::new(), |s| format!(", ETA {s:.0} s"));
        format!(
            "{}: {}/{} chunks embedded, {:.1} chunks/s{eta}, {:.0} s so far",
            self.stage,
            self.chunks_embedded,
            self.chunks_to_embed,
            self.chunks_per_sec,
            self.elapsed_secs
        )
    }
}

type Builds = Mutex<HashMap<PathBuf, Arc<IndexProgress>>>;

fn builds() -> &'static Builds {
    static BUILDS: OnceLock<Builds> = OnceLock::new();
    BUILDS.get_or_init(Builds::default)
}

/// Registers a build's progress under its index directory for as long as it lives.
#[derive(Debug)]
pub struct Tracker {
    dir: PathBuf,
    progress: Arc<IndexProgress>,
}

impl Tracker {
    /// Starts tracking the build of the index in `dir`.
    pub fn start(dir: &Path) -> Tracker {
        let progress = Arc::new(IndexProgress::default());
        lock(builds()).insert(dir.to_path_buf(), Arc::clone(&progress));
        Tracker {
            dir: dir.to_path_buf(),
            progress,
        }
    }

    /// The tracked progress.
    pub fn progress(&self) -> &IndexProgress {
        &self.progress
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        let mut b = lock(builds());
        if b.get(&self.dir)
            .is_some_and(|p| Arc::ptr_eq(p, &self.progress))
        {
            b.remove(&self.dir);
        }
    }
}

/// The progress of the build of the index in `dir`, if one is running.
pub fn snapshot(dir: &Path) -> Option<ProgressSnapshot> {
    lock(builds()).get(dir).map(|p| p.snapshot())
}

/// Every build running in this process (index directory, progress).
pub fn active() -> Vec<(PathBuf, ProgressSnapshot)> {
    let mut v: Vec<(PathBuf, ProgressSnapshot)> = lock(builds())
        .iter()
        .map(|(d, p)| (d.clone(), p.snapshot()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_eta_follow_the_embedded_chunks() {
        let p = IndexProgress::default();
        assert_eq!(p.snapshot().eta_secs, None);
        p.set_stage("embedding");
        p.set_total(10);
        std::thread::sleep(std::time::Duration::from_millis(20));
        p.add_done(5);
        let s = p.snapshot();
        assert!(s.chunks_per_sec > 0.0);
        let eta = s.eta_secs.unwrap_or(-1.0);
        assert!(eta > 0.0, "{s:?}");
        assert!(s.line().contains("5/10 chunks"), "{}", s.line());
    }

    #[test]
    fn only_builds_with_chunks_to_embed_have_work_to_report() {
        let p = IndexProgress::default();
        p.set_stage("chunking");
        assert!(
            !p.snapshot().has_work(),
            "walking or chunking: no total yet"
        );
        p.set_stage("embedding");
        p.set_total(0);
        assert!(!p.snapshot().has_work(), "a warm index embeds nothing");
        p.set_total(3);
        assert!(p.snapshot().has_work());
        p.add_done(3);
        p.set_stage("saving");
        assert!(
            p.snapshot().has_work(),
            "a build that embedded stays worth showing"
        );
    }

    #[test]
    fn a_replaced_tracker_does_not_unregister_its_successor() {
        let dir = Path::new("/nonexistent/progress-test");
        let a = Tracker::start(dir);
        let b = Tracker::start(dir);
        b.progress().set_total(3);
        drop(a);
        assert_eq!(snapshot(dir).map(|s| s.chunks_to_embed), Some(3));
        drop(b);
        assert!(snapshot(dir).is_none());
    }
}
