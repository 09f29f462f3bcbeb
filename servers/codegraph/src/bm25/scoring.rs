//! bm25s 0.2.3's BM25 scoring (method `lucene`, the default llama-index uses), reproduced
//! down to its float32 arithmetic so that scores, and so rankings, match the original.
//!
//! - `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`, computed in f64, stored as f32;
//! - per (term, doc): `idf · tf / (tf + k1·(1 − b + b·|d|/avgdl))`, with the length factor
//!   computed in f64 and the rest in f32 (no `(k1 + 1)` factor);
//! - a query's score is the f32 sum of its tokens' per-doc scores in query order, a token
//!   repeated in the query counting again.

/// BM25 parameters (bm25s defaults).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalisation.
    pub b: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.5, b: 0.75 }
    }
}

/// `idf` of a term in `df` of `n` documents (as bm25s stores it: f32).
pub fn idf(df: u64, n: u64) -> f32 {
    let df = df as f64;
    let n = n as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// Score contribution of one term in one document.
pub fn term_score(idf: f32, tf: u32, doc_len: u64, avgdl: f64, p: Bm25Params) -> f32 {
    // bm25s: tf_array / (k1 * ((1 - b) + b * l_d / l_avg) + tf_array), where the scalar
    // is a float64 that numpy casts to float32 before the float32 addition.
    let norm = p.k1 * ((1.0 - p.b) + p.b * doc_len as f64 / avgdl);
    let tf = tf as f32;
    let tfc = tf / (norm as f32 + tf);
    idf * tfc
}

/// Mean document length (numpy's mean of integer lengths, in f64).
pub fn mean_len(lens: &[u64]) -> f64 {
    if lens.is_empty() {
        return 0.0;
    }
    lens.iter().sum::<u64>() as f64 / lens.len() as f64
}

/// Ranks documents by score: positive scores only, best first, ties in document order.
pub fn top_k(scores: &[f32], k: usize) -> Vec<(usize, f32)> {
    let mut hits: Vec<(usize, f32)> = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .map(|(i, s)| (i, *s))
        .collect();
    // Score descending, equal scores in document order (what a stable sort of the
    // document-ordered hits gives): a total order, so select the best k, then sort them.
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k == 0 {
        return Vec::new();
    }
    if hits.len() > k {
        hits.select_nth_unstable_by(k - 1, order);
        hits.truncate(k);
    }
    hits.sort_by(order);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_scoring_idf_matches_lucene_formula() {
        // ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(2.6666…) = 0.98082925
        assert!((idf(1, 3) - 0.980_829_25).abs() < 1e-7);
        // A term in every document still has a small positive idf.
        assert!(idf(3, 3) > 0.0);
    }

    #[test]
    fn bm25_scoring_top_k_is_stable_and_positive() {
        let scores = [0.5f32, 0.0, 1.0, 0.5, 1.0];
        assert_eq!(
            top_k(&scores, 10),
            vec![(2, 1.0), (4, 1.0), (0, 0.5), (3, 0.5)]
        );
        assert_eq!(top_k(&scores, 1), vec![(2, 1.0)]);
    }
}
