//! The original's result formats (SPEC.md §2.2 `wrap_code_snippet`, §4.6
//! `QueryResult.format_output`): line-numbered code, and the `complete`,
//! `preview`, `code_snippet` and `fold` renderings of a search result.
//!
//! One addition: long code is cut after [`CodeLimit::max_lines`] numbered lines, with
//! a marker that says how to read the rest (the original returned whole files).

pub mod skeleton;

use std::fmt::Write as _;

use crate::graph::NodeKind;
use crate::traverse::RepoGraph;
use crate::traverse::searcher::NodeData;

/// How a result is rendered; the order is the original's priority
/// (`complete` > `code_snippet` > `preview` > `fold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatMode {
    /// Header, source and the whole numbered code.
    Complete,
    /// A line range of a file.
    CodeSnippet,
    /// Header and code, or a skeleton for classes and files over 100 lines.
    Preview,
    /// Just `Found {type} `{id}`.`.
    Fold,
}

/// Cap on the numbered code one result shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeLimit {
    /// Most code lines shown per block; the rest is replaced by a marker.
    pub max_lines: usize,
}

impl Default for CodeLimit {
    /// 500 lines.
    fn default() -> Self {
        CodeLimit { max_lines: 500 }
    }
}

/// Number of decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.to_string().len()
}

/// `wrap_code_snippet(code, start_line, ...)`: a fenced block of
/// `{line number right-aligned} | {line}` lines. The width is that of the last line
/// number of the whole code, even when `limit` cuts the block (the marker after
/// the fence then says how many lines were left out and where they start).
pub fn wrap_code(code: &str, start_line: u32, limit: Option<(CodeLimit, &str)>) -> String {
    let lines: Vec<&str> = code.split('\n').collect();
    let last = u64::from(start_line) + lines.len() as u64 - 1;
    let width = digits(last.max(1));
    let shown = limit.map_or(lines.len(), |(l, _)| l.max_lines.min(lines.len()));
    let mut s = String::with_capacity(code.len() + lines.len() * (width + 3) + 8);
    s.push_str("```\n");
    for (i, line) in lines.iter().take(shown).enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let _ = write!(s, "{:>width$} | {line}", u64::from(start_line) + i as u64);
    }
    s.push_str("\n```");
    if let Some((_, file)) = limit
        && shown < lines.len()
    {
        let from = u64::from(start_line) + shown as u64;
        let _ = write!(
            s,
            "\n... [truncated: {} more lines; call get_code_snippet with file='{file}', start_line={from}, end_line={last} to read them]",
            lines.len() - shown
        );
    }
    s
}

/// Numbered lines `start..=end` (1-based, clamped to the text) of a file's text,
/// fenced, with the width of the file's last line number (the `code_snippet` body).
/// Returns the block and the number of lines cut by `limit`.
pub fn snippet_block(text: &str, start: u32, end: u32, limit: CodeLimit) -> (String, usize) {
    let lines: Vec<&str> = text.split('\n').collect();
    let width = digits(lines.len() as u64);
    let from = (start.max(1) as usize).min(lines.len() + 1);
    let to = (end as usize).min(lines.len());
    let mut s = String::from("```\n");
    let mut cut = 0;
    if from <= to {
        let total = to - from + 1;
        let shown = total.min(limit.max_lines);
        cut = total - shown;
        let body: Vec<String> = (from..from + shown)
            .map(|n| format!("{n:>width$} | {}", lines[n - 1]))
            .collect();
        s.push_str(&body.join("\n"));
    }
    s.push_str("\n```");
    (s, cut)
}

/// One search result (`QueryResult`), rendered by [`QueryResult::format_output`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryResult {
    /// Indices of the queries (terms) that produced it.
    pub queries: Vec<usize>,
    /// How it is rendered.
    pub mode: FormatMode,
    /// The node id (the file id for code snippets).
    pub nid: String,
    /// The file the result lies in (the file part of `nid`; for snippets the file).
    pub file_path: String,
    /// First line (entities, previews and snippets).
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Replaces the default first line of a code snippet.
    pub desc: Option<String>,
    /// Printed after a code snippet.
    pub message: Option<String>,
    /// The `Source: ...` text.
    pub source: String,
}

impl QueryResult {
    /// A result for node `nid` of `data`, with its lines when it has any.
    pub fn for_node(
        query: usize,
        mode: FormatMode,
        g: &RepoGraph,
        data: NodeData,
        source: String,
    ) -> QueryResult {
        let nid = g.id(data.node).to_string();
        let (start_line, end_line) = data.lines.unwrap_or((0, 0));
        QueryResult {
            queries: vec![query],
            mode,
            file_path: crate::graph::file_part(&nid).to_string(),
            nid,
            start_line,
            end_line,
            desc: None,
            message: None,
            source,
        }
    }

    /// `QueryResult.format_output` (SPEC.md §4.6); code longer than `limit` is cut.
    pub fn format_output(&self, g: &RepoGraph, limit: CodeLimit) -> String {
        let mut s = String::new();
        match self.mode {
            FormatMode::Complete => {
                let Some(ix) = g.graph().index_of(&self.nid) else {
                    return s;
                };
                let node = g.graph().node(ix);
                let _ = writeln!(s, "Found {} `{}`.", node.kind, self.nid);
                let _ = writeln!(s, "Source: {}", self.source);
                if let Some(code) = node_code(g, ix) {
                    s.push_str(&code_block(g, ix, code, limit));
                    s.push('\n');
                }
            }
            FormatMode::Preview => {
                let Some(ix) = g.graph().index_of(&self.nid) else {
                    return s;
                };
                let data = g.node_data(ix);
                let _ = writeln!(s, "Found {} `{}`.", data.kind, self.nid);
                let _ = writeln!(s, "Source: {}", self.source);
                let Some(code) = node_code(g, ix) else {
                    // directories, and empty files (a KeyError in the original)
                    return s;
                };
                let (start, end) = data.lines.unwrap_or((1, 1));
                match data.kind {
                    NodeKind::Function => {
                        s.push_str(&code_block(g, ix, code, limit));
                        s.push('\n');
                    }
                    NodeKind::Class | NodeKind::File if end.saturating_sub(start) <= 100 => {
                        s.push_str(&code_block(g, ix, code, limit));
                        s.push('\n');
                    }
                    NodeKind::Class | NodeKind::File => {
                        let _ = writeln!(
                            s,
                            "Just show the structure of this {} due to response length limitations:",
                            data.kind
                        );
                        let skel = g.skeleton(ix);
                        let lines: Vec<&str> = skel.split('\n').collect();
                        let shown = lines.len().min(limit.max_lines);
                        let _ = writeln!(s, "```\n{}\n```", lines[..shown].join("\n"));
                        if shown < lines.len() {
                            let _ = writeln!(
                                s,
                                "... [skeleton truncated: {} more lines]",
                                lines.len() - shown
                            );
                        }
                        let _ = writeln!(
                            s,
                            "Hint: Search `{}` to get the full content if needed.",
                            self.nid
                        );
                    }
                    NodeKind::Directory => {}
                }
            }
            FormatMode::CodeSnippet => {
                match &self.desc {
                    Some(d) => {
                        let _ = writeln!(s, "{d}");
                    }
                    None => {
                        let _ = writeln!(s, "Found code snippet in file `{}`.", self.file_path);
                    }
                }
                let _ = writeln!(s, "Source: {}", self.source);
                let text = g
                    .graph()
                    .node_by_id(&self.file_path)
                    .and_then(|n| n.code.as_ref())
                    .map_or("", |c| c.as_str());
                let (block, cut) = snippet_block(text, self.start_line, self.end_line, limit);
                s.push_str(&block);
                s.push('\n');
                if cut > 0 {
                    let from = self.end_line as usize - cut + 1;
                    let _ = writeln!(
                        s,
                        "... [truncated: {cut} more lines; call get_code_snippet with file='{}', start_line={from}, end_line={} to read them]",
                        self.file_path, self.end_line
                    );
                }
                if let Some(m) = self.message.as_deref().filter(|m| !m.trim().is_empty()) {
                    s.push_str(m);
                }
            }
            FormatMode::Fold => {
                let kind = g
                    .graph()
                    .node_by_id(&self.nid)
                    .map_or("entity", |n| n.kind.as_str());
                let _ = writeln!(s, "Found {kind} `{}`.", self.nid);
            }
        }
        s
    }
}

/// The node's non-empty code.
fn node_code(g: &RepoGraph, ix: crate::graph::NodeIndex) -> Option<&str> {
    g.graph()
        .node(ix)
        .code
        .as_ref()
        .map(|c| c.as_str())
        .filter(|c| !c.is_empty())
}

/// `get_node_data(..., return_code_content=True)['code_content']`, cut at `limit`.
pub fn code_block(
    g: &RepoGraph,
    ix: crate::graph::NodeIndex,
    code: &str,
    limit: CodeLimit,
) -> String {
    let start = g.node_data(ix).lines.map_or(1, |(s, _)| s);
    wrap_code(
        code,
        start,
        Some((limit, crate::graph::file_part(g.id(ix)))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_code_pads_to_the_last_line_number() {
        let code = (1..=10)
            .map(|i| format!("l{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let s = wrap_code(&code, 1, None);
        assert!(s.starts_with("```\n 1 | l1\n 2 | l2\n"), "{s}");
        assert!(s.ends_with("10 | l10\n```"), "{s}");
        let s = wrap_code("def f():\n    pass", 98, None);
        assert_eq!(s, "```\n98 | def f():\n99 |     pass\n```");
        let cut = wrap_code(&code, 1, Some((CodeLimit { max_lines: 3 }, "a.py")));
        assert!(
            cut.contains(" 3 | l3\n```\n... [truncated: 7 more lines"),
            "{cut}"
        );
        assert!(cut.contains("start_line=4, end_line=10"), "{cut}");
    }

    #[test]
    fn snippet_uses_the_file_width() {
        let text = (1..=120)
            .map(|i| format!("x{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let (s, cut) = snippet_block(&text, 9, 10, CodeLimit::default());
        assert_eq!(s, "```\n  9 | x9\n 10 | x10\n```");
        assert_eq!(cut, 0);
    }
}
