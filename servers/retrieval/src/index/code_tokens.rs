//! The BM25 tokenizer for code of the languages other than Python: identifiers split
//! at camelCase, PascalCase, snake_case and letter/digit boundaries, lowercased, with
//! the whole identifier kept as a token of its own.
//!
//! `getHTTPResponse2` gives `gethttpresponse2`, `get`, `http`, `response`, `2`; a
//! query for `response` finds it, and a query for the exact identifier matches the
//! whole token too, so it still outscores a chunk that only shares the parts.
//! `snake_case_name` gives `snake_case_name`, `snake`, `case`, `name`. Tokens longer
//! than [`MAX_TOKEN_BYTES`] are dropped, as tantivy's default analyzer drops them.
//!
//! Which chunks are indexed with it, and why Python keeps tantivy's default analyzer,
//! is in the [index module docs](super).

use tantivy::tokenizer::{RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer};

/// The name the tokenizer is registered under in a tantivy index.
pub const CODE_TOKENIZER: &str = "navbench_code";
/// Longest token kept, in bytes (tantivy's default analyzer keeps those under 40).
pub const MAX_TOKEN_BYTES: usize = 39;

/// The analyzer registered as [`CODE_TOKENIZER`]: [`CodeTokenizer`] and the length
/// limit.
pub fn code_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer)
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES + 1))
        .build()
}

/// Splits text into identifier tokens and their parts (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeTokenizer;

/// The tokens of one text, produced up front.
pub struct CodeTokenStream {
    tokens: std::vec::IntoIter<Token>,
    current: Token,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens: Vec<Token> = Vec::new();
        for (start, word) in words(text) {
            let parts = parts(word);
            let mut push = |from: usize, to: usize, text: String| {
                tokens.push(Token {
                    offset_from: start + from,
                    offset_to: start + to,
                    position: tokens.len(),
                    text,
                    position_length: 1,
                });
            };
            if parts.len() != 1 || parts[0] != (0, word.len()) {
                push(0, word.len(), word.to_lowercase());
            }
            for (from, to) in parts {
                push(from, to, word[from..to].to_lowercase());
            }
        }
        CodeTokenStream {
            tokens: tokens.into_iter(),
            current: Token::default(),
        }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        match self.tokens.next() {
            Some(t) => {
                self.current = t;
                true
            }
            None => false,
        }
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

/// The identifier-like words of `text` (runs of letters, digits and `_`) with their
/// byte offsets; words of underscores only are skipped.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let word_char = c.is_alphanumeric() || c == '_';
        match (word_char, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let w = &text[s..i];
                if w.chars().any(char::is_alphanumeric) {
                    out.push((s, w));
                }
                start = None;
            }
            _ => {}
        }
    }
    out.into_iter()
}

/// Byte ranges of a word's parts: split at `_`, then between a lowercase letter and an
/// uppercase one (`getHttp`), before the last capital of a capital run followed by a
/// lowercase letter (`HTTPResponse` → `HTTP`, `Response`), and between letters and
/// digits (`utf8` → `utf`, `8`).
fn parts(word: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(i);
            continue;
        };
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic());
        if boundary {
            out.push((s, i));
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, word.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut analyzer = code_analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn identifiers_split_at_case_underscore_and_digit_boundaries() {
        assert_eq!(
            tokens("getHTTPResponse2"),
            ["gethttpresponse2", "get", "http", "response", "2"]
        );
        assert_eq!(tokens("XMLParser"), ["xmlparser", "xml", "parser"]);
        assert_eq!(
            tokens("snake_case_name"),
            ["snake_case_name", "snake", "case", "name"]
        );
        assert_eq!(tokens("__init__"), ["__init__", "init"]);
        assert_eq!(tokens("utf8Decode"), ["utf8decode", "utf", "8", "decode"]);
        assert_eq!(tokens("plain"), ["plain"]);
        assert_eq!(tokens("ALL_CAPS"), ["all_caps", "all", "caps"]);
        assert_eq!(
            tokens("fn new(r: &mut Reader) -> io::Result<()> {"),
            ["fn", "new", "r", "mut", "reader", "io", "result"]
        );
        assert!(tokens("___ ... ()").is_empty());
    }

    #[test]
    fn offsets_point_at_the_parts_and_long_tokens_are_dropped() {
        let mut analyzer = code_analyzer();
        let text = "a fooBar";
        let mut stream = analyzer.token_stream(text);
        let mut spans = Vec::new();
        while stream.advance() {
            let t = stream.token();
            spans.push(&text[t.offset_from..t.offset_to]);
        }
        assert_eq!(spans, ["a", "fooBar", "foo", "Bar"]);
        let long = format!("short {}", "x".repeat(MAX_TOKEN_BYTES + 1));
        assert_eq!(tokens(&long), ["short"]);
        assert_eq!(tokens(&"y".repeat(MAX_TOKEN_BYTES)).len(), 1);
    }
}
