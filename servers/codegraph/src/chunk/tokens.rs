//! cl100k token counts, as llama-index's `get_tokenizer()` computes them.

/// Number of cl100k tokens in `text`.
///
/// llama-index encodes with `allowed_special="all"`, so a special-token string such as
/// `<|endoftext|>` in source text counts as one token; this does the same.
pub fn count_tokens(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let bpe = tiktoken_rs::cl100k_base_singleton();
    // Every cl100k special token starts with `<|`; without one, ordinary encoding is the
    // same and skips the special-token scan.
    if text.contains("<|") {
        bpe.count_with_special_tokens(text)
    } else {
        bpe.count_ordinary(text)
    }
}
