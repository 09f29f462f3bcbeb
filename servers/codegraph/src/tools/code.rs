//! Reading code: `get_code` (entities' full code) and `get_code_snippet` (numbered
//! lines of a file).

use std::path::Path;

use super::*;
use crate::format::snippet_block;

/// Reads a text file as Python's text mode does (UTF-8, universal newlines).
fn read_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    let bytes = std::fs::read(path).map_err(|e| invalid(format!("cannot read '{shown}': {e}")))?;
    if bytes.contains(&0) {
        return Err(invalid(format!(
            "'{shown}' is a binary file; get_code_snippet reads text files only"
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

impl CodegraphTools {
    /// `get_code`: the original's `get_entity_contents` (SPEC.md §4.7), with candidates
    /// for unknown names and long code cut.
    pub fn get_code(&self, args: &GetCodeArgs) -> Result<ToolOutput<GetCodeOutput>, ToolError> {
        let repo = self.repo()?;
        let names = clean_terms(
            &args.entities,
            "entities",
            "[\"pkg/module.py:Class.method\"]",
        )?;
        let g = &repo.graph;
        let limit = self.code_limit();
        let mut text = String::new();
        let mut entities = Vec::new();
        for name in &names {
            let name = name.trim().trim_matches('.');
            if name.is_empty() {
                continue;
            }
            text += &format!("##Searching for entity `{name}`...\n### Search Result:\n");
            if let Some(ix) = g.find(name, false) {
                let qr = crate::format::QueryResult::for_node(
                    0,
                    crate::format::FormatMode::Complete,
                    g,
                    g.node_data(ix),
                    format!("Exact match found for entity name `{name}`."),
                );
                text += &qr.format_output(g, limit);
                text += "\n\n";
                let data = g.node_data(ix);
                let code_lines = data.lines.map_or(0, |(s, e)| (e - s + 1) as usize);
                entities.push(CodeEntity {
                    name: name.to_string(),
                    found: true,
                    r#type: Some(data.kind.to_string()),
                    start_line: data.lines.map(|l| l.0),
                    end_line: data.lines.map(|l| l.1),
                    truncated_lines: code_lines.saturating_sub(limit.max_lines),
                    candidates: Vec::new(),
                });
            } else {
                text += "Invalid name. \nHint: Valid entity name should be formatted as \"file_path:QualifiedName\" or just \"file_path\".\n";
                let cands = if is_test_file(name) {
                    text += "Test files are excluded from the graph tools.\n";
                    Vec::new()
                } else {
                    let (cands, source) = candidates_for(&repo, name);
                    if !cands.is_empty() {
                        text += "Closest matches:\n";
                        for &c in &cands {
                            text += &format!("{}: `{}`\n", g.kind(c), g.id(c));
                        }
                        text += &format!("Source: {source}\n");
                    }
                    cands
                };
                text += "\n";
                entities.push(CodeEntity {
                    name: name.to_string(),
                    found: false,
                    r#type: None,
                    start_line: None,
                    end_line: None,
                    truncated_lines: 0,
                    candidates: cands.iter().map(|&c| g.id(c).to_string()).collect(),
                });
            }
        }
        if entities.is_empty() {
            // Every name was only dots (e.g. '..'): nothing was looked up.
            return Err(invalid(format!(
                "entities {names:?} name no entity; pass 'file_path:QualifiedName' or a file path, e.g. [\"pkg/module.py:Class.method\"]"
            )));
        }
        let none_found = entities.iter().all(|e| !e.found);
        Ok(ToolOutput {
            text: text.trim().to_string(),
            is_error: none_found,
            meta: None,
            data: GetCodeOutput { entities },
        })
    }

    /// `get_code_snippet`: numbered lines of a file (the `code_snippet` format).
    pub fn get_code_snippet(
        &self,
        args: &GetCodeSnippetArgs,
    ) -> Result<ToolOutput<SnippetOutput>, ToolError> {
        let repo = self.repo()?;
        let abs = repo.sandbox.resolve(&args.file)?;
        if abs.is_dir() {
            return Err(invalid(format!(
                "'{}' is a directory; pass a file path (explore_tree shows the files of a directory)",
                args.file.trim()
            )));
        }
        let rel = repo.sandbox.relative(&abs);
        let owned;
        let text: &str = match repo
            .graph
            .graph()
            .node_by_id(&rel)
            .and_then(|n| n.code.as_ref())
        {
            Some(code) => code.as_str(),
            None => {
                owned = read_text(&abs, &rel)?;
                &owned
            }
        };
        let total = text.split('\n').count();
        if args.start_line < 1 {
            return Err(invalid(format!(
                "start_line must be at least 1 (got {})",
                args.start_line
            )));
        }
        if args.end_line < args.start_line {
            return Err(invalid(format!(
                "end_line ({}) is before start_line ({}); pass a range with start_line <= end_line",
                args.end_line, args.start_line
            )));
        }
        let start = usize::try_from(args.start_line).unwrap_or(usize::MAX);
        if start > total {
            return Err(invalid(format!(
                "start_line {start} is past the end of '{rel}', which has {total} lines; pass start_line between 1 and {total}"
            )));
        }
        let end = usize::try_from(args.end_line)
            .unwrap_or(usize::MAX)
            .min(total);
        let limit = self.code_limit();
        let (block, cut) = snippet_block(text, start as u32, end as u32, limit);
        let mut out = format!(
            "Found code snippet in file `{rel}`.\nSource: Retrieved code context including {rel}:line {start}-{end}.\n{block}\n"
        );
        if cut > 0 {
            out += &format!(
                "... [truncated: {cut} more lines; call get_code_snippet with file='{rel}', start_line={}, end_line={end} to read them]\n",
                end - cut + 1
            );
        }
        Ok(ToolOutput::ok(
            out.trim_end().to_string(),
            SnippetOutput {
                file: rel,
                start_line: start,
                end_line: end,
                total_lines: total,
                truncated_lines: cut,
            },
        ))
    }
}
