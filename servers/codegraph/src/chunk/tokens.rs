//! cl100k token counts, as llama-index's `get_tokenizer()` computes them.
//!
//! Counting is exact but avoids most of tiktoken's cost: for ASCII text without `<|`, the
//! cl100k pre-tokenizer regex is applied by a hand-written scanner ([`next_piece`]), and each
//! piece's BPE token count is memoized per thread (a piece's encoding does not depend on its
//! context). Other text goes through tiktoken unchanged.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Pieces memoized per thread before the memo is cleared (bounds memory).
const MEMO_LIMIT: usize = 1 << 20;

thread_local! {
    static PIECE_COUNTS: RefCell<HashMap<Box<[u8]>, u32>> = RefCell::new(HashMap::new());
}

/// Set once a [`warm_up`] thread has the tokenizer built.
static READY: AtomicBool = AtomicBool::new(false);

/// Starts building the cl100k tokenizer on a background thread, so that its start-up
/// overlaps other work; a later [`count_tokens`] waits for it if it is still running.
pub fn warm_up() {
    std::thread::spawn(|| {
        let _ = tiktoken_rs::cl100k_base_singleton();
        READY.store(true, Ordering::Release);
    });
}

/// Whether a [`warm_up`] finished building the tokenizer: [`count_tokens`] will not
/// wait. Work that can be done later instead of waiting asks this first.
pub fn ready() -> bool {
    READY.load(Ordering::Acquire)
}

/// Number of cl100k tokens in `text`.
///
/// llama-index encodes with `allowed_special="all"`, so a special-token string such as
/// `<|endoftext|>` in source text counts as one token; this does the same.
pub fn count_tokens(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    // Every cl100k special token starts with `<|`; without one, ordinary encoding is the
    // same and skips the special-token scan.
    if text.contains("<|") {
        return tiktoken_rs::cl100k_base_singleton().count_with_special_tokens(text);
    }
    if !text.is_ascii() {
        return tiktoken_rs::cl100k_base_singleton().count_ordinary(text);
    }
    let bytes = text.as_bytes();
    PIECE_COUNTS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.len() > MEMO_LIMIT {
            memo.clear();
        }
        let mut total = 0usize;
        let mut i = 0;
        while i < bytes.len() {
            let end = next_piece(bytes, i);
            let piece = &bytes[i..end];
            let n = match memo.get(piece) {
                Some(&n) => n as usize,
                None => {
                    // `piece` is a sub-slice of ASCII text, so it is valid UTF-8.
                    let s = std::str::from_utf8(piece).unwrap_or_default();
                    let n = tiktoken_rs::cl100k_base_singleton().count_ordinary(s);
                    memo.insert(piece.into(), u32::try_from(n).unwrap_or(u32::MAX));
                    n
                }
            };
            total += n;
            i = end;
        }
        total
    })
}

fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

fn is_number(b: u8) -> bool {
    b.is_ascii_digit()
}

/// `\s` of the regex crate on ASCII (Unicode White_Space: `\t \n \x0B \x0C \r` and space).
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

fn is_crlf(b: u8) -> bool {
    matches!(b, b'\r' | b'\n')
}

/// `[^\s\p{L}\p{N}]` on ASCII.
fn is_other(b: u8) -> bool {
    !is_space(b) && !is_letter(b) && !is_number(b)
}

/// End of the cl100k pre-tokenizer match starting at `i` (< `s.len()`) in ASCII text `s`.
///
/// The pattern (tiktoken-rs' cl100k pattern) is tried alternative by alternative,
/// leftmost-first, as the regex engine does:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
/// Every byte starts some alternative's match, so matches are contiguous.
pub(crate) fn next_piece(s: &[u8], i: usize) -> usize {
    let n = s.len();
    let c = s[i];
    let at = |k: usize| s.get(k).copied();
    // '(?i:[sdmt]|ll|ve|re)
    if c == b'\''
        && let Some(c1) = at(i + 1).map(|b| b.to_ascii_lowercase())
    {
        if matches!(c1, b's' | b't' | b'm' | b'd') {
            return i + 2;
        }
        if let Some(c2) = at(i + 2).map(|b| b.to_ascii_lowercase())
            && matches!((c1, c2), (b'r', b'e') | (b'v', b'e') | (b'l', b'l'))
        {
            return i + 3;
        }
    }
    let letters_from = |mut j: usize| {
        while j < n && is_letter(s[j]) {
            j += 1;
        }
        j
    };
    // [^\r\n\p{L}\p{N}]?+\p{L}++ (a non-letter first byte is taken possessively)
    if !is_letter(c) && !is_number(c) && !is_crlf(c) && at(i + 1).is_some_and(is_letter) {
        return letters_from(i + 1);
    }
    if is_letter(c) {
        return letters_from(i);
    }
    // \p{N}{1,3}+
    if is_number(c) {
        let mut j = i + 1;
        while j < n && j < i + 3 && is_number(s[j]) {
            j += 1;
        }
        return j;
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    let other_start = if c == b' ' && at(i + 1).is_some_and(is_other) {
        Some(i + 1)
    } else if is_other(c) {
        Some(i)
    } else {
        None
    };
    if let Some(mut j) = other_start {
        while j < n && is_other(s[j]) {
            j += 1;
        }
        while j < n && is_crlf(s[j]) {
            j += 1;
        }
        return j;
    }
    // `c` is whitespace: the run of whitespace from `i`.
    let mut j = i;
    while j < n && is_space(s[j]) {
        j += 1;
    }
    // \s++$ : a run that ends the text is one piece.
    if j == n {
        return j;
    }
    // \s*[\r\n] : up to the run's last line break.
    if let Some(k) = s[i..j].iter().rposition(|&b| is_crlf(b)) {
        return i + k + 1;
    }
    // \s+(?!\S) : all but the run's last character (which precedes a non-space).
    if j - i >= 2 {
        return j - 1;
    }
    // \s
    i + 1
}
