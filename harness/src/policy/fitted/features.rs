//! The features a fitted ranker scores: one row per candidate of a policy's answer,
//! at each level (files, modules, functions).
//!
//! Every feature is something an agent holding that variant's answer could see: the
//! policy's own ranks (its hand-weighted fusion of the tools' results, which already
//! carries the tools' scores: BM25, retrieval similarity, graph links), how the other
//! levels of the same answer support a candidate (a file whose functions rank high),
//! the issue's words against the candidate's path and name, whether the issue names
//! it, and the path's kind (test or derived code by `navbench_lang::family` and
//! [`crate::policy::secondary`], documentation and examples, the answer's main
//! language, a method rather than a top-level function). None depends on a repository
//! or an instance by name, so a model over them carries no per-repository constant.
//! The same code computes them when features are extracted for fitting
//! (`navbench tune --features`) and when a run reranks with a fitted model, so the two
//! cannot drift apart.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::data::dataset::Locations;
use crate::policy::secondary;

/// The features' names, in the order of a row (and of a model's weights).
pub const NAMES: [&str; 17] = [
    "rr",
    "rank_log",
    "file_rr",
    "fn_rr",
    "fn_share",
    "mod_rr",
    "path_overlap",
    "stem_in_issue",
    "file_named",
    "name_named",
    "class_named",
    "name_overlap",
    "secondary",
    "auxiliary",
    "main_language",
    "method",
    "depth",
];

/// Number of features.
pub const N: usize = NAMES.len();

/// One row: a candidate's features.
pub type Row = [f64; N];

/// The candidates of one level, in the answer's order, with their features.
pub type LevelRows = Vec<(String, Row)>;

/// The issue as the features read it: its words (identifiers split at `_`, case
/// changes and punctuation, lower-cased) and its identifiers as written.
pub struct IssueWords {
    words: HashSet<String>,
    identifiers: HashSet<String>,
    text: String,
}

impl IssueWords {
    /// Reads `issue`.
    pub fn new(issue: &str) -> IssueWords {
        let identifiers: HashSet<String> = issue
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|t| t.len() >= 2)
            .map(String::from)
            .collect();
        IssueWords {
            words: words(issue).into_iter().collect(),
            identifiers,
            text: issue.to_string(),
        }
    }
}

/// Lower-cased words of at least 3 characters: split at anything not alphanumeric,
/// at `_`, and at a lower-to-upper case change (`parseSpec` → `parse`, `spec`).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if cur.chars().count() >= 3 {
            out.push(cur.to_lowercase());
        }
        cur.clear();
    };
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut cur, &mut out);
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            flush(&mut cur, &mut out);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.push(c);
    }
    flush(&mut cur, &mut out);
    out
}

/// The file part of a location id (`path` or `path:Entity`).
pub fn file_of(id: &str) -> &str {
    id.split(':').next().unwrap_or(id)
}

/// The rows of the three levels of `loc` (files, modules, functions), `root` being
/// the checked-out tree (a file's head is read to tell derived code).
pub fn rows(loc: &Locations, root: &Path, issue: &IssueWords) -> [LevelRows; 3] {
    let ctx = Context::new(loc, root);
    let level = |ids: &[String], kind: Kind| -> LevelRows {
        ids.iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), ctx.row(id, i + 1, kind, issue)))
            .collect()
    };
    [
        level(&loc.files, Kind::File),
        level(&loc.modules, Kind::Module),
        level(&loc.functions, Kind::Function),
    ]
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    File,
    Module,
    Function,
}

/// What rows share: ranks by file at each level, per-file judgements.
struct Context<'a> {
    file_rank: HashMap<&'a str, usize>,
    /// Per file, the ranks of its functions (and modules), best first.
    fn_ranks: HashMap<&'a str, Vec<(usize, &'a str)>>,
    mod_ranks: HashMap<&'a str, Vec<(usize, &'a str)>>,
    n_functions: usize,
    secondary: HashMap<&'a str, bool>,
    main_ext: Option<&'a str>,
}

impl<'a> Context<'a> {
    fn new(loc: &'a Locations, root: &Path) -> Context<'a> {
        let mut file_rank = HashMap::new();
        for (i, f) in loc.files.iter().enumerate() {
            file_rank.entry(f.as_str()).or_insert(i + 1);
        }
        let by_file = |ids: &'a [String]| {
            let mut m: HashMap<&str, Vec<(usize, &str)>> = HashMap::new();
            for (i, id) in ids.iter().enumerate() {
                m.entry(file_of(id)).or_default().push((i + 1, id.as_str()));
            }
            m
        };
        let mut secondary = HashMap::new();
        let all = loc.files.iter().chain(&loc.modules).chain(&loc.functions);
        for id in all {
            let f = file_of(id);
            secondary
                .entry(f)
                .or_insert_with(|| secondary::is_secondary_file(root, f));
        }
        let mut ext_count: HashMap<&str, usize> = HashMap::new();
        for f in loc.files.iter().take(10) {
            *ext_count.entry(extension(f)).or_default() += 1;
        }
        let main_ext = (ext_count.into_iter())
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|(e, _)| e);
        Context {
            file_rank,
            fn_ranks: by_file(&loc.functions),
            mod_ranks: by_file(&loc.modules),
            n_functions: loc.functions.len(),
            secondary,
            main_ext,
        }
    }

    /// The best rank among `ranks` of an id other than `id` (0 when none).
    fn best_other(ranks: Option<&Vec<(usize, &str)>>, id: &str) -> f64 {
        ranks
            .into_iter()
            .flatten()
            .find(|(_, other)| *other != id)
            .map_or(0.0, |(r, _)| 1.0 / *r as f64)
    }

    fn row(&self, id: &str, rank: usize, kind: Kind, issue: &IssueWords) -> Row {
        let file = file_of(id);
        let qual = id.split_once(':').map_or("", |(_, q)| q);
        let name = qual.rsplit('.').next().unwrap_or("");
        let class = qual.split('.').next().unwrap_or("");
        let base = file.rsplit('/').next().unwrap_or(file);
        let stem = base.split('.').next().unwrap_or(base);
        let path_words = words(file.strip_suffix(extension(file)).unwrap_or(file));
        let overlap = |ws: &[String]| match ws.is_empty() {
            true => 0.0,
            false => {
                let hit = ws.iter().filter(|w| issue.words.contains(*w)).count();
                hit as f64 / ws.len() as f64
            }
        };
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let fn_of_file = self.fn_ranks.get(file);
        let entity = kind != Kind::File;
        [
            1.0 / rank as f64,
            1.0 - (rank as f64).ln() / 51f64.ln(),
            self.file_rank.get(file).map_or(0.0, |r| 1.0 / *r as f64),
            Self::best_other(fn_of_file, id),
            fn_of_file.map_or(0.0, |v| v.len() as f64) / self.n_functions.max(1) as f64,
            Self::best_other(self.mod_ranks.get(file), id),
            overlap(&path_words),
            flag(stem.len() >= 3 && issue.words.contains(&stem.to_lowercase())),
            flag(issue.text.contains(base) && base.contains('.')),
            flag(entity && !name.is_empty() && issue.identifiers.contains(name)),
            flag(entity && qual.contains('.') && issue.identifiers.contains(class)),
            flag(entity) * overlap(&words(name)),
            flag(self.secondary.get(file).copied().unwrap_or(false)),
            flag(navbench_lang::family::is_auxiliary_path(file)),
            flag(self.main_ext == Some(extension(file))),
            flag(entity && qual.contains('.')),
            (file.matches('/').count() as f64 / 10.0).min(1.0),
        ]
    }
}

/// A path's extension with its dot (`.py`), or `""`.
fn extension(path: &str) -> &str {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.rfind('.').map_or("", |i| &base[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rows: &LevelRows, id: &str, feature: &str) -> f64 {
        let i = NAMES.iter().position(|n| *n == feature).unwrap();
        rows.iter().find(|(x, _)| x == id).unwrap().1[i]
    }

    #[test]
    fn words_split_identifiers_and_case() {
        assert_eq!(
            words("parse_coupon_spec in Money.allocateAll() x"),
            ["parse", "coupon", "spec", "money", "allocate", "all"]
        );
    }

    #[test]
    fn rows_read_ranks_mentions_and_kinds() {
        let loc = Locations {
            files: vec!["pkg/money.py".into(), "tests/test_money.py".into()],
            modules: vec!["pkg/money.py:Money".into()],
            functions: vec![
                "pkg/money.py:Money.allocate".into(),
                "pkg/util.py:helper".into(),
                "pkg/money.py:Money.zero".into(),
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let issue = IssueWords::new("Money.allocate loses a cent (see money.py)");
        let [files, modules, functions] = rows(&loc, dir.path(), &issue);
        assert_eq!(files.len(), 2);
        assert_eq!(at(&files, "pkg/money.py", "rr"), 1.0);
        assert_eq!(at(&files, "tests/test_money.py", "rr"), 0.5);
        assert_eq!(at(&files, "pkg/money.py", "file_named"), 1.0);
        assert_eq!(at(&files, "pkg/money.py", "stem_in_issue"), 1.0);
        assert_eq!(at(&files, "tests/test_money.py", "secondary"), 1.0);
        assert_eq!(at(&files, "pkg/money.py", "secondary"), 0.0);
        assert_eq!(at(&files, "pkg/money.py", "fn_rr"), 1.0);
        assert!((at(&files, "pkg/money.py", "fn_share") - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(at(&modules, "pkg/money.py:Money", "name_named"), 1.0);
        let f = "pkg/money.py:Money.allocate";
        assert_eq!(at(&functions, f, "name_named"), 1.0);
        assert_eq!(at(&functions, f, "class_named"), 1.0);
        assert_eq!(at(&functions, f, "method"), 1.0);
        assert_eq!(at(&functions, f, "fn_rr"), 1.0 / 3.0);
        assert_eq!(at(&functions, "pkg/util.py:helper", "method"), 0.0);
        assert_eq!(at(&functions, "pkg/util.py:helper", "file_rr"), 0.0);
        assert_eq!(at(&functions, f, "main_language"), 1.0);
    }
}
