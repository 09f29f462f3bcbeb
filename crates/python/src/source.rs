//! Newline handling, two ways, named for what each keeps.
//!
//! Python counts `\n`, `\r\n` and a lone `\r` as line breaks; tree-sitter counts only
//! `\n`. [`lone_cr_as_newline`] makes tree-sitter's rows agree with Python's lines
//! while keeping every byte offset (a lone `\r` becomes `\n`, `\r\n` stays).
//! [`universal_newlines`] is what Python's text mode (`open(path)`) hands to `ast`:
//! every `\r\n` and lone `\r` becomes `\n`, so offsets after a `\r\n` shift.

use std::borrow::Cow;

/// Replaces every `\r` not followed by `\n` with `\n`: same length, same byte offsets,
/// and rows that count lines as Python does.
pub fn lone_cr_as_newline(source: &str) -> Cow<'_, str> {
    if !source.contains('\r') {
        return Cow::Borrowed(source);
    }
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    for (i, ch) in source.char_indices() {
        if ch == '\r' && bytes.get(i + 1) != Some(&b'\n') {
            out.push('\n');
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// Python's text-mode universal newlines: `\r\n` and lone `\r` become `\n`. Byte
/// offsets after a `\r\n` are NOT preserved; use [`lone_cr_as_newline`] when they
/// must be.
pub fn universal_newlines(source: &str) -> Cow<'_, str> {
    if source.contains('\r') {
        Cow::Owned(source.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_cr_keeps_offsets_and_universal_newlines_shortens() {
        let src = "a\r\nb\rc\n";
        assert_eq!(lone_cr_as_newline(src), "a\r\nb\nc\n");
        assert_eq!(lone_cr_as_newline(src).len(), src.len());
        assert_eq!(universal_newlines(src), "a\nb\nc\n");
        assert!(matches!(lone_cr_as_newline("x\n"), Cow::Borrowed(_)));
    }
}
