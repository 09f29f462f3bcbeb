//! The logic behind the MCP tools and resources, free of MCP: arguments in, text plus
//! data out ([`ToolOutput`]), or a [`ToolError`] whose message says what to do.
//!
//! [`RetrievalTools`] owns the [`TextEncoder`] (MiniLM or static), the [`Registry`](crate::registry::Registry),
//! the loaded [`RepoIndex`]es and the optional `--workspace`. By concept:
//!
//! - [`args`]: argument structs and their validation; [`results`]: the wire shapes
//!   (one [`CodeChunk`] for every tool that returns code); [`errors`]: [`ToolError`];
//! - [`bases`]: the workspace's index seeded from, and published to, `--index-bases`
//!   ([`crate::bases`]);
//! - [`workspace`]: the `--workspace`, indexed in the background at start-up and kept
//!   current by a [`crate::live`] watcher; `codebase_retrieval` searches it, waiting
//!   (bounded) while it is still indexing;
//! - [`indexing`]: `index_repository` / `update_repository` as background jobs;
//! - [`repositories`]: listing, describing and deleting repositories;
//! - [`search`]: `codebase_retrieval`, `search_code`, `query_code`, `get_implementation`;
//! - [`resources`]: the MCP resources;
//! - [`roots`]: [`AllowedRoots`], the directories `index_repository` and
//!   `delete_repository` may act on (`--allow-root`).
//!
//! Indexes of `ready` repositories are opened lazily on first use; an index that no
//! longer opens turns its repository into `error`.

mod args;
mod bases;
mod errors;
mod indexing;
mod repositories;
mod resources;
mod results;
mod roots;
mod search;
mod workspace;

#[cfg(test)]
mod incremental_tests;

pub use args::{
    ChunkTypeFilter, CodebaseRetrievalArgs, GetImplementationArgs, IndexRepositoryArgs,
    ListRepositoriesArgs, QueryCodeArgs, RepoIdArgs, SearchCodeArgs, UpdateRepositoryArgs,
};
pub use errors::ToolError;
pub use resources::{ResourceEntry, ResourceText};
pub use results::*;
pub use roots::AllowedRoots;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use navbench_server_support::walk::{WalkOptions, walk_files};

use crate::chunk::Chunk;
use crate::encoder::{EncoderKind, TextEncoder};
use crate::index::{FileFilter, IndexStats, RepoIndex};
use crate::live::Watcher;
use crate::registry::{self, RepoRecord, RepoStatus, repo_dir};
use crate::source;
use args::text_arg;

/// Longest `codebase_retrieval` / `search_code` query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Longest `query_code` question, in characters.
pub const MAX_QUESTION_CHARS: usize = 2000;
/// Largest `top_k` of `codebase_retrieval` and `search_code`.
pub const MAX_TOP_K: i64 = 50;
/// Largest `top_k` of `query_code`.
pub const MAX_RAG_TOP_K: i64 = 20;
/// Default `wait_seconds` of `index_repository` / `update_repository`.
pub const DEFAULT_WAIT_SECS: i64 = 30;
/// Largest `wait_seconds`.
pub const MAX_WAIT_SECS: i64 = 600;

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the registry, indexes and clones live.
    pub data_dir: PathBuf,
    /// How long `codebase_retrieval` waits for a workspace that is still indexing.
    pub workspace_wait: Duration,
    /// Where `index_repository` / `delete_repository` may act (`--allow-root`).
    pub allowed_roots: AllowedRoots,
    /// Indexes of earlier trees that the workspace's index starts from
    /// (`--index-bases`; see [`crate::bases`]); `None`: every workspace without an
    /// index of its own is built whole.
    pub index_bases: Option<PathBuf>,
}

impl Settings {
    /// Settings with the default workspace wait (60 s) and no root restriction (the
    /// binary always sets [`Settings::allowed_roots`]).
    pub fn new(data_dir: PathBuf) -> Settings {
        Settings {
            data_dir,
            workspace_wait: Duration::from_secs(60),
            allowed_roots: AllowedRoots::any(),
            index_bases: None,
        }
    }
}

/// A repository's index, loaded and shared by the tools and the jobs.
type LoadedIndex = Arc<RwLock<RepoIndex>>;

/// State shared by every clone of [`RetrievalTools`] and by its background threads.
struct Shared {
    settings: Settings,
    embedder: Arc<dyn TextEncoder>,
    registry: Mutex<registry::Registry>,
    indexes: Mutex<HashMap<String, LoadedIndex>>,
    /// Repositories with a job running (guards against concurrent jobs).
    jobs: Mutex<HashSet<String>>,
    workspace: Mutex<Option<WorkspaceState>>,
}

/// The served `--workspace`.
struct WorkspaceState {
    id: String,
    root: PathBuf,
    /// Paths changed while the index was not loaded yet.
    pending: Vec<String>,
    watcher: Option<Watcher>,
    /// What the start-up indexing did, once it is done.
    stats: Option<IndexStats>,
    /// Where the start-up indexing's time went, once it is done.
    timings: Option<navbench_server_support::timings::InitTimings>,
}

/// The tools' state (cheap to clone: shared behind an `Arc`).
#[derive(Clone)]
pub struct RetrievalTools {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RetrievalTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetrievalTools")
            .field("data_dir", &self.shared.settings.data_dir)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The `chunk://` resource URI of an indexed chunk.
fn chunk_uri(repo_id: &str, chunk: &Chunk) -> String {
    format!("chunk://{repo_id}/{}", chunk.id)
}

/// Where a repository's file manifest (sizes and mtimes at indexing) lives; one per
/// encoder, like the index it describes.
fn manifest_path(data_dir: &Path, id: &str, kind: EncoderKind) -> PathBuf {
    repo_dir(data_dir, id).join(format!("manifest{}.json", kind.store_suffix()))
}

/// Where a repository's index lives: `index` for MiniLM, `index-static` for the static
/// encoder, so the two stores never meet.
fn index_dir(data_dir: &Path, id: &str, kind: EncoderKind) -> PathBuf {
    repo_dir(data_dir, id).join(format!("index{}", kind.store_suffix()))
}

/// Where a git repository is cloned.
fn checkout_dir(data_dir: &Path, id: &str) -> PathBuf {
    repo_dir(data_dir, id).join("checkout")
}

/// The include/exclude filter a repository was registered with.
fn filter_of(r: &RepoRecord) -> FileFilter {
    FileFilter {
        include: r.include.clone(),
        exclude: r.exclude.clone(),
    }
}

impl RetrievalTools {
    /// Opens the registry under `settings.data_dir` (recovering interrupted jobs).
    pub fn new(
        settings: Settings,
        embedder: Arc<dyn TextEncoder>,
    ) -> Result<RetrievalTools, ToolError> {
        let registry = registry::Registry::open(&settings.data_dir)?;
        Ok(RetrievalTools {
            shared: Arc::new(Shared {
                settings,
                embedder,
                registry: Mutex::new(registry),
                indexes: Mutex::new(HashMap::new()),
                jobs: Mutex::new(HashSet::new()),
                workspace: Mutex::new(None),
            }),
        })
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.shared.settings.data_dir
    }

    /// The embedder's model id.
    pub fn model_id(&self) -> &str {
        self.shared.embedder.model_id()
    }

    /// Which encoder the server runs.
    pub fn kind(&self) -> EncoderKind {
        self.shared.embedder.kind()
    }

    /// The loaded index of a ready repository, opening it on first use.
    fn ready_index(&self, record: &RepoRecord) -> Result<LoadedIndex, ToolError> {
        match record.status {
            RepoStatus::Ready => {}
            RepoStatus::Indexing => {
                return Err(ToolError::NotReady(format!(
                    "repository {} ({}) is still indexing; wait a little and retry, or call get_repository_info to see its status",
                    record.id, record.name
                )));
            }
            RepoStatus::Error => {
                return Err(ToolError::NotReady(format!(
                    "repository {} ({}) is in error: {}",
                    record.id,
                    record.name,
                    record
                        .error
                        .as_deref()
                        .unwrap_or("unknown error; call index_repository again")
                )));
            }
        }
        if let Some(index) = lock(&self.shared.indexes).get(&record.id) {
            return Ok(Arc::clone(index));
        }
        let dir = index_dir(&self.shared.settings.data_dir, &record.id, self.kind());
        match RepoIndex::open(&dir, self.shared.embedder.as_ref()) {
            Ok(index) => {
                let loaded = Arc::new(RwLock::new(index));
                lock(&self.shared.indexes).insert(record.id.clone(), Arc::clone(&loaded));
                Ok(loaded)
            }
            Err(e) => {
                let message = format!(
                    "its index could not be loaded ({e}); call index_repository with {} to rebuild it",
                    record.source
                );
                let _ = lock(&self.shared.registry).update(&record.id, |r| {
                    r.status = RepoStatus::Error;
                    r.error = Some(message.clone());
                });
                Err(ToolError::NotReady(format!(
                    "repository {} ({}): {message}",
                    record.id, record.name
                )))
            }
        }
    }

    /// The record of `repo_id` (a full id or a unique prefix).
    fn resolve(&self, repo_id: &str) -> Result<RepoRecord, ToolError> {
        text_arg("repo_id", repo_id, 64, "an id from list_repositories")?;
        Ok(lock(&self.shared.registry).resolve(repo_id)?.clone())
    }

    /// The `GET /health` document.
    pub fn health(&self) -> serde_json::Value {
        let reg = lock(&self.shared.registry);
        let records = reg.list();
        let count = |s: RepoStatus| records.iter().filter(|r| r.status == s).count();
        let workspace = lock(&self.shared.workspace).as_ref().and_then(|ws| {
            reg.get(&ws.id).map(|r| {
                serde_json::json!({
                    "root": ws.root.to_string_lossy(),
                    "repo_id": r.id,
                    "status": r.status,
                    "files": r.files,
                    "chunks": r.chunks,
                    "lastIndexed": r.last_indexed_at,
                })
            })
        });
        serde_json::json!({
            "status": "ok",
            "server": "navbench-retrieval",
            "version": env!("CARGO_PKG_VERSION"),
            "model": self.shared.embedder.model_id(),
            "workspace": workspace,
            "repositories": {
                "total": records.len(),
                "ready": count(RepoStatus::Ready),
                "indexing": count(RepoStatus::Indexing),
                "error": count(RepoStatus::Error),
            },
        })
    }

    /// Waits until no job is running (for tests and orderly shutdown), at most `limit`.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if lock(&self.shared.jobs).is_empty() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

/// The files under `root` the index's filter accepts now.
fn current_files(root: &Path, index: &RepoIndex) -> Result<Vec<String>, ToolError> {
    let walked = walk_files(root, &WalkOptions::default())
        .map_err(|e| ToolError::NotFound(format!("cannot list {}: {e}", root.display())))?;
    Ok(walked
        .into_iter()
        .map(|f| f.rel)
        .filter(|rel| index.accepts(rel))
        .collect())
}

/// The HEAD commit of `root`, when it is a git checkout.
fn head_commit_of(root: &Path) -> Option<String> {
    source::head_commit(root)
}
