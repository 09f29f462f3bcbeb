//! Hybrid search over a [`RepoIndex`]: exact cosine over the vector matrix and tantivy
//! BM25, fused by reciprocal rank fusion (see the [module docs](super)).

use std::collections::HashMap;

use navbench_server_support::walk::FileGlob;
use rayon::prelude::*;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{TantivyDocument, Term};

use super::{Hit, IndexError, MIN_CANDIDATES, RRF_K, RankScore, RepoIndex, SearchOptions};
use crate::chunk::Chunk;
use crate::encoder::TextEncoder;

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
            .embed(&[query])?
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
        let max = 2.0 / (RRF_K + 1.0);
        let mut hits: Vec<Hit> = fused
            .into_iter()
            .map(|(i, (v, b))| {
                let rrf = v.map_or(0.0, |(r, _)| 1.0 / (RRF_K + r as f32))
                    + b.map_or(0.0, |(r, _)| 1.0 / (RRF_K + r as f32));
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

    /// BM25 top `limit` as (score, chunk index).
    fn bm25(&self, query: &str, limit: usize) -> Result<Vec<(f32, usize)>, IndexError> {
        let mut analyzer = self.index.tokenizer_for_field(self.fields.body)?;
        let mut terms: Vec<String> = Vec::new();
        let mut stream = analyzer.token_stream(query);
        while stream.advance() {
            let t = stream.token().text.clone();
            if !terms.contains(&t) {
                terms.push(t);
            }
        }
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &terms {
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, t),
                    IndexRecordOption::WithFreqs,
                )),
            ));
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.name, t),
                        IndexRecordOption::WithFreqs,
                    )),
                    2.0,
                )),
            ));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr)?;
            if let Some(id) = doc.get_first(self.fields.id).and_then(|v| v.as_str())
                && let Some(&i) = self.by_id.get(id)
            {
                out.push((score, i));
            }
        }
        Ok(out)
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
