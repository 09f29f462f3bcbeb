//! LocAgent's fuzzy entity retriever (`fuzzy_retrieve_from_graph_nodes`, SPEC.md §3.5).
//!
//! Candidates are the non-test `file`, `class` and `function` nodes in graph order
//! (optionally one type only, and optionally restricted to some files with a
//! fall-back to all). Each is scored against the keyword with rapidfuzz's
//! `token_set_ratio`, after the original's processor has been applied to both sides:
//! `_` and `-` become spaces, then the `\w+` runs are joined by single spaces (case
//! is kept). The best `top_k` are returned, score descending, ties by graph order —
//! exactly `process.extract(..., limit=k)` with no cutoff.
//!
//! [`FuzzyIndex`] precomputes every candidate's token set once (tokens are interned
//! in lexicographic order, so id order is string order) and keeps a running top-k;
//! the indel distance, the only costly part of the score, is computed only for
//! candidates whose length-based upper bound can still enter the top-k.

use rustc_hash::FxHashMap as HashMap;

use crate::graph::{CodeGraph, NodeIndex, NodeKind, file_part};
use crate::traverse::is_test_file;

/// The original's processor: `' '.join(re.findall(r'\b\w+\b', s.replace('_', ' ').replace('-', ' ')))`.
///
/// `\w` is approximated by Unicode alphanumerics (plus `_`, which the replacement
/// has already removed).
pub fn process(s: &str) -> String {
    tokens(s).collect::<Vec<_>>().join(" ")
}

/// The word runs of [`process`], in order (with repeats).
fn tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
}

/// rapidfuzz's `fuzz.token_set_ratio(a, b)` (no processor), a score in 0..=100.
pub fn token_set_ratio(a: &str, b: &str) -> f64 {
    let mut ta: Vec<&str> = a.split_whitespace().collect();
    let mut tb: Vec<&str> = b.split_whitespace().collect();
    ta.sort_unstable();
    ta.dedup();
    tb.sort_unstable();
    tb.dedup();
    if ta.is_empty() || tb.is_empty() {
        return 0.0;
    }
    let inter: Vec<&str> = ta
        .iter()
        .copied()
        .filter(|t| tb.binary_search(t).is_ok())
        .collect();
    let da: Vec<&str> = ta
        .iter()
        .copied()
        .filter(|t| tb.binary_search(t).is_err())
        .collect();
    let db: Vec<&str> = tb
        .iter()
        .copied()
        .filter(|t| ta.binary_search(t).is_err())
        .collect();
    let joined_len = |v: &[&str]| -> usize {
        if v.is_empty() {
            0
        } else {
            v.iter().map(|t| t.chars().count()).sum::<usize>() + v.len() - 1
        }
    };
    let parts = Parts {
        inter: inter.len(),
        s: joined_len(&inter),
        la: joined_len(&da),
        lb: joined_len(&db),
        da_empty: da.is_empty(),
        db_empty: db.is_empty(),
    };
    parts.score(|| indel(&da.join(" "), &db.join(" ")), f64::NEG_INFINITY)
}

/// Indel distance (insertions + deletions) between two strings, in code points.
fn indel(a: &str, b: &str) -> usize {
    rapidfuzz::distance::indel::distance(a.chars(), b.chars())
}

/// `100 - 100 * dist / lensum`, as rapidfuzz's `norm_distance` (100 when `lensum` is 0).
fn norm(dist: usize, lensum: usize) -> f64 {
    if lensum == 0 {
        100.0
    } else {
        100.0 - (100 * dist) as f64 / lensum as f64
    }
}

/// The length data `token_set_ratio` needs.
struct Parts {
    inter: usize,
    s: usize,
    la: usize,
    lb: usize,
    da_empty: bool,
    db_empty: bool,
}

impl Parts {
    /// The score; `indel_ab` computes the indel distance of the two joined
    /// differences and is called only when that term can exceed both the other
    /// terms and `floor`. Returns a value `<= floor` when the score cannot exceed it.
    fn score(&self, indel_ab: impl FnOnce() -> usize, floor: f64) -> f64 {
        if self.inter > 0 && (self.da_empty || self.db_empty) {
            return 100.0;
        }
        let c = usize::from(self.s > 0);
        let len_a = self.s + c + self.la;
        let len_b = self.s + c + self.lb;
        let mut best = f64::NEG_INFINITY;
        if self.s > 0 {
            best = norm(c + self.la, self.s + len_a).max(norm(c + self.lb, self.s + len_b));
        }
        let bound = norm(self.la.abs_diff(self.lb), len_a + len_b);
        if bound > best && bound > floor {
            best = best.max(norm(indel_ab(), len_a + len_b));
        }
        best.max(0.0)
    }
}

/// A candidate of the fuzzy search.
#[derive(Debug, Clone)]
struct Candidate {
    node: NodeIndex,
    kind: NodeKind,
    /// Interned token ids, sorted and unique.
    tokens: Box<[u32]>,
    /// Sum of the tokens' lengths in code points.
    chars: usize,
    /// The tokens joined by single spaces, in id (= string) order: the candidate's
    /// side of the indel distance when it shares no token with the query.
    joined: Box<str>,
}

/// One fuzzy match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FuzzyMatch {
    /// The matched node.
    pub node: NodeIndex,
    /// `token_set_ratio` score, 0..=100.
    pub score: f64,
}

/// The precomputed candidate set of a graph; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct FuzzyIndex {
    /// Interned tokens, sorted.
    vocab: Vec<Box<str>>,
    lookup: HashMap<Box<str>, u32>,
    candidates: Vec<Candidate>,
}

impl FuzzyIndex {
    /// Indexes the non-test file, class and function nodes of `graph`.
    pub fn build(graph: &CodeGraph) -> FuzzyIndex {
        let mut raw: Vec<(NodeIndex, NodeKind, Vec<&str>)> = Vec::new();
        let mut vocab: Vec<&str> = Vec::new();
        for ix in graph.node_indices() {
            let node = graph.node(ix);
            if node.kind == NodeKind::Directory || is_test_file(&node.id) {
                continue;
            }
            let toks: Vec<&str> = tokens(&node.id).collect();
            vocab.extend(toks.iter().copied());
            raw.push((ix, node.kind, toks));
        }
        vocab.sort_unstable();
        vocab.dedup();
        let vocab: Vec<Box<str>> = vocab.into_iter().map(Box::from).collect();
        let lookup: HashMap<Box<str>, u32> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let vocab_chars: Vec<usize> = vocab.iter().map(|t| t.chars().count()).collect();
        let candidates = raw
            .into_iter()
            .map(|(node, kind, toks)| {
                let mut ids: Vec<u32> = toks
                    .iter()
                    .filter_map(|t| lookup.get(*t).copied())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                let chars = ids.iter().map(|&i| vocab_chars[i as usize]).sum();
                let joined = ids
                    .iter()
                    .map(|&i| &*vocab[i as usize])
                    .collect::<Vec<&str>>()
                    .join(" ")
                    .into_boxed_str();
                Candidate {
                    node,
                    kind,
                    tokens: ids.into_boxed_slice(),
                    chars,
                    joined,
                }
            })
            .collect();
        FuzzyIndex {
            vocab,
            lookup,
            candidates,
        }
    }

    /// Number of candidates (non-test files, classes and functions).
    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    /// True when the graph has no candidate at all.
    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }

    /// The best `top_k` candidates for `keyword`: score descending, ties in graph
    /// order. `kind` restricts the candidates to one node type (the original's
    /// `search_scope`); `include_file`, when given, keeps only candidates whose file
    /// part it accepts, unless none would remain.
    pub fn search(
        &self,
        graph: &CodeGraph,
        keyword: &str,
        kind: Option<NodeKind>,
        include_file: Option<&dyn Fn(&str) -> bool>,
        top_k: usize,
    ) -> Vec<FuzzyMatch> {
        if top_k == 0 {
            return Vec::new();
        }
        let in_scope = |c: &&Candidate| kind.is_none_or(|k| c.kind == k);
        let filtered: Vec<&Candidate> = match include_file {
            Some(accept) => {
                let kept: Vec<&Candidate> = self
                    .candidates
                    .iter()
                    .filter(in_scope)
                    .filter(|c| accept(file_part(&graph.node(c.node).id)))
                    .collect();
                if kept.is_empty() {
                    self.candidates.iter().filter(in_scope).collect()
                } else {
                    kept
                }
            }
            None => self.candidates.iter().filter(in_scope).collect(),
        };
        self.rank(keyword, filtered.into_iter(), top_k)
    }

    fn rank<'a>(
        &'a self,
        keyword: &str,
        candidates: impl Iterator<Item = &'a Candidate>,
        top_k: usize,
    ) -> Vec<FuzzyMatch> {
        // The query's unique tokens in string order, with their interned ids.
        let mut query: Vec<&str> = tokens(keyword).collect();
        query.sort_unstable();
        query.dedup();
        let qids: Vec<Option<u32>> = query.iter().map(|t| self.lookup.get(*t).copied()).collect();
        let qchars: Vec<usize> = query.iter().map(|t| t.chars().count()).collect();
        // The query's side of the indel distance against candidates sharing no token
        // with it (the common case): all its tokens, with a precomputed pattern.
        let whole_query = rapidfuzz::distance::indel::BatchComparator::new(query.join(" ").chars());
        let mut best: Vec<FuzzyMatch> = Vec::with_capacity(top_k + 1);
        let mut in_inter = vec![false; query.len()];
        for cand in candidates {
            let floor = if best.len() == top_k {
                best.last().map_or(f64::NEG_INFINITY, |m| m.score)
            } else {
                f64::NEG_INFINITY
            };
            let score = if query.is_empty() || cand.tokens.is_empty() {
                0.0
            } else {
                let (mut inter, mut inter_chars, mut da, mut da_chars) = (0, 0, 0, 0);
                for (i, qid) in qids.iter().enumerate() {
                    let hit = qid.is_some_and(|id| cand.tokens.binary_search(&id).is_ok());
                    in_inter[i] = hit;
                    if hit {
                        inter += 1;
                        inter_chars += qchars[i];
                    } else {
                        da += 1;
                        da_chars += qchars[i];
                    }
                }
                let db = cand.tokens.len() - inter;
                let db_chars = cand.chars - inter_chars;
                let joined = |n: usize, chars: usize| if n == 0 { 0 } else { chars + n - 1 };
                let parts = Parts {
                    inter,
                    s: joined(inter, inter_chars),
                    la: joined(da, da_chars),
                    lb: joined(db, db_chars),
                    da_empty: da == 0,
                    db_empty: db == 0,
                };
                parts.score(
                    || {
                        if inter == 0 {
                            return whole_query.distance(cand.joined.chars());
                        }
                        let sa: Vec<&str> = query
                            .iter()
                            .zip(&in_inter)
                            .filter(|(_, hit)| !**hit)
                            .map(|(t, _)| *t)
                            .collect();
                        let sb: Vec<&str> = cand
                            .tokens
                            .iter()
                            .filter(|id| !qids.contains(&Some(**id)))
                            .map(|&id| &*self.vocab[id as usize])
                            .collect();
                        indel(&sa.join(" "), &sb.join(" "))
                    },
                    floor,
                )
            };
            if best.len() < top_k || score > floor {
                let pos = best.partition_point(|m| m.score >= score);
                best.insert(
                    pos,
                    FuzzyMatch {
                        node: cand.node,
                        score,
                    },
                );
                best.truncate(top_k);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_splits_on_underscores_dashes_and_punctuation() {
        assert_eq!(
            process("django/db/models/query.py:QuerySet._filter_or_exclude"),
            "django db models query py QuerySet filter or exclude"
        );
        assert_eq!(process("a-b c"), "a b c");
        assert_eq!(process("()"), "");
    }

    #[test]
    fn token_set_ratio_matches_rapidfuzz() {
        // Values computed with rapidfuzz 3.10.1.
        assert_eq!(
            token_set_ratio("fuzzy was a bear", "fuzzy fuzzy was a bear"),
            100.0
        );
        assert_eq!(token_set_ratio("", "a"), 0.0);
        assert_eq!(token_set_ratio("a b", "a b"), 100.0);
        let r = token_set_ratio("query filter", "db models query py QuerySet filter");
        assert_eq!(r, 100.0);
        // no intersection: plain indel ratio of the sorted joined token sets
        let r = token_set_ratio("abc", "abd");
        assert!((r - (100.0 - 100.0 * 2.0 / 6.0)).abs() < 1e-9, "{r}");
        // partial intersection: "x" shared, "abc" vs "abd" differ
        let r = token_set_ratio("x abc", "x abd");
        // s=1, la=lb=3: r0 = 100-100*2/10, r1 = 100-100*4/6
        assert!((r - 80.0).abs() < 1e-9, "{r}");
    }

    #[test]
    fn index_agrees_with_the_plain_scorer() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("pkg")).expect("mkdir");
        std::fs::write(
            dir.path().join("pkg/config_loader.py"),
            "class ConfigLoader:\n    def load(self):\n        pass\n\ndef parse_config():\n    pass\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("pkg/util.py"), "def helper():\n    pass\n").expect("write");
        let g = crate::builder::build_graph(dir.path()).expect("graph");
        let idx = FuzzyIndex::build(&g);
        for q in [
            "config loader",
            "ConfigLoader",
            "helpr",
            "parse-config",
            "zzz",
            "()",
        ] {
            let got = idx.search(&g, q, None, None, 100);
            let pq = process(q);
            let mut want: Vec<(usize, f64)> = g
                .node_indices()
                .filter(|&ix| g.node(ix).kind != NodeKind::Directory)
                .map(|ix| (ix.index(), token_set_ratio(&pq, &process(&g.node(ix).id))))
                .collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let got: Vec<(usize, f64)> = got.iter().map(|m| (m.node.index(), m.score)).collect();
            assert_eq!(got, want, "query {q}");
            let top2 = idx.search(&g, q, None, None, 2);
            assert_eq!(top2.len(), 2);
            assert_eq!(top2[0].node.index(), want[0].0, "query {q}");
            assert_eq!(top2[1].node.index(), want[1].0, "query {q}");
        }
        let classes = idx.search(&g, "loader", Some(NodeKind::Class), None, 5);
        assert_eq!(classes.len(), 1);
        assert_eq!(
            g.node(classes[0].node).id,
            "pkg/config_loader.py:ConfigLoader"
        );
    }
}
