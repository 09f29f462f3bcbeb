//! bm25s 0.2.3's tokenizer, as LocAgent uses it for both documents and queries:
//! lower-case, `(?u)\b\w\w+\b`, drop bm25s' English stop words, Snowball English stem.

use rustc_hash::FxHashMap as HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// bm25s' `STOPWORDS_EN` (33 words; the NLTK-derived list bm25s ships).
pub const STOPWORDS_EN: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Python's `\w` on a `str` (letters, digits and `_`; Unicode-aware).
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits lower-cased text into bm25s words: maximal runs of at least two word characters,
/// stop words removed. Duplicates and order are kept.
pub fn words(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut count = 0usize;
    let push = |s: &str, n: usize, out: &mut Vec<String>| {
        if n >= 2 && !STOPWORDS_EN.contains(&s) {
            out.push(s.to_string());
        }
    };
    for (i, c) in lower.char_indices() {
        if is_word(c) {
            if start.is_none() {
                start = Some(i);
                count = 0;
            }
            count += 1;
        } else if let Some(s) = start.take() {
            push(&lower[s..i], count, &mut out);
        }
    }
    if let Some(s) = start {
        push(&lower[s..], count, &mut out);
    }
    out
}

/// The tokenizer: [`words`] followed by English Snowball stemming (PyStemmer's
/// `Stemmer("english")`), with a cache of stems.
pub struct Tokenizer {
    stemmer: Stemmer,
    cache: HashMap<String, String>,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tokenizer {
    /// A tokenizer with an empty stem cache.
    pub fn new() -> Self {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
            cache: HashMap::default(),
        }
    }

    /// Number of cached stems.
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    /// The stem of one (lower-case) word.
    pub fn stem(&mut self, word: &str) -> String {
        if let Some(s) = self.cache.get(word) {
            return s.clone();
        }
        let s = self.stemmer.stem(word).into_owned();
        self.cache.insert(word.to_string(), s.clone());
        s
    }

    /// The stemmed tokens of `text`, in order, duplicates kept.
    pub fn tokenize(&mut self, text: &str) -> Vec<String> {
        words(text).into_iter().map(|w| self.stem(&w)).collect()
    }
}

/// Tokenizes one text with a fresh tokenizer (convenience for queries).
pub fn tokenize(text: &str) -> Vec<String> {
    Tokenizer::new().tokenize(text)
}
