//! A fast path for the BERT-uncased tokenizer on ASCII text, which is most code.
//!
//! The `tokenizers` pipeline (added-token split, `BertNormalizer`,
//! `BertPreTokenizer`, `WordPiece`, building an `Encoding` with offsets and strings)
//! costs ~300 µs for a 1,000-character chunk; the static encoder needs a tenth of
//! that. On ASCII the pipeline reduces to: lowercase; words are runs of letters and
//! digits, every other printable character is a word of its own, whitespace
//! separates; WordPiece greedy longest match (`##` continuations, a word longer than
//! `max_input_chars_per_word` or with no match is `[UNK]`). [`FastWordPiece::encode`]
//! does exactly that in one pass and declines (returns `false`) whenever the text
//! could be treated differently: a non-ASCII byte, a control character other than
//! tab / newline / carriage return, or an added token's literal (`[CLS]`, …). The
//! caller then uses the full tokenizer. Tests compare both on the same texts.

use rustc_hash::FxHashMap;

/// BERT WordPiece tables for the ASCII fast path.
#[derive(Debug)]
pub(crate) struct FastWordPiece {
    /// Pieces that start a word.
    first: FxHashMap<Box<str>, u32>,
    /// `##` pieces, stored without the prefix.
    cont: FxHashMap<Box<str>, u32>,
    /// The longest piece, in bytes: no longer match is tried.
    longest: usize,
    unk: Option<u32>,
    max_word: usize,
    /// Added tokens' contents; a text containing one goes to the full tokenizer.
    added: Vec<String>,
}

impl FastWordPiece {
    /// Builds the tables from `tokenizer.json`, or `None` when its pipeline is not
    /// the lowercasing BERT one this path reproduces.
    pub(crate) fn from_tokenizer_json(bytes: &[u8]) -> Option<FastWordPiece> {
        let json: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let norm = &json["normalizer"];
        let supported = norm["type"] == "BertNormalizer"
            && norm["lowercase"] == true
            && norm["clean_text"] == true
            && json["pre_tokenizer"]["type"] == "BertPreTokenizer"
            && json["model"]["type"] == "WordPiece"
            && json["model"]["continuing_subword_prefix"] == "##";
        if !supported {
            return None;
        }
        let model = &json["model"];
        let mut first = FxHashMap::default();
        let mut cont = FxHashMap::default();
        let mut longest = 0;
        for (piece, id) in model["vocab"].as_object()? {
            let id = u32::try_from(id.as_u64()?).ok()?;
            let (map, key) = match piece.strip_prefix("##") {
                Some(rest) => (&mut cont, rest),
                None => (&mut first, piece.as_str()),
            };
            longest = longest.max(key.len());
            map.insert(Box::from(key), id);
        }
        let unk = model["unk_token"]
            .as_str()
            .and_then(|u| first.get(u).copied());
        let max_word = model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize;
        let added = json["added_tokens"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["content"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Some(FastWordPiece {
            first,
            cont,
            longest,
            unk,
            max_word,
            added,
        })
    }

    /// Appends the ids of `text` (no special tokens) to `out` and returns `true`, or
    /// returns `false` with `out` unchanged when the text needs the full tokenizer.
    pub(crate) fn encode(&self, text: &str, out: &mut Vec<u32>) -> bool {
        let bytes = text.as_bytes();
        let plain = bytes
            .iter()
            .all(|&b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r'));
        if !plain {
            return false;
        }
        if bytes.contains(&b'[') && self.added.iter().any(|a| contains_ci(text, a)) {
            return false;
        }
        let mark = out.len();
        let mut word = Vec::with_capacity(32);
        for &b in bytes {
            if b.is_ascii_alphanumeric() {
                word.push(b.to_ascii_lowercase());
                continue;
            }
            if !word.is_empty() {
                self.word_pieces(&word, out);
                word.clear();
            }
            if b.is_ascii_punctuation() {
                self.word_pieces(&[b], out);
            }
        }
        if !word.is_empty() {
            self.word_pieces(&word, out);
        }
        debug_assert!(out.len() >= mark);
        true
    }

    /// WordPiece greedy longest-match of one lowercase ASCII word.
    fn word_pieces(&self, word: &[u8], out: &mut Vec<u32>) {
        let mark = out.len();
        if word.len() > self.max_word {
            out.extend(self.unk);
            return;
        }
        // The word is ASCII, so every byte range is a valid str.
        let Ok(word) = std::str::from_utf8(word) else {
            out.extend(self.unk);
            return;
        };
        let mut start = 0;
        while start < word.len() {
            let map = if start == 0 { &self.first } else { &self.cont };
            let mut end = word.len().min(start + self.longest);
            let mut found = None;
            while end > start {
                if let Some(&id) = map.get(&word[start..end]) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(mark);
                    out.extend(self.unk);
                    return;
                }
            }
        }
    }
}

/// ASCII case-insensitive substring test (added tokens may be matched after
/// lowercasing when they are declared `normalized`).
fn contains_ci(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    !n.is_empty() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write_tiny_model;
    use tokenizers::Tokenizer;

    const TEXTS: &[&str] = &[
        "def parse_url(s):\n    return s.split('://', 1)",
        "class Cat(object):\n\tdef meow(self) -> None: print(\"MEOW!\")  # loud",
        "x = {'a': [1, 2.5e-3], \"b\": None}; y=x@z ^ ~w",
        "AVeryLongIdentifierThatGoesOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOnAndOn and more",
        "",
        "   \r\n  ",
        "unknownwordzzq qqq 123456789 tests testing parsed",
    ];

    /// The reference: the full tokenizer as the static encoder configures it.
    fn check_against(tokenizer: &Tokenizer, fast: &FastWordPiece, texts: &[&str]) {
        let mut tokenizer = tokenizer.clone();
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).unwrap();
        for t in texts {
            let mut got = Vec::new();
            assert!(fast.encode(t, &mut got), "declined {t:?}");
            let want = tokenizer.encode_fast(*t, false).unwrap().get_ids().to_vec();
            assert_eq!(got, want, "{t:?}");
        }
    }

    #[test]
    fn ascii_fast_path_matches_the_tokenizer() {
        let tmp = tempfile::tempdir().unwrap();
        write_tiny_model(tmp.path(), 3).unwrap();
        let bytes = std::fs::read(tmp.path().join("tokenizer.json")).unwrap();
        let fast = FastWordPiece::from_tokenizer_json(&bytes).unwrap();
        let tokenizer = Tokenizer::from_bytes(&bytes).unwrap();
        check_against(&tokenizer, &fast, TEXTS);
    }

    #[test]
    fn texts_the_fast_path_cannot_reproduce_are_declined() {
        let tmp = tempfile::tempdir().unwrap();
        write_tiny_model(tmp.path(), 3).unwrap();
        let bytes = std::fs::read(tmp.path().join("tokenizer.json")).unwrap();
        let fast = FastWordPiece::from_tokenizer_json(&bytes).unwrap();
        let mut out = vec![7];
        for t in ["café", "a\u{0b}b", "x = [CLS] y", "x = [cls]"] {
            assert!(!fast.encode(t, &mut out), "{t:?}");
        }
        assert_eq!(out, vec![7], "a declined text leaves the output untouched");
        assert!(FastWordPiece::from_tokenizer_json(b"{\"model\": {}}").is_none());
    }

    /// The real MiniLM tokenizer when `NAVBENCH_MINILM_DIR` points at it, on the
    /// ASCII lines of this file. Asked for without it, it fails saying what to set.
    #[test]
    #[ignore = "needs NAVBENCH_MINILM_DIR pointing at all-MiniLM-L6-v2; .ci/run runs it after the mini run"]
    fn ascii_fast_path_matches_minilm_when_installed() {
        let dir = std::env::var_os("NAVBENCH_MINILM_DIR")
            .map(std::path::PathBuf::from)
            .expect("set NAVBENCH_MINILM_DIR to the all-MiniLM-L6-v2 directory");
        let bytes = std::fs::read(dir.join("tokenizer.json"))
            .unwrap_or_else(|e| panic!("no MiniLM tokenizer at {}: {e}", dir.display()));
        let fast = FastWordPiece::from_tokenizer_json(&bytes).unwrap();
        let tokenizer = Tokenizer::from_bytes(&bytes).unwrap();
        check_against(&tokenizer, &fast, TEXTS);
        let src = include_str!("wordpiece.rs");
        let ascii: Vec<&str> = src
            .lines()
            .filter(|l| l.is_ascii() && !l.contains('['))
            .collect();
        check_against(&tokenizer, &fast, &ascii);
    }
}
