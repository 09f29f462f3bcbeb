//! The module (entity-id) retriever of SPEC.md §3.4: BM25 over graph node ids.
//!
//! LocAgent rebuilds it on every call from the graph's non-test nodes (directories
//! included), one document per node whose text is exactly the node id. It is small, so
//! it lives in memory (no tantivy); the scoring is the same bm25s BM25 as the content
//! index.

use super::docs::DocIndex;
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
    index: DocIndex,
}

impl ModuleIndex {
    /// Indexes `ids` (in this order; pass the graph's non-test node ids in graph order).
    pub fn build(ids: &[String]) -> Self {
        let mut tokenizer = Tokenizer::new();
        let index = DocIndex::build(ids.iter().map(|id| tokenizer.tokenize(id)));
        ModuleIndex {
            ids: ids.to_vec(),
            index,
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
        self.index
            .search(&tokens, top_k)
            .into_iter()
            .filter_map(|(d, score)| {
                Some(ModuleHit {
                    id: self.ids.get(d)?.clone(),
                    score,
                })
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
