//! [`apply`]: a [`FilePatch`]'s hunks applied to a text like GNU `patch -p1` without
//! fuzz (see the [module doc](super) for how hunks are located).

use super::*;

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
