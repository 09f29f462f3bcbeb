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

/// One contiguous part of the corpus counted: tokens numbered on first sight, per
/// token number its `(chunk ordinal, term frequency)` list, and the part's chunk
/// lengths.
struct Counted<'t> {
    numbers: HashMap<&'t str, u32>,
    counts: Vec<Vec<(u32, u32)>>,
    doc_lens: Vec<u64>,
}

/// Counts the chunks `terms`, the first of which has ordinal `first`. A chunk's term
/// frequencies are the runs of its sorted token numbers (one lookup per occurrence).
fn count(terms: &[String], first: usize) -> Counted<'_> {
    let mut numbers: HashMap<&str, u32> = HashMap::default();
    let mut counts: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut doc_lens: Vec<u64> = Vec::with_capacity(terms.len());
    let mut doc_tokens: Vec<u32> = Vec::new();
    for (i, chunk_terms) in terms.iter().enumerate() {
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
        let ord = u32::try_from(first + i).unwrap_or(u32::MAX);
        for run in doc_tokens.chunk_by(|a, b| a == b) {
            counts[run[0] as usize].push((ord, run.len() as u32));
        }
    }
    Counted {
        numbers,
        counts,
        doc_lens,
    }
}

/// The per-token score lists of chunks whose terms are `terms` (one string of
/// space-separated tokens per chunk, in chunk order), and the mean chunk length.
///
/// Contiguous parts of the corpus are counted in parallel and their lists joined in
/// part order, so every list is in chunk order and every count, length and score is
/// the one a single pass over the chunks gives.
pub(super) fn score_terms(terms: &[String], params: Bm25Params) -> (TermScores, f64) {
    use rayon::prelude::*;
    let part_len = terms
        .len()
        .div_ceil(rayon::current_num_threads().max(1))
        .max(1024);
    let parts: Vec<Counted<'_>> = terms
        .par_chunks(part_len)
        .enumerate()
        .map(|(p, part)| count(part, p * part_len))
        .collect();
    let mut doc_lens: Vec<u64> = Vec::with_capacity(terms.len());
    let mut postings: HashMap<&str, Vec<(u32, u32)>> = HashMap::default();
    for part in parts {
        doc_lens.extend_from_slice(&part.doc_lens);
        let mut counts = part.counts;
        for (token, number) in part.numbers {
            let list = std::mem::take(&mut counts[number as usize]);
            match postings.entry(token) {
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().extend(list),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(list);
                }
            }
        }
    }
    let avgdl = scoring::mean_len(&doc_lens);
    let n = doc_lens.len() as u64;
    let scores = postings
        .into_par_iter()
        .map(|(token, postings)| {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel parts give what one pass over every chunk gives.
    #[test]
    fn parts_counted_in_parallel_equal_one_pass() {
        let terms: Vec<String> = (0..5000u32)
            .map(|i| {
                let mut t: Vec<String> = (0..(i % 13))
                    .map(|j| format!("tok{}", (i * 7 + j * 3) % 97))
                    .collect();
                if i % 5 == 0 {
                    t.push(format!("rare{i}"));
                }
                t.push("common".to_string());
                t.join(" ")
            })
            .collect();
        let params = Bm25Params::default();
        let (scores, avgdl) = score_terms(&terms, params);
        let one = count(&terms, 0);
        assert_eq!(avgdl, scoring::mean_len(&one.doc_lens));
        assert_eq!(scores.len(), one.numbers.len());
        let n = one.doc_lens.len() as u64;
        for (token, number) in &one.numbers {
            let list = &one.counts[*number as usize];
            let idf = scoring::idf(list.len() as u64, n);
            let expected: Vec<(u32, f32)> = list
                .iter()
                .map(|&(ord, tf)| {
                    let len = one.doc_lens[ord as usize];
                    (ord, scoring::term_score(idf, tf, len, avgdl, params))
                })
                .collect();
            assert_eq!(
                scores.get(*token).map(|s| s.to_vec()),
                Some(expected),
                "{token}"
            );
        }
    }
}
