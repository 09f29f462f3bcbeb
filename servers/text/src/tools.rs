//! The logic behind the three tools, free of MCP: arguments in, text plus data out.
//!
//! [`TextTools`] owns a [`Sandbox`] and the output [`Limits`]. Each tool method takes
//! its argument struct and returns a [`ToolOutput`]: the text an agent reads and the
//! same data as a serializable struct (sent as `structuredContent`), or a
//! [`ToolError`] whose message tells the agent what to do instead.

use std::collections::BTreeMap;
use std::io;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use navbench_server_support::sandbox::{Sandbox, SandboxError};
use navbench_server_support::walk::{WalkError, WalkOptions, walk_files};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest file `read_file` loads into memory.
const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;
/// Longest line `read_file` shows before cutting it.
const READ_MAX_LINE_CHARS: usize = 2000;
/// Longest line `grep` shows before cutting it.
const GREP_MAX_LINE_CHARS: usize = 500;
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

/// What a tool returns (shared by every navbench server).
pub use navbench_server_support::mcp::ToolOutput;

/// Why a tool call failed; the message is written for the agent.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The path was refused or does not exist.
    #[error(transparent)]
    Path(#[from] SandboxError),
    /// An invalid glob.
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    InvalidArgument(String),
    /// The file exists but cannot be shown as text.
    #[error("{0}")]
    Unreadable(String),
    /// The regex does not compile.
    #[error(
        "invalid regular expression '{pattern}': {reason}. If you meant the literal text, call grep again with fixed_strings=true"
    )]
    InvalidRegex {
        /// The pattern as given.
        pattern: String,
        /// What the regex parser reported.
        reason: String,
    },
}

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

    /// Lists repo-relative file paths, sorted, honouring `.gitignore`.
    pub fn list_files(
        &self,
        args: &ListFilesArgs,
    ) -> Result<ToolOutput<ListFilesOutput>, ToolError> {
        let max = bounded(
            "max_results",
            args.max_results,
            self.limits.list_default_max,
            1,
            LIST_MAX_RESULTS_LIMIT,
        )?;
        let glob = args
            .glob
            .as_deref()
            .map(str::trim)
            .filter(|g| !g.is_empty());
        let opts = WalkOptions {
            glob: glob.map(str::to_string),
            include_hidden: false,
            max_files: None,
        };
        let all = walk_files(self.sandbox.root(), &opts)?;
        let total = all.len();
        let mut files = Vec::new();
        let mut text = String::new();
        for file in all.into_iter().take(max) {
            if !text.is_empty() && text.len() + file.rel.len() + 1 > self.limits.max_output_bytes {
                break;
            }
            text.push_str(&file.rel);
            text.push('\n');
            files.push(file.rel);
        }
        let truncated = total - files.len();
        if total == 0 {
            text = match glob {
                Some(g) => format!(
                    "No files match glob '{g}'. Try a broader pattern such as '**/*.py', or omit glob to list everything."
                ),
                None => "The repository has no (non-ignored) files.".to_string(),
            };
        } else if truncated > 0 {
            let advice = if files.len() < max {
                "output size limit reached; narrow with glob (e.g. 'src/**/*.py')".to_string()
            } else {
                format!(
                    "narrow with glob (e.g. 'src/**/*.py') or raise max_results (at most {LIST_MAX_RESULTS_LIMIT})"
                )
            };
            text.push_str(&format!(
                "... [truncated: {truncated} more files ({total} in total); {advice}]"
            ));
        }
        Ok(ToolOutput {
            is_error: false,
            text: text.trim_end_matches('\n').to_string(),
            data: ListFilesOutput {
                files,
                total_files: total,
                truncated,
            },
        })
    }

    /// Returns numbered lines of one file; see [`ReadFileArgs`].
    pub fn read_file(&self, args: &ReadFileArgs) -> Result<ToolOutput<ReadFileOutput>, ToolError> {
        let abs = self.sandbox.resolve(&args.path)?;
        let rel = self.sandbox.relative(&abs);
        let meta = std::fs::metadata(&abs)
            .map_err(|e| ToolError::Unreadable(format!("cannot read '{rel}': {e}")))?;
        if meta.is_dir() {
            let glob = if rel == "." {
                String::new()
            } else {
                format!(" with glob '{rel}/'")
            };
            return Err(ToolError::Unreadable(format!(
                "'{rel}' is a directory, not a file; call list_files{glob} to see the files in it"
            )));
        }
        if meta.len() > MAX_READ_BYTES {
            return Err(ToolError::Unreadable(format!(
                "'{rel}' is {} bytes, too large to read (limit {MAX_READ_BYTES}); use grep with glob '{rel}' to find the lines you need",
                meta.len()
            )));
        }
        let bytes = std::fs::read(&abs)
            .map_err(|e| ToolError::Unreadable(format!("cannot read '{rel}': {e}")))?;
        if bytes.contains(&0) {
            return Err(ToolError::Unreadable(format!(
                "'{rel}' looks like a binary file (it contains NUL bytes), so read_file will not show it; only text files can be read"
            )));
        }
        let content = String::from_utf8_lossy(&bytes);
        let all_lines = split_lines(&content);
        let total = all_lines.len();

        let start = match args.start_line {
            None => 1,
            Some(0) => {
                return Err(ToolError::InvalidArgument(format!(
                    "start_line 0 is invalid: lines are numbered from 1; '{rel}' has {total} lines"
                )));
            }
            Some(n) => to_usize(n),
        };
        if total == 0 {
            if args.start_line.is_some_and(|s| s > 1) {
                return Err(ToolError::InvalidArgument(format!(
                    "start_line {start} is past the end of '{rel}', which is empty (0 lines)"
                )));
            }
            return Ok(ToolOutput {
                is_error: false,
                text: format!("[empty file: '{rel}' has 0 lines]"),
                data: ReadFileOutput {
                    path: rel,
                    start_line: 1,
                    end_line: 0,
                    total_lines: 0,
                    lines: Vec::new(),
                    truncated: 0,
                    next_start_line: None,
                },
            });
        }
        if start > total {
            return Err(ToolError::InvalidArgument(format!(
                "start_line {start} is past the end of '{rel}', which has {total} lines; pass start_line between 1 and {total}"
            )));
        }
        let requested_end = match args.end_line {
            None => total,
            Some(e) if to_usize(e) < start => {
                return Err(ToolError::InvalidArgument(format!(
                    "end_line {e} is before start_line {start}; pass end_line >= start_line ('{rel}' has {total} lines)"
                )));
            }
            Some(e) => to_usize(e).min(total),
        };
        let line_cap_end = requested_end.min(start.saturating_add(self.limits.read_max_lines) - 1);

        let mut text = String::new();
        let mut lines = Vec::new();
        let mut last = start - 1;
        for n in start..=line_cap_end {
            let shown = cut_line(all_lines[n - 1], READ_MAX_LINE_CHARS);
            let row = format!("{n:>6}\t{shown}\n");
            if !lines.is_empty() && text.len() + row.len() > self.limits.max_output_bytes {
                break;
            }
            text.push_str(&row);
            lines.push(NumberedLine {
                line: n,
                text: shown,
            });
            last = n;
        }
        let truncated = requested_end - last;
        let next_start_line = (truncated > 0).then_some(last + 1);
        if let Some(next) = next_start_line {
            text.push_str(&format!(
                "... [truncated: {truncated} more lines ('{rel}' has {total} lines); call read_file with start_line={next} to continue]"
            ));
        }
        Ok(ToolOutput {
            is_error: false,
            text: text.trim_end_matches('\n').to_string(),
            data: ReadFileOutput {
                path: rel,
                start_line: start,
                end_line: last,
                total_lines: total,
                lines,
                truncated,
                next_start_line,
            },
        })
    }

    /// Searches file contents line by line, ripgrep style; see [`GrepArgs`].
    pub fn grep(&self, args: &GrepArgs) -> Result<ToolOutput<GrepOutput>, ToolError> {
        if args.pattern.is_empty() {
            return Err(ToolError::InvalidArgument(
                "pattern is empty; pass the text or regex to search for, e.g. 'def parse_' or 'class \\w+Error'"
                    .to_string(),
            ));
        }
        let max = bounded(
            "max_results",
            args.max_results,
            self.limits.grep_default_max,
            1,
            GREP_MAX_RESULTS_LIMIT,
        )?;
        let context = bounded("context_lines", args.context_lines, 0, 0, GREP_MAX_CONTEXT)?;
        let fixed = args.fixed_strings.unwrap_or(false);
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive.unwrap_or(false))
            .fixed_strings(fixed)
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| {
                let reason = e.to_string();
                if fixed {
                    ToolError::InvalidArgument(format!(
                        "pattern '{}' cannot be searched: {}; patterns must match within one line",
                        args.pattern,
                        reason.trim()
                    ))
                } else {
                    ToolError::InvalidRegex {
                        pattern: args.pattern.clone(),
                        reason: one_line(&reason),
                    }
                }
            })?;
        let glob = args
            .glob
            .as_deref()
            .map(str::trim)
            .filter(|g| !g.is_empty());
        let opts = WalkOptions {
            glob: glob.map(str::to_string),
            include_hidden: false,
            max_files: None,
        };
        let files = walk_files(self.sandbox.root(), &opts)?;
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .build();

        let mut render = GrepRender::new(context, max, self.limits.max_output_bytes);
        for file in &files {
            let mut sink = FileSink::default();
            if let Err(e) = searcher.search_path(&matcher, &file.abs, &mut sink) {
                tracing::warn!(path = %file.rel, error = %e, "grep: skipping unreadable file");
                continue;
            }
            if sink.binary || sink.matches == 0 {
                continue;
            }
            render.add_file(&file.rel, &sink.lines);
        }
        Ok(render.finish(&args.pattern, glob))
    }
}

/// Collects one file's matching and context lines.
#[derive(Default)]
struct FileSink {
    /// Line number → (text, is_match).
    lines: BTreeMap<usize, (String, bool)>,
    matches: usize,
    binary: bool,
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let line = mat.line_number().map_or(0, to_usize);
        self.lines.insert(line, (line_text(mat.bytes()), true));
        self.matches += 1;
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let line = ctx.line_number().map_or(0, to_usize);
        self.lines
            .entry(line)
            .or_insert_with(|| (line_text(ctx.bytes()), false));
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Accumulates grep output across files under the match and byte budgets.
struct GrepRender {
    context: usize,
    max: usize,
    max_bytes: usize,
    text: String,
    matches: Vec<GrepMatch>,
    total_matches: usize,
    total_files: usize,
    truncated_files: usize,
    /// Set once the byte budget ran out; nothing more is rendered.
    full: bool,
}

impl GrepRender {
    fn new(context: usize, max: usize, max_bytes: usize) -> GrepRender {
        GrepRender {
            context,
            max,
            max_bytes,
            text: String::new(),
            matches: Vec::new(),
            total_matches: 0,
            total_files: 0,
            truncated_files: 0,
            full: false,
        }
    }

    fn add_file(&mut self, path: &str, lines: &BTreeMap<usize, (String, bool)>) {
        let file_matches: Vec<usize> = lines
            .iter()
            .filter(|(_, (_, m))| *m)
            .map(|(n, _)| *n)
            .collect();
        self.total_matches += file_matches.len();
        self.total_files += 1;
        let room = if self.full {
            0
        } else {
            self.max.saturating_sub(self.matches.len())
        };
        let selected = &file_matches[..room.min(file_matches.len())];
        // Context is shown only up to the first match that is not shown.
        let limit_line = file_matches
            .get(selected.len())
            .copied()
            .unwrap_or(usize::MAX);
        let near_selected = |n: usize| selected.iter().any(|&m| m.abs_diff(n) <= self.context);
        let mut shown_in_file = 0;
        let mut prev: Option<usize> = None;
        let mut shown_lines: Vec<(usize, &str, bool)> = Vec::new();
        for (&n, (text, is_match)) in lines {
            if self.full || n >= limit_line {
                break;
            }
            if !near_selected(n) {
                continue;
            }
            let sep = if *is_match { ':' } else { '-' };
            let mut row = String::new();
            let starts_group = prev.is_none_or(|p| p + 1 != n);
            if self.context > 0 && starts_group && !self.text.is_empty() {
                row.push_str("--\n");
            }
            row.push_str(&format!("{path}{sep}{n}{sep}{text}\n"));
            if !self.text.is_empty() && self.text.len() + row.len() > self.max_bytes {
                self.full = true;
                break;
            }
            self.text.push_str(&row);
            prev = Some(n);
            shown_lines.push((n, text.as_str(), *is_match));
            if *is_match {
                shown_in_file += 1;
            }
        }
        for &(n, text, is_match) in &shown_lines {
            if !is_match {
                continue;
            }
            let ctx = |range: std::ops::RangeInclusive<usize>| -> Vec<NumberedLine> {
                shown_lines
                    .iter()
                    .filter(|(l, _, m)| !m && range.contains(l))
                    .map(|(l, t, _)| NumberedLine {
                        line: *l,
                        text: (*t).to_string(),
                    })
                    .collect()
            };
            self.matches.push(GrepMatch {
                path: path.to_string(),
                line: n,
                text: text.to_string(),
                context_before: ctx(n.saturating_sub(self.context)..=n.saturating_sub(1)),
                context_after: ctx(n + 1..=n + self.context),
            });
        }
        if shown_in_file < file_matches.len() {
            self.truncated_files += 1;
        }
    }

    fn finish(mut self, pattern: &str, glob: Option<&str>) -> ToolOutput<GrepOutput> {
        let truncated = self.total_matches - self.matches.len();
        if self.total_matches == 0 {
            self.text = match glob {
                Some(g) => {
                    format!("No matches for pattern '{pattern}' in files matching glob '{g}'.")
                }
                None => format!("No matches for pattern '{pattern}'."),
            };
        } else if truncated > 0 {
            let advice = if self.full {
                "output size limit reached; narrow the pattern or glob, or use fewer context_lines"
                    .to_string()
            } else {
                format!(
                    "narrow the pattern or glob, or raise max_results (at most {GREP_MAX_RESULTS_LIMIT})"
                )
            };
            self.text.push_str(&format!(
                "... [truncated: {truncated} more matches in {} files ({} matches in {} files in total); {advice}]",
                self.truncated_files, self.total_matches, self.total_files
            ));
        }
        ToolOutput {
            is_error: false,
            text: self.text.trim_end_matches('\n').to_string(),
            data: GrepOutput {
                matches: self.matches,
                total_matches: self.total_matches,
                total_files: self.total_files,
                truncated,
                truncated_files: self.truncated_files,
            },
        }
    }
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

/// A searcher line as text, without its terminator.
fn line_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    cut_line(text, GREP_MAX_LINE_CHARS)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn write(root: &Path, rel: &str, body: &[u8]) {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(path, body).expect("write");
    }

    fn fixture() -> (tempfile::TempDir, TextTools) {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = dir.path();
        write(
            r,
            "src/app.py",
            b"import os\n\ndef parse(x):\n    return int(x)\n\nclass ParseError(Exception):\n    pass\n",
        );
        write(r, "src/util.py", b"def helper():\n    return parse('1')\n");
        write(r, "README.md", b"# Demo\nCall parse() to parse.\n");
        write(r, "build/gen.py", b"def parse(): pass\n");
        write(r, ".gitignore", b"build/\n");
        write(r, "data.bin", b"parse\0\x01\x02binary");
        write(r, "empty.txt", b"");
        let tools = TextTools::new(Sandbox::new(r).expect("sandbox"), Limits::default());
        (dir, tools)
    }

    #[test]
    fn list_files_sorted_ignoring_gitignored() {
        let (_d, t) = fixture();
        let out = t.list_files(&ListFilesArgs::default()).expect("list");
        assert_eq!(
            out.data.files,
            [
                "README.md",
                "data.bin",
                "empty.txt",
                "src/app.py",
                "src/util.py"
            ]
        );
        assert_eq!(out.text, out.data.files.join("\n"));
        assert_eq!(out.data.truncated, 0);
    }

    #[test]
    fn list_files_glob_and_truncation() {
        let (_d, t) = fixture();
        let out = t
            .list_files(&ListFilesArgs {
                glob: Some("*.py".into()),
                max_results: Some(1),
            })
            .expect("list");
        assert_eq!(out.data.files, ["src/app.py"]);
        assert_eq!(out.data.total_files, 2);
        assert_eq!(out.data.truncated, 1);
        assert!(
            out.text.contains("... [truncated: 1 more files"),
            "{}",
            out.text
        );
        let none = t
            .list_files(&ListFilesArgs {
                glob: Some("*.rs".into()),
                max_results: None,
            })
            .expect("list");
        assert!(none.text.contains("No files match glob '*.rs'"));
        let err = t
            .list_files(&ListFilesArgs {
                glob: Some("[".into()),
                max_results: None,
            })
            .expect_err("bad glob");
        assert!(err.to_string().contains("invalid glob"));
        let err = t
            .list_files(&ListFilesArgs {
                glob: None,
                max_results: Some(0),
            })
            .expect_err("zero");
        assert!(err.to_string().contains("between 1 and 10000"));
    }

    #[test]
    fn read_file_numbers_lines() {
        let (_d, t) = fixture();
        let out = t
            .read_file(&ReadFileArgs {
                path: "src/app.py".into(),
                start_line: Some(3),
                end_line: Some(4),
            })
            .expect("read");
        assert_eq!(out.text, "     3\tdef parse(x):\n     4\t    return int(x)");
        assert_eq!(out.data.total_lines, 7);
        assert_eq!((out.data.start_line, out.data.end_line), (3, 4));
        assert_eq!(out.data.truncated, 0);
        // end_line past the end is clamped.
        let out = t
            .read_file(&ReadFileArgs {
                path: "src/app.py".into(),
                start_line: Some(6),
                end_line: Some(100),
            })
            .expect("read");
        assert_eq!(out.data.end_line, 7);
        assert_eq!(out.data.lines.len(), 2);
    }

    #[test]
    fn read_file_range_errors_name_line_count() {
        let (_d, t) = fixture();
        let err = t
            .read_file(&ReadFileArgs {
                path: "src/app.py".into(),
                start_line: Some(50),
                end_line: None,
            })
            .expect_err("past end");
        assert!(err.to_string().contains("has 7 lines"), "{err}");
        let err = t
            .read_file(&ReadFileArgs {
                path: "src/app.py".into(),
                start_line: Some(0),
                end_line: None,
            })
            .expect_err("zero");
        assert!(err.to_string().contains("numbered from 1"), "{err}");
        let err = t
            .read_file(&ReadFileArgs {
                path: "src/app.py".into(),
                start_line: Some(5),
                end_line: Some(2),
            })
            .expect_err("reversed");
        assert!(err.to_string().contains("before start_line"), "{err}");
    }

    #[test]
    fn read_file_truncates_with_marker() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
        write(dir.path(), "big.txt", body.as_bytes());
        let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), Limits::default());
        let out = t
            .read_file(&ReadFileArgs {
                path: "big.txt".into(),
                ..ReadFileArgs::default()
            })
            .expect("read");
        assert_eq!(out.data.lines.len(), 2000);
        assert_eq!(out.data.truncated, 500);
        assert_eq!(out.data.next_start_line, Some(2001));
        assert!(out.text.ends_with(
            "... [truncated: 500 more lines ('big.txt' has 2500 lines); call read_file with start_line=2001 to continue]"
        ));
        // The byte budget cuts earlier, at a line boundary.
        let small = Limits {
            max_output_bytes: 100,
            ..Limits::default()
        };
        let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), small);
        let out = t
            .read_file(&ReadFileArgs {
                path: "big.txt".into(),
                ..ReadFileArgs::default()
            })
            .expect("read");
        let shown = out.data.lines.len();
        assert!(shown > 0 && shown < 10, "{shown}");
        assert_eq!(out.data.next_start_line, Some(shown + 1));
    }

    #[test]
    fn read_file_refuses_binary_dirs_missing_and_escapes() {
        let (_d, t) = fixture();
        let read = |p: &str| {
            t.read_file(&ReadFileArgs {
                path: p.into(),
                ..ReadFileArgs::default()
            })
        };
        assert!(
            read("data.bin")
                .expect_err("bin")
                .to_string()
                .contains("binary")
        );
        assert!(
            read("src")
                .expect_err("dir")
                .to_string()
                .contains("directory")
        );
        assert!(
            read("src/nope.py")
                .expect_err("missing")
                .to_string()
                .contains("does not exist")
        );
        assert!(
            read("../x")
                .expect_err("escape")
                .to_string()
                .contains("leaves the repository root")
        );
        let empty = read("empty.txt").expect("empty");
        assert_eq!(empty.data.total_lines, 0);
        assert!(empty.text.contains("empty file"));
    }

    #[test]
    fn read_file_cuts_very_long_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "min.js", "x".repeat(5000).as_bytes());
        let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), Limits::default());
        let out = t
            .read_file(&ReadFileArgs {
                path: "min.js".into(),
                ..ReadFileArgs::default()
            })
            .expect("read");
        assert!(out.text.ends_with("... [line cut: 3000 more characters]"));
    }

    fn grep(pattern: &str) -> GrepArgs {
        GrepArgs {
            pattern: pattern.into(),
            ..GrepArgs::default()
        }
    }

    #[test]
    fn grep_ripgrep_format_sorted_skipping_ignored_and_binary() {
        let (_d, t) = fixture();
        let out = t.grep(&grep("parse")).expect("grep");
        assert_eq!(
            out.text,
            "README.md:2:Call parse() to parse.\nsrc/app.py:3:def parse(x):\nsrc/util.py:2:    return parse('1')"
        );
        assert_eq!(out.data.total_matches, 3);
        assert_eq!(out.data.total_files, 3);
        assert!(out.data.matches.iter().all(|m| m.path != "data.bin"));
        assert!(
            out.data
                .matches
                .iter()
                .all(|m| !m.path.starts_with("build/"))
        );
    }

    #[test]
    fn grep_context_lines_and_separators() {
        let (_d, t) = fixture();
        let out = t
            .grep(&GrepArgs {
                context_lines: Some(1),
                glob: Some("src/*.py".into()),
                ..grep("def ")
            })
            .expect("grep");
        assert_eq!(
            out.text,
            "src/app.py-2-\nsrc/app.py:3:def parse(x):\nsrc/app.py-4-    return int(x)\n--\nsrc/util.py:1:def helper():\nsrc/util.py-2-    return parse('1')"
        );
        let first = &out.data.matches[0];
        assert_eq!(
            first.context_before,
            [NumberedLine {
                line: 2,
                text: String::new()
            }]
        );
        assert_eq!(first.context_after[0].line, 4);
    }

    #[test]
    fn grep_truncates_and_counts_the_rest() {
        let (_d, t) = fixture();
        let out = t
            .grep(&GrepArgs {
                max_results: Some(1),
                case_insensitive: Some(true),
                ..grep("PARSE")
            })
            .expect("grep");
        assert_eq!(out.data.matches.len(), 1);
        assert_eq!(out.data.total_matches, 4);
        assert_eq!(out.data.truncated, 3);
        assert_eq!(out.data.truncated_files, 2);
        assert!(
            out.text
                .contains("... [truncated: 3 more matches in 2 files"),
            "{}",
            out.text
        );
    }

    #[test]
    fn grep_byte_budget_cuts_at_line_boundary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body: String = (1..=200).map(|i| format!("match line {i}\n")).collect();
        write(dir.path(), "many.txt", body.as_bytes());
        let limits = Limits {
            max_output_bytes: 1000,
            ..Limits::default()
        };
        let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), limits);
        let out = t.grep(&grep("match")).expect("grep");
        let shown = out.data.matches.len();
        assert!(shown > 0 && shown < 100, "{shown}");
        assert_eq!(out.data.truncated, 200 - shown);
        assert!(
            out.text.contains("output size limit reached"),
            "{}",
            out.text
        );
        let last_row = out.text.lines().rev().nth(1).unwrap_or_default();
        assert_eq!(last_row, format!("many.txt:{shown}:match line {shown}"));
    }

    #[test]
    fn grep_argument_errors() {
        let (_d, t) = fixture();
        let err = t.grep(&grep("parse(")).expect_err("bad regex");
        let msg = err.to_string();
        assert!(msg.contains("invalid regular expression 'parse('"), "{msg}");
        assert!(msg.contains("fixed_strings=true"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        let out = t
            .grep(&GrepArgs {
                fixed_strings: Some(true),
                ..grep("parse(")
            })
            .expect("literal");
        assert_eq!(out.data.total_matches, 3);
        let err = t
            .grep(&GrepArgs {
                context_lines: Some(21),
                ..grep("x")
            })
            .expect_err("context");
        assert!(err.to_string().contains("between 0 and 20"));
        assert!(t.grep(&grep("")).is_err());
        let none = t.grep(&grep("zzz_nothing")).expect("none");
        assert_eq!(none.text, "No matches for pattern 'zzz_nothing'.");
    }
}
