//! Text files: bounded chunks, starting a new chunk at headings where possible.

use super::{Chunk, ChunkKind, ChunkMeta, MAX_TEXT_CHARS, MAX_TEXT_LINES};

fn is_heading(lines: &[&str], i: usize, structured: bool) -> bool {
    if !structured {
        return false;
    }
    let line = lines[i];
    if line.starts_with('#') && !line.starts_with("#!") {
        return true;
    }
    // reST: a title line followed by an underline of punctuation.
    if let Some(next) = lines.get(i + 1) {
        let t = next.trim_end();
        return !line.trim().is_empty()
            && t.len() >= 3
            && t.chars().all(|c| "=-~^\"'`#*+.:_".contains(c))
            && t.chars().all(|c| t.starts_with(c));
    }
    false
}

pub(super) fn text_chunks(rel_path: &str, text: &str, structured: bool) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = 0;
    let flush = |out: &mut Vec<Chunk>, start: usize, end: usize| {
        // [start, end) zero-based; trim blank lines at both ends.
        let mut s = start;
        let mut e = end;
        while s < e && lines[s].trim().is_empty() {
            s += 1;
        }
        while e > s && lines[e - 1].trim().is_empty() {
            e -= 1;
        }
        if s == e {
            return;
        }
        let mut content = lines[s..e].join("\n");
        if content.len() > MAX_TEXT_CHARS * 2 {
            let mut cut = MAX_TEXT_CHARS * 2;
            while !content.is_char_boundary(cut) {
                cut -= 1;
            }
            content.truncate(cut);
        }
        out.push(Chunk {
            id: String::new(),
            file: rel_path.to_string(),
            start_line: s + 1,
            end_line: e,
            kind: ChunkKind::Text,
            name: None,
            content,
            meta: ChunkMeta {
                complexity: e - s,
                ..ChunkMeta::default()
            },
        });
    };
    for i in 0..lines.len() {
        let n = i - start;
        let full = n >= MAX_TEXT_LINES || (n > 0 && chars + lines[i].len() > MAX_TEXT_CHARS);
        let heading = n >= 3 && is_heading(&lines, i, structured);
        // Prefer a paragraph break once the chunk is reasonably large.
        let para =
            n >= MAX_TEXT_LINES / 2 && lines[i].trim().is_empty() && chars > MAX_TEXT_CHARS / 2;
        if full || heading || para {
            flush(&mut out, start, i);
            start = i;
            chars = 0;
        }
        chars += lines[i].len() + 1;
    }
    flush(&mut out, start, lines.len());
    out
}
