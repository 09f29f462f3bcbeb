//! Chunks of files in languages other than Python, by their definitions' line
//! ranges: LocAgent's EpicSplitter is Python-only, so for TS/JS, Java, Go and Rust
//! files the content index gets chunks cut at definition boundaries, under the same
//! size limits ([`ChunkConfig`]).
//!
//! A file is cut into units: each top-level definition with the lines around it
//! (the code between definitions is a unit of its own). A unit over
//! `chunk_size` tokens with nested definitions is cut the same way one level down
//! (its header, members and the code between them); one over `max_chunk_size`
//! without any is cut into runs of lines of at most `chunk_size` tokens. Consecutive
//! units are then packed into chunks of at most `chunk_size` tokens, a chunk under
//! `min_chunk_size` taking the next unit while it stays under `hard_token_limit`.
//! A chunk's span ids are the qualified names of the definitions its units belong
//! to (none for code outside any definition); its text is its lines, as they are.

use navbench_lang::{Definition, ParsedFile};

use super::{Chunk, ChunkConfig, tokens};

/// A run of lines `[start, end]` (1-based, inclusive) and the definition it
/// belongs to.
#[derive(Debug, Clone)]
struct Unit {
    start: usize,
    end: usize,
    span: Option<String>,
    tokens: usize,
}

/// The chunks of `source` (the file `file_path`, read by a front end into `parsed`).
pub fn chunk_definitions(
    file_path: &str,
    source: &str,
    parsed: &ParsedFile,
    cfg: &ChunkConfig,
) -> Vec<Chunk> {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let cutter = Cutter {
        lines: &lines,
        defs: &parsed.definitions,
        cfg,
    };
    let top: Vec<usize> = (0..parsed.definitions.len())
        .filter(|&i| parsed.definitions[i].parent.is_none())
        .collect();
    let mut units = Vec::new();
    cutter.cut(1, lines.len(), None, &top, &mut units);
    pack(&units, cfg)
        .into_iter()
        .filter_map(|group| chunk_of(file_path, &lines, group))
        .collect()
}

/// Cuts line ranges into [`Unit`]s.
struct Cutter<'a> {
    lines: &'a [&'a str],
    defs: &'a [Definition],
    cfg: &'a ChunkConfig,
}

impl Cutter<'_> {
    fn text(&self, start: usize, end: usize) -> String {
        self.lines[start - 1..end].concat()
    }

    /// Units for lines `[start, end]` holding definitions `children` (indices, in
    /// order), the lines between them belonging to `span`.
    fn cut(
        &self,
        start: usize,
        end: usize,
        span: Option<&str>,
        children: &[usize],
        out: &mut Vec<Unit>,
    ) {
        let mut at = start;
        for &c in children {
            let d = &self.defs[c];
            let (s, e) = (d.start_line.max(at), d.end_line.min(end));
            if s > e {
                continue; // on a line already cut (several definitions on one line)
            }
            if s > at {
                self.plain(at, s - 1, span, out);
            }
            self.definition(c, s, e, out);
            at = e + 1;
        }
        if at <= end {
            self.plain(at, end, span, out);
        }
    }

    /// Units for definition `i` on lines `[s, e]`.
    fn definition(&self, i: usize, s: usize, e: usize, out: &mut Vec<Unit>) {
        let d = &self.defs[i];
        let tokens = tokens::count_tokens(&self.text(s, e));
        let children: Vec<usize> = (i + 1..self.defs.len())
            .filter(|&c| self.defs[c].parent == Some(i))
            .collect();
        if tokens <= self.cfg.chunk_size
            || (children.is_empty() && tokens <= self.cfg.max_chunk_size)
        {
            out.push(Unit {
                start: s,
                end: e,
                span: Some(d.qualname.clone()),
                tokens,
            });
        } else if children.is_empty() {
            self.by_lines(s, e, Some(&d.qualname), out);
        } else {
            self.cut(s, e, Some(&d.qualname), &children, out);
        }
    }

    /// One unit for lines `[s, e]` outside any nested definition (cut by lines when
    /// too large).
    fn plain(&self, s: usize, e: usize, span: Option<&str>, out: &mut Vec<Unit>) {
        let tokens = tokens::count_tokens(&self.text(s, e));
        if tokens > self.cfg.max_chunk_size {
            self.by_lines(s, e, span, out);
        } else {
            out.push(Unit {
                start: s,
                end: e,
                span: span.map(str::to_string),
                tokens,
            });
        }
    }

    /// Runs of lines of `[s, e]` of at most `chunk_size` tokens each (a single line
    /// over it is a run of its own).
    fn by_lines(&self, s: usize, e: usize, span: Option<&str>, out: &mut Vec<Unit>) {
        let mut run: Option<Unit> = None;
        for line in s..=e {
            let t = tokens::count_tokens(self.lines[line - 1]);
            match run.as_mut() {
                Some(r) if r.tokens + t <= self.cfg.chunk_size => {
                    r.end = line;
                    r.tokens += t;
                }
                _ => {
                    out.extend(run.take());
                    run = Some(Unit {
                        start: line,
                        end: line,
                        span: span.map(str::to_string),
                        tokens: t,
                    });
                }
            }
        }
        out.extend(run);
    }
}

/// Consecutive units packed into groups (see the module docs).
fn pack<'u>(units: &'u [Unit], cfg: &ChunkConfig) -> Vec<&'u [Unit]> {
    let mut groups = Vec::new();
    let (mut from, mut total) = (0, 0);
    for (i, u) in units.iter().enumerate() {
        let fits = total + u.tokens <= cfg.chunk_size
            || (total < cfg.min_chunk_size && total + u.tokens <= cfg.hard_token_limit);
        if i > from && !fits {
            groups.push(&units[from..i]);
            (from, total) = (i, 0);
        }
        total += u.tokens;
    }
    if from < units.len() {
        groups.push(&units[from..]);
    }
    groups
}

/// The chunk of a group of units; `None` if its lines are all blank.
fn chunk_of(file_path: &str, lines: &[&str], group: &[Unit]) -> Option<Chunk> {
    let (first, last) = (group.first()?, group.last()?);
    let text = lines[first.start - 1..last.end].concat();
    if text.trim().is_empty() {
        return None;
    }
    let mut span_ids: Vec<String> = group.iter().filter_map(|u| u.span.clone()).collect();
    span_ids.sort();
    span_ids.dedup();
    Some(Chunk {
        file_path: file_path.to_string(),
        start_line: first.start,
        end_line: last.end,
        span_ids,
        tokens: tokens::count_tokens(&text),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_are_one_chunk_and_large_ones_are_cut_at_definitions() {
        let go = navbench_lang::language_for_path("a.go").expect("go");
        let small = "package a\n\nfunc f() {}\n\nfunc g() { f() }\n";
        let chunks = chunk_definitions("a.go", small, &go.parse(small), &ChunkConfig::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 5));
        assert_eq!(chunks[0].span_ids, ["f", "g"]);

        let body: String = (0..120).map(|i| format!("\tx{i} := {i} * {i}\n")).collect();
        let big = format!(
            "package a\n\nfunc f() {{\n{body}}}\n\ntype T struct{{}}\n\nfunc (t T) m() {{\n{body}}}\n"
        );
        let cfg = ChunkConfig::default();
        let chunks = chunk_definitions("a.go", &big, &go.parse(&big), &cfg);
        assert!(chunks.len() >= 2, "{}", chunks.len());
        assert!(chunks.iter().all(|c| c.tokens <= cfg.hard_token_limit));
        let lines = big.lines().count();
        assert_eq!(chunks.last().map(|c| c.end_line), Some(lines));
        for w in chunks.windows(2) {
            assert_eq!(w[0].end_line + 1, w[1].start_line, "chunks tile the file");
        }
        assert!(
            chunks
                .iter()
                .any(|c| c.span_ids.contains(&"T.m".to_string()))
        );
    }
}
