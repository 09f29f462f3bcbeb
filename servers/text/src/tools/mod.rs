//! The logic behind the three tools, free of MCP: arguments in, text plus data out.
//!
//! [`TextTools`] owns a [`Sandbox`] and the output [`Limits`]. Each tool method takes
//! its argument struct ([`args`]) and returns a [`ToolOutput`]: the text an agent reads
//! and the same data as a serializable struct ([`results`], sent as
//! `structuredContent`), or a [`ToolError`] ([`errors`]) whose message tells the agent
//! what to do instead. One module per tool: [`list`], [`read`], [`grep`].

mod args;
mod errors;
mod grep;
mod list;
mod read;
mod results;
#[cfg(test)]
mod tests;

pub use args::{GrepArgs, ListFilesArgs, ReadFileArgs};
pub use errors::ToolError;
pub use results::{GrepMatch, GrepOutput, ListFilesOutput, NumberedLine, ReadFileOutput};

use navbench_server_support::sandbox::Sandbox;
use navbench_server_support::walk::{WalkOptions, WalkedFile, walk_files};

/// Upper bound for `list_files`' `max_results`.
pub const LIST_MAX_RESULTS_LIMIT: usize = 10_000;
/// Upper bound for `grep`'s `max_results`.
pub const GREP_MAX_RESULTS_LIMIT: usize = 1_000;
/// Upper bound for `grep`'s `context_lines`.
pub const GREP_MAX_CONTEXT: usize = 20;

/// Output limits; see [`Limits::default`] for the values the server starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Cap on the text of one tool result in bytes; output is cut at a line boundary
    /// with an explicit marker beyond it.
    pub max_output_bytes: usize,
    /// Most lines one `read_file` call returns.
    pub read_max_lines: usize,
    /// `list_files`' default `max_results`.
    pub list_default_max: usize,
    /// `grep`'s default `max_results`.
    pub grep_default_max: usize,
}

impl Default for Limits {
    /// 100 kB of text, 2,000 lines per read, 500 files per listing, 100 grep matches.
    fn default() -> Self {
        Limits {
            max_output_bytes: 100_000,
            read_max_lines: 2000,
            list_default_max: 500,
            grep_default_max: 100,
        }
    }
}

/// What a tool returns (shared by every navbench server).
pub use navbench_server_support::mcp::ToolOutput;

/// The three file tools over one sandboxed repository.
#[derive(Debug, Clone)]
pub struct TextTools {
    sandbox: Sandbox,
    limits: Limits,
}

impl TextTools {
    /// Tools over the repository that `sandbox` confines paths to.
    pub fn new(sandbox: Sandbox, limits: Limits) -> TextTools {
        TextTools { sandbox, limits }
    }

    /// The sandbox paths are resolved in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The output limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The repository's files (sorted, `.gitignore` honoured, hidden files left out)
    /// that match `glob`, or every file when there is none.
    fn files_matching(&self, glob: Option<&str>) -> Result<Vec<WalkedFile>, ToolError> {
        let opts = WalkOptions {
            glob: glob.map(str::to_string),
            include_hidden: false,
            max_files: None,
        };
        Ok(walk_files(self.sandbox.root(), &opts)?)
    }
}

/// A glob argument, trimmed; blank means none.
fn nonblank(glob: Option<&str>) -> Option<&str> {
    glob.map(str::trim).filter(|g| !g.is_empty())
}

/// Validates an optional numeric argument against `min..=max`, defaulting to `default`.
fn bounded(
    name: &str,
    value: Option<u64>,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, ToolError> {
    match value {
        None => Ok(default),
        Some(v) if (min as u64..=max as u64).contains(&v) => Ok(to_usize(v)),
        Some(v) => Err(ToolError::InvalidArgument(format!(
            "{name} {v} is out of range; pass a value between {min} and {max} (default {default})"
        ))),
    }
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Splits text into lines without terminators; a final newline does not start a line.
fn split_lines(content: &str) -> Vec<&str> {
    let body = content.strip_suffix('\n').unwrap_or(content);
    if content.is_empty() {
        return Vec::new();
    }
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Cuts a line after `max` characters, saying how much was left out.
fn cut_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_string(),
        Some((idx, _)) => {
            let rest = line[idx..].chars().count();
            format!("{}... [line cut: {rest} more characters]", &line[..idx])
        }
    }
}

/// Collapses a multi-line error message (regex errors draw a caret diagram).
fn one_line(msg: &str) -> String {
    let lines: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '^' || c == '~'))
        .collect();
    lines.join(" ")
}
