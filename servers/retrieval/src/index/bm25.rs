//! The BM25 side of a [`RepoIndex`]: the tantivy schema and documents ([`Fields`],
//! [`tantivy_doc`]), and a scoring that ranks as a cold build of the same tree
//! would, whatever updates the index went through.
//!
//! tantivy's own statistics ([`Bm25StatisticsProvider`] of its `Searcher`) count every
//! document a segment still holds, deleted or not, until a merge drops it, and a merge
//! of a segment with deletes only *estimates* the field's token total (from quantized
//! field norms). After an update (the documents of changed files deleted, new ones
//! added) its scores would drift from a cold build's. [`LiveStats`] gives the exact
//! statistics of the live documents instead: their number, document frequencies
//! counted over live postings, and per-field token totals ([`Bm25Totals`]) that the
//! index keeps itself: a cold build takes them from its segments (which hold no
//! deleted document, so tantivy's totals are exact), and each update subtracts the
//! tokens of the chunks it removes and adds those of the chunks it adds, counted by
//! the same analyzers ([`Bm25Totals::of_chunk`]).
//!
//! The ranking is independent of the documents' layout too: every matching live
//! document is scored ([`AllScores`]: no block-max pruning, whose summation order
//! follows doc ids; tantivy's buffered union sums a document's term scores in clause
//! order), and equal scores are ordered by chunk index, never by doc address
//! ([`RepoIndex::bm25`]).

use serde::{Deserialize, Serialize};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{Bm25StatisticsProvider, BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TEXT, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::MAX_TOKEN_LEN;
use tantivy::{
    DocAddress, DocId, DocSet, Index, Score, Searcher, SegmentOrdinal, SegmentReader, TERMINATED,
    TantivyDocument, Term,
};

use super::{IndexError, RepoIndex, code_tokens, splits_identifiers};
use crate::chunk::Chunk;

/// BM25 document fields. A chunk's text and name go either to `body`/`name` (tantivy's
/// default analyzer) or to `code`/`code_name` (the split-identifier analyzer,
/// [`code_tokens`]), by [`splits_identifiers`].
#[derive(Clone, Copy)]
pub(super) struct Fields {
    pub(super) id: Field,
    pub(super) file: Field,
    pub(super) body: Field,
    pub(super) name: Field,
    pub(super) code: Field,
    pub(super) code_name: Field,
}

/// The schema every index is created with, and its fields.
pub(super) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let id = b.add_text_field("id", STRING | STORED);
    let file = b.add_text_field("file", STRING);
    let body = b.add_text_field("body", TEXT);
    let name = b.add_text_field("name", TEXT);
    // Frequencies, no positions: the BM25 query is a bag of terms.
    let split = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(code_tokens::CODE_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let code = b.add_text_field("code", split.clone());
    let code_name = b.add_text_field("code_name", split);
    (
        b.build(),
        Fields {
            id,
            file,
            body,
            name,
            code,
            code_name,
        },
    )
}

/// Registers the split-identifier analyzer the `code` fields name; every opened or
/// created index needs it before it is written or searched.
pub(super) fn register_tokenizers(index: &Index) {
    index
        .tokenizers()
        .register(code_tokens::CODE_TOKENIZER, code_tokens::code_analyzer());
}

/// The (text, name) fields a chunk's document fills.
fn text_fields(f: Fields, c: &Chunk) -> (Field, Field) {
    if splits_identifiers(c) {
        (f.code, f.code_name)
    } else {
        (f.body, f.name)
    }
}

/// What a chunk's document indexes as its text: path, a newline, the content.
fn doc_text(c: &Chunk) -> String {
    format!("{}\n{}", c.file, c.content)
}

/// The tantivy document of a chunk.
pub(super) fn tantivy_doc(f: Fields, c: &Chunk) -> TantivyDocument {
    let (body, name) = text_fields(f, c);
    let mut doc = TantivyDocument::default();
    doc.add_text(f.id, &c.id);
    doc.add_text(f.file, &c.file);
    doc.add_text(body, doc_text(c));
    if let Some(n) = &c.name {
        doc.add_text(name, n);
    }
    doc
}

/// Tokens indexed per scored field over the live documents: the `total_num_tokens`
/// of BM25's average field length (see the [module docs](self)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Bm25Totals {
    body: u64,
    name: u64,
    code: u64,
    code_name: u64,
}

impl Bm25Totals {
    fn slot(&mut self, f: Fields, field: Field) -> Option<&mut u64> {
        match field {
            x if x == f.body => Some(&mut self.body),
            x if x == f.name => Some(&mut self.name),
            x if x == f.code => Some(&mut self.code),
            x if x == f.code_name => Some(&mut self.code_name),
            _ => None,
        }
    }

    fn get(mut self, f: Fields, field: Field) -> u64 {
        self.slot(f, field).map_or(0, |v| *v)
    }

    /// The totals tantivy's segments hold. Exact only for an index without deleted
    /// documents: a cold build's.
    pub(super) fn from_segments(searcher: &Searcher, f: Fields) -> Result<Self, IndexError> {
        let mut t = Bm25Totals::default();
        for field in [f.body, f.name, f.code, f.code_name] {
            let mut sum = 0;
            for seg in searcher.segment_readers() {
                sum += seg.inverted_index(field)?.total_num_tokens();
            }
            if let Some(v) = t.slot(f, field) {
                *v = sum;
            }
        }
        Ok(t)
    }

    /// The tokens `c`'s document adds to each field, counted as tantivy's indexer
    /// counts them: the field's analyzer, tokens longer than [`MAX_TOKEN_LEN`] dropped.
    pub(super) fn of_chunk(index: &Index, f: Fields, c: &Chunk) -> Result<Self, IndexError> {
        let (body, name) = text_fields(f, c);
        let mut t = Bm25Totals::default();
        let text = doc_text(c);
        let values = [(body, Some(text.as_str())), (name, c.name.as_deref())];
        for (field, value) in values {
            let Some(value) = value else { continue };
            let mut analyzer = index.tokenizer_for_field(field)?;
            let mut stream = analyzer.token_stream(value);
            let mut n = 0u64;
            while stream.advance() {
                if stream.token().text.len() <= MAX_TOKEN_LEN {
                    n += 1;
                }
            }
            if let Some(v) = t.slot(f, field) {
                *v += n;
            }
        }
        Ok(t)
    }

    /// Adds `other` (a chunk added).
    pub(super) fn add(&mut self, other: &Bm25Totals) {
        self.body += other.body;
        self.name += other.name;
        self.code += other.code;
        self.code_name += other.code_name;
    }

    /// Subtracts `other` (a chunk removed); `None` if it was not counted (the totals
    /// do not belong to this index).
    pub(super) fn sub(&mut self, other: &Bm25Totals) -> Option<()> {
        self.body = self.body.checked_sub(other.body)?;
        self.name = self.name.checked_sub(other.name)?;
        self.code = self.code.checked_sub(other.code)?;
        self.code_name = self.code_name.checked_sub(other.code_name)?;
        Some(())
    }
}

/// The exact BM25 statistics of the live documents (see the [module docs](self)).
struct LiveStats<'a> {
    searcher: &'a Searcher,
    totals: Bm25Totals,
    fields: Fields,
}

impl Bm25StatisticsProvider for LiveStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Ok(self.totals.get(self.fields, field))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut n = 0u64;
        for seg in self.searcher.segment_readers() {
            let inverted = seg.inverted_index(term.field())?;
            let Some(alive) = seg.alive_bitset() else {
                n += u64::from(inverted.doc_freq(term)?);
                continue;
            };
            if let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? {
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    n += u64::from(alive.is_alive(doc));
                    doc = postings.advance();
                }
            }
        }
        Ok(n)
    }
}

/// Collects every matching live document with its score (no pruning; see the
/// [module docs](self)).
struct AllScores;

/// [`AllScores`] over one segment.
struct SegmentScores {
    ord: SegmentOrdinal,
    hits: Vec<(Score, DocAddress)>,
}

impl Collector for AllScores {
    type Fruit = Vec<(Score, DocAddress)>;
    type Child = SegmentScores;

    fn for_segment(
        &self,
        ord: SegmentOrdinal,
        _: &SegmentReader,
    ) -> tantivy::Result<SegmentScores> {
        Ok(SegmentScores {
            ord,
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentScores {
    type Fruit = Vec<(Score, DocAddress)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.hits.push((score, DocAddress::new(self.ord, doc)));
    }

    fn harvest(self) -> Self::Fruit {
        self.hits
    }
}

/// The distinct terms `field`'s analyzer makes of `query`, in order.
fn query_terms(index: &Index, field: Field, query: &str) -> Result<Vec<String>, IndexError> {
    let mut analyzer = index.tokenizer_for_field(field)?;
    let mut terms: Vec<String> = Vec::new();
    let mut stream = analyzer.token_stream(query);
    while stream.advance() {
        let t = &stream.token().text;
        if !terms.contains(t) {
            terms.push(t.clone());
        }
    }
    Ok(terms)
}

impl RepoIndex {
    /// The BM25 query of `query`: each term of each field's analyzer, over the text
    /// field and (boosted twice) the name field; `None` when no term remains.
    fn bm25_query(&self, query: &str) -> Result<Option<BooleanQuery>, IndexError> {
        let f = self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (body, name) in [(f.body, f.name), (f.code, f.code_name)] {
            for t in query_terms(&self.index, body, query)? {
                clauses.push((
                    Occur::Should,
                    Box::new(TermQuery::new(
                        Term::from_field_text(body, &t),
                        IndexRecordOption::WithFreqs,
                    )),
                ));
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(
                            Term::from_field_text(name, &t),
                            IndexRecordOption::WithFreqs,
                        )),
                        2.0,
                    )),
                ));
            }
        }
        Ok((!clauses.is_empty()).then(|| BooleanQuery::new(clauses)))
    }

    /// BM25 top `limit` as (score, chunk index), best first, equal scores by chunk
    /// index. The query is read by each field's analyzer: tantivy's default one for
    /// `body`/`name` (Python and text chunks), the split-identifier one for
    /// `code`/`code_name` (the other languages' chunks); a name match counts twice.
    /// Scores use the live statistics ([`LiveStats`]), so an updated index ranks as a
    /// cold build of its tree.
    pub(super) fn bm25(&self, query: &str, limit: usize) -> Result<Vec<(f32, usize)>, IndexError> {
        let Some(query) = self.bm25_query(query)? else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let stats = LiveStats {
            searcher: &searcher,
            totals: self.bm25_totals,
            fields: self.fields,
        };
        let mut all = searcher.search_with_statistics_provider(&query, &AllScores, &stats)?;
        all.sort_by(|a, b| b.0.total_cmp(&a.0));
        // The first `limit`, and every hit tied with the last of them: which of the
        // tied ones make the cut is decided by chunk index below.
        if all.len() > limit {
            let last = all[limit - 1].0;
            let cut = all[limit..]
                .iter()
                .position(|h| h.0 < last)
                .map_or(all.len(), |p| limit + p);
            all.truncate(cut);
        }
        let mut out = Vec::with_capacity(all.len());
        for (score, addr) in all {
            let doc: TantivyDocument = searcher.doc(addr)?;
            if let Some(id) = doc.get_first(self.fields.id).and_then(|v| v.as_str())
                && let Some(&i) = self.by_id.get(id)
            {
                out.push((score, i));
            }
        }
        out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.truncate(limit);
        Ok(out)
    }
}
