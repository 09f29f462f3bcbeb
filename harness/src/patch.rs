//! Unified diffs: parsing `git diff` style multi-file patches and applying them.
//!
//! The gold rules (see [`crate::gold`]) need what LocAgent obtained from `unidiff` and
//! from running GNU `patch -p1`: every hunk line with its old and new line number, the
//! patched text, and the offset at which each hunk applied. This module does both in
//! process, so no external tool is needed at run time.
//!
//! # Parsing
//! [`parse_patch`] accepts `diff --git` sections (with git's extended headers: modes,
//! `new file`/`deleted file`, `rename from/to`, `copy from/to`, `index`, binary
//! markers) and plain `---`/`+++` sections. Paths lose their first component (`a/`,
//! `b/`), as `patch -p1` does; `/dev/null` means the file does not exist on that side.
//! Git's C-style quoted paths are unquoted. Hunks may omit counts (`@@ -1 +1 @@`), lines
//! may carry `\ No newline at end of file`, and an empty line inside a hunk is read as an
//! empty context line (some tools strip the lone space). Text outside sections (mail
//! headers, signatures) is ignored; text inside a hunk that is not a hunk line is an
//! error naming the patch line and what was expected.
//!
//! CRLF: content lines keep a trailing `\r` (the file's own line ending), so a CRLF
//! file is matched exactly. When the patch itself was converted to CRLF (its
//! `diff`/`---`/`@@` header lines end in `\r`), one trailing `\r` is stripped from
//! every line, like GNU patch's "Stripping trailing CRs from patch".
//!
//! # Applying
//! [`apply`] locates each hunk like GNU patch without fuzz: at its stated line plus the
//! offset accumulated by the previous hunks, else at the nearest line (trying after,
//! then before, at growing distance) where every context and deleted line matches
//! exactly; a hunk whose leading context is shorter than its trailing context is
//! anchored to the start of the file, and one with shorter trailing context to the end.
//! The reported offset of each hunk is GNU's cumulative one (found line minus stated
//! line), which is what LocAgent parsed from `Hunk #n succeeded at m (offset k lines)`.

use std::fmt;

use thiserror::Error;

/// The role of one line inside a hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Unchanged line (` ` prefix): on both sides.
    Context,
    /// Added line (`+` prefix): new side only.
    Add,
    /// Deleted line (`-` prefix): old side only.
    Delete,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// Context, added or deleted.
    pub kind: LineKind,
    /// The text without the one-character prefix and without the line feed (a CRLF
    /// file's `\r` is kept).
    pub content: String,
    /// 1-based line number in the old file (context and deleted lines).
    pub old_line: Option<usize>,
    /// 1-based line number in the new file (context and added lines).
    pub new_line: Option<usize>,
    /// Followed by `\ No newline at end of file`.
    pub missing_newline: bool,
}

/// One `@@ -old_start,old_count +new_start,new_count @@` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Stated first old line (0 with `old_count` 0 for an insertion at the top).
    pub old_start: usize,
    /// Number of old-side lines (context + deleted).
    pub old_count: usize,
    /// Stated first new line.
    pub new_start: usize,
    /// Number of new-side lines (context + added).
    pub new_count: usize,
    /// Text after the closing `@@` (git's function context), trimmed.
    pub section: String,
    /// The hunk's lines in order.
    pub lines: Vec<HunkLine>,
    /// 1-based line of the `@@` header in the patch text, for messages.
    pub patch_line: usize,
}

impl Hunk {
    /// The old-side lines (context and deleted), which must match the file.
    fn pattern(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| l.kind != LineKind::Add)
            .map(|l| l.content.as_str())
            .collect()
    }
}

/// The changes to one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilePatch {
    /// Path before the change (prefix stripped); `None` for a new file.
    pub old_path: Option<String>,
    /// Path after the change (prefix stripped); `None` for a deleted file.
    pub new_path: Option<String>,
    /// The file is created by the patch.
    pub added: bool,
    /// The file is deleted by the patch.
    pub deleted: bool,
    /// The file is renamed (`rename from`/`rename to`, or differing paths).
    pub renamed: bool,
    /// The file is a copy of another (`copy from`/`copy to`).
    pub copied: bool,
    /// Binary change (no hunks we could apply).
    pub binary: bool,
    /// The hunks, in patch order.
    pub hunks: Vec<Hunk>,
    /// 1-based line in the patch text where this file's section starts.
    pub patch_line: usize,
}

impl FilePatch {
    /// The path `unidiff` reports (`PatchedFile.path`): the old path, or the new one for
    /// a created file. LocAgent keys its gold on this path.
    pub fn path(&self) -> &str {
        self.old_path
            .as_deref()
            .or(self.new_path.as_deref())
            .unwrap_or("")
    }
}

/// A parsed multi-file patch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    /// The files, in patch order.
    pub files: Vec<FilePatch>,
}

/// A patch text that cannot be parsed. Line numbers are 1-based lines of the patch.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatchError {
    /// An `@@` line that is not `@@ -a[,b] +c[,d] @@`.
    #[error(
        "patch line {line}: malformed hunk header {text:?}: expected `@@ -<start>[,<count>] +<start>[,<count>] @@`"
    )]
    BadHunkHeader {
        /// Patch line.
        line: usize,
        /// The offending text.
        text: String,
    },
    /// A line inside a hunk that is not a hunk line, or one the counts do not allow.
    #[error(
        "patch line {line}: expected {expected} (hunk at line {hunk_line} still needs {old_left} old and {new_left} new line(s)), found {text:?}"
    )]
    BadHunkLine {
        /// Patch line.
        line: usize,
        /// The hunk's header line.
        hunk_line: usize,
        /// What could have come here.
        expected: &'static str,
        /// Old-side lines still missing.
        old_left: usize,
        /// New-side lines still missing.
        new_left: usize,
        /// The offending text.
        text: String,
    },
    /// The patch ends in the middle of a hunk.
    #[error(
        "patch ends inside the hunk at line {hunk_line}: {old_left} old and {new_left} new line(s) missing (truncated patch or wrong hunk counts?)"
    )]
    Truncated {
        /// The hunk's header line.
        hunk_line: usize,
        /// Old-side lines still missing.
        old_left: usize,
        /// New-side lines still missing.
        new_left: usize,
    },
    /// A hunk before any file header.
    #[error(
        "patch line {line}: hunk without a file header (expected `diff --git` or `---`/`+++` first)"
    )]
    HunkWithoutFile {
        /// Patch line.
        line: usize,
    },
    /// A `---` header without the `+++` that must follow it.
    #[error("patch line {line}: `---` header must be followed by a `+++` header, found {text:?}")]
    MissingNewHeader {
        /// Patch line.
        line: usize,
        /// What followed instead.
        text: String,
    },
    /// A path that cannot be read.
    #[error("patch line {line}: cannot read a path from {text:?}: {reason}")]
    BadPath {
        /// Patch line.
        line: usize,
        /// The offending text.
        text: String,
        /// Why.
        reason: &'static str,
    },
}

/// A hunk that does not apply to the given text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ApplyError {
    /// No position matches the hunk's context and deleted lines exactly.
    #[error(
        "hunk #{hunk} (patch line {patch_line}, `@@ -{old_start},{old_count}`) does not apply: its context and deleted lines match nowhere in the file{}",
        anchored_note(*anchor)
    )]
    HunkFailed {
        /// 1-based hunk number within the file.
        hunk: usize,
        /// The hunk's header line in the patch.
        patch_line: usize,
        /// Stated old start.
        old_start: usize,
        /// Stated old count.
        old_count: usize,
        /// Where GNU's rules pinned the hunk, if anywhere.
        anchor: Anchor,
    },
    /// A hunk would rewrite lines an earlier hunk already produced.
    #[error(
        "hunk #{hunk} (patch line {patch_line}) overlaps the lines changed by the previous hunk (misordered hunks)"
    )]
    Misordered {
        /// 1-based hunk number within the file.
        hunk: usize,
        /// The hunk's header line in the patch.
        patch_line: usize,
    },
}

/// Where a hunk may match, by GNU patch's context rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Anywhere.
    None,
    /// Only at the first line (less leading than trailing context).
    Start,
    /// Only at the end (less trailing than leading context).
    End,
}

fn anchored_note(anchor: Anchor) -> &'static str {
    match anchor {
        Anchor::None => "",
        Anchor::Start => {
            " (it has less leading than trailing context, so it may only match at the start of the file)"
        }
        Anchor::End => {
            " (it has less trailing than leading context, so it may only match at the end of the file)"
        }
    }
}

impl fmt::Display for LineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LineKind::Context => "context",
            LineKind::Add => "added",
            LineKind::Delete => "deleted",
        })
    }
}

/// The result of applying one file's hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The patched text.
    pub text: String,
    /// Per hunk, GNU patch's reported offset: the line where the hunk applied minus its
    /// stated line (cumulative over the previous hunks).
    pub offsets: Vec<isize>,
}

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

impl fmt::Display for FilePatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path())
    }
}

/// One line of the text being patched.
struct TextLine<'a> {
    content: &'a str,
    newline: bool,
}

fn split_text(text: &str) -> Vec<TextLine<'_>> {
    let mut out: Vec<TextLine> = text
        .split_inclusive('\n')
        .map(|l| match l.strip_suffix('\n') {
            Some(c) => TextLine {
                content: c,
                newline: true,
            },
            None => TextLine {
                content: l,
                newline: false,
            },
        })
        .collect();
    if out
        .last()
        .is_some_and(|l| l.content.is_empty() && !l.newline)
    {
        out.pop();
    }
    out
}

/// Applies `file`'s hunks to `source` (see the module docs for how hunks are located).
pub fn apply(source: &str, file: &FilePatch) -> Result<Applied, ApplyError> {
    let input = split_text(source);
    let mut out: Vec<(String, bool)> = Vec::with_capacity(input.len());
    let mut copied = 0usize; // input lines already consumed (GNU's last_frozen_line)
    let mut in_offset: i64 = 0;
    let mut offsets = Vec::with_capacity(file.hunks.len());

    for (k, hunk) in file.hunks.iter().enumerate() {
        let number = k + 1;
        let pattern = hunk.pattern();
        let (at, anchor) = locate(&input, hunk, &pattern, &mut in_offset, copied);
        let Some(at) = at else {
            return Err(ApplyError::HunkFailed {
                hunk: number,
                patch_line: hunk.patch_line,
                old_start: hunk.old_start,
                old_count: hunk.old_count,
                anchor,
            });
        };
        offsets.push(isize::try_from(in_offset).unwrap_or(isize::MAX));
        // 0-based index of the pattern's first line in the input.
        let base = usize::try_from(at - 1).unwrap_or(0);
        let misordered = || ApplyError::Misordered {
            hunk: number,
            patch_line: hunk.patch_line,
        };
        let mut old_idx = 0usize;
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => old_idx += 1,
                LineKind::Delete => {
                    copy_till(&input, &mut out, &mut copied, base + old_idx)
                        .ok_or_else(misordered)?;
                    copied += 1; // the deleted line
                    old_idx += 1;
                }
                LineKind::Add => {
                    copy_till(&input, &mut out, &mut copied, base + old_idx)
                        .ok_or_else(misordered)?;
                    out.push((line.content.clone(), !line.missing_newline));
                }
            }
        }
    }
    for l in &input[copied.min(input.len())..] {
        out.push((l.content.to_string(), l.newline));
    }
    let mut text = String::with_capacity(source.len() + 64);
    let last = out.len().saturating_sub(1);
    for (i, (content, newline)) in out.iter().enumerate() {
        text.push_str(content);
        if *newline || i < last {
            text.push('\n');
        }
    }
    Ok(Applied { text, offsets })
}

/// Copies input lines up to (not including) 0-based index `until`; `None` when they
/// were already consumed (overlapping hunks).
fn copy_till(
    input: &[TextLine],
    out: &mut Vec<(String, bool)>,
    copied: &mut usize,
    until: usize,
) -> Option<()> {
    if *copied > until {
        return None;
    }
    for l in &input[(*copied).min(input.len())..until.min(input.len())] {
        out.push((l.content.to_string(), l.newline));
    }
    *copied = until;
    Some(())
}

/// GNU patch's `locate_hunk` with fuzz 0. Returns the 1-based input line where the
/// pattern's first line goes, updating the cumulative offset.
fn locate(
    input: &[TextLine],
    hunk: &Hunk,
    pattern: &[&str],
    in_offset: &mut i64,
    last_frozen: usize,
) -> (Option<i64>, Anchor) {
    let to_i = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let p_first = if hunk.old_count == 0 {
        to_i(hunk.old_start) + 1
    } else {
        to_i(hunk.old_start)
    };
    let prefix = to_i(
        hunk.lines
            .iter()
            .take_while(|l| l.kind == LineKind::Context)
            .count(),
    );
    let suffix = to_i(
        hunk.lines
            .iter()
            .rev()
            .take_while(|l| l.kind == LineKind::Context)
            .count(),
    );
    let pat_lines = to_i(pattern.len());
    let input_lines = to_i(input.len());
    let last_frozen = to_i(last_frozen);
    let first_guess = p_first + *in_offset;
    let context = prefix.max(suffix);
    let mut prefix_fuzz = prefix - context;
    let suffix_fuzz = suffix - context;
    let max_where = input_lines - (pat_lines - suffix_fuzz) + 1;
    let min_where = last_frozen + 1;
    let max_pos_offset = max_where - first_guess;
    let mut max_neg_offset = first_guess - min_where;
    let max_offset = max_pos_offset.max(max_neg_offset);

    if pat_lines == 0 {
        return (Some(first_guess), Anchor::None);
    }
    if first_guess <= max_neg_offset {
        max_neg_offset = first_guess - 1;
    }
    // Compares pattern lines [1 + prefix_fuzz, pat_lines - suffix_fuzz] at `base`.
    let matches = |base: i64, prefix_fuzz: i64, suffix_fuzz: i64| -> bool {
        (1 + prefix_fuzz..=pat_lines - suffix_fuzz).all(|pline| {
            let at = pline - 1 + base; // 1-based input line
            at >= 1
                && at <= input_lines
                && usize::try_from(pline - 1)
                    .ok()
                    .zip(usize::try_from(at - 1).ok())
                    .is_some_and(|(p, a)| pattern[p] == input[a].content)
        })
    };
    if prefix_fuzz < 0 && p_first <= 1 {
        // Can only match the start of the file.
        let offset = 1 - first_guess;
        if last_frozen <= prefix
            && offset <= max_pos_offset
            && matches(first_guess + offset, 0, suffix_fuzz)
        {
            *in_offset += offset;
            return (Some(first_guess + offset), Anchor::Start);
        }
        return (None, Anchor::Start);
    } else if prefix_fuzz < 0 {
        prefix_fuzz = 0;
    }
    if suffix_fuzz < 0 {
        // Can only match the end of the file.
        let offset = first_guess - (input_lines - pat_lines + 1);
        if offset <= max_neg_offset && matches(first_guess - offset, prefix_fuzz, 0) {
            *in_offset -= offset;
            return (Some(first_guess - offset), Anchor::End);
        }
        return (None, Anchor::End);
    }
    let min_offset = if max_pos_offset < 0 {
        first_guess - max_where
    } else if max_neg_offset < 0 {
        first_guess - min_where
    } else {
        0
    };
    let mut offset = min_offset;
    while offset <= max_offset {
        if offset <= max_pos_offset && matches(first_guess + offset, prefix_fuzz, suffix_fuzz) {
            *in_offset += offset;
            return (Some(first_guess + offset), Anchor::None);
        }
        if offset <= max_neg_offset && matches(first_guess - offset, prefix_fuzz, suffix_fuzz) {
            *in_offset -= offset;
            return (Some(first_guess - offset), Anchor::None);
        }
        offset += 1;
    }
    (None, Anchor::None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_FILES: &str = "\
diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -1,4 +1,5 @@ def f():
 one
-two
+TWO
+two and a half
 three
 four
diff --git a/old.txt b/new.txt
similarity index 90%
rename from old.txt
rename to new.txt
--- a/old.txt
+++ b/new.txt
@@ -1 +1 @@
-x
+y
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+hello
\\ No newline at end of file
diff --git a/img.png b/img.png
index 3333333..4444444 100644
Binary files a/img.png and b/img.png differ
diff --git a/moved.py b/renamed.py
similarity index 100%
rename from moved.py
rename to renamed.py
";

    #[test]
    fn patch_parses_multi_file_git_diffs() {
        let p = parse_patch(TWO_FILES).expect("valid patch");
        assert_eq!(p.files.len(), 6);
        let a = &p.files[0];
        assert_eq!(
            (a.path(), a.added, a.deleted, a.renamed),
            ("pkg/a.py", false, false, false)
        );
        let h = &a.hunks[0];
        assert_eq!(
            (h.old_start, h.old_count, h.new_start, h.new_count),
            (1, 4, 1, 5)
        );
        assert_eq!(h.section, "def f():");
        let kinds: Vec<_> = h
            .lines
            .iter()
            .map(|l| (l.kind, l.old_line, l.new_line))
            .collect();
        assert_eq!(
            kinds,
            [
                (LineKind::Context, Some(1), Some(1)),
                (LineKind::Delete, Some(2), None),
                (LineKind::Add, None, Some(2)),
                (LineKind::Add, None, Some(3)),
                (LineKind::Context, Some(3), Some(4)),
                (LineKind::Context, Some(4), Some(5)),
            ]
        );
        let r = &p.files[1];
        assert!(r.renamed);
        assert_eq!(
            (r.old_path.as_deref(), r.new_path.as_deref()),
            (Some("old.txt"), Some("new.txt"))
        );
        assert_eq!((r.hunks[0].old_count, r.hunks[0].new_count), (1, 1));
        let d = &p.files[2];
        assert!(d.deleted && d.new_path.is_none());
        assert_eq!(d.path(), "gone.py");
        let n = &p.files[3];
        assert!(n.added && n.old_path.is_none());
        assert_eq!(n.path(), "new.py");
        assert!(n.hunks[0].lines[0].missing_newline);
        assert!(p.files[4].binary);
        let m = &p.files[5];
        assert!(m.renamed && m.hunks.is_empty());
        assert_eq!(
            (m.old_path.as_deref(), m.new_path.as_deref()),
            (Some("moved.py"), Some("renamed.py"))
        );
    }

    #[test]
    fn patch_applies_and_handles_missing_newlines() {
        let p = parse_patch(TWO_FILES).expect("valid patch");
        let out = apply("one\ntwo\nthree\nfour\n", &p.files[0]).expect("applies");
        assert_eq!(out.text, "one\nTWO\ntwo and a half\nthree\nfour\n");
        assert_eq!(out.offsets, [0]);
        assert_eq!(apply("a\nb\n", &p.files[2]).expect("applies").text, "");
        assert_eq!(apply("", &p.files[3]).expect("applies").text, "hello");
        let p = parse_patch(
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
        )
        .expect("valid patch");
        assert_eq!(apply("a\nb", &p.files[0]).expect("applies").text, "a\nb\n");
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn patch_finds_hunks_at_an_offset_like_gnu_patch() {
        // Stated at 10 and 30, but the file has 3 extra lines at the top.
        let patch = "\
--- a/f
+++ b/f
@@ -10,3 +10,3 @@
 line 7
-line 8
+LINE 8
 line 9
@@ -30,4 +30,5 @@
 line 27
 line 28
+new
 line 29
 line 30
";
        let p = parse_patch(patch).expect("valid patch");
        let out = apply(&numbered(40), &p.files[0]).expect("applies");
        // Hunk 1 found 3 lines earlier; hunk 2 searched from 30 - 3 and found there too.
        assert_eq!(out.offsets, [-3, -3]);
        let lines: Vec<&str> = out.text.lines().collect();
        assert_eq!(lines[7], "LINE 8");
        assert_eq!(lines[28], "new");
        assert_eq!(lines.len(), 41);
    }

    #[test]
    fn patch_anchored_hunks_and_failures() {
        // Less leading than trailing context: only the start of the file may match.
        let p = parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+top\n line 1\n line 2\n")
            .expect("valid patch");
        assert_eq!(
            apply(&numbered(3), &p.files[0]).expect("applies").text,
            "top\nline 1\nline 2\nline 3\n"
        );
        let shifted = format!("zero\n{}", numbered(3));
        let err = apply(&shifted, &p.files[0]).expect_err("anchored at the start");
        assert!(err.to_string().contains("only match at the start"), "{err}");
        // No match at all.
        let p =
            parse_patch("--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-nope\n+yes\n").expect("valid patch");
        let err = apply(&numbered(3), &p.files[0]).expect_err("no match");
        assert_eq!(
            err.to_string(),
            "hunk #1 (patch line 3, `@@ -2,1`) does not apply: its context and deleted lines match nowhere in the file"
        );
    }

    #[test]
    fn patch_keeps_crlf_content_and_strips_crlf_transport() {
        // A CRLF file in an LF patch: content lines carry their `\r`.
        let p = parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n")
            .expect("valid patch");
        assert_eq!(p.files[0].hunks[0].lines[0].content, "a\r");
        assert_eq!(
            apply("a\r\nb\r\n", &p.files[0]).expect("applies").text,
            "a\r\nc\r\n"
        );
        // The whole patch converted to CRLF: stripped.
        let p =
            parse_patch("--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-b\r\n+c\r\n").expect("valid patch");
        assert_eq!(p.files[0].path(), "f");
        assert_eq!(apply("b\n", &p.files[0]).expect("applies").text, "c\n");
    }

    #[test]
    fn patch_reports_malformed_input_with_line_numbers() {
        let err = parse_patch("--- a/f\n+++ b/f\n@@ -1,x +1 @@\n").expect_err("bad header");
        assert!(
            err.to_string()
                .starts_with("patch line 3: malformed hunk header"),
            "{err}"
        );
        let err = parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n?b\n").expect_err("bad line");
        assert!(
            err.to_string()
                .starts_with("patch line 5: expected a hunk line"),
            "{err}"
        );
        let err = parse_patch("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n").expect_err("truncated");
        assert!(
            err.to_string().contains("2 old and 2 new line(s) missing"),
            "{err}"
        );
        let err = parse_patch("@@ -1 +1 @@\n-a\n+b\n").expect_err("no file");
        assert_eq!(err, PatchError::HunkWithoutFile { line: 1 });
        let err = parse_patch("diff --git a/f b/f\n--- a/f\nfoo\n").expect_err("no +++");
        assert!(
            matches!(err, PatchError::MissingNewHeader { line: 3, .. }),
            "{err}"
        );
        let err =
            parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n-b\n").expect_err("too many deletes");
        assert!(
            err.to_string().contains("the old-side count is used up"),
            "{err}"
        );
    }

    #[test]
    fn patch_reads_quoted_paths_and_blank_context_lines() {
        let text = "diff --git \"a/sp ace\\t.py\" \"b/sp ace\\t.py\"\n--- \"a/sp ace\\t.py\"\n+++ \"b/sp ace\\t.py\"\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n";
        let p = parse_patch(text).expect("valid patch");
        assert_eq!(p.files[0].path(), "sp ace\t.py");
        assert_eq!(
            apply("a\n\nb\n", &p.files[0]).expect("applies").text,
            "a\n\nc\n"
        );
        let p = parse_patch(
            "--- a/x.py\t2024-01-01 00:00:00\n+++ b/x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n",
        )
        .expect("valid patch");
        assert_eq!(p.files[0].path(), "x.py");
    }

    /// A small deterministic generator (no dependency needed for test data).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n.max(1)
        }
    }

    fn random_lines(rng: &mut Lcg, n: usize) -> Vec<String> {
        // A small alphabet, so that context often matches at several places.
        const WORDS: [&str; 6] = ["a", "b", "c", "x = 1", "", "    return x"];
        (0..n)
            .map(|_| WORDS[rng.below(WORDS.len())].to_string())
            .collect()
    }

    fn run(cmd: &mut std::process::Command) -> Option<std::process::Output> {
        cmd.output().ok()
    }

    /// Differential check against the installed GNU `patch` (skipped when absent):
    /// random files, `diff -u` patches, then the base drifts (lines inserted or
    /// removed) so hunks land at offsets, or fail. Success, text and reported offsets
    /// must agree with `patch -F0`.
    #[test]
    fn patch_agrees_with_gnu_patch_on_random_edits() {
        use std::process::Command;
        if run(Command::new("patch").arg("--version")).is_none()
            || run(Command::new("diff").arg("--version")).is_none()
        {
            println!("skipped: GNU patch/diff not installed");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = |n: &str| dir.path().join(n);
        let offset_re =
            regex::Regex::new(r"Hunk #(\d+) succeeded at \d+ \(offset ([+-]?\d+) lines?\)")
                .expect("regex");
        let mut rng = Lcg(42);
        let (mut applied, mut failed, mut shifted) = (0, 0, 0);
        for case in 0..300 {
            let size = 5 + rng.below(80);
            let base = random_lines(&mut rng, size);
            let mut new = base.clone();
            for _ in 0..1 + rng.below(6) {
                let at = rng.below(new.len() + 1);
                match rng.below(3) {
                    0 if at < new.len() => {
                        new.remove(at);
                    }
                    1 if at < new.len() => new[at] = format!("changed {case}"),
                    _ => new.insert(at, format!("inserted {case}")),
                }
            }
            let mut drifted = base.clone();
            for _ in 0..rng.below(4) {
                let at = rng.below(drifted.len() + 1);
                if rng.below(2) == 0 || drifted.is_empty() {
                    drifted.insert(at, format!("drift {case}"));
                } else if at < drifted.len() {
                    drifted.remove(at);
                }
            }
            let join = |l: &[String]| l.iter().map(|s| format!("{s}\n")).collect::<String>();
            std::fs::write(path("old"), join(&base)).expect("write");
            std::fs::write(path("new"), join(&new)).expect("write");
            std::fs::write(path("target"), join(&drifted)).expect("write");
            let diff = run(Command::new("diff")
                .args(["-u", "--label", "a/f", "--label", "b/f", "old", "new"])
                .current_dir(dir.path()))
            .expect("diff runs");
            let diff_text = String::from_utf8_lossy(&diff.stdout).into_owned();
            if diff_text.is_empty() {
                continue;
            }
            std::fs::write(path("p.diff"), &diff_text).expect("write");
            let gnu = run(Command::new("patch")
                .args([
                    "-f",
                    "-F0",
                    "-s",
                    "--verbose",
                    "-r",
                    "rej",
                    "-o",
                    "out",
                    "target",
                    "-i",
                    "p.diff",
                ])
                .current_dir(dir.path()))
            .expect("patch runs");
            let stdout = String::from_utf8_lossy(&gnu.stdout).into_owned();
            let file = &parse_patch(&diff_text).expect("diff output parses").files[0];
            let ours = apply(&join(&drifted), file);
            match ours {
                Ok(out) => {
                    assert!(
                        gnu.status.success(),
                        "case {case}: GNU failed, we applied\n{diff_text}\n{stdout}"
                    );
                    let gnu_text = std::fs::read_to_string(path("out")).expect("patch output");
                    assert_eq!(out.text, gnu_text, "case {case}\n{diff_text}");
                    let mut want = vec![0isize; file.hunks.len()];
                    for c in offset_re.captures_iter(&stdout) {
                        let n: usize = c[1].parse().expect("hunk number");
                        want[n - 1] = c[2].parse().expect("offset");
                    }
                    assert_eq!(out.offsets, want, "case {case}\n{diff_text}\n{stdout}");
                    applied += 1;
                    shifted += usize::from(want.iter().any(|&o| o != 0));
                }
                Err(e) => {
                    assert!(
                        !gnu.status.success(),
                        "case {case}: we failed ({e}), GNU applied\n{diff_text}\n{stdout}"
                    );
                    failed += 1;
                }
            }
        }
        println!(
            "agreed with GNU patch: {applied} applied ({shifted} at an offset), {failed} failed"
        );
        assert!(
            shifted > 20 && failed > 0,
            "the cases exercise offsets and failures"
        );
    }
}
