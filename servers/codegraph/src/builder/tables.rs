//! A parse-time shortcut for large numeric tables.
//!
//! tree-sitter-python parses long bracketed lists of numbers (character
//! frequency tables, lookup tables) about ten times slower than ordinary code,
//! because its grammar keeps alternative parses (tuple vs. pattern) alive to the
//! end of the brackets. Such a table contributes nothing to the graph: no names,
//! calls, imports or definitions. [`blank_numeric_tables`] replaces the inside of
//! every bracketed region that is *exactly* a Python-3-valid list of numbers
//! (signs, `+`/`-`, commas, nested `(...)`/`[...]`, comments, whitespace) with a
//! single `0` padded with spaces, keeping every newline and byte offset, so the
//! tree has the same shape everywhere else and the same line numbers.
//! Regions that are not certainly valid (a Python 2 literal such as `0777`, a
//! missing comma, a name) are left alone for the parser to judge.

/// Regions with fewer numbers are not worth rewriting.
const MIN_NUMBERS: usize = 64;
/// Nesting depth at which the region parser gives up.
const MAX_DEPTH: usize = 64;

/// The source with large numeric tables blanked, or `None` if there are none.
pub(crate) fn blank_numeric_tables(src: &str) -> Option<String> {
    let b = src.as_bytes();
    // Cheap precheck: a table needs many commas.
    if b.iter().filter(|&&c| c == b',').count() < MIN_NUMBERS {
        return None;
    }
    let mut regions: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' => i = skip_comment(b, i),
            b'"' | b'\'' => i = skip_string(b, i),
            open @ (b'(' | b'[' | b'{') => {
                let close = closing(open);
                match parse_list(b, i + 1, close, 0) {
                    Some((end, count)) if count >= MIN_NUMBERS => {
                        regions.push((i + 1, end - 1));
                        i = end;
                    }
                    // Nothing inside can reach the threshold either.
                    Some((end, _)) => i = end,
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    if regions.is_empty() {
        return None;
    }
    let mut out = b.to_vec();
    for (start, end) in regions {
        let mut first = true;
        for byte in &mut out[start..end] {
            if *byte != b'\n' {
                *byte = if first { b'0' } else { b' ' };
                first = false;
            }
        }
    }
    // Only ASCII bytes inside whole regions were replaced (multi-byte characters
    // can only occur in comments, which are replaced entirely), so this holds.
    String::from_utf8(out).ok()
}

fn closing(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// Index after a comment starting at `i` (the newline is not consumed).
fn skip_comment(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p)
}

/// Index after a string literal whose opening quote is at `i`. Approximate for
/// exotic cases (nested f-string quotes); a mistake can only make the scanner
/// consider or skip the wrong brackets, never blank anything that is not a
/// complete, valid numeric list.
fn skip_string(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == q => {
                if !triple {
                    return j + 1;
                }
                if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                    return j + 3;
                }
                j += 1;
            }
            b'\n' if !triple => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// Skips whitespace, line continuations and comments without quotes. `None` if a
/// comment holds a quote (the region is then not trusted).
fn skip_trivia(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match b.get(i) {
            Some(b' ' | b'\t' | b'\n' | b'\x0c') => i += 1,
            Some(b'\\') if b.get(i + 1) == Some(&b'\n') => i += 2,
            Some(b'#') => {
                let end = skip_comment(b, i);
                if b[i..end].iter().any(|&c| c == b'"' || c == b'\'') {
                    return None;
                }
                i = end;
            }
            _ => return Some(i),
        }
    }
}

/// Parses `elem (, elem)* ,?` up to the `close` bracket. Returns the index after
/// the bracket and the number of numeric literals.
fn parse_list(b: &[u8], i: usize, close: u8, depth: usize) -> Option<(usize, usize)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut i = skip_trivia(b, i)?;
    let mut count = 0;
    if b.get(i) == Some(&close) {
        return Some((i + 1, 0));
    }
    loop {
        let (j, n) = parse_elem(b, i, depth)?;
        count += n;
        i = skip_trivia(b, j)?;
        match b.get(i) {
            Some(b',') => {
                i = skip_trivia(b, i + 1)?;
                if b.get(i) == Some(&close) {
                    return Some((i + 1, count));
                }
            }
            Some(&c) if c == close => return Some((i + 1, count)),
            _ => return None,
        }
    }
}

/// Parses `sign* atom ((+|-) sign* atom)*`.
fn parse_elem(b: &[u8], mut i: usize, depth: usize) -> Option<(usize, usize)> {
    let mut count = 0;
    loop {
        while matches!(b.get(i), Some(b'+' | b'-')) {
            i = skip_trivia(b, i + 1)?;
        }
        let (j, n) = match b.get(i) {
            Some(b'(') => parse_list(b, i + 1, b')', depth + 1)?,
            Some(b'[') => parse_list(b, i + 1, b']', depth + 1)?,
            _ => (parse_number(b, i)?, 1),
        };
        count += n;
        let k = skip_trivia(b, j)?;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            i = skip_trivia(b, k + 1)?;
        } else {
            return Some((j, count));
        }
    }
}

/// Parses a Python 3 numeric literal without underscores or suffixes: `0`, `00`,
/// `123`, `0x1F`, `1.5`, `.5`, `1.`, `1e-3`. Returns the index after it.
fn parse_number(b: &[u8], i: usize) -> Option<usize> {
    let digits = |mut j: usize, hex: bool| {
        while b
            .get(j)
            .is_some_and(|c| c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()))
        {
            j += 1;
        }
        j
    };
    let end = if b.get(i) == Some(&b'0') && matches!(b.get(i + 1), Some(b'x' | b'X')) {
        let j = digits(i + 2, true);
        (j > i + 2).then_some(j)?
    } else {
        let int_end = digits(i, false);
        let mut j = int_end;
        let mut is_float = false;
        if b.get(j) == Some(&b'.') {
            is_float = true;
            j = digits(j + 1, false);
            if j == int_end + 1 && int_end == i {
                return None; // a lone `.`
            }
        } else if int_end == i {
            return None;
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            let mut k = j + 1;
            if matches!(b.get(k), Some(b'+' | b'-')) {
                k += 1;
            }
            let e = digits(k, false);
            if e == k {
                return None;
            }
            is_float = true;
            j = e;
        }
        // `0777` is a Python 2 octal: let the parser and the checks see it.
        let int_part = &b[i..int_end];
        if !is_float
            && int_part.len() > 1
            && int_part[0] == b'0'
            && int_part.iter().any(|&c| c != b'0')
        {
            return None;
        }
        j
    };
    if b.get(end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
    {
        return None;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(inner: &str, n: usize) -> String {
        vec![inner; n].join(", ")
    }

    #[test]
    fn blanks_large_valid_tables_only() {
        let src = format!(
            "x = (\n  {},  # comment\n  -1, +2, 3 - 4, 0x1F, 1.5e-3, .5, (1, 2), [],\n)\ny = f(1, 2)\n",
            table("1", 70)
        );
        let out = blank_numeric_tables(&src).expect("blanked");
        assert_eq!(out.len(), src.len());
        assert_eq!(
            out.lines().count(),
            src.lines().count(),
            "newlines are kept"
        );
        assert!(out.starts_with("x = (\n0 "));
        assert!(out.ends_with(")\ny = f(1, 2)\n"));
        assert!(!out[5..out.find(')').expect("close")].contains(','));
    }

    #[test]
    fn leaves_doubtful_regions_alone() {
        for inner in ["1 2", "0777", "10L", "a", "1_0", "'s'", "1j"] {
            let src = format!("x = [{}, {}]\n", table("1", 70), inner);
            assert!(blank_numeric_tables(&src).is_none(), "{inner}");
        }
        let src = format!("s = '[{}]'\n", table("1", 70));
        assert!(blank_numeric_tables(&src).is_none(), "inside a string");
        let src = format!("x = [{}  # it's\n]\n", table("1", 70));
        assert!(blank_numeric_tables(&src).is_none(), "quote in a comment");
        let small = format!("x = [{}]\n", table("1", 10));
        assert!(blank_numeric_tables(&small).is_none());
    }
}
