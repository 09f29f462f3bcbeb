//! The content index's scores computed straight from the chunks' terms, without
//! tantivy: what [`super::Bm25Index::build_in_memory`] serves.
//!
//! A server re-indexing a tree a few files apart from one it indexed before takes
//! every unchanged file's chunks and terms from the chunk store
//! ([`crate::chunk::ChunkStore`]) and chunks only the changed files; what is left is
//! the scoring statistics (document frequencies, lengths, their mean), which depend
//! on every chunk and are computed again here in one pass over the terms. Writing a
//! tantivy index and reading its postings back, which the saved index does, cost
//! several times more and gave the same numbers: the same term frequencies (tokens a
//! tantivy posting would drop for exceeding [`tantivy::tokenizer::MAX_TOKEN_LEN`]
//! are dropped here too, and still count in the chunk's length), the same
//! document frequencies, lengths and mean, scored by the same
//! [`super::scoring::term_score`], lists in chunk order.

use rustc_hash::FxHashMap as HashMap;

use super::scoring::{self, Bm25Params};

/// Token → its `(chunk ordinal, score)` list, chunks ascending.
pub(super) type TermScores = HashMap<Box<str>, Box<[(u32, f32)]>>;

/// The per-token score lists of chunks whose terms are `terms` (one string of
/// space-separated tokens per chunk, in chunk order), and the mean chunk length.
pub(super) fn score_terms(terms: &[String], params: Bm25Params) -> (TermScores, f64) {
    // Tokens are numbered on first sight (one lookup per occurrence); a chunk's term
    // frequencies are the runs of its sorted token numbers.
    let mut numbers: HashMap<&str, u32> = HashMap::default();
    let mut counts: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut doc_lens: Vec<u64> = Vec::with_capacity(terms.len());
    let mut doc_tokens: Vec<u32> = Vec::new();
    for (ord, chunk_terms) in terms.iter().enumerate() {
        doc_tokens.clear();
        let mut len = 0u64;
        for tok in chunk_terms.split(' ').filter(|t| !t.is_empty()) {
            len += 1;
            if tok.len() > tantivy::tokenizer::MAX_TOKEN_LEN {
                continue;
            }
            let n = *numbers.entry(tok).or_insert_with(|| {
                counts.push(Vec::new());
                (counts.len() - 1) as u32
            });
            doc_tokens.push(n);
        }
        doc_lens.push(len);
        doc_tokens.sort_unstable();
        let ord = u32::try_from(ord).unwrap_or(u32::MAX);
        for run in doc_tokens.chunk_by(|a, b| a == b) {
            counts[run[0] as usize].push((ord, run.len() as u32));
        }
    }
    let avgdl = scoring::mean_len(&doc_lens);
    let n = doc_lens.len() as u64;
    let scores = numbers
        .into_iter()
        .map(|(token, number)| {
            let postings = std::mem::take(&mut counts[number as usize]);
            let idf = scoring::idf(postings.len() as u64, n);
            let scored: Box<[(u32, f32)]> = postings
                .into_iter()
                .map(|(ord, tf)| {
                    let len = doc_lens.get(ord as usize).copied().unwrap_or(0);
                    (ord, scoring::term_score(idf, tf, len, avgdl, params))
                })
                .collect();
            (Box::from(token), scored)
        })
        .collect();
    (scores, avgdl)
}
