//! Unified diffs: parsing `git diff` style multi-file patches and applying them.
//!
//! The gold rules (see [`crate::score::gold`]) need what LocAgent obtained from `unidiff` and
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

mod apply;
mod parse;
#[cfg(test)]
mod tests;

pub use apply::apply;
pub use parse::parse_patch;

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
    pub(crate) fn pattern(&self) -> Vec<&str> {
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

pub(crate) fn anchored_note(anchor: Anchor) -> &'static str {
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

impl fmt::Display for FilePatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path())
    }
}
