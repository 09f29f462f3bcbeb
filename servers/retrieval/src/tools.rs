//! The logic behind the MCP tools and resources, free of MCP: arguments in, text plus
//! data out ([`ToolOutput`]), or a [`ToolError`] whose message says what to do.
//!
//! [`RetrievalTools`] owns the [`Embedder`], the [`Registry`], the loaded
//! [`RepoIndex`]es and the optional `--workspace`:
//!
//! - the workspace is registered like any repository, indexed in the background at
//!   start-up (reloading the persisted index and applying what changed on disk when it
//!   can), and then kept current by a [`crate::live`] watcher whose batches go to
//!   [`RepoIndex::update_files`]; `codebase_retrieval` searches it, waiting (bounded)
//!   while it is still indexing;
//! - `index_repository` / `update_repository` run as background jobs on their own
//!   thread; the tool waits up to `wait_seconds` for the job and otherwise answers
//!   that the repository is `indexing` (the registry says so until the job ends);
//! - indexes of `ready` repositories are opened lazily on first use; an index that no
//!   longer opens turns its repository into `error`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, Weak, mpsc};
use std::time::{Duration, Instant};

use navbench_server_support::mcp::ToolOutput;
use navbench_server_support::sandbox::Sandbox;
use navbench_server_support::walk::{FileGlob, WalkOptions, walk_files};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::chunk::{Chunk, ChunkKind};
use crate::index::{FileFilter, IndexError, IndexStats, RepoIndex, SearchOptions};
use crate::live::Watcher;
use crate::model::Embedder;
use crate::rag::{self, Citation, EvidenceChunk, LlmConfig, RagError};
use crate::registry::{
    self, RegistryError, RepoRecord, RepoStatus, SourceKind, now_rfc3339, repo_dir,
};
use crate::scope::{self, Scope};
use crate::source::{self, Changes, Manifest, SourceError, SourceSpec};

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
/// Most include/exclude patterns accepted.
const MAX_PATTERNS: usize = 100;
/// Most indexed files listed by `get_repository_info`.
const MAX_LISTED_FILES: usize = 2000;
/// Longest a resource's file content is served, in bytes.
const MAX_RESOURCE_BYTES: u64 = 2_000_000;

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the registry, indexes and clones live.
    pub data_dir: PathBuf,
    /// How long `codebase_retrieval` waits for a workspace that is still indexing.
    pub workspace_wait: Duration,
}

impl Settings {
    /// Settings with the default workspace wait (60 s).
    pub fn new(data_dir: PathBuf) -> Settings {
        Settings {
            data_dir,
            workspace_wait: Duration::from_secs(60),
        }
    }
}

/// Why a tool call failed; the message is written for the agent.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// An argument is missing, out of range or malformed.
    #[error("{0}")]
    Invalid(String),
    /// Unknown repository, ambiguous prefix, or the registry file failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// Cloning, fetching or diffing failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// `query_code`'s LLM endpoint is missing or failed.
    #[error(transparent)]
    Rag(#[from] RagError),
    /// The repository is indexing or in error.
    #[error("{0}")]
    NotReady(String),
    /// Nothing with that name or id.
    #[error("{0}")]
    NotFound(String),
    /// The index failed.
    #[error("index error: {0}")]
    Index(#[from] IndexError),
}

// ---------------------------------------------------------------------------
// Arguments

/// Arguments of `codebase_retrieval`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodebaseRetrievalArgs {
    /// Natural language description of the code you are looking for (1-1000 characters), e.g. 'Where is the function that handles user authentication?'.
    pub query: String,
    /// Maximum number of results (default 10, max 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: Option<i64>,
}

/// Arguments of `index_repository`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexRepositoryArgs {
    /// A local directory (absolute path) or a git URL: https://github.com/owner/repo, owner/repo, git@host:owner/repo.git, file:///path/to/repo.
    #[serde(alias = "url")]
    pub url_or_path: String,
    /// Branch to index (git URLs only); empty = the remote's default branch.
    #[serde(default)]
    pub branch: Option<String>,
    /// Globs selecting files to index, e.g. ['*.py', 'src/**']; empty = every indexable file (Python, Markdown, reST, text, config).
    #[serde(default)]
    pub include_patterns: Option<Vec<String>>,
    /// Globs of files to leave out, e.g. ['tests/', '*_pb2.py'].
    #[serde(default)]
    pub exclude_patterns: Option<Vec<String>>,
    /// Seconds to wait for indexing to finish before answering 'indexing' (default 30, 0-600); indexing continues in the background either way.
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub wait_seconds: Option<i64>,
}

/// Arguments of tools taking only a repository id.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoIdArgs {
    /// Repository id from list_repositories or index_repository (the full id or a unique prefix, e.g. its first 8 characters).
    pub repo_id: String,
}

/// Arguments of `update_repository`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRepositoryArgs {
    /// Repository id (full or a unique prefix).
    pub repo_id: String,
    /// Seconds to wait for the update to finish before answering 'indexing' (default 30, 0-600).
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub wait_seconds: Option<i64>,
}

/// Arguments of `list_repositories`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRepositoriesArgs {}

/// Chunk type filter of `search_code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChunkTypeFilter {
    /// Every chunk.
    #[default]
    All,
    /// Top-level functions.
    Function,
    /// Methods.
    Method,
    /// Classes.
    Class,
    /// Module-level code.
    Module,
    /// Non-Python text.
    Text,
}

impl ChunkTypeFilter {
    fn kind(self) -> Option<ChunkKind> {
        match self {
            ChunkTypeFilter::All => None,
            ChunkTypeFilter::Function => Some(ChunkKind::Function),
            ChunkTypeFilter::Method => Some(ChunkKind::Method),
            ChunkTypeFilter::Class => Some(ChunkKind::Class),
            ChunkTypeFilter::Module => Some(ChunkKind::Module),
            ChunkTypeFilter::Text => Some(ChunkKind::Text),
        }
    }
}

/// Arguments of `search_code`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeArgs {
    /// Repository id (full or a unique prefix).
    pub repo_id: String,
    /// What to search for: natural language or code terms (1-1000 characters).
    pub query: String,
    /// Number of results (default 10, max 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: Option<i64>,
    /// Only files matching this glob ('*.py', 'src/**/*.py') or containing this substring ('auth').
    #[serde(default)]
    pub file_filter: Option<String>,
    /// Only chunks of this type (default all).
    #[serde(default)]
    pub chunk_type: Option<ChunkTypeFilter>,
}

/// Arguments of `query_code`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryCodeArgs {
    /// Repository id (full or a unique prefix).
    pub repo_id: String,
    /// Question about the code (1-2000 characters), e.g. 'Where is function X defined?', 'How does authentication work?'.
    pub question: String,
    /// Chunks retrieved as context for the answer (default 5, 1-20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub top_k: Option<i64>,
}

/// Arguments of `get_implementation`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetImplementationArgs {
    /// Function, class or method: 'parse_url', 'Session', 'Session.send', optionally with a path: 'pkg/sessions.py:Session.send'.
    pub entity_name: String,
    /// minimal (default): the entity only; logical: plus the same-file helpers it calls; dependencies: plus cross-file callees and imported entities.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Repository to look in (default: the --workspace).
    #[serde(default)]
    pub repo_id: Option<String>,
}

impl JsonSchema for Scope {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Scope".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["minimal", "logical", "dependencies"]
        })
    }
}

// ---------------------------------------------------------------------------
// Outputs

/// One `codebase_retrieval` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalResult {
    /// File path relative to the workspace.
    pub file: String,
    /// The code snippet.
    pub content: String,
    /// Relevance score, 0-1.
    pub score: f32,
    /// Line range, e.g. '45-78'.
    pub lines: String,
    /// Why this was matched (semantic and keyword ranks).
    pub reason: String,
}

/// `codebase_retrieval` metadata.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalMetadata {
    /// Workspace root path.
    pub workspace: String,
    /// When the index last changed (ISO 8601), null if never.
    pub last_indexed: Option<String>,
    /// Search duration in milliseconds.
    pub query_time_ms: u64,
    /// Number of results returned.
    pub total_results: usize,
}

/// Structured result of `codebase_retrieval`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CodebaseRetrievalOutput {
    /// Results, best first.
    pub results: Vec<RetrievalResult>,
    /// Workspace and timing.
    pub metadata: RetrievalMetadata,
}

/// Structured result of `index_repository`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct IndexRepositoryOutput {
    /// True when the repository is indexed and ready (false while still indexing).
    pub success: bool,
    /// The repository's id (use it with the other tools).
    pub repo_id: String,
    /// Display name (owner/repo or directory name).
    pub repo_name: String,
    /// ready or indexing.
    pub status: RepoStatus,
    /// Files indexed.
    pub files_processed: usize,
    /// Chunks in the index.
    pub chunks_indexed: usize,
    /// Chunks newly embedded (the rest came from the embedding cache).
    pub chunks_embedded: usize,
    /// Indexed commit, for git sources and local checkouts.
    pub commit: Option<String>,
    /// Indexing time in milliseconds.
    pub elapsed_ms: u64,
    /// What happened and what to do next.
    pub message: String,
}

/// One repository in `list_repositories`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepositorySummary {
    /// Repository id.
    pub repo_id: String,
    /// owner/repo or directory name.
    pub name: String,
    /// Source URL or local path.
    pub url: String,
    /// Branch asked for, empty for the default.
    pub branch: String,
    /// local or git.
    pub kind: SourceKind,
    /// Chunks indexed.
    pub chunk_count: usize,
    /// Files indexed.
    pub file_count: usize,
    /// ready, indexing or error.
    pub status: RepoStatus,
    /// When indexing last completed (ISO 8601).
    pub indexed_at: Option<String>,
    /// Why it is in error.
    pub error: Option<String>,
    /// Whether this is the --workspace served by codebase_retrieval.
    pub workspace: bool,
}

/// Structured result of `list_repositories`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListRepositoriesOutput {
    /// Registered repositories.
    pub repositories: Vec<RepositorySummary>,
    /// How many.
    pub count: usize,
}

/// Structured result of `get_repository_info`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepositoryInfoOutput {
    /// Repository id.
    pub repo_id: String,
    /// owner/repo or directory name.
    pub name: String,
    /// Source URL or local path.
    pub url: String,
    /// Branch asked for, empty for the default.
    pub branch: String,
    /// local or git.
    pub kind: SourceKind,
    /// Directory whose files are indexed.
    pub local_path: String,
    /// Chunks indexed.
    pub chunk_count: usize,
    /// Files indexed.
    pub file_count: usize,
    /// ready, indexing or error.
    pub status: RepoStatus,
    /// When indexing last completed (ISO 8601).
    pub indexed_at: Option<String>,
    /// Indexed files (at most 2000; see indexed_files_truncated).
    pub indexed_files: Vec<String>,
    /// Indexed files not listed.
    pub indexed_files_truncated: usize,
    /// Commit the index reflects.
    pub last_commit: Option<String>,
    /// Why it is in error.
    pub error_message: Option<String>,
    /// Include globs.
    pub include_patterns: Vec<String>,
    /// Exclude globs.
    pub exclude_patterns: Vec<String>,
    /// Whether this is the --workspace served by codebase_retrieval.
    pub workspace: bool,
}

/// Structured result of `delete_repository`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DeleteRepositoryOutput {
    /// Whether it was deleted.
    pub success: bool,
    /// The deleted repository's id.
    pub repo_id: String,
    /// What was removed.
    pub message: String,
    /// Chunks that were in its index.
    pub chunks_deleted: usize,
}

/// Structured result of `update_repository`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UpdateRepositoryOutput {
    /// True when the update finished (false while still running).
    pub success: bool,
    /// Repository id.
    pub repo_id: String,
    /// ready or indexing.
    pub status: RepoStatus,
    /// How changes were found: 'git diff' (clones), 'file check' (local directories) or 'full rebuild'.
    pub method: String,
    /// Commit indexed before.
    pub from_commit: Option<String>,
    /// Commit indexed now.
    pub to_commit: Option<String>,
    /// Files added, modified or deleted.
    pub files_changed: usize,
    /// New files.
    pub files_added: usize,
    /// Changed files.
    pub files_modified: usize,
    /// Removed files.
    pub files_deleted: usize,
    /// Chunks newly embedded.
    pub chunks_embedded: usize,
    /// Chunks in the index now.
    pub total_chunks: usize,
    /// Update time in milliseconds.
    pub elapsed_ms: u64,
    /// What happened.
    pub message: String,
}

/// One `search_code` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CodeHit {
    /// Repo-relative path.
    pub file_path: String,
    /// First line (1-based).
    pub start_line: usize,
    /// Last line (inclusive).
    pub end_line: usize,
    /// The chunk's text.
    pub content: String,
    /// Relevance, 0-1.
    pub relevance_score: f32,
    /// function, method, class, module or text.
    pub chunk_type: String,
    /// Qualified name of a definition.
    pub name: Option<String>,
    /// '[file:start-end]'.
    pub citation: String,
    /// Resource URI of the chunk: chunk://{repo_id}/{chunk id}.
    pub chunk_uri: String,
    /// Why it matched.
    pub reason: String,
}

/// Structured result of `search_code`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchCodeOutput {
    /// Results, best first.
    pub results: Vec<CodeHit>,
    /// How many.
    pub count: usize,
    /// The query.
    pub query: String,
    /// Repository searched.
    pub repo_id: String,
}

/// Structured result of `query_code`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryCodeOutput {
    /// The answer, with [file:start-end] citations.
    pub answer: String,
    /// Citations found in the answer, each checked against the evidence.
    pub citations: Vec<Citation>,
    /// The chunks retrieved and given to the model.
    pub evidence: Vec<EvidenceChunk>,
    /// True when the answer has citations and every one lies inside the evidence.
    pub grounded: bool,
    /// Model that answered.
    pub model: String,
}

/// One chunk of a `get_implementation` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ImplementationChunk {
    /// Repo-relative path.
    pub file: String,
    /// First line.
    pub start_line: usize,
    /// Last line.
    pub end_line: usize,
    /// function, method or class.
    pub chunk_type: String,
    /// Qualified name.
    pub name: Option<String>,
    /// 'entity', 'same-file helper', 'callee' or 'imported'.
    pub relation: String,
    /// For related chunks: the entity they relate to.
    pub related_to: Option<String>,
    /// The code.
    pub content: String,
    /// Calls the chunk makes.
    pub calls: Vec<String>,
    /// Imports it uses.
    pub imports_used: Vec<String>,
    /// Exceptions it handles.
    pub exceptions_handled: Vec<String>,
}

/// Structured result of `get_implementation`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GetImplementationOutput {
    /// The name asked for.
    pub entity_name: String,
    /// The scope used.
    pub scope: String,
    /// Repository searched.
    pub repo_id: String,
    /// True when a wider scope was asked but the entity has no call/import metadata.
    pub fell_back: bool,
    /// Entities first, then related chunks; deduplicated.
    pub results: Vec<ImplementationChunk>,
    /// How many.
    pub count: usize,
}

/// A resource read: MIME type and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceText {
    /// The URI read.
    pub uri: String,
    /// MIME type.
    pub mime_type: String,
    /// Content.
    pub text: String,
}

/// A concrete resource for `resources/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// URI.
    pub uri: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
}

// ---------------------------------------------------------------------------
// State

struct JobResult {
    stats: IndexStats,
    commit: Option<String>,
    method: String,
    changes: Changes,
    from_commit: Option<String>,
}

type LoadedIndex = Arc<RwLock<RepoIndex>>;

struct Shared {
    settings: Settings,
    embedder: Arc<Embedder>,
    registry: Mutex<registry::Registry>,
    indexes: Mutex<HashMap<String, LoadedIndex>>,
    /// Repositories with a job running (guards against concurrent jobs).
    jobs: Mutex<HashSet<String>>,
    workspace: Mutex<Option<WorkspaceState>>,
}

struct WorkspaceState {
    id: String,
    root: PathBuf,
    /// Paths changed while the index was not loaded yet.
    pending: Vec<String>,
    watcher: Option<Watcher>,
    /// What the start-up indexing did, once it is done.
    stats: Option<IndexStats>,
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

// ---------------------------------------------------------------------------
// Validation helpers

/// Trimmed, non-empty, at most `max` characters.
fn text_arg<'a>(
    field: &str,
    value: &'a str,
    max: usize,
    example: &str,
) -> Result<&'a str, ToolError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(ToolError::Invalid(format!(
            "{field} is empty; pass {example}"
        )));
    }
    let chars = trimmed.chars().count();
    if chars > max {
        return Err(ToolError::Invalid(format!(
            "{field} is too long ({chars} characters, at most {max}); shorten it to the essential terms"
        )));
    }
    Ok(trimmed)
}

/// `value` or `default`, within `min..=max`.
fn int_arg(
    field: &str,
    value: Option<i64>,
    default: i64,
    min: i64,
    max: i64,
) -> Result<usize, ToolError> {
    let v = value.unwrap_or(default);
    if v < min || v > max {
        return Err(ToolError::Invalid(format!(
            "{field} must be between {min} and {max} (got {v}); omit it for the default {default}"
        )));
    }
    usize::try_from(v).map_err(|_| ToolError::Invalid(format!("{field} out of range")))
}

fn patterns_arg(field: &str, value: Option<Vec<String>>) -> Result<Vec<String>, ToolError> {
    let list: Vec<String> = value
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if list.len() > MAX_PATTERNS {
        return Err(ToolError::Invalid(format!(
            "{field} has {} patterns, at most {MAX_PATTERNS} are accepted",
            list.len()
        )));
    }
    for p in &list {
        FileGlob::new(p).map_err(|e| ToolError::Invalid(format!("{field}: {e}")))?;
    }
    Ok(list)
}

fn branch_arg(value: Option<String>) -> Result<Option<String>, ToolError> {
    let Some(b) = value
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
    else {
        return Ok(None);
    };
    let bad = b.len() > 255
        || b.contains("..")
        || b.starts_with('-')
        || b.starts_with('/')
        || b.ends_with('/')
        || b.ends_with(".lock")
        || b.chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    if bad {
        return Err(ToolError::Invalid(format!(
            "branch '{b}' is not a valid git branch name; pass a name such as 'main' or 'release/1.2', or leave it empty for the default branch"
        )));
    }
    Ok(Some(b))
}

fn lines(start: usize, end: usize) -> String {
    format!("{start}-{end}")
}

fn chunk_uri(repo_id: &str, chunk: &Chunk) -> String {
    format!("chunk://{repo_id}/{}", chunk.id)
}

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
        indexed_at: r.last_indexed_at.clone(),
        error: r.error.clone(),
        workspace: r.workspace,
    }
}

fn manifest_path(data_dir: &Path, id: &str) -> PathBuf {
    repo_dir(data_dir, id).join("manifest.json")
}

fn index_dir(data_dir: &Path, id: &str) -> PathBuf {
    repo_dir(data_dir, id).join("index")
}

fn checkout_dir(data_dir: &Path, id: &str) -> PathBuf {
    repo_dir(data_dir, id).join("checkout")
}

fn filter_of(r: &RepoRecord) -> FileFilter {
    FileFilter {
        include: r.include.clone(),
        exclude: r.exclude.clone(),
    }
}

// ---------------------------------------------------------------------------

impl RetrievalTools {
    /// Opens the registry under `settings.data_dir` (recovering interrupted jobs).
    pub fn new(settings: Settings, embedder: Arc<Embedder>) -> Result<RetrievalTools, ToolError> {
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
        let source = root.to_string_lossy().into_owned();
        let name = source::display_name(&SourceSpec::Local(root.clone()));
        let mut record = RepoRecord::new(SourceKind::Local, source, None, root.clone(), name);
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
        lock(&self.shared.jobs).insert(id.clone());
        *lock(&self.shared.workspace) = Some(WorkspaceState {
            id: id.clone(),
            root: root.clone(),
            pending: Vec::new(),
            watcher: None,
            stats: None,
        });
        // Watch first, so edits made while the index builds are not lost.
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        match crate::live::watch(&root, FileFilter::default(), move |changed| {
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
        let tools = self.clone();
        let job_id = id.clone();
        std::thread::Builder::new()
            .name("navbench-workspace-index".into())
            .spawn(move || {
                let outcome = tools.index_workspace(&job_id, &root);
                tools.finish_job(
                    &job_id,
                    outcome.as_ref().map(|_| ()).map_err(|e| e.to_string()),
                );
                if let (Ok(stats), Some(ws)) = (&outcome, lock(&tools.shared.workspace).as_mut()) {
                    ws.stats = Some(stats.clone());
                }
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

    /// Open the persisted workspace index and catch up with the disk, or build it.
    fn index_workspace(&self, id: &str, root: &Path) -> Result<IndexStats, ToolError> {
        let data = &self.shared.settings.data_dir;
        let dir = index_dir(data, id);
        let embedder = &self.shared.embedder;
        let reopened = RepoIndex::open(&dir, embedder).ok().and_then(|mut index| {
            let manifest = Manifest::load(&manifest_path(data, id))?;
            let current = current_files(root, &index).ok()?;
            let refs: Vec<&str> = current.iter().map(String::as_str).collect();
            let changes = manifest.changes(root, &refs);
            let stats = if changes.is_empty() {
                IndexStats {
                    files: 0,
                    chunks: index.chunks().len(),
                    ..IndexStats::default()
                }
            } else {
                index.update_files(root, &changes.all(), embedder).ok()?
            };
            Some((index, stats))
        });
        let (index, stats) = match reopened {
            Some(found) => found,
            None => RepoIndex::build(root, &FileFilter::default(), embedder, &dir)?,
        };
        self.install_index(id, root, index, head_commit_of(root))?;
        Ok(stats)
    }

    /// Stores a fresh index: manifest, registry stats, loaded map.
    fn install_index(
        &self,
        id: &str,
        root: &Path,
        index: RepoIndex,
        commit: Option<String>,
    ) -> Result<(), ToolError> {
        let data = &self.shared.settings.data_dir;
        let files = index.files();
        let manifest = Manifest::scan(root, &files);
        manifest.save(&manifest_path(data, id))?;
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
    fn finish_job(&self, id: &str, outcome: Result<(), String>) {
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

    /// A watcher batch: re-index these workspace paths (or queue them while indexing).
    fn apply_workspace_changes(&self, changed: Vec<String>) {
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
                .update_files(&root, &changed, &self.shared.embedder)
                .map(|stats| {
                    let files = index.files();
                    let mut manifest =
                        Manifest::load(&manifest_path(&self.shared.settings.data_dir, &id))
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
                    if let Err(e) =
                        manifest.save(&manifest_path(&self.shared.settings.data_dir, &id))
                    {
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
        let dir = index_dir(&self.shared.settings.data_dir, &record.id);
        match RepoIndex::open(&dir, &self.shared.embedder) {
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

    fn resolve(&self, repo_id: &str) -> Result<RepoRecord, ToolError> {
        text_arg("repo_id", repo_id, 64, "an id from list_repositories")?;
        Ok(lock(&self.shared.registry).resolve(repo_id)?.clone())
    }

    // -----------------------------------------------------------------------
    // codebase_retrieval

    /// `codebase_retrieval`: fused semantic + keyword search over the workspace.
    pub fn codebase_retrieval(
        &self,
        args: &CodebaseRetrievalArgs,
    ) -> Result<ToolOutput<CodebaseRetrievalOutput>, ToolError> {
        let query = text_arg(
            "query",
            &args.query,
            MAX_QUERY_CHARS,
            "a natural language description such as 'where are HTTP redirects handled?'",
        )?;
        let top_k = int_arg("top_k", args.top_k, 10, 1, MAX_TOP_K)?;
        let Some((id, root)) = lock(&self.shared.workspace)
            .as_ref()
            .map(|ws| (ws.id.clone(), ws.root.clone()))
        else {
            return Err(ToolError::NotReady(
                "codebase_retrieval searches the server's workspace, and this server was started without \
--workspace DIR. Restart it with --workspace, or use index_repository and then search_code."
                    .to_string(),
            ));
        };
        // Wait (bounded) while the workspace is still indexing.
        let deadline = Instant::now() + self.shared.settings.workspace_wait;
        let record = loop {
            let record = self.resolve(&id)?;
            if record.status != RepoStatus::Indexing || Instant::now() >= deadline {
                break record;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if record.status == RepoStatus::Indexing {
            return Err(ToolError::NotReady(format!(
                "the workspace {} is still being indexed (waited {} s); retry in a moment",
                root.display(),
                self.shared.settings.workspace_wait.as_secs()
            )));
        }
        let index = self.ready_index(&record)?;
        let started = Instant::now();
        let index = read(&index);
        let hits = index.search(
            &self.shared.embedder,
            query,
            &SearchOptions {
                top_k,
                file_filter: None,
                chunk_kind: None,
            },
        )?;
        let results: Vec<RetrievalResult> = hits
            .iter()
            .filter_map(|h| {
                let c = index.chunks().get(h.chunk)?;
                Some(RetrievalResult {
                    file: c.file.clone(),
                    content: c.content.clone(),
                    score: h.score.clamp(0.0, 1.0),
                    lines: lines(c.start_line, c.end_line),
                    reason: h.reason.clone(),
                })
            })
            .collect();
        drop(index);
        let last_indexed = self.resolve(&id).ok().and_then(|r| r.last_indexed_at);
        let output = CodebaseRetrievalOutput {
            metadata: RetrievalMetadata {
                workspace: root.to_string_lossy().into_owned(),
                last_indexed,
                query_time_ms: started.elapsed().as_millis() as u64,
                total_results: results.len(),
            },
            results,
        };
        let text = serde_json::to_string_pretty(&output)
            .map_err(|e| ToolError::Invalid(format!("cannot encode the results: {e}")))?;
        Ok(ToolOutput::ok(text, output))
    }

    // -----------------------------------------------------------------------
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
        let spec = source::parse_source(given)?;
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
        match done {
            Ok(Ok(result)) => {
                let out = IndexRepositoryOutput {
                    success: true,
                    repo_id: id.clone(),
                    repo_name: record.name.clone(),
                    status: record.status,
                    files_processed: result.stats.files,
                    chunks_indexed: result.stats.chunks,
                    chunks_embedded: result.stats.embedded,
                    commit: result.commit.clone(),
                    elapsed_ms: result.stats.elapsed_ms,
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
                Ok(ToolOutput::ok(text, out))
            }
            Ok(Err(message)) => Err(ToolError::NotReady(format!(
                "indexing {} failed: {message}. The repository is registered as {id} with status 'error'.",
                record.name
            ))),
            Err(_) => {
                let out = IndexRepositoryOutput {
                    success: false,
                    repo_id: id.clone(),
                    repo_name: record.name.clone(),
                    status: RepoStatus::Indexing,
                    files_processed: 0,
                    chunks_indexed: 0,
                    chunks_embedded: 0,
                    commit: None,
                    elapsed_ms: 0,
                    message: format!(
                        "Indexing {} continues in the background (repo_id {id}). Call get_repository_info('{id}') until status is 'ready', then search_code.",
                        record.name
                    ),
                };
                Ok(ToolOutput::ok(out.message.clone(), out))
            }
        }
    }

    /// `index_repository` on the served `--workspace`: it is indexed at start-up and
    /// kept live by the watcher, so instead of a second build the call waits (up to
    /// `wait` seconds) for the start-up indexing and answers with what it did. `None`
    /// when `id` is not the workspace.
    fn workspace_index_answer(
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
            elapsed_ms: stats.elapsed_ms,
            message: message.clone(),
        };
        Ok(Some(ToolOutput::ok(
            format!("{message}\nrepo_id: {id}"),
            out,
        )))
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
        let (index, stats) = RepoIndex::build(
            &record.local_path,
            &filter_of(record),
            &self.shared.embedder,
            &index_dir(data, &record.id),
        )?;
        self.install_index(&record.id, &record.local_path, index, commit.clone())?;
        Ok(JobResult {
            stats,
            commit,
            method: "full rebuild".to_string(),
            changes: Changes::default(),
            from_commit: record.last_indexed_commit.clone(),
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
            stats = guard.update_files(root, &changes.all(), &self.shared.embedder)?;
        }
        // Refresh the manifest and the registry's numbers.
        let (n_files, n_chunks) = {
            let guard = read(&index);
            let files = guard.files();
            Manifest::scan(root, &files).save(&manifest_path(data, &record.id))?;
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
        })
    }

    /// What changed on disk since the manifest was written.
    fn file_check(&self, record: &RepoRecord, index: &LoadedIndex) -> Result<Changes, ToolError> {
        let data = &self.shared.settings.data_dir;
        let guard = read(index);
        let current = current_files(&record.local_path, &guard)?;
        let refs: Vec<&str> = current.iter().map(String::as_str).collect();
        let manifest = Manifest::load(&manifest_path(data, &record.id)).unwrap_or_else(|| {
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
        match rx.recv_timeout(Duration::from_secs(wait as u64)) {
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
                    elapsed_ms: r.stats.elapsed_ms,
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
                Ok(ToolOutput::ok(text, out))
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
                    elapsed_ms: 0,
                    message: format!(
                        "The update of {} continues in the background; call get_repository_info('{id}') until status is 'ready'.",
                        record.name
                    ),
                };
                Ok(ToolOutput::ok(out.message.clone(), out))
            }
        }
    }

    /// `list_repositories`.
    pub fn list_repositories(&self) -> Result<ToolOutput<ListRepositoriesOutput>, ToolError> {
        let repositories: Vec<RepositorySummary> = lock(&self.shared.registry)
            .list()
            .into_iter()
            .map(summary)
            .collect();
        let mut text = if repositories.is_empty() {
            "No repositories are indexed. Call index_repository with a local path or git URL."
                .to_string()
        } else {
            format!("{} repositories:", repositories.len())
        };
        for r in &repositories {
            text.push_str(&format!(
                "\n- {} {} [{}] {} chunks, {} files{}{}",
                r.repo_id,
                r.name,
                r.status.as_str(),
                r.chunk_count,
                r.file_count,
                r.indexed_at
                    .as_deref()
                    .map(|t| format!(", indexed {t}"))
                    .unwrap_or_default(),
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
        ))
    }

    /// `get_repository_info`.
    pub fn get_repository_info(
        &self,
        args: &RepoIdArgs,
    ) -> Result<ToolOutput<RepositoryInfoOutput>, ToolError> {
        let out = self.repository_info(&args.repo_id)?;
        let mut text = format!(
            "{} ({})\nrepo_id: {}\nstatus: {}\nsource: {}{}\nlocal path: {}\nfiles: {}, chunks: {}\nindexed at: {}\nlast commit: {}",
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
            out.indexed_at.as_deref().unwrap_or("never"),
            out.last_commit.as_deref().unwrap_or("-"),
        );
        if let Some(e) = &out.error_message {
            text.push_str(&format!("\nerror: {e}"));
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
        Ok(ToolOutput::ok(text, out))
    }

    fn repository_info(&self, repo_id: &str) -> Result<RepositoryInfoOutput, ToolError> {
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
            indexed_at: r.last_indexed_at.clone(),
            indexed_files: files.into_iter().take(MAX_LISTED_FILES).collect(),
            indexed_files_truncated: truncated,
            last_commit: r.last_indexed_commit.clone(),
            error_message: r.error.clone(),
            include_patterns: r.include.clone(),
            exclude_patterns: r.exclude.clone(),
            workspace: r.workspace,
        })
    }

    /// `delete_repository`.
    pub fn delete_repository(
        &self,
        args: &RepoIdArgs,
    ) -> Result<ToolOutput<DeleteRepositoryOutput>, ToolError> {
        let record = self.resolve(&args.repo_id)?;
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

    /// `search_code`.
    pub fn search_code(
        &self,
        args: &SearchCodeArgs,
    ) -> Result<ToolOutput<SearchCodeOutput>, ToolError> {
        let query = text_arg(
            "query",
            &args.query,
            MAX_QUERY_CHARS,
            "search terms such as 'parse cookies from headers'",
        )?;
        let top_k = int_arg("top_k", args.top_k, 10, 1, MAX_TOP_K)?;
        let file_filter = match args
            .file_filter
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
        {
            Some(f) if f.chars().count() > 500 => {
                return Err(ToolError::Invalid(
                    "file_filter is longer than 500 characters".into(),
                ));
            }
            Some(f) => {
                if f.contains(['*', '?', '[']) {
                    FileGlob::new(f)
                        .map_err(|e| ToolError::Invalid(format!("file_filter: {e}")))?;
                }
                Some(f.to_string())
            }
            None => None,
        };
        let kind = args.chunk_type.unwrap_or_default().kind();
        let record = self.resolve(&args.repo_id)?;
        let index = self.ready_index(&record)?;
        let index = read(&index);
        let hits = index.search(
            &self.shared.embedder,
            query,
            &SearchOptions {
                top_k,
                file_filter,
                chunk_kind: kind,
            },
        )?;
        let results: Vec<CodeHit> = hits
            .iter()
            .filter_map(|h| {
                let c = index.chunks().get(h.chunk)?;
                Some(CodeHit {
                    file_path: c.file.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    content: c.content.clone(),
                    relevance_score: h.score.clamp(0.0, 1.0),
                    chunk_type: c.kind.as_str().to_string(),
                    name: c.name.clone(),
                    citation: format!("[{}:{}-{}]", c.file, c.start_line, c.end_line),
                    chunk_uri: chunk_uri(&record.id, c),
                    reason: h.reason.clone(),
                })
            })
            .collect();
        let mut text = if results.is_empty() {
            format!(
                "No results for '{query}' in {} ({}).",
                record.name, record.id
            )
        } else {
            format!(
                "{} results for '{query}' in {} ({}):",
                results.len(),
                record.name,
                record.id
            )
        };
        for (i, r) in results.iter().enumerate() {
            text.push_str(&format!(
                "\n\n{}. {} {}{} score {:.2} ({})\n```\n{}\n```",
                i + 1,
                r.citation,
                r.chunk_type,
                r.name
                    .as_deref()
                    .map(|n| format!(" {n}"))
                    .unwrap_or_default(),
                r.relevance_score,
                r.reason,
                r.content.trim_end()
            ));
        }
        let count = results.len();
        Ok(ToolOutput::ok(
            text,
            SearchCodeOutput {
                results,
                count,
                query: query.to_string(),
                repo_id: record.id,
            },
        ))
    }

    /// `query_code`: retrieval + an LLM answer with checked citations.
    pub fn query_code(
        &self,
        args: &QueryCodeArgs,
    ) -> Result<ToolOutput<QueryCodeOutput>, ToolError> {
        let question = text_arg(
            "question",
            &args.question,
            MAX_QUESTION_CHARS,
            "a question such as 'How are redirects handled?'",
        )?;
        let top_k = int_arg("top_k", args.top_k, 5, 1, MAX_RAG_TOP_K)?;
        let record = self.resolve(&args.repo_id)?;
        let index = self.ready_index(&record)?;
        let config = LlmConfig::from_env()?;
        let evidence: Vec<EvidenceChunk> = {
            let index = read(&index);
            let hits = index.search(
                &self.shared.embedder,
                question,
                &SearchOptions {
                    top_k,
                    file_filter: None,
                    chunk_kind: None,
                },
            )?;
            hits.iter()
                .filter_map(|h| {
                    let c = index.chunks().get(h.chunk)?;
                    Some(EvidenceChunk {
                        file_path: c.file.clone(),
                        start_line: c.start_line,
                        end_line: c.end_line,
                        content: c.content.clone(),
                        relevance_score: h.score.clamp(0.0, 1.0),
                        chunk_type: c.kind.as_str().to_string(),
                        name: c.name.clone(),
                    })
                })
                .collect()
        };
        if evidence.is_empty() {
            return Err(ToolError::NotFound(format!(
                "{} ({}) has no indexed chunks to answer from; check get_repository_info and its include/exclude patterns",
                record.name, record.id
            )));
        }
        let answer = rag::answer(&config, question, &evidence)?;
        let mut text = answer.answer.clone();
        let verified = answer.citations.iter().filter(|c| c.verified).count();
        text.push_str(&format!(
            "\n\n---\ngrounded: {} ({verified} of {} citations verified against {} evidence chunks)",
            answer.grounded,
            answer.citations.len(),
            evidence.len()
        ));
        for c in answer.citations.iter().filter(|c| !c.verified) {
            text.push_str(&format!(
                "\nunverified: [{}:{}-{}] is not inside the retrieved evidence",
                c.file_path, c.start_line, c.end_line
            ));
        }
        Ok(ToolOutput::ok(
            text,
            QueryCodeOutput {
                answer: answer.answer,
                citations: answer.citations,
                evidence,
                grounded: answer.grounded,
                model: config.model,
            },
        ))
    }

    /// `get_implementation`.
    pub fn get_implementation(
        &self,
        args: &GetImplementationArgs,
    ) -> Result<ToolOutput<GetImplementationOutput>, ToolError> {
        let name = text_arg(
            "entity_name",
            &args.entity_name,
            500,
            "a name such as 'Session.send'",
        )?;
        let scope = args.scope.unwrap_or_default();
        let record = match args
            .repo_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(id) => self.resolve(id)?,
            None => {
                let ws = lock(&self.shared.workspace).as_ref().map(|w| w.id.clone());
                match ws {
                    Some(id) => self.resolve(&id)?,
                    None => {
                        return Err(ToolError::Invalid(format!(
                            "pass repo_id: this server has no --workspace. {}",
                            lock(&self.shared.registry).known_summary()
                        )));
                    }
                }
            }
        };
        let index = self.ready_index(&record)?;
        let index = read(&index);
        let found = scope::implementation(&index, name, scope)
            .map_err(|e| ToolError::NotFound(e.to_string()))?;
        let mut results = Vec::new();
        let mut seen = HashSet::new();
        let mut fell_back = false;
        let to_out = |c: &Chunk, relation: &str, related_to: Option<String>| ImplementationChunk {
            file: c.file.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
            chunk_type: c.kind.as_str().to_string(),
            name: c.name.clone(),
            relation: relation.to_string(),
            related_to,
            content: c.content.clone(),
            calls: c.meta.calls.clone(),
            imports_used: c.meta.imports_used.clone(),
            exceptions_handled: c.meta.exceptions_handled.clone(),
        };
        for imp in &found {
            fell_back |= imp.fell_back;
            if seen.insert(imp.entity.id.clone()) {
                results.push(to_out(imp.entity, "entity", None));
            }
        }
        for imp in &found {
            for (c, why) in &imp.related {
                if seen.insert(c.id.clone()) {
                    results.push(to_out(c, why, imp.entity.name.clone()));
                }
            }
        }
        let scope_name = match scope {
            Scope::Minimal => "minimal",
            Scope::Logical => "logical",
            Scope::Dependencies => "dependencies",
        };
        let mut text = format!(
            "{} chunk(s) for '{name}' (scope {scope_name}) in {}{}:",
            results.len(),
            record.name,
            if fell_back {
                "; no call/import metadata, so only the entity itself"
            } else {
                ""
            }
        );
        for r in &results {
            text.push_str(&format!(
                "\n\n[{}:{}-{}] {} {} ({})\n```\n{}\n```",
                r.file,
                r.start_line,
                r.end_line,
                r.chunk_type,
                r.name.as_deref().unwrap_or(""),
                match &r.related_to {
                    Some(to) => format!("{} of {to}", r.relation),
                    None => r.relation.clone(),
                },
                r.content.trim_end()
            ));
        }
        let count = results.len();
        Ok(ToolOutput::ok(
            text,
            GetImplementationOutput {
                entity_name: name.to_string(),
                scope: scope_name.to_string(),
                repo_id: record.id,
                fell_back,
                results,
                count,
            },
        ))
    }

    // -----------------------------------------------------------------------
    // Resources

    /// Concrete resources: the repository list and one entry per repository.
    pub fn list_resources(&self) -> Vec<ResourceEntry> {
        let mut out = vec![ResourceEntry {
            uri: "repositories://list".to_string(),
            name: "All indexed repositories".to_string(),
            description: "JSON list of the registered repositories and their status".to_string(),
        }];
        for r in lock(&self.shared.registry).list() {
            out.push(ResourceEntry {
                uri: format!("repository://{}", r.id),
                name: r.name.clone(),
                description: format!(
                    "Repository {} ({}, {} chunks)",
                    r.name,
                    r.status.as_str(),
                    r.chunks
                ),
            });
        }
        out
    }

    /// Reads `repositories://list`, `repository://{id}`, `code://{id}/{path}` or
    /// `chunk://[{id}/]{chunk id}`.
    pub fn read_resource(&self, uri: &str) -> Result<ResourceText, ToolError> {
        let json = |value: &dyn erased::Json| -> Result<ResourceText, ToolError> {
            Ok(ResourceText {
                uri: uri.to_string(),
                mime_type: "application/json".to_string(),
                text: value.to_json()?,
            })
        };
        if uri == "repositories://list" {
            return json(&self.list_repositories()?.data);
        }
        if let Some(id) = uri.strip_prefix("repository://") {
            return json(&self.repository_info(id.trim_end_matches('/'))?);
        }
        if let Some(rest) = uri.strip_prefix("code://") {
            let (id, path) = rest.split_once('/').ok_or_else(|| {
                ToolError::Invalid(format!(
                    "'{uri}' lacks a file path; use code://{{repo_id}}/{{path}}, e.g. code://{}/src/app.py",
                    rest
                ))
            })?;
            return self.read_code(uri, id, path);
        }
        if let Some(rest) = uri.strip_prefix("chunk://") {
            return self.read_chunk(uri, rest);
        }
        Err(ToolError::NotFound(format!(
            "unknown resource '{uri}'; use repositories://list, repository://{{repo_id}}, code://{{repo_id}}/{{path}} or chunk://{{repo_id}}/{{chunk_id}}"
        )))
    }

    fn read_code(&self, uri: &str, id: &str, path: &str) -> Result<ResourceText, ToolError> {
        let record = self.resolve(id)?;
        let index = self.ready_index(&record)?;
        let path = path.trim_start_matches("./");
        let indexed = read(&index).files().binary_search(&path).is_ok();
        if !indexed {
            return Err(ToolError::NotFound(format!(
                "'{path}' is not an indexed file of {} ({}); get_repository_info lists the indexed files",
                record.name, record.id
            )));
        }
        let sandbox =
            Sandbox::new(&record.local_path).map_err(|e| ToolError::NotFound(e.to_string()))?;
        let abs = sandbox
            .resolve(path)
            .map_err(|e| ToolError::NotFound(e.to_string()))?;
        let size = std::fs::metadata(&abs).map(|m| m.len()).unwrap_or(0);
        if size > MAX_RESOURCE_BYTES {
            return Err(ToolError::Invalid(format!(
                "'{path}' is {size} bytes, more than the {MAX_RESOURCE_BYTES} served as a resource; use search_code or chunk:// resources"
            )));
        }
        let text = std::fs::read_to_string(&abs)
            .map_err(|e| ToolError::NotFound(format!("cannot read '{path}': {e}")))?;
        let mime = if path.ends_with(".py") || path.ends_with(".pyi") {
            "text/x-python"
        } else if path.ends_with(".md") {
            "text/markdown"
        } else {
            "text/plain"
        };
        Ok(ResourceText {
            uri: uri.to_string(),
            mime_type: mime.to_string(),
            text,
        })
    }

    fn read_chunk(&self, uri: &str, rest: &str) -> Result<ResourceText, ToolError> {
        #[derive(Serialize)]
        struct ChunkResource<'a> {
            repo_id: &'a str,
            chunk_uri: String,
            #[serde(flatten)]
            chunk: &'a Chunk,
        }
        let records: Vec<RepoRecord> = lock(&self.shared.registry)
            .list()
            .into_iter()
            .filter(|r| r.status == RepoStatus::Ready)
            .cloned()
            .collect();
        // chunk://{repo_id or prefix}/{chunk id}
        if let Some((prefix, chunk_id)) = rest.split_once('/')
            && let Ok(record) = lock(&self.shared.registry).resolve(prefix).cloned()
            && let Ok(index) = self.ready_index(&record)
        {
            let index = read(&index);
            if let Some(chunk) = index.chunk_by_id(chunk_id) {
                let text = serde_json::to_string_pretty(&ChunkResource {
                    repo_id: &record.id,
                    chunk_uri: chunk_uri(&record.id, chunk),
                    chunk,
                })
                .map_err(|e| ToolError::Invalid(e.to_string()))?;
                return Ok(ResourceText {
                    uri: uri.to_string(),
                    mime_type: "application/json".into(),
                    text,
                });
            }
        }
        // chunk://{chunk id}: look in every ready repository.
        let mut found: Vec<(String, String)> = Vec::new();
        for record in &records {
            if let Ok(index) = self.ready_index(record) {
                let index = read(&index);
                if let Some(chunk) = index.chunk_by_id(rest) {
                    let text = serde_json::to_string_pretty(&ChunkResource {
                        repo_id: &record.id,
                        chunk_uri: chunk_uri(&record.id, chunk),
                        chunk,
                    })
                    .map_err(|e| ToolError::Invalid(e.to_string()))?;
                    found.push((record.id.clone(), text));
                }
            }
        }
        match found.len() {
            1 => {
                let (_, text) = found.remove(0);
                Ok(ResourceText {
                    uri: uri.to_string(),
                    mime_type: "application/json".into(),
                    text,
                })
            }
            0 => Err(ToolError::NotFound(format!(
                "no chunk '{rest}'; chunk ids look like 'path/file.py:12-40' and come from search_code results (chunk_uri)"
            ))),
            _ => Err(ToolError::Invalid(format!(
                "chunk '{rest}' exists in several repositories; use one of: {}",
                found
                    .iter()
                    .map(|(id, _)| format!("chunk://{id}/{rest}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
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

/// Serialize-to-JSON behind a trait object (resource bodies of several types).
mod erased {
    use super::ToolError;

    pub trait Json {
        fn to_json(&self) -> Result<String, ToolError>;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> Result<String, ToolError> {
            serde_json::to_string_pretty(self)
                .map_err(|e| ToolError::Invalid(format!("cannot encode the resource: {e}")))
        }
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

fn head_commit_of(root: &Path) -> Option<String> {
    source::head_commit(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_messages_are_actionable() {
        let err = text_arg("query", "   ", 10, "words").expect_err("empty");
        assert!(err.to_string().contains("query is empty"));
        let long = "x".repeat(11);
        let err = text_arg("query", &long, 10, "words").expect_err("long");
        assert!(err.to_string().contains("at most 10"), "{err}");
        assert_eq!(int_arg("top_k", None, 10, 1, 50).ok(), Some(10));
        let err = int_arg("top_k", Some(0), 10, 1, 50).expect_err("range");
        assert!(err.to_string().contains("between 1 and 50"), "{err}");
        assert!(int_arg("top_k", Some(51), 10, 1, 50).is_err());
        assert!(branch_arg(Some("feature/x".into())).is_ok());
        assert!(branch_arg(Some("bad branch".into())).is_err());
        assert!(branch_arg(Some("a..b".into())).is_err());
        assert_eq!(branch_arg(Some("  ".into())).ok(), Some(None));
        assert!(
            patterns_arg(
                "include_patterns",
                Some(vec!["*.py".into(), "src/**".into()])
            )
            .is_ok()
        );
        let err = patterns_arg("include_patterns", Some(vec!["[".into()])).expect_err("glob");
        assert!(err.to_string().contains("include_patterns"), "{err}");
    }
}
