//! [`parse_patch`]: unified diffs (git's extended headers, quoted paths, CRLF
//! transport) into [`Patch`] (see the [module doc](super) for the accepted input).

use super::*;

/// Parses a unified diff (see the module docs for what is accepted).
pub fn parse_patch(text: &str) -> Result<Patch, PatchError> {
    let mut raw: Vec<&str> = text.split('\n').collect();
    if raw.last() == Some(&"") {
        raw.pop();
    }
    let crlf_patch = raw
        .iter()
        .find(|l| is_header(l))
        .is_some_and(|l| l.ends_with('\r'));
    let lines: Vec<&str> = raw
        .iter()
        .map(|l| {
            if crlf_patch || is_header(l) {
                l.strip_suffix('\r').unwrap_or(l)
            } else {
                l
            }
        })
        .collect();

    let mut files: Vec<FilePatch> = Vec::new();
    // Whether the current section still reads git's extended header lines.
    let mut in_git_header = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let lineno = i + 1;
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (old, new) = parse_git_line(rest, lineno)?;
            files.push(FilePatch {
                renamed: old != new,
                old_path: Some(old),
                new_path: Some(new),
                patch_line: lineno,
                ..FilePatch::default()
            });
            in_git_header = true;
            i += 1;
            continue;
        }
        if let Some(old_header) = line.strip_prefix("--- ") {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if !next.starts_with("+++ ") {
                if in_git_header {
                    return Err(PatchError::MissingNewHeader {
                        line: lineno + 1,
                        text: next.to_string(),
                    });
                }
                // Outside a section a stray `---` is just text (e.g. a mail signature).
                i += 1;
                continue;
            }
            let old = header_path(old_header, lineno)?;
            let new = header_path(&next[4..], lineno + 1)?;
            let reuse = in_git_header && files.last().is_some_and(|f| f.hunks.is_empty());
            if !reuse {
                files.push(FilePatch {
                    patch_line: lineno,
                    renamed: old.is_some() && new.is_some() && old != new,
                    ..FilePatch::default()
                });
            }
            if let Some(file) = files.last_mut() {
                file.added |= old.is_none();
                file.deleted |= new.is_none();
                file.old_path = old;
                file.new_path = new;
                if file.old_path.is_some() && file.new_path.is_some() {
                    file.renamed |= file.old_path != file.new_path;
                }
            }
            in_git_header = false;
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(PatchError::HunkWithoutFile { line: lineno });
            };
            in_git_header = false;
            let (hunk, next) = parse_hunk(&lines, i)?;
            file.hunks.push(hunk);
            i = next;
            continue;
        }
        if in_git_header && let Some(file) = files.last_mut() {
            git_extended_header(file, line, lineno)?;
        }
        i += 1;
    }
    Ok(Patch { files })
}

fn is_header(line: &str) -> bool {
    line.starts_with("diff --git ")
        || line.starts_with("--- ")
        || line.starts_with("+++ ")
        || line.starts_with("@@ ")
}

/// Applies git's extended header lines (`new file mode`, `rename from`, ...).
fn git_extended_header(file: &mut FilePatch, line: &str, lineno: usize) -> Result<(), PatchError> {
    if line.starts_with("new file mode ") {
        file.added = true;
        file.old_path = None;
        file.renamed = false;
    } else if line.starts_with("deleted file mode ") {
        file.deleted = true;
        file.new_path = None;
        file.renamed = false;
    } else if let Some(p) = line.strip_prefix("rename from ") {
        file.renamed = true;
        file.old_path = Some(unquote(p, lineno)?);
    } else if let Some(p) = line.strip_prefix("rename to ") {
        file.renamed = true;
        file.new_path = Some(unquote(p, lineno)?);
    } else if let Some(p) = line.strip_prefix("copy from ") {
        file.copied = true;
        file.old_path = Some(unquote(p, lineno)?);
    } else if let Some(p) = line.strip_prefix("copy to ") {
        file.copied = true;
        file.new_path = Some(unquote(p, lineno)?);
    } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
        file.binary = true;
    }
    Ok(())
}

/// Parses the hunk whose header is `lines[start]`; returns it and the index after it.
fn parse_hunk(lines: &[&str], start: usize) -> Result<(Hunk, usize), PatchError> {
    let header = lines[start];
    let hunk_line = start + 1;
    let bad = || PatchError::BadHunkHeader {
        line: hunk_line,
        text: header.to_string(),
    };
    let rest = header.strip_prefix("@@ -").ok_or_else(bad)?;
    let (ranges, section) = rest.split_once(" @@").ok_or_else(bad)?;
    let (old, new) = ranges.split_once(" +").ok_or_else(bad)?;
    let (old_start, old_count) = parse_range(old).ok_or_else(bad)?;
    let (new_start, new_count) = parse_range(new).ok_or_else(bad)?;

    let mut hunk = Hunk {
        old_start,
        old_count,
        new_start,
        new_count,
        section: section.trim().to_string(),
        lines: Vec::new(),
        patch_line: hunk_line,
    };
    let (mut old_left, mut new_left) = (old_count, new_count);
    let (mut old_no, mut new_no) = (old_start, new_start);
    let mut i = start + 1;
    while old_left > 0 || new_left > 0 {
        let Some(&line) = lines.get(i) else {
            return Err(PatchError::Truncated {
                hunk_line,
                old_left,
                new_left,
            });
        };
        let lineno = i + 1;
        let err = |expected| PatchError::BadHunkLine {
            line: lineno,
            hunk_line,
            expected,
            old_left,
            new_left,
            text: line.to_string(),
        };
        let (kind, content) = match line.chars().next() {
            None => (LineKind::Context, ""),
            Some(' ') => (LineKind::Context, &line[1..]),
            Some('-') => (LineKind::Delete, &line[1..]),
            Some('+') => (LineKind::Add, &line[1..]),
            Some('\\') => {
                match hunk.lines.last_mut() {
                    Some(last) => last.missing_newline = true,
                    None => return Err(err("a hunk line before `\\ No newline at end of file`")),
                }
                i += 1;
                continue;
            }
            Some(_) => return Err(err("a hunk line starting with ' ', '+', '-' or '\\'")),
        };
        let (old_line, new_line) = match kind {
            LineKind::Context => {
                if old_left == 0 || new_left == 0 {
                    return Err(err(if old_left == 0 {
                        "an added line (the old-side count is used up)"
                    } else {
                        "a deleted line (the new-side count is used up)"
                    }));
                }
                old_left -= 1;
                new_left -= 1;
                old_no += 1;
                new_no += 1;
                (Some(old_no - 1), Some(new_no - 1))
            }
            LineKind::Delete => {
                if old_left == 0 {
                    return Err(err("an added line (the old-side count is used up)"));
                }
                old_left -= 1;
                old_no += 1;
                (Some(old_no - 1), None)
            }
            LineKind::Add => {
                if new_left == 0 {
                    return Err(err("a deleted line (the new-side count is used up)"));
                }
                new_left -= 1;
                new_no += 1;
                (None, Some(new_no - 1))
            }
        };
        hunk.lines.push(HunkLine {
            kind,
            content: content.to_string(),
            old_line,
            new_line,
            missing_newline: false,
        });
        i += 1;
    }
    // A marker may follow the hunk's last line.
    if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        if let Some(last) = hunk.lines.last_mut() {
            last.missing_newline = true;
        }
        i += 1;
    }
    Ok((hunk, i))
}

/// `start[,count]`; a missing count means 1.
fn parse_range(text: &str) -> Option<(usize, usize)> {
    let (start, count) = match text.split_once(',') {
        Some((s, c)) => (s, c.parse().ok()?),
        None => (text, 1),
    };
    Some((start.parse().ok()?, count))
}

/// A `---`/`+++` path: `/dev/null` is `None`; a trailing tab-separated timestamp is
/// dropped; the first path component is stripped (`-p1`).
fn header_path(text: &str, lineno: usize) -> Result<Option<String>, PatchError> {
    let text = text.trim_end();
    let path = if text.starts_with('"') {
        let (p, _) = read_quoted(text, lineno)?;
        p
    } else {
        text.split('\t').next().unwrap_or(text).to_string()
    };
    if path == "/dev/null" {
        return Ok(None);
    }
    if path.is_empty() {
        return Err(PatchError::BadPath {
            line: lineno,
            text: text.to_string(),
            reason: "empty path",
        });
    }
    Ok(Some(strip_component(&path)))
}

fn strip_component(path: &str) -> String {
    match path.split_once('/') {
        Some((_, rest)) if !rest.is_empty() => rest.to_string(),
        _ => path.to_string(),
    }
}

/// `a/x b/y` of a `diff --git` line, each possibly quoted.
fn parse_git_line(rest: &str, lineno: usize) -> Result<(String, String), PatchError> {
    let bad = |reason| PatchError::BadPath {
        line: lineno,
        text: rest.to_string(),
        reason,
    };
    if rest.starts_with('"') {
        let (old, used) = read_quoted(rest, lineno)?;
        let new = rest[used..].trim_start();
        let new = if new.starts_with('"') {
            read_quoted(new, lineno)?.0
        } else {
            new.to_string()
        };
        return Ok((strip_component(&old), strip_component(&new)));
    }
    if let Some(pos) = rest.find(" \"") {
        let new = read_quoted(&rest[pos + 1..], lineno)?.0;
        return Ok((strip_component(&rest[..pos]), strip_component(&new)));
    }
    // Unquoted: the split where both sides name the same path (no rename), else the
    // first ` b/`.
    for (pos, _) in rest.match_indices(' ') {
        let (old, new) = (&rest[..pos], &rest[pos + 1..]);
        if strip_component(old) == strip_component(new) {
            return Ok((strip_component(old), strip_component(new)));
        }
    }
    match rest.find(" b/") {
        Some(pos) => Ok((
            strip_component(&rest[..pos]),
            strip_component(&rest[pos + 1..]),
        )),
        None => Err(bad("expected `a/<path> b/<path>`")),
    }
}

/// A path of `rename from`/`copy to`-style headers: no `a/` prefix, maybe quoted.
fn unquote(text: &str, lineno: usize) -> Result<String, PatchError> {
    if text.starts_with('"') {
        Ok(read_quoted(text, lineno)?.0)
    } else {
        Ok(text.to_string())
    }
}

/// `"…"` with C escapes (git's quoting); returns the text and the bytes consumed.
fn read_quoted(text: &str, lineno: usize) -> Result<(String, usize), PatchError> {
    let bad = |reason| PatchError::BadPath {
        line: lineno,
        text: text.to_string(),
        reason,
    };
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let s = String::from_utf8(out).map_err(|_| bad("quoted path is not UTF-8"))?;
                return Ok((s, i + 1));
            }
            b'\\' => {
                let e = *bytes.get(i + 1).ok_or_else(|| bad("unfinished escape"))?;
                i += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'0'..=b'7' => {
                        let digits = &bytes[i - 1..(i + 2).min(bytes.len())];
                        let mut value: u32 = 0;
                        let mut used = 0;
                        for &d in digits {
                            if !(b'0'..=b'7').contains(&d) {
                                break;
                            }
                            value = value * 8 + u32::from(d - b'0');
                            used += 1;
                        }
                        out.push(
                            u8::try_from(value).map_err(|_| bad("octal escape out of range"))?,
                        );
                        i += used - 1;
                    }
                    other => out.push(other),
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Err(bad("unterminated quoted path"))
}
