//! Hybrid search over a [`RepoIndex`]: exact cosine over the vector matrix and tantivy
//! BM25, fused by reciprocal rank fusion (see the [module docs](super)).

use std::collections::HashMap;

use navbench_server_support::walk::FileGlob;
use rayon::prelude::*;

use super::{
    Hit, IndexError, MIN_CANDIDATES, RRF_K, RankScore, RepoIndex, STATIC_VECTOR_WEIGHT,
    SearchOptions,
};
use crate::chunk::Chunk;
use crate::encoder::{EncoderKind, TextEncoder};

impl RepoIndex {
    /// Hybrid search (see the [module docs](self)); at most `opts.top_k` hits, best
    /// first. An empty query gives no hits.
    pub fn search(
        &self,
        embedder: &dyn TextEncoder,
        query: &str,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit>, IndexError> {
        if query.trim().is_empty() || opts.top_k == 0 || self.chunks.is_empty() {
            return Ok(Vec::new());
        }
        let glob = match opts.file_filter.as_deref() {
            Some(p) if p.contains(['*', '?', '[']) => {
                Some(FileGlob::new(p).map_err(|e| IndexError::InvalidGlob {
                    pattern: p.to_string(),
                    reason: e.to_string(),
                })?)
            }
            _ => None,
        };
        let allowed = |c: &Chunk| {
            opts.chunk_kind.is_none_or(|k| c.kind == k)
                && match (&glob, opts.file_filter.as_deref()) {
                    (Some(g), _) => g.is_match(&c.file),
                    (None, Some(sub)) => c.file.contains(sub),
                    (None, None) => true,
                }
        };
        let filtered = opts.file_filter.is_some() || opts.chunk_kind.is_some();
        let want = (opts.top_k * 5).max(MIN_CANDIDATES);

        // Semantic ranking: exact cosine over every (allowed) row.
        let q = embedder
            .embed(&[&vector_query(embedder.kind(), query)])?
            .into_iter()
            .next()
            .unwrap_or_default();
        let scores = cosine_scores(&self.vectors, self.dim, &q);
        let mut sem: Vec<(f32, usize)> = scores
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !filtered || allowed(&self.chunks[*i]))
            .map(|(i, s)| (s, i))
            .collect();
        top_n(&mut sem, want);

        // Keyword ranking: BM25 over body and (boosted) name.
        let kw = self.bm25(query, if filtered { want * 10 } else { want })?;
        let kw: Vec<(f32, usize)> = kw
            .into_iter()
            .filter(|(_, i)| !filtered || allowed(&self.chunks[*i]))
            .take(want)
            .collect();

        // chunk → (semantic (rank, cos), keyword (rank, bm25)).
        let mut fused: HashMap<usize, (Option<RankScore>, Option<RankScore>)> = HashMap::new();
        for (r, &(s, i)) in sem.iter().enumerate() {
            fused.entry(i).or_default().0 = Some((r + 1, s));
        }
        for (r, &(s, i)) in kw.iter().enumerate() {
            fused.entry(i).or_default().1 = Some((r + 1, s));
        }
        let w = vector_weight(embedder.kind());
        let max = rrf_score(w, Some(1), Some(1));
        let mut hits: Vec<Hit> = fused
            .into_iter()
            .map(|(i, (v, b))| {
                let rrf = rrf_score(w, v.map(|(r, _)| r), b.map(|(r, _)| r));
                let reason = match (v, b) {
                    (Some((vr, vs)), Some((br, bs))) => {
                        format!("semantic #{vr} (cos {vs:.2}) + keyword #{br} (bm25 {bs:.1})")
                    }
                    (Some((vr, vs)), None) => format!("semantic #{vr} (cos {vs:.2})"),
                    (None, Some((br, bs))) => format!("keyword #{br} (bm25 {bs:.1})"),
                    (None, None) => String::new(),
                };
                Hit {
                    chunk: i,
                    score: (rrf / max).clamp(0.0, 1.0),
                    vector_rank: v.map(|(r, _)| r),
                    bm25_rank: b.map(|(r, _)| r),
                    reason,
                }
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(
                    a.vector_rank
                        .unwrap_or(usize::MAX)
                        .cmp(&b.vector_rank.unwrap_or(usize::MAX)),
                )
                .then(a.chunk.cmp(&b.chunk))
        });
        hits.truncate(opts.top_k);
        Ok(hits)
    }
}

/// Weight of the vector ranking in the fusion (BM25's is 1). MiniLM's ranking counts
/// as much as BM25's; the static encoder's counts [`STATIC_VECTOR_WEIGHT`], because a
/// mean of context-free token vectors is a weaker ranking than BM25 on the same
/// words: at equal weight its near-misses (chunks sharing the query's common words)
/// outvote BM25's exact-term matches.
pub fn vector_weight(kind: EncoderKind) -> f32 {
    match kind {
        EncoderKind::Minilm => 1.0,
        EncoderKind::Static => STATIC_VECTOR_WEIGHT,
    }
}

/// Weighted reciprocal rank fusion of a chunk's 1-based vector and BM25 ranks (`None`:
/// not among that side's candidates).
pub fn rrf_score(vector_weight: f32, vector: Option<usize>, bm25: Option<usize>) -> f32 {
    vector.map_or(0.0, |r| vector_weight / (RRF_K + r as f32))
        + bm25.map_or(0.0, |r| 1.0 / (RRF_K + r as f32))
}

/// The text the vector side embeds for `query`. For the static encoder, the query's
/// prose: fenced code blocks (closed, or cut off by the query limit) are left out,
/// because a static encoder averages token vectors without context, so the imports
/// and set-up lines of a pasted reproduction outweigh the few words that say what is
/// wrong, and pull the query towards import lists, README examples and tests. BM25
/// still reads the whole query, so identifiers in the code still count there. A query
/// that is all code is embedded whole. MiniLM reads the query unchanged.
pub fn vector_query(kind: EncoderKind, query: &str) -> std::borrow::Cow<'_, str> {
    if kind != EncoderKind::Static {
        return query.into();
    }
    let mut prose = String::with_capacity(query.len());
    let mut rest = query;
    while let Some(open) = rest.find("```") {
        prose.push_str(&rest[..open]);
        prose.push('\n');
        match rest[open + 3..].find("```") {
            Some(close) => rest = &rest[open + 3 + close + 3..],
            None => rest = "",
        }
    }
    prose.push_str(rest);
    if prose.trim().is_empty() {
        query.into()
    } else {
        prose.into()
    }
}

/// Dot product of `q` with every `dim`-wide row of `matrix` (cosine for normalized
/// rows). Eight independent accumulators let the compiler vectorize the inner loop.
pub fn cosine_scores(matrix: &[f32], dim: usize, q: &[f32]) -> Vec<f32> {
    if dim == 0 || q.len() != dim {
        return Vec::new();
    }
    let row_score = |row: &[f32]| {
        let mut acc = [0f32; 8];
        let mut rc = row.chunks_exact(8);
        let mut qc = q.chunks_exact(8);
        for (r, qq) in (&mut rc).zip(&mut qc) {
            for k in 0..8 {
                acc[k] += r[k] * qq[k];
            }
        }
        let tail: f32 = rc
            .remainder()
            .iter()
            .zip(qc.remainder())
            .map(|(a, b)| a * b)
            .sum();
        acc.iter().sum::<f32>() + tail
    };
    const PAR_ROWS: usize = 8192;
    if matrix.len() / dim > 2 * PAR_ROWS {
        matrix
            .par_chunks(dim * PAR_ROWS)
            .flat_map_iter(|block| block.chunks_exact(dim).map(row_score).collect::<Vec<_>>())
            .collect()
    } else {
        matrix.chunks_exact(dim).map(row_score).collect()
    }
}

/// Keeps the `n` best (score desc, index asc) in order.
fn top_n(v: &mut Vec<(f32, usize)>, n: usize) {
    let cmp = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if v.len() > n {
        v.select_nth_unstable_by(n, cmp);
        v.truncate(n);
    }
    v.sort_by(cmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_static_vector_query_leaves_out_fenced_code_and_minilm_reads_it_whole() {
        let q = "Coupons are case-sensitive\n\n```python\nfrom shop import Coupon\n```\nExpected a match.";
        let v = vector_query(EncoderKind::Static, q);
        assert!(v.contains("case-sensitive") && v.contains("Expected a match."));
        assert!(!v.contains("from shop import"), "{v}");
        assert_eq!(vector_query(EncoderKind::Minilm, q), q);
        // A fence the query limit cut off runs to the end.
        let cut = "Totals are wrong\n```python\nimport shop\ntotal(";
        assert_eq!(
            vector_query(EncoderKind::Static, cut).trim(),
            "Totals are wrong"
        );
        // A query that is all code is embedded whole.
        let code = "```\nMoney('1') + Money('2', 'EUR')\n```";
        assert_eq!(vector_query(EncoderKind::Static, code), code);
    }

    #[test]
    fn the_static_vector_ranking_weighs_less_than_bm25_and_minilm_weighs_the_same() {
        let s = vector_weight(EncoderKind::Static);
        assert!(rrf_score(s, None, Some(1)) > rrf_score(s, Some(1), None));
        let m = vector_weight(EncoderKind::Minilm);
        assert_eq!(rrf_score(m, None, Some(3)), rrf_score(m, Some(3), None));
        // Both sides agreeing still beats either alone.
        assert!(rrf_score(s, Some(5), Some(5)) > rrf_score(s, None, Some(1)));
    }
}
