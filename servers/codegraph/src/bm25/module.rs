//! The module (entity-id) retriever of SPEC.md §3.4: BM25 over graph node ids.
//!
//! LocAgent rebuilds it on every call from the graph's non-test nodes (directories
//! included), one document per node whose text is exactly the node id. It is small, so
//! it lives in memory (no tantivy); the scoring is the same bm25s BM25 as the content
//! index.

use std::collections::HashMap;

use super::scoring::{self, Bm25Params};
use super::tokenize::Tokenizer;

/// One hit of the module retriever.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleHit {
    /// The node id.
    pub id: String,
    /// BM25 score.
    pub score: f32,
}

/// BM25 over a list of entity ids (e.g. `django/db/models/query.py:QuerySet.filter`).
#[derive(Debug, Clone)]
pub struct ModuleIndex {
    ids: Vec<String>,
    /// stem → (doc, BM25 score of the stem in the doc), docs ascending (precomputed,
    /// as bm25s' score matrix).
    postings: HashMap<String, Vec<(u32, f32)>>,
}

impl ModuleIndex {
    /// Indexes `ids` (in this order; pass the graph's non-test node ids in graph order).
    pub fn build(ids: &[String]) -> Self {
        let mut tokenizer = Tokenizer::new();
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_lens = Vec::with_capacity(ids.len());
        for (d, id) in ids.iter().enumerate() {
            let toks = tokenizer.tokenize(id);
            doc_lens.push(toks.len() as u64);
            let mut tf: Vec<(String, u32)> = Vec::new();
            for t in toks {
                match tf.iter_mut().find(|(s, _)| *s == t) {
                    Some((_, n)) => *n += 1,
                    None => tf.push((t, 1)),
                }
            }
            for (t, n) in tf {
                postings.entry(t).or_default().push((d as u32, n));
            }
        }
        let avgdl = scoring::mean_len(&doc_lens);
        let params = Bm25Params::default();
        let n = ids.len() as u64;
        let postings = postings
            .into_iter()
            .map(|(t, p)| {
                let idf = scoring::idf(p.len() as u64, n);
                let scored = p
                    .into_iter()
                    .map(|(d, tf)| {
                        let len = doc_lens.get(d as usize).copied().unwrap_or(0);
                        (d, scoring::term_score(idf, tf, len, avgdl, params))
                    })
                    .collect();
                (t, scored)
            })
            .collect();
        ModuleIndex {
            ids: ids.to_vec(),
            postings,
        }
    }

    /// Number of indexed ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no id is indexed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The best `top_k` ids for `query` with a positive score, best first, ties in id
    /// order. Empty when the query has no indexed token (the original raises or returns
    /// zero scores there; LocAgent's caller drops non-positive hits anyway).
    pub fn search(&self, query: &str, top_k: usize) -> Vec<ModuleHit> {
        let tokens = Tokenizer::new().tokenize(query);
        if tokens.is_empty() || self.ids.is_empty() {
            return Vec::new();
        }
        let mut scores = vec![0f32; self.ids.len()];
        for t in &tokens {
            if let Some(list) = self.postings.get(t.as_str()) {
                for &(d, s) in list {
                    scores[d as usize] += s;
                }
            }
        }
        scoring::top_k(&scores, top_k)
            .into_iter()
            .map(|(d, score)| ModuleHit {
                id: self.ids[d].clone(),
                score,
            })
            .collect()
    }

    /// `bm25_module_retrieve` (SPEC.md §3.4): the top-10 positive hits; when `include_files`
    /// is given, those whose file part (`id` before the first `:`) is listed, unless none
    /// is, then all positive hits.
    pub fn retrieve(&self, query: &str, include_files: Option<&[String]>) -> Vec<ModuleHit> {
        let hits = self.search(query, 10);
        let Some(files) = include_files else {
            return hits;
        };
        let filtered: Vec<ModuleHit> = hits
            .iter()
            .filter(|h| {
                let file = h.id.split(':').next().unwrap_or("");
                files.iter().any(|f| f == file)
            })
            .cloned()
            .collect();
        if filtered.is_empty() { hits } else { filtered }
    }
}
