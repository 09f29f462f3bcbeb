//! An in-memory BM25 index over tokenized documents, scored as bm25s scores
//! ([`super::scoring`]): the entity-id retriever ([`super::ModuleIndex`]) and the
//! per-function retriever ([`crate::functions`]) both sit on it. Their corpora (ids;
//! one document per function) are small enough to need no tantivy.
//!
//! Every (token, document) score is computed once at build time (bm25s' precomputed
//! score matrix), so a query only sums the lists of its tokens, in query order, a
//! token repeated in the query counting again (bm25s does the same).

use rustc_hash::FxHashMap as HashMap;

use super::scoring::{self, Bm25Params};

/// BM25 over documents given as token lists (already lower-cased, filtered, stemmed).
#[derive(Debug, Clone, Default)]
pub struct DocIndex {
    n_docs: usize,
    /// token → (doc, BM25 score of the token in the doc), docs ascending.
    postings: HashMap<String, Vec<(u32, f32)>>,
}

impl DocIndex {
    /// Indexes `docs` in order (a document's position is its id) with bm25s' default
    /// parameters.
    pub fn build<I: IntoIterator<Item = Vec<String>>>(docs: I) -> DocIndex {
        let mut builder = DocIndexBuilder::default();
        for tokens in docs {
            let numbers: Vec<u32> = tokens.iter().map(|t| builder.number(t)).collect();
            builder.add_numbered(numbers.into_iter());
        }
        builder.finish()
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.n_docs
    }

    /// Whether there is no document.
    pub fn is_empty(&self) -> bool {
        self.n_docs == 0
    }

    /// Whether `token` occurs in some document.
    pub fn has_token(&self, token: &str) -> bool {
        self.postings.contains_key(token)
    }

    /// The best `top_k` documents for `query` (tokens as the documents were tokenized),
    /// positive scores only, best first, equal scores in document order.
    pub fn search(&self, query: &[String], top_k: usize) -> Vec<(usize, f32)> {
        if query.is_empty() || self.n_docs == 0 {
            return Vec::new();
        }
        let mut scores = vec![0f32; self.n_docs];
        for t in query {
            if let Some(list) = self.postings.get(t.as_str()) {
                for &(d, s) in list {
                    if let Some(score) = scores.get_mut(d as usize) {
                        *score += s;
                    }
                }
            }
        }
        scoring::top_k(&scores, top_k)
    }
}

/// Builds a [`DocIndex`] document by document. Tokens are numbered on first sight,
/// so a token costs one lookup (or none: [`DocIndexBuilder::add_file`] numbers a
/// file's vocabulary once for all its documents), and a document's term frequencies
/// are the runs of its sorted token numbers.
#[derive(Debug, Default)]
pub struct DocIndexBuilder {
    numbers: HashMap<String, u32>,
    /// Per token number: `(document, term frequency)`, documents ascending.
    counts: Vec<Vec<(u32, u32)>>,
    doc_lens: Vec<u64>,
    scratch: Vec<u32>,
}

impl DocIndexBuilder {
    /// The number of `token`, given on first sight.
    fn number(&mut self, token: &str) -> u32 {
        if let Some(&n) = self.numbers.get(token) {
            return n;
        }
        let n = self.counts.len() as u32;
        self.counts.push(Vec::new());
        self.numbers.insert(token.to_string(), n);
        n
    }

    /// Adds the next document, its tokens given by number.
    fn add_numbered(&mut self, tokens: impl Iterator<Item = u32>) {
        let d = u32::try_from(self.doc_lens.len()).unwrap_or(u32::MAX);
        self.scratch.clear();
        self.scratch.extend(tokens);
        self.doc_lens.push(self.scratch.len() as u64);
        self.scratch.sort_unstable();
        for run in self.scratch.chunk_by(|a, b| a == b) {
            self.counts[run[0] as usize].push((d, run.len() as u32));
        }
    }

    /// Adds the documents of one file, in order: each a list of indices into the
    /// file's `vocab` (an index outside it is skipped).
    pub fn add_file<'d>(&mut self, vocab: &[String], docs: impl IntoIterator<Item = &'d [u32]>) {
        let global: Vec<u32> = vocab.iter().map(|t| self.number(t)).collect();
        for doc in docs {
            let numbers: Vec<u32> = doc
                .iter()
                .filter_map(|&i| global.get(i as usize).copied())
                .collect();
            self.add_numbered(numbers.into_iter());
        }
    }

    /// The index, scored with bm25s' default parameters.
    pub fn finish(self) -> DocIndex {
        let DocIndexBuilder {
            numbers,
            mut counts,
            doc_lens,
            ..
        } = self;
        let avgdl = scoring::mean_len(&doc_lens);
        let params = Bm25Params::default();
        let n_docs = doc_lens.len();
        let postings = numbers
            .into_iter()
            .map(|(t, n)| {
                let list = std::mem::take(&mut counts[n as usize]);
                let idf = scoring::idf(list.len() as u64, n_docs as u64);
                let scored = list
                    .into_iter()
                    .map(|(d, tf)| {
                        let len = doc_lens.get(d as usize).copied().unwrap_or(0);
                        (d, scoring::term_score(idf, tf, len, avgdl, params))
                    })
                    .collect();
                (t, scored)
            })
            .collect();
        DocIndex { n_docs, postings }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn doc_index_ranks_by_bm25_with_ties_in_document_order() {
        let idx = DocIndex::build(vec![
            toks("cart total"),
            toks("cart"),
            toks("total total price"),
            toks("cart"),
        ]);
        assert_eq!(idx.len(), 4);
        let hits = idx.search(&toks("cart"), 10);
        // The short documents holding `cart` once tie, in document order, ahead of the
        // longer one.
        let order: Vec<usize> = hits.iter().map(|h| h.0).collect();
        assert_eq!(order, [1, 3, 0]);
        // A repeated query token counts again.
        let once = idx.search(&toks("price"), 1)[0].1;
        let twice = idx.search(&toks("price price"), 1)[0].1;
        assert!((twice - 2.0 * once).abs() < 1e-6);
        assert!(idx.search(&toks("absent"), 10).is_empty());
        assert!(idx.search(&[], 10).is_empty());
        assert!(DocIndex::build(Vec::<Vec<String>>::new()).is_empty());
    }
}
