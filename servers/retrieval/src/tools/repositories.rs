//! Repository management: `list_repositories`, `get_repository_info` and
//! `delete_repository`.

use navbench_server_support::mcp::ToolOutput;

use super::{
    DeleteRepositoryOutput, ListRepositoriesOutput, RepoIdArgs, RepositoryInfoOutput,
    RepositorySummary, RetrievalTools, ToolError, index_dir, lock, read,
};
use crate::registry::{RepoRecord, RepoStatus, SourceKind, repo_dir};

/// Most indexed files listed by `get_repository_info`.
const MAX_LISTED_FILES: usize = 2000;

fn summary(r: &RepoRecord) -> RepositorySummary {
    RepositorySummary {
        repo_id: r.id.clone(),
        name: r.name.clone(),
        url: r.source.clone(),
        branch: r.branch.clone().unwrap_or_default(),
        kind: r.kind,
        chunk_count: r.chunks,
        file_count: r.files,
        status: r.status,
        indexed: r.last_indexed_at.is_some(),
        error: r.error.clone(),
        workspace: r.workspace,
    }
}

impl RetrievalTools {
    /// `list_repositories`.
    pub fn list_repositories(&self) -> Result<ToolOutput<ListRepositoriesOutput>, ToolError> {
        // When each was indexed is a wall-clock value: `_meta` only.
        let (repositories, indexed_at) = {
            let registry = lock(&self.shared.registry);
            let records = registry.list();
            let at: serde_json::Map<String, serde_json::Value> = records
                .iter()
                .filter_map(|r| Some((r.id.clone(), r.last_indexed_at.clone()?.into())))
                .collect();
            let summaries: Vec<RepositorySummary> = records.into_iter().map(summary).collect();
            (summaries, at)
        };
        let mut text = if repositories.is_empty() {
            "No repositories are indexed. Call index_repository with a local path or git URL."
                .to_string()
        } else {
            format!("{} repositories:", repositories.len())
        };
        for r in &repositories {
            text.push_str(&format!(
                "\n- {} {} [{}] {} chunks, {} files{}",
                r.repo_id,
                r.name,
                r.status.as_str(),
                r.chunk_count,
                r.file_count,
                if r.workspace { " (workspace)" } else { "" }
            ));
            if let Some(e) = &r.error {
                text.push_str(&format!("\n  error: {e}"));
            }
        }
        let count = repositories.len();
        Ok(ToolOutput::ok(
            text,
            ListRepositoriesOutput {
                repositories,
                count,
            },
        )
        .with_meta(serde_json::json!({ "indexed_at": indexed_at })))
    }

    /// `get_repository_info`.
    pub fn get_repository_info(
        &self,
        args: &RepoIdArgs,
    ) -> Result<ToolOutput<RepositoryInfoOutput>, ToolError> {
        let out = self.repository_info(&args.repo_id)?;
        // When it was indexed is a wall-clock value: `_meta` only.
        let indexed_at = self
            .resolve(&out.repo_id)
            .ok()
            .and_then(|r| r.last_indexed_at);
        let mut text = format!(
            "{} ({})\nrepo_id: {}\nstatus: {}\nsource: {}{}\nlocal path: {}\nfiles: {}, chunks: {}\nindexed: {}\nlast commit: {}",
            out.name,
            match out.kind {
                SourceKind::Local => "local",
                SourceKind::Git => "git",
            },
            out.repo_id,
            out.status.as_str(),
            out.url,
            if out.branch.is_empty() {
                String::new()
            } else {
                format!(" (branch {})", out.branch)
            },
            out.local_path,
            out.file_count,
            out.chunk_count,
            // When is `_meta`'s `indexed_at`: neither the text nor the structured
            // result holds a wall-clock value, so a recorded agent run replays.
            if out.indexed { "yes" } else { "never" },
            out.last_commit.as_deref().unwrap_or("-"),
        );
        if let Some(e) = &out.error_message {
            text.push_str(&format!("\nerror: {e}"));
        }
        if let Some(p) = &out.progress {
            text.push_str(&format!("\nprogress: {}", p.line()));
        }
        if !out.indexed_files.is_empty() {
            text.push_str("\nindexed files:");
            for f in out.indexed_files.iter().take(200) {
                text.push_str(&format!("\n  {f}"));
            }
            let more = out.indexed_files.len().saturating_sub(200) + out.indexed_files_truncated;
            if more > 0 {
                text.push_str(&format!(
                    "\n  ... {more} more (see structuredContent or code:// resources)"
                ));
            }
        }
        Ok(ToolOutput::ok(text, out).with_meta(serde_json::json!({ "indexed_at": indexed_at })))
    }

    pub(super) fn repository_info(&self, repo_id: &str) -> Result<RepositoryInfoOutput, ToolError> {
        let r = self.resolve(repo_id)?;
        let files: Vec<String> = if r.status == RepoStatus::Ready {
            self.ready_index(&r)
                .map(|i| read(&i).files().into_iter().map(str::to_string).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let truncated = files.len().saturating_sub(MAX_LISTED_FILES);
        let r = self.resolve(&r.id)?; // ready_index may have changed the status
        Ok(RepositoryInfoOutput {
            repo_id: r.id.clone(),
            name: r.name.clone(),
            url: r.source.clone(),
            branch: r.branch.clone().unwrap_or_default(),
            kind: r.kind,
            local_path: r.local_path.to_string_lossy().into_owned(),
            chunk_count: r.chunks,
            file_count: r.files,
            status: r.status,
            indexed: r.last_indexed_at.is_some(),
            indexed_files: files.into_iter().take(MAX_LISTED_FILES).collect(),
            indexed_files_truncated: truncated,
            last_commit: r.last_indexed_commit.clone(),
            error_message: r.error.clone(),
            include_patterns: r.include.clone(),
            exclude_patterns: r.exclude.clone(),
            workspace: r.workspace,
            progress: crate::index::progress::snapshot(&index_dir(
                &self.shared.settings.data_dir,
                &r.id,
                self.kind(),
            )),
        })
    }

    /// `delete_repository`.
    pub fn delete_repository(
        &self,
        args: &RepoIdArgs,
    ) -> Result<ToolOutput<DeleteRepositoryOutput>, ToolError> {
        let record = self.resolve(&args.repo_id)?;
        self.check_record_allowed(&record)?;
        let id = record.id.clone();
        if lock(&self.shared.workspace)
            .as_ref()
            .is_some_and(|w| w.id == id)
        {
            return Err(ToolError::Invalid(format!(
                "{id} is the workspace this server was started with (--workspace); it cannot be deleted while served"
            )));
        }
        if lock(&self.shared.jobs).contains(&id) {
            return Err(ToolError::NotReady(format!(
                "repository {id} ({}) is being indexed; wait until get_repository_info shows 'ready' or 'error', then delete it",
                record.name
            )));
        }
        lock(&self.shared.indexes).remove(&id);
        lock(&self.shared.registry).remove(&id)?;
        let dir = repo_dir(&self.shared.settings.data_dir, &id);
        let mut message = format!(
            "Deleted {} ({id}): its index, embedding cache{} are gone.",
            record.name,
            if record.kind == SourceKind::Git {
                " and clone"
            } else {
                ""
            }
        );
        if dir.exists()
            && let Err(e) = std::fs::remove_dir_all(&dir)
        {
            message.push_str(&format!(
                " Some files in {} could not be removed: {e}",
                dir.display()
            ));
        }
        let out = DeleteRepositoryOutput {
            success: true,
            repo_id: id,
            message: message.clone(),
            chunks_deleted: record.chunks,
        };
        Ok(ToolOutput::ok(message, out))
    }
}
