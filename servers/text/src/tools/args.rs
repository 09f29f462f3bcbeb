//! Tool arguments: the structs their `inputSchema`s come from.

use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `list_files`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// Optional filter. Without '/' it matches file names at any depth ('*.py', 'test_*.py'); with '/' it matches the path from the root ('src/**/*.py'); a trailing '/' lists a directory ('tests/'); a leading '!' excludes.
    #[serde(default)]
    pub glob: Option<String>,
    /// Maximum number of paths to return (default 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    pub max_results: Option<u64>,
}

/// Arguments of `read_file`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File path relative to the repository root, e.g. 'src/app.py'.
    pub path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Last line to return, inclusive (default: end of file, at most 2000 lines per call); clamped to the file's length.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

/// Arguments of `grep`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regex (Rust/ripgrep syntax) matched against each line; literal text with fixed_strings=true.
    pub pattern: String,
    /// Treat the pattern as literal text rather than a regex (default false).
    #[serde(default)]
    pub fixed_strings: Option<bool>,
    /// Match case-insensitively (default false).
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Only search files matching this glob, same syntax as list_files ('*.py', 'src/**/*.py', 'tests/').
    #[serde(default)]
    pub glob: Option<String>,
    /// Lines of context before and after each match (default 0).
    #[serde(default)]
    #[schemars(range(min = 0, max = 20))]
    pub context_lines: Option<u64>,
    /// Maximum number of matching lines to return (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: Option<u64>,
}
