//! Tool arguments (the structs their `inputSchema`s come from) and the validation
//! every tool applies to them, with messages that say what to pass instead.

use navbench_server_support::walk::FileGlob;
use schemars::JsonSchema;
use serde::Deserialize;

use super::ToolError;
use crate::chunk::ChunkKind;
use crate::scope::Scope;

/// Most include/exclude patterns accepted.
const MAX_PATTERNS: usize = 100;

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
    /// Globs selecting files to index, e.g. ['*.py', 'src/**']; empty = every indexable file (Python, TypeScript/JavaScript, Java, Go, Rust, Markdown, reST, text, config).
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
    /// Classes and other types (interfaces, structs, enums, traits, Rust `impl` blocks).
    Class,
    /// Module-level code.
    Module,
    /// Text files (Markdown, reST, plain text, config).
    Text,
}

impl ChunkTypeFilter {
    /// The chunk kind kept, `None` for every kind.
    pub(super) fn kind(self) -> Option<ChunkKind> {
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
// Validation

/// `search_code`'s file filter: trimmed, at most 500 characters, a valid glob when it
/// looks like one (`*`, `?`, `[`); blank means none.
pub(super) fn file_filter_arg(value: Option<&str>) -> Result<Option<String>, ToolError> {
    match value.map(str::trim).filter(|f| !f.is_empty()) {
        Some(f) if f.chars().count() > 500 => Err(ToolError::Invalid(
            "file_filter is longer than 500 characters".into(),
        )),
        Some(f) => {
            if f.contains(['*', '?', '[']) {
                FileGlob::new(f).map_err(|e| ToolError::Invalid(format!("file_filter: {e}")))?;
            }
            Ok(Some(f.to_string()))
        }
        None => Ok(None),
    }
}

/// Trimmed, non-empty, at most `max` characters.
pub(super) fn text_arg<'a>(
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
pub(super) fn int_arg(
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

pub(super) fn patterns_arg(
    field: &str,
    value: Option<Vec<String>>,
) -> Result<Vec<String>, ToolError> {
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

pub(super) fn branch_arg(value: Option<String>) -> Result<Option<String>, ToolError> {
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
