//! Tool arguments: the structs their `inputSchema`s come from.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

/// Accepts a list of strings or a single string.
fn string_or_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

// Arguments

/// Arguments of `init_repository`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitRepositoryArgs {
    /// Absolute path of the repository checkout to index.
    pub repo_path: String,
    /// Rebuild the graph and indexes even if a cached copy exists (default false).
    #[serde(default)]
    pub force_rebuild: Option<bool>,
}

/// Arguments of `get_dependencies`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetDependenciesArgs {
    /// Start entities: 'file_path:QualifiedName' (e.g. 'src/app.py:App.run'), a file ('src/app.py'), a directory ('src'), or '/'.
    #[serde(deserialize_with = "string_or_list")]
    pub entities: Vec<String>,
    /// 'downstream' (what they contain/call/import/inherit; alias 'outgoing'), 'upstream' (what contains/calls/imports/inherits them; alias 'incoming') or 'both' (default).
    #[serde(default)]
    pub direction: Option<String>,
    /// Hops to traverse: a non-negative integer, or -1 for unlimited (20). Default 2.
    #[serde(default)]
    #[schemars(range(min = -1))]
    pub depth: Option<i64>,
    /// Keep only neighbours of these types: 'directory', 'file', 'class', 'function'. Default: all.
    #[serde(default)]
    pub entity_types: Option<Vec<String>>,
    /// Follow only these edge types: 'contains', 'imports', 'invokes', 'inherits'. Default: all.
    #[serde(default)]
    pub dependency_types: Option<Vec<String>>,
}

/// Arguments of `explore_tree`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreTreeArgs {
    /// Entity to start from: '/' (the repository root, default), a directory, a file, or 'file_path:QualifiedName'.
    #[serde(default)]
    pub path: Option<String>,
    /// Levels to show: a non-negative integer, or -1 for unlimited (20). Default 2.
    #[serde(default)]
    #[schemars(range(min = -1))]
    pub depth: Option<i64>,
    /// 'downstream' (default; alias 'outgoing'), 'upstream' (alias 'incoming') or 'both'.
    #[serde(default)]
    pub direction: Option<String>,
    /// Keep only entities of these types: 'directory', 'file', 'class', 'function'. Default: all.
    #[serde(default)]
    pub entity_types: Option<Vec<String>>,
    /// Follow only these edge types: 'contains', 'imports', 'invokes', 'inherits'. Default: all.
    #[serde(default)]
    pub dependency_types: Option<Vec<String>>,
}

/// Arguments of `search_code`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeArgs {
    /// Search terms: entity names ('QuerySet', 'Engine.run'), entity ids ('pkg/core.py:Engine'), file paths, or keywords/code fragments from the issue.
    #[serde(deserialize_with = "string_or_list")]
    pub query: Vec<String>,
    /// Most code-content (BM25) results per term (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub top_k: Option<u64>,
    /// Only search files matching this glob ('src/**/*.py', '*' also matches '/') or containing this substring ('models/'). Default: all non-test files.
    #[serde(default)]
    pub file_pattern: Option<String>,
}

/// Arguments of `search_entities`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchEntitiesArgs {
    /// Names to look for, each searched separately ('ConfigLoader', 'parse config', 'query.py').
    #[serde(deserialize_with = "string_or_list")]
    pub query: Vec<String>,
    /// Matches per query (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub top_k: Option<u64>,
    /// Only entities of this type: 'file', 'class' or 'function'. Default: all three.
    #[serde(default)]
    pub entity_type: Option<String>,
}

/// Arguments of `get_code`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCodeArgs {
    /// Entity ids: 'file_path:QualifiedName' (e.g. 'src/app.py:App.run') or a file path ('src/app.py').
    #[serde(deserialize_with = "string_or_list")]
    pub entities: Vec<String>,
}

/// Arguments of `get_code_snippet`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCodeSnippetArgs {
    /// File path relative to the repository root, e.g. 'src/app.py'.
    pub file: String,
    /// First line, 1-based.
    #[schemars(range(min = 1))]
    pub start_line: i64,
    /// Last line, inclusive (clamped to the file's length).
    #[schemars(range(min = 1))]
    pub end_line: i64,
}

/// Arguments of `reset_repository` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetRepositoryArgs {}
