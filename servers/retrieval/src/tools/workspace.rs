//! The `--workspace` served by `codebase_retrieval`: registered like any repository,
//! indexed in the background at start-up (reusing the persisted index and catching up
//! with the disk when it can), then kept current by a [`crate::live`] watcher.

use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use navbench_server_support::mcp::ToolOutput;
use navbench_server_support::timings::{Part, TimingsRecorder};

use super::{
    IndexRepositoryOutput, RetrievalTools, Shared, ToolError, WorkspaceState, current_files,
    head_commit_of, index_dir, lock, manifest_path, write,
};
use crate::index::{FileFilter, IndexStats, RepoIndex};
use crate::registry::{RepoRecord, RepoStatus, SourceKind, now_rfc3339};
use crate::source::{self, Manifest, SourceSpec};

/// The workspace's indexable files under the default filter (`None` when `root`
/// cannot be walked).
fn workspace_files(root: &Path) -> Option<Vec<String>> {
    let filter = FileFilter::default().compile().ok()?;
    let walked = navbench_server_support::walk::walk_files(
        root,
        &navbench_server_support::walk::WalkOptions::default(),
    )
    .ok()?;
    Some(
        walked
            .into_iter()
            .map(|f| f.rel)
            .filter(|rel| filter.accepts(rel))
            .collect(),
    )
}

impl RetrievalTools {
    /// Registers `root` as the workspace served by `codebase_retrieval`, indexes it
    /// in the background (reusing a persisted index when possible) and then watches it.
    /// Returns the workspace's repository id.
    pub fn start_workspace(&self, root: &Path) -> Result<String, ToolError> {
        let root = root.canonicalize().map_err(|e| {
            ToolError::Invalid(format!(
                "--workspace {}: {e}; pass an existing directory",
                root.display()
            ))
        })?;
        if !root.is_dir() {
            return Err(ToolError::Invalid(format!(
                "--workspace {} is not a directory",
                root.display()
            )));
        }
        let id = self.register_workspace(&root)?;
        lock(&self.shared.jobs).insert(id.clone());
        *lock(&self.shared.workspace) = Some(WorkspaceState {
            id: id.clone(),
            root: root.clone(),
            pending: Vec::new(),
            watcher: None,
            stats: None,
            timings: None,
        });
        // Watch first, so edits made while the index builds are not lost.
        self.watch_workspace(&root);
        let tools = self.clone();
        let job_id = id.clone();
        std::thread::Builder::new()
            .name("navbench-workspace-index".into())
            .spawn(move || {
                let timings = TimingsRecorder::default();
                let outcome = tools.index_workspace(&job_id, &root, &timings);
                // Stats first: a waiting index_repository reads them once the job ends.
                if let (Ok(stats), Some(ws)) = (&outcome, lock(&tools.shared.workspace).as_mut()) {
                    ws.stats = Some(stats.clone());
                    ws.timings = Some(timings.snapshot());
                }
                tools.finish_job(
                    &job_id,
                    outcome.as_ref().map(|_| ()).map_err(|e| e.to_string()),
                );
                match outcome {
                    Ok(stats) => tracing::info!(
                        files = stats.files,
                        chunks = stats.chunks,
                        embedded = stats.embedded,
                        elapsed_ms = stats.elapsed_ms,
                        "workspace indexed"
                    ),
                    Err(e) => tracing::error!(error = %e, "workspace indexing failed"),
                }
                // Apply edits that arrived while indexing.
                let pending = lock(&tools.shared.workspace)
                    .as_mut()
                    .map(|ws| std::mem::take(&mut ws.pending))
                    .unwrap_or_default();
                if !pending.is_empty() {
                    tools.apply_workspace_changes(pending);
                }
            })
            .map_err(|e| ToolError::Invalid(format!("cannot start the indexing thread: {e}")))?;
        Ok(id)
    }

    /// Records `root` as the workspace (keeping what an earlier run indexed) and makes
    /// a workspace of an earlier run an ordinary repository. Returns its id.
    pub(super) fn register_workspace(&self, root: &Path) -> Result<String, ToolError> {
        let source = root.to_string_lossy().into_owned();
        let name = source::display_name(&SourceSpec::Local(root.to_path_buf()));
        let mut record = RepoRecord::new(SourceKind::Local, source, None, root.to_path_buf(), name);
        record.workspace = true;
        let id = record.id.clone();
        {
            let mut reg = lock(&self.shared.registry);
            if let Some(old) = reg.get(&id) {
                record.last_indexed_at = old.last_indexed_at.clone();
                record.last_indexed_commit = old.last_indexed_commit.clone();
                record.files = old.files;
                record.chunks = old.chunks;
            }
            reg.upsert(record)?;
            // A workspace of an earlier run is an ordinary repository now.
            let stale: Vec<String> = reg
                .list()
                .into_iter()
                .filter(|r| r.workspace && r.id != id)
                .map(|r| r.id.clone())
                .collect();
            for other in stale {
                reg.update(&other, |r| r.workspace = false)?;
            }
        }
        Ok(id)
    }

    /// Starts the watcher that feeds workspace edits to [`Self::apply_workspace_changes`];
    /// without it (a warning is logged) the index does not follow edits.
    pub(super) fn watch_workspace(&self, root: &Path) {
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        match crate::live::watch(root, FileFilter::default(), move |changed| {
            if let Some(shared) = weak.upgrade() {
                RetrievalTools { shared }.apply_workspace_changes(changed);
            }
        }) {
            Ok(w) => {
                if let Some(ws) = lock(&self.shared.workspace).as_mut() {
                    ws.watcher = Some(w);
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "workspace watcher failed; the index will not follow edits")
            }
        }
    }

    /// Open the persisted workspace index (or, without one, seed it from the base of
    /// its repository: [`crate::bases`]) and catch up with the disk, or build it; then
    /// publish it as the repository's base.
    /// Each part's time is added to `timings` (an index reopened and brought up to
    /// date counts as text, its file check as fingerprint, its update as parse).
    pub(super) fn index_workspace(
        &self,
        id: &str,
        root: &Path,
        timings: &TimingsRecorder,
    ) -> Result<IndexStats, ToolError> {
        let data = &self.shared.settings.data_dir;
        let dir = index_dir(data, id, self.kind());
        let embedder = self.shared.embedder.as_ref();
        // One walk serves the seeding and the file check (the workspace's filter is
        // the default one, as the index's).
        let files = timings.time(Part::Fingerprint, || workspace_files(root));
        let seeded = timings.time(Part::Fingerprint, || {
            files.as_ref().and_then(|f| self.seed_workspace(id, f))
        });
        let opened = timings.time(Part::Text, || RepoIndex::open(&dir, embedder).ok());
        let reopened = opened.and_then(|mut index| {
            let (changes, manifest) = timings.time(Part::Fingerprint, || {
                let manifest = Manifest::load(&manifest_path(data, id, self.kind()))?;
                let current = match &files {
                    Some(f) => f.clone(),
                    None => current_files(root, &index).ok()?,
                };
                let refs: Vec<&str> = current.iter().map(String::as_str).collect();
                Some(manifest.refresh(root, &refs))
            })?;
            let stats = if changes.is_empty() {
                IndexStats {
                    files: 0,
                    chunks: index.chunks().len(),
                    ..IndexStats::default()
                }
            } else {
                timings
                    .time(Part::Parse, || {
                        index.update_files(root, &changes.all(), embedder)
                    })
                    .ok()?
            };
            Some((index, stats, manifest))
        });
        let (index, stats, manifest) = match reopened {
            Some((index, stats, manifest)) => (index, stats, Some(manifest)),
            None => {
                let (index, stats) =
                    RepoIndex::build_timed(root, &FileFilter::default(), embedder, &dir, timings)?;
                (index, stats, None)
            }
        };
        timings.time(Part::Write, || {
            let started = Instant::now();
            self.install_index(id, root, index, head_commit_of(root), manifest)?;
            let installed = started.elapsed();
            self.publish_workspace(id, seeded.as_deref());
            tracing::debug!(
                install_ms = installed.as_millis() as u64,
                publish_ms = (started.elapsed() - installed).as_millis() as u64,
                "workspace index installed"
            );
            Ok::<_, ToolError>(())
        })?;
        tracing::debug!(timings = ?timings.snapshot(), "workspace init parts");
        Ok(stats)
    }

    /// A watcher batch: re-index these workspace paths (or queue them while indexing).
    pub(super) fn apply_workspace_changes(&self, changed: Vec<String>) {
        let (id, root) = {
            let mut ws = lock(&self.shared.workspace);
            let Some(ws) = ws.as_mut() else { return };
            if lock(&self.shared.jobs).contains(&ws.id) {
                ws.pending.extend(changed);
                return;
            }
            (ws.id.clone(), ws.root.clone())
        };
        let Some(index) = lock(&self.shared.indexes).get(&id).cloned() else {
            return;
        };
        let started = Instant::now();
        let outcome = {
            let mut index = write(&index);
            index
                .update_files(&root, &changed, self.shared.embedder.as_ref())
                .map(|stats| {
                    let files = index.files();
                    let mut manifest = Manifest::load(&manifest_path(
                        &self.shared.settings.data_dir,
                        &id,
                        self.kind(),
                    ))
                    .unwrap_or_default();
                    for rel in &changed {
                        manifest.files.remove(rel);
                    }
                    let fresh = Manifest::scan(
                        &root,
                        &changed
                            .iter()
                            .map(String::as_str)
                            .filter(|c| files.binary_search(c).is_ok())
                            .collect::<Vec<_>>(),
                    );
                    manifest.files.extend(fresh.files);
                    if let Err(e) = manifest.save(&manifest_path(
                        &self.shared.settings.data_dir,
                        &id,
                        self.kind(),
                    )) {
                        tracing::warn!(error = %e, "manifest not saved");
                    }
                    (stats, files.len(), index.chunks().len())
                })
        };
        match outcome {
            Ok((stats, files, chunks)) => {
                tracing::info!(
                    changed = changed.len(),
                    embedded = stats.embedded,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "workspace updated"
                );
                let _ = lock(&self.shared.registry).update(&id, |r| {
                    r.files = files;
                    r.chunks = chunks;
                    r.last_indexed_at = Some(now_rfc3339());
                });
            }
            Err(e) => tracing::error!(error = %e, "live update of the workspace failed"),
        }
    }

    /// `index_repository` on the served `--workspace`: it is indexed at start-up and
    /// kept live by the watcher, so instead of a second build the call waits (up to
    /// `wait` seconds) for the start-up indexing and answers with what it did. `None`
    /// when `id` is not the workspace.
    pub(super) fn workspace_index_answer(
        &self,
        id: &str,
        wait: usize,
    ) -> Result<Option<ToolOutput<IndexRepositoryOutput>>, ToolError> {
        if lock(&self.shared.workspace)
            .as_ref()
            .is_none_or(|w| w.id != id)
        {
            return Ok(None);
        }
        let started = Instant::now();
        let deadline = started + Duration::from_secs(wait as u64);
        while lock(&self.shared.jobs).contains(id) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let record = self.resolve(id)?;
        if record.status == RepoStatus::Error {
            return Err(ToolError::NotReady(format!(
                "indexing the workspace {} failed: {}. Restart the server or call update_repository('{id}').",
                record.name,
                record.error.as_deref().unwrap_or("unknown error")
            )));
        }
        let stats = lock(&self.shared.workspace)
            .as_ref()
            .and_then(|w| w.stats.clone())
            .unwrap_or_default();
        let ready = record.status == RepoStatus::Ready;
        let message = if ready {
            format!(
                "{} is this server's workspace: indexed at start-up ({} files, {} chunks; {} embedded, {} from the cache) and kept live as files change. Search it with codebase_retrieval or search_code(repo_id='{id}').",
                record.name, record.files, record.chunks, stats.embedded, stats.reused
            )
        } else {
            format!(
                "{} is this server's workspace and is still being indexed (waited {} s); call get_repository_info('{id}') until status is 'ready'.",
                record.name,
                started.elapsed().as_secs()
            )
        };
        let out = IndexRepositoryOutput {
            success: ready,
            repo_id: id.to_string(),
            repo_name: record.name.clone(),
            status: record.status,
            files_processed: record.files,
            chunks_indexed: record.chunks,
            chunks_embedded: stats.embedded,
            commit: record.last_indexed_commit.clone(),
            message: message.clone(),
        };
        // Times go in `_meta` only (see `IndexRepositoryOutput`).
        let meta = serde_json::json!({
            "elapsed_ms": stats.elapsed_ms,
            "timings_ms": lock(&self.shared.workspace)
                .as_ref()
                .and_then(|w| w.timings)
                .unwrap_or_default(),
        });
        Ok(Some(
            ToolOutput::ok(format!("{message}\nrepo_id: {id}"), out).with_meta(meta),
        ))
    }
}
