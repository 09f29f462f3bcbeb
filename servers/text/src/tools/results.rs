//! What the tools return: the structs their `outputSchema`s come from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Structured result of `list_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListFilesOutput {
    /// Repo-relative paths, sorted.
    pub files: Vec<String>,
    /// How many files matched in total.
    pub total_files: usize,
    /// How many of them were left out.
    pub truncated: usize,
}

/// One numbered line of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NumberedLine {
    /// 1-based line number.
    pub line: usize,
    /// The line without its terminator (cut if very long).
    pub text: String,
}

/// Structured result of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileOutput {
    /// Repo-relative path of the file read.
    pub path: String,
    /// First line returned (1-based).
    pub start_line: usize,
    /// Last line returned (inclusive; `start_line - 1` when nothing was returned).
    pub end_line: usize,
    /// Number of lines in the file.
    pub total_lines: usize,
    /// The lines returned.
    pub lines: Vec<NumberedLine>,
    /// Lines of the requested range that were not returned.
    pub truncated: usize,
    /// Where to continue reading, when `truncated > 0`.
    pub next_start_line: Option<usize>,
}

/// One matching line found by `grep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepMatch {
    /// Repo-relative path.
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// The matching line (cut if very long).
    pub text: String,
    /// Non-matching lines shown before it.
    pub context_before: Vec<NumberedLine>,
    /// Non-matching lines shown after it.
    pub context_after: Vec<NumberedLine>,
}

/// Structured result of `grep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepOutput {
    /// Matches returned, by path then line.
    pub matches: Vec<GrepMatch>,
    /// Matching lines found in total.
    pub total_matches: usize,
    /// Files with at least one match.
    pub total_files: usize,
    /// Matching lines not returned.
    pub truncated: usize,
    /// Files holding matches that were not returned.
    pub truncated_files: usize,
}
