//! Indexing jobs: `index_repository` and `update_repository` run on their own thread;
//! the tool waits up to `wait_seconds` for the job and otherwise answers that the
//! repository is `indexing` (the registry says so until the job ends).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, mpsc};
use std::time::Duration;

use navbench_server_support::mcp::ToolOutput;
use navbench_server_support::timings::{InitTimings, Part, TimingsRecorder};

use super::args::{branch_arg, int_arg, patterns_arg, text_arg};
use super::{
    DEFAULT_WAIT_SECS, IndexRepositoryArgs, IndexRepositoryOutput, LoadedIndex, MAX_WAIT_SECS,
    RetrievalTools, ToolError, UpdateRepositoryArgs, UpdateRepositoryOutput, checkout_dir,
    current_files, filter_of, head_commit_of, index_dir, lock, manifest_path, read, write,
};
use crate::index::{IndexStats, RepoIndex};
use crate::registry::{RepoRecord, RepoStatus, SourceKind, now_rfc3339};
use crate::source::{self, Changes, Manifest, SourceSpec};

/// What a finished job did.
struct JobResult {
    stats: IndexStats,
    commit: Option<String>,
    method: String,
    changes: Changes,
    from_commit: Option<String>,
    /// Where a full build's time went (zeros for an update).
    timings: InitTimings,
}

impl RetrievalTools {
    /// Stores a fresh index: manifest (`manifest` when the caller has just stamped
    /// the files, else a scan of the index's files), registry stats, loaded map.
    pub(super) fn install_index(
        &self,
        id: &str,
        root: &Path,
        index: RepoIndex,
        commit: Option<String>,
        manifest: Option<Manifest>,
    ) -> Result<(), ToolError> {
        let data = &self.shared.settings.data_dir;
        let files = index.files();
        let manifest = manifest.unwrap_or_else(|| Manifest::scan(root, &files));
        manifest.save(&manifest_path(data, id, self.kind()))?;
        let (n_files, n_chunks) = (files.len(), index.chunks().len());
        drop(files);
        lock(&self.shared.indexes).insert(id.to_string(), Arc::new(RwLock::new(index)));
        lock(&self.shared.registry).update(id, |r| {
            r.files = n_files;
            r.chunks = n_chunks;
            r.last_indexed_commit = commit;
            r.last_indexed_at = Some(now_rfc3339());
        })?;
        Ok(())
    }

    /// Marks a job finished: `ready`, or `error` with the message.
    pub(super) fn finish_job(&self, id: &str, outcome: Result<(), String>) {
        lock(&self.shared.jobs).remove(id);
        let result = lock(&self.shared.registry).update(id, |r| match outcome {
            Ok(()) => {
                r.status = RepoStatus::Ready;
                r.error = None;
            }
            Err(e) => {
                r.status = RepoStatus::Error;
                r.error = Some(format!(
                    "{e} (fix the cause, then call update_repository or index_repository again)"
                ));
            }
        });
        if let Err(e) = result {
            tracing::error!(error = %e, "could not record the end of a job");
        }
    }
    // Repository tools

    /// `index_repository`: register and index a local directory or git URL.
    pub fn index_repository(
        &self,
        args: &IndexRepositoryArgs,
    ) -> Result<ToolOutput<IndexRepositoryOutput>, ToolError> {
        let given = text_arg(
            "url_or_path",
            &args.url_or_path,
            2048,
            "a local directory or a git URL such as https://github.com/owner/repo",
        )?;
        let branch = branch_arg(args.branch.clone())?;
        let include = patterns_arg("include_patterns", args.include_patterns.clone())?;
        let exclude = patterns_arg("exclude_patterns", args.exclude_patterns.clone())?;
        let wait = int_arg(
            "wait_seconds",
            args.wait_seconds,
            DEFAULT_WAIT_SECS,
            0,
            MAX_WAIT_SECS,
        )?;
        let mut record = self.new_record(given, branch, include, exclude)?;
        let id = record.id.clone();
        if record.include.is_empty()
            && record.exclude.is_empty()
            && let Some(out) = self.workspace_index_answer(&id, wait)?
        {
            return Ok(out);
        }
        {
            let mut jobs = lock(&self.shared.jobs);
            if jobs.contains(&id) {
                return Err(ToolError::NotReady(format!(
                    "repository {id} ({}) is already being indexed; call get_repository_info('{id}') to follow it",
                    record.name
                )));
            }
            let mut reg = lock(&self.shared.registry);
            if let Some(old) = reg.get(&id) {
                record.workspace = old.workspace;
                record.last_indexed_commit = old.last_indexed_commit.clone();
            }
            reg.upsert(record.clone())?;
            jobs.insert(id.clone());
        }
        lock(&self.shared.indexes).remove(&id);
        let tools = self.clone();
        let job_record = record.clone();
        let rx = self.spawn_job(&id, move || tools.full_index(&job_record))?;
        let done = rx.recv_timeout(Duration::from_secs(wait as u64));
        let record = self.resolve(&id)?;
        index_answer(&id, &record, done)
    }

    /// The registry record `index_repository` creates for `given` (validated
    /// arguments); git sources are cloned under the data directory.
    pub(super) fn new_record(
        &self,
        given: &str,
        branch: Option<String>,
        include: Vec<String>,
        exclude: Vec<String>,
    ) -> Result<RepoRecord, ToolError> {
        let spec = source::parse_source(given)?;
        self.check_source_allowed(&spec)?;
        let (kind, source, local_path) = match &spec {
            SourceSpec::Local(path) => {
                if branch.is_some() {
                    return Err(ToolError::Invalid(
                    "branch applies to git URLs only; a local directory is indexed as it is on disk (check out the branch there first)"
                        .to_string(),
                ));
                }
                (
                    SourceKind::Local,
                    path.to_string_lossy().into_owned(),
                    path.clone(),
                )
            }
            SourceSpec::Git(url) => (SourceKind::Git, url.clone(), PathBuf::new()),
        };
        let mut record = RepoRecord::new(
            kind,
            source,
            branch,
            local_path,
            source::display_name(&spec),
        );
        if kind == SourceKind::Git {
            record.local_path = checkout_dir(&self.shared.settings.data_dir, &record.id);
        }
        record.include = include;
        record.exclude = exclude;
        Ok(record)
    }

    /// Runs `job` on its own thread; the job's end updates the registry.
    fn spawn_job(
        &self,
        id: &str,
        job: impl FnOnce() -> Result<JobResult, ToolError> + Send + 'static,
    ) -> Result<mpsc::Receiver<Result<JobResult, String>>, ToolError> {
        let (tx, rx) = mpsc::channel();
        let tools = self.clone();
        let job_id = id.to_string();
        let spawned = std::thread::Builder::new()
            .name("navbench-index-job".into())
            .spawn(move || {
                let outcome = job().map_err(|e| e.to_string());
                if let Err(e) = &outcome {
                    tracing::error!(repo = %job_id, error = %e, "indexing job failed");
                }
                tools.finish_job(&job_id, outcome.as_ref().map(|_| ()).map_err(Clone::clone));
                let _ = tx.send(outcome);
            });
        if let Err(e) = spawned {
            self.finish_job(id, Err(format!("cannot start the indexing thread: {e}")));
            return Err(ToolError::Invalid(format!(
                "cannot start the indexing thread: {e}"
            )));
        }
        Ok(rx)
    }

    /// Clone/fetch if needed, build the index, install it.
    fn full_index(&self, record: &RepoRecord) -> Result<JobResult, ToolError> {
        let data = &self.shared.settings.data_dir;
        let commit = match record.kind {
            SourceKind::Git => Some(source::clone_or_fetch(
                &record.source,
                record.branch.as_deref(),
                &record.local_path,
            )?),
            SourceKind::Local => head_commit_of(&record.local_path),
        };
        let timings = TimingsRecorder::default();
        let (index, stats) = RepoIndex::build_timed(
            &record.local_path,
            &filter_of(record),
            self.shared.embedder.as_ref(),
            &index_dir(data, &record.id, self.kind()),
            &timings,
        )?;
        timings.time(Part::Write, || {
            self.install_index(&record.id, &record.local_path, index, commit.clone(), None)
        })?;
        Ok(JobResult {
            stats,
            commit,
            method: "full rebuild".to_string(),
            changes: Changes::default(),
            from_commit: record.last_indexed_commit.clone(),
            timings: timings.snapshot(),
        })
    }

    /// Incremental update: git diff for clones, a file check for local directories.
    fn incremental_update(&self, record: &RepoRecord) -> Result<JobResult, ToolError> {
        let data = &self.shared.settings.data_dir;
        let index = match self.ready_index(&RepoRecord {
            status: RepoStatus::Ready,
            ..record.clone()
        }) {
            Ok(index) => index,
            Err(_) => return self.full_index(record),
        };
        let root = &record.local_path;
        let (changes, commit, method) = match record.kind {
            SourceKind::Git => {
                let new = source::clone_or_fetch(&record.source, record.branch.as_deref(), root)?;
                match &record.last_indexed_commit {
                    Some(old) if old == &new => (Changes::default(), Some(new), "git diff"),
                    Some(old) => match source::diff_commits(root, old, &new) {
                        Ok(changes) => (changes, Some(new), "git diff"),
                        Err(e) => {
                            tracing::warn!(error = %e, "git diff failed; falling back to a file check");
                            (self.file_check(record, &index)?, Some(new), "file check")
                        }
                    },
                    None => (self.file_check(record, &index)?, Some(new), "file check"),
                }
            }
            SourceKind::Local => (
                self.file_check(record, &index)?,
                head_commit_of(root),
                "file check",
            ),
        };
        let mut stats = IndexStats::default();
        if !changes.is_empty() {
            let mut guard = write(&index);
            stats = guard.update_files(root, &changes.all(), self.shared.embedder.as_ref())?;
        }
        // Refresh the manifest and the registry's numbers.
        let (n_files, n_chunks) = {
            let guard = read(&index);
            let files = guard.files();
            Manifest::scan(root, &files).save(&manifest_path(data, &record.id, self.kind()))?;
            (files.len(), guard.chunks().len())
        };
        stats.chunks = n_chunks;
        lock(&self.shared.registry).update(&record.id, |r| {
            r.files = n_files;
            r.chunks = n_chunks;
            r.last_indexed_commit = commit.clone();
            r.last_indexed_at = Some(now_rfc3339());
        })?;
        Ok(JobResult {
            stats,
            commit,
            method: method.to_string(),
            changes,
            from_commit: record.last_indexed_commit.clone(),
            timings: InitTimings::default(),
        })
    }

    /// What changed on disk since the manifest was written.
    pub(super) fn file_check(
        &self,
        record: &RepoRecord,
        index: &LoadedIndex,
    ) -> Result<Changes, ToolError> {
        let data = &self.shared.settings.data_dir;
        let guard = read(index);
        let current = current_files(&record.local_path, &guard)?;
        let refs: Vec<&str> = current.iter().map(String::as_str).collect();
        let manifest = Manifest::load(&manifest_path(data, &record.id, self.kind()))
            .unwrap_or_else(|| {
                // No manifest: treat every indexed file as possibly changed.
                Manifest::default()
            });
        let mut changes = manifest.changes(&record.local_path, &refs);
        if manifest.files.is_empty() {
            // Files indexed before but gone now.
            for f in guard.files() {
                if !current.iter().any(|c| c == f) {
                    changes.deleted.insert(f.to_string());
                }
            }
        }
        Ok(changes)
    }

    /// `update_repository`.
    pub fn update_repository(
        &self,
        args: &UpdateRepositoryArgs,
    ) -> Result<ToolOutput<UpdateRepositoryOutput>, ToolError> {
        let record = self.resolve(&args.repo_id)?;
        let wait = int_arg(
            "wait_seconds",
            args.wait_seconds,
            DEFAULT_WAIT_SECS,
            0,
            MAX_WAIT_SECS,
        )?;
        let id = record.id.clone();
        if record.workspace
            && lock(&self.shared.workspace)
                .as_ref()
                .is_some_and(|w| w.id == id)
        {
            return Err(ToolError::Invalid(format!(
                "{id} is the live workspace: it is re-indexed automatically as files change, so it needs no update_repository"
            )));
        }
        {
            let mut jobs = lock(&self.shared.jobs);
            if jobs.contains(&id) {
                return Err(ToolError::NotReady(format!(
                    "repository {id} ({}) is already being indexed; call get_repository_info('{id}') to follow it",
                    record.name
                )));
            }
            jobs.insert(id.clone());
            lock(&self.shared.registry).update(&id, |r| {
                r.status = RepoStatus::Indexing;
                r.error = None;
            })?;
        }
        let tools = self.clone();
        let job_record = record.clone();
        let rx = self.spawn_job(&id, move || tools.incremental_update(&job_record))?;
        update_answer(&record, rx.recv_timeout(Duration::from_secs(wait as u64)))
    }
}

/// `index_repository`'s answer once the job is done, failed, or still running after
/// the wait (`done` is what the job's channel gave).
fn index_answer(
    id: &str,
    record: &RepoRecord,
    done: Result<Result<JobResult, String>, mpsc::RecvTimeoutError>,
) -> Result<ToolOutput<IndexRepositoryOutput>, ToolError> {
    match done {
        Ok(Ok(result)) => {
            let out = IndexRepositoryOutput {
                success: true,
                repo_id: id.to_string(),
                repo_name: record.name.clone(),
                status: record.status,
                files_processed: result.stats.files,
                chunks_indexed: result.stats.chunks,
                chunks_embedded: result.stats.embedded,
                commit: result.commit.clone(),
                message: format!(
                    "Indexed {} ({} files, {} chunks; {} embedded, {} from the cache). Search it with search_code(repo_id='{}').",
                    record.name,
                    result.stats.files,
                    result.stats.chunks,
                    result.stats.embedded,
                    result.stats.reused,
                    id
                ),
            };
            let text = format!(
                "{}\nrepo_id: {id}\nstatus: ready\ncommit: {}",
                out.message,
                out.commit.as_deref().unwrap_or("-")
            );
            let meta = serde_json::json!({
                "elapsed_ms": result.stats.elapsed_ms,
                "timings_ms": result.timings,
            });
            Ok(ToolOutput::ok(text, out).with_meta(meta))
        }
        Ok(Err(message)) => Err(ToolError::NotReady(format!(
            "indexing {} failed: {message}. The repository is registered as {id} with status 'error'.",
            record.name
        ))),
        Err(_) => {
            let out = IndexRepositoryOutput {
                success: false,
                repo_id: id.to_string(),
                repo_name: record.name.clone(),
                status: RepoStatus::Indexing,
                files_processed: 0,
                chunks_indexed: 0,
                chunks_embedded: 0,
                commit: None,
                message: format!(
                    "Indexing {} continues in the background (repo_id {id}). Call get_repository_info('{id}') until status is 'ready', then search_code.",
                    record.name
                ),
            };
            Ok(ToolOutput::ok(out.message.clone(), out))
        }
    }
}

/// `update_repository`'s answer once the job is done, failed, or still running after
/// the wait.
fn update_answer(
    record: &RepoRecord,
    done: Result<Result<JobResult, String>, mpsc::RecvTimeoutError>,
) -> Result<ToolOutput<UpdateRepositoryOutput>, ToolError> {
    let id = &record.id;
    match done {
        Ok(Ok(r)) => {
            let out = UpdateRepositoryOutput {
                success: true,
                repo_id: id.clone(),
                status: RepoStatus::Ready,
                method: r.method.clone(),
                from_commit: r.from_commit.clone(),
                to_commit: r.commit.clone(),
                files_changed: r.changes.all().len(),
                files_added: r.changes.added.len(),
                files_modified: r.changes.modified.len(),
                files_deleted: r.changes.deleted.len(),
                chunks_embedded: r.stats.embedded,
                total_chunks: r.stats.chunks,
                message: if r.method == "full rebuild" {
                    format!(
                        "Rebuilt {} from scratch (its index could not be reused).",
                        record.name
                    )
                } else if r.changes.is_empty() {
                    format!("{} is already up to date.", record.name)
                } else {
                    format!(
                        "Updated {} by {}: {} added, {} modified, {} deleted; {} chunks embedded.",
                        record.name,
                        r.method,
                        r.changes.added.len(),
                        r.changes.modified.len(),
                        r.changes.deleted.len(),
                        r.stats.embedded
                    )
                },
            };
            let mut text = out.message.clone();
            for (label, set) in [
                ("added", &r.changes.added),
                ("modified", &r.changes.modified),
                ("deleted", &r.changes.deleted),
            ] {
                if !set.is_empty() {
                    let shown: Vec<&str> = set.iter().take(50).map(String::as_str).collect();
                    text.push_str(&format!("\n{label}: {}", shown.join(", ")));
                }
            }
            let meta = serde_json::json!({ "elapsed_ms": r.stats.elapsed_ms });
            Ok(ToolOutput::ok(text, out).with_meta(meta))
        }
        Ok(Err(message)) => Err(ToolError::NotReady(format!(
            "updating {} failed: {message}",
            record.name
        ))),
        Err(_) => {
            let out = UpdateRepositoryOutput {
                success: false,
                repo_id: id.clone(),
                status: RepoStatus::Indexing,
                method: String::new(),
                from_commit: record.last_indexed_commit.clone(),
                to_commit: None,
                files_changed: 0,
                files_added: 0,
                files_modified: 0,
                files_deleted: 0,
                chunks_embedded: 0,
                total_chunks: record.chunks,
                message: format!(
                    "The update of {} continues in the background; call get_repository_info('{id}') until status is 'ready'.",
                    record.name
                ),
            };
            Ok(ToolOutput::ok(out.message.clone(), out))
        }
    }
}
