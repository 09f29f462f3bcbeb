//! `read_file`: numbered lines of one text file, paged.

use super::*;

/// Largest file `read_file` loads into memory.
const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;
/// Longest line `read_file` shows before cutting it.
const READ_MAX_LINE_CHARS: usize = 2000;

impl TextTools {
    /// Returns numbered lines of one file; see [`ReadFileArgs`].
    pub fn read_file(&self, args: &ReadFileArgs) -> Result<ToolOutput<ReadFileOutput>, ToolError> {
        let abs = self.sandbox.resolve(&args.path)?;
        let rel = self.sandbox.relative(&abs);
        let bytes = load_text(&abs, &rel)?;
        let content = String::from_utf8_lossy(&bytes);
        let all_lines = split_lines(&content);
        let total = all_lines.len();

        let start = start_line(args.start_line, &rel, total)?;
        if total == 0 {
            if args.start_line.is_some_and(|s| s > 1) {
                return Err(ToolError::InvalidArgument(format!(
                    "start_line {start} is past the end of '{rel}', which is empty (0 lines)"
                )));
            }
            return Ok(ToolOutput {
                is_error: false,
                meta: None,
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
            meta: None,
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
}

/// The bytes of the text file `abs` (shown as `rel`), refusing directories, files over
/// [`MAX_READ_BYTES`] and binary files with what to do instead.
fn load_text(abs: &std::path::Path, rel: &str) -> Result<Vec<u8>, ToolError> {
    let meta = std::fs::metadata(abs)
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
    let bytes = std::fs::read(abs)
        .map_err(|e| ToolError::Unreadable(format!("cannot read '{rel}': {e}")))?;
    if bytes.contains(&0) {
        return Err(ToolError::Unreadable(format!(
            "'{rel}' looks like a binary file (it contains NUL bytes), so read_file will not show it; only text files can be read"
        )));
    }
    Ok(bytes)
}

/// The first line to show: `start_line`, else 1; 0 is refused.
fn start_line(start_line: Option<u64>, rel: &str, total: usize) -> Result<usize, ToolError> {
    match start_line {
        None => Ok(1),
        Some(0) => Err(ToolError::InvalidArgument(format!(
            "start_line 0 is invalid: lines are numbered from 1; '{rel}' has {total} lines"
        ))),
        Some(n) => Ok(to_usize(n)),
    }
}
