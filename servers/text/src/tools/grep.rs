//! `grep`: ripgrep-style line search over the repository's files.

use std::collections::BTreeMap;
use std::io;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::*;

/// Longest line `grep` shows before cutting it.
const GREP_MAX_LINE_CHARS: usize = 500;

impl TextTools {
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
        let glob = nonblank(args.glob.as_deref());
        let files = self.files_matching(glob)?;
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
            meta: None,
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

/// A searcher line as text, without its terminator.
fn line_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    cut_line(text, GREP_MAX_LINE_CHARS)
}
