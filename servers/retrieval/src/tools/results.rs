//! What the tools return (their `outputSchema`s): one wire shape per concept. A chunk
//! of code is always a [`CodeChunk`], whichever tool returns it; the repository
//! outputs describe registry records.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::index::progress::ProgressSnapshot;
use crate::rag::{Citation, Evidence};
use crate::registry::{RepoStatus, SourceKind};

/// One chunk of code as every tool returns it: `codebase_retrieval` and `search_code`
/// results, `query_code` evidence, `get_implementation` results. Search results carry
/// `score` and `reason`; `get_implementation` results carry `relation` and the chunk's
/// metadata. `file`, `content`, `score`, `lines` and `reason` are codebase_retrieval's
/// documented fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeChunk {
    /// File path relative to the repository root.
    pub file: String,
    /// Line range, e.g. '45-78'.
    pub lines: String,
    /// First line (1-based).
    pub start_line: usize,
    /// Last line (inclusive).
    pub end_line: usize,
    /// function, method, class, module or text.
    pub chunk_type: String,
    /// Qualified name of a definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The code.
    pub content: String,
    /// Relevance score, 0-1 (search results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// Why this was matched: semantic and keyword ranks (search results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Resource URI of the chunk: chunk://{repo_id}/{chunk id} (search_code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_uri: Option<String>,
    /// get_implementation: 'entity', 'same-file helper', 'callee' or 'imported'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// get_implementation, related chunks: the entity they relate to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_to: Option<String>,
    /// get_implementation: calls the chunk makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
    /// get_implementation: imports it uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports_used: Vec<String>,
    /// get_implementation: exceptions it handles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exceptions_handled: Vec<String>,
}

impl CodeChunk {
    /// The chunk as `query_code` shows it to the model.
    pub fn as_evidence(&self) -> Evidence<'_> {
        Evidence {
            file: &self.file,
            start_line: self.start_line,
            end_line: self.end_line,
            kind: &self.chunk_type,
            name: self.name.as_deref(),
            content: &self.content,
        }
    }
}

impl CodeChunk {
    /// The wire form of an indexed chunk, without search or relation details.
    pub fn of(c: &Chunk) -> CodeChunk {
        CodeChunk {
            file: c.file.clone(),
            lines: format!("{}-{}", c.start_line, c.end_line),
            start_line: c.start_line,
            end_line: c.end_line,
            chunk_type: c.kind.as_str().to_string(),
            name: c.name.clone(),
            content: c.content.clone(),
            score: None,
            reason: None,
            chunk_uri: None,
            relation: None,
            related_to: None,
            calls: Vec::new(),
            imports_used: Vec::new(),
            exceptions_handled: Vec::new(),
        }
    }

    /// A search result: the chunk with its score (clamped to 0-1) and reason.
    pub fn hit(c: &Chunk, score: f32, reason: &str) -> CodeChunk {
        CodeChunk {
            score: Some(score.clamp(0.0, 1.0)),
            reason: Some(reason.to_string()),
            ..CodeChunk::of(c)
        }
    }

    /// The citation form, `[file:start-end]`.
    pub fn citation(&self) -> String {
        format!("[{}:{}]", self.file, self.lines)
    }
}

/// `codebase_retrieval` metadata. The wall-clock values (`lastIndexed`, when the index
/// last changed, and `queryTimeMs`) are in the result's `_meta`, so that the same
/// search on the same tree is the same bytes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalMetadata {
    /// Workspace root path.
    pub workspace: String,
    /// Number of results returned.
    pub total_results: usize,
}

/// Structured result of `codebase_retrieval`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CodebaseRetrievalOutput {
    /// Results, best first.
    pub results: Vec<CodeChunk>,
    /// Workspace and result count.
    pub metadata: RetrievalMetadata,
}

/// Structured result of `index_repository` (and of the workspace's index call). Its
/// times are in the result's `_meta`: `elapsed_ms` and `timings_ms` (where the
/// indexing time went — fingerprint: the walk; parse: chunking; vectors: embedding
/// cache and embedding; text: the BM25 index; write: the chunk store; zeros while
/// indexing goes on).
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
    /// Whether indexing ever completed (when: `_meta.indexed_at`, by repo_id).
    pub indexed: bool,
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
    /// Whether indexing ever completed (when: the result's `_meta.indexed_at`).
    pub indexed: bool,
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
    /// While indexing: stage, chunks embedded / to embed, rate and ETA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressSnapshot>,
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
    /// What happened (the update's time is the result's `_meta.elapsed_ms`).
    pub message: String,
}

/// Structured result of `search_code`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchCodeOutput {
    /// Results, best first.
    pub results: Vec<CodeChunk>,
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
    pub evidence: Vec<CodeChunk>,
    /// True when the answer has citations and every one lies inside the evidence.
    pub grounded: bool,
    /// Model that answered.
    pub model: String,
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
    pub results: Vec<CodeChunk>,
    /// How many.
    pub count: usize,
}
