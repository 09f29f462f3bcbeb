//! The `text` policy: what an agent with only list/read/grep does, scripted.
//!
//! 1. `list_files` with `*.py` gives the universe of source files (N).
//! 2. Terms are extracted from the issue ([`super::terms`]); the top
//!    [`MAX_TERMS`] are grepped one call each, as whole words (`\bterm\b`), in `*.py`.
//! 3. Files are ranked by IDF-weighted hits: for term t with document frequency df,
//!    `idf = ln(1 + N / df)`; a file gains `weight(t) · idf · (1 + ln hits)`, plus
//!    `2 · idf` more when a hit is t's definition (`def t` / `class t`). Files named
//!    in the issue (paths, traceback frames) gain the largest single-term score.
//!    Test files (`test_*.py`, `*_test.py`, `conftest.py`, under `tests/`) are scaled
//!    by [`TEST_FILE_FACTOR`]: the fix is rarely in a test.
//! 4. The top [`FILES_TO_READ`] files are read with `read_file` (the cost an agent
//!    pays to look at them); the harness parses them with tree-sitter to map each hit
//!    line to its enclosing function and module, as the agent reading the file would.
//! 5. Functions and modules are ranked by the IDF-weighted hits inside them (a
//!    definition of a term counts 3×, a traceback frame naming the function adds the
//!    top term score), multiplied by their file's normalized score so evidence in a
//!    better file ranks higher. Ties break by file rank, then by first appearance.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use super::entities::EntityIndex;
use super::ranking::Scores;
use super::terms::{self, Extracted};
use super::{Driver, Task};
use crate::dataset::Locations;

/// How many terms are grepped (one call each).
pub const MAX_TERMS: usize = 12;
/// How many top-ranked files are read and ranked at function level.
pub const FILES_TO_READ: usize = 5;
/// Score factor for test files.
pub const TEST_FILE_FACTOR: f64 = 0.25;
/// How many locations of each level the policy answers with.
pub const ANSWER_LEN: usize = 10;
/// Matches asked of one grep call.
const GREP_MAX: usize = 300;

/// True for test files by the usual Python conventions.
pub fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || path
            .split('/')
            .any(|d| d == "tests" || d == "test" || d == "testing")
}

/// One grep hit: file, 1-based line, line text.
struct Hit {
    path: String,
    line: usize,
    text: String,
}

fn parse_hits(v: &Value) -> Vec<Hit> {
    v.get("matches")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter_map(|m| {
                    Some(Hit {
                        path: m.get("path")?.as_str()?.to_string(),
                        line: m.get("line").or_else(|| m.get("line_number"))?.as_u64()? as usize,
                        text: m
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn parse_files(v: &Value) -> Vec<String> {
    v.get("files")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| {
                    f.as_str()
                        .map(str::to_string)
                        .or_else(|| f.get("path").and_then(Value::as_str).map(str::to_string))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn is_definition(line: &str, term: &str) -> bool {
    let t = line.trim_start();
    for kw in ["def ", "async def ", "class "] {
        if let Some(rest) = t.strip_prefix(kw) {
            return rest.starts_with(term) && rest[term.len()..].starts_with(['(', ':']);
        }
    }
    false
}

/// Matches a path mentioned in the issue (possibly absolute or site-packages-rooted)
/// to a repository file: the longest repository path that is a suffix of it.
pub fn match_mentioned<'f>(mentioned: &str, files: &'f [String]) -> Option<&'f String> {
    let m = mentioned.trim_start_matches("./");
    files
        .iter()
        .filter(|f| m == f.as_str() || m.ends_with(&format!("/{f}")))
        .max_by_key(|f| f.len())
}

/// Runs the policy (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    let ex: Extracted = terms::extract(&task.instance.problem_statement);

    let listed = driver
        .call("list_files", json!({"glob": "*.py", "max_results": 10_000}))
        .await;
    if listed.is_error {
        anyhow::bail!(
            "list_files failed: {}",
            listed.error.unwrap_or_else(|| listed.text.clone())
        );
    }
    let files = listed
        .structured
        .as_ref()
        .map(parse_files)
        .unwrap_or_default();
    let n_files = files.len().max(1) as f64;

    // Grep the top terms; remember per-term hits for the entity stage.
    let mut file_scores = Scores::default();
    let mut term_hits: Vec<(f64, String, Vec<Hit>)> = Vec::new();
    for term in ex.terms.iter().take(MAX_TERMS) {
        let out = driver
            .call(
                "grep",
                json!({
                    "pattern": format!(r"\b{}\b", regex::escape(&term.text)),
                    "glob": "*.py",
                    "max_results": GREP_MAX,
                }),
            )
            .await;
        if out.is_error {
            continue;
        }
        let hits = out.structured.as_ref().map(parse_hits).unwrap_or_default();
        let mut per_file: BTreeMap<&str, (usize, bool)> = BTreeMap::new();
        for h in &hits {
            let e = per_file.entry(h.path.as_str()).or_default();
            e.0 += 1;
            e.1 |= is_definition(&h.text, &term.text);
        }
        let truncated = out
            .structured
            .as_ref()
            .and_then(|v| v.get("truncated"))
            .is_some_and(|t| t.as_bool().unwrap_or(false) || t.as_u64().is_some_and(|n| n > 0));
        // A truncated result means the term is everywhere: treat df as at least N/2.
        let mut df = per_file.len() as f64;
        if truncated {
            df = df.max(n_files / 2.0);
        }
        if df == 0.0 {
            continue;
        }
        let idf = (1.0 + n_files / df).ln() * term.weight;
        // Visit files in first-hit order so ties keep grep's (sorted) order.
        let mut order: Vec<&str> = Vec::new();
        for h in &hits {
            if !order.contains(&h.path.as_str()) {
                order.push(&h.path);
            }
        }
        for f in order {
            let (count, def) = per_file[f];
            let mut s = idf * (1.0 + (count as f64).ln());
            if def {
                s += 2.0 * idf;
            }
            file_scores.add(f, s);
        }
        term_hits.push((idf, term.text.clone(), hits));
    }

    // Files named by the issue get the largest single-term score.
    let top_term = term_hits.iter().map(|t| t.0).fold(1.0_f64, f64::max);
    let mut mentioned: Vec<String> = Vec::new();
    for p in ex.paths.iter().chain(ex.frames.iter().map(|f| &f.path)) {
        if let Some(f) = match_mentioned(p, &files)
            && !mentioned.contains(f)
        {
            mentioned.push(f.clone());
            file_scores.add(f, 3.0 * top_term);
        }
    }
    for f in files.iter().filter(|f| is_test_file(f)) {
        file_scores.scale(f, TEST_FILE_FACTOR);
    }
    let ranked_files = file_scores.ranked();

    // Read the best files, then rank their functions and modules.
    let to_read: Vec<String> = ranked_files.iter().take(FILES_TO_READ).cloned().collect();
    for f in &to_read {
        driver.call("read_file", json!({"path": f})).await;
    }
    let max_file = to_read
        .first()
        .map(|f| file_scores.get(f))
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0);
    let mut index = EntityIndex::default();
    let mut func_scores = Scores::default();
    let mut mod_scores = Scores::default();
    let file_weight: HashMap<&str, f64> = to_read
        .iter()
        .map(|f| (f.as_str(), file_scores.get(f) / max_file))
        .collect();
    // Evidence is added file by file in rank order, so ties break by file rank.
    for f in &to_read {
        let w = file_weight[f.as_str()];
        for (idf, term, hits) in &term_hits {
            for h in hits.iter().filter(|h| &h.path == f) {
                let ids = index.ids_at(task.workdir, f, h.line);
                let mut s = *idf;
                if is_definition(&h.text, term) {
                    s *= 3.0;
                }
                if let Some(func) = &ids.function {
                    func_scores.add(func, s * w);
                }
                if let Some(m) = &ids.module {
                    mod_scores.add(m, s * w);
                }
            }
        }
        for fr in ex
            .frames
            .iter()
            .filter(|fr| match_mentioned(&fr.path, &files) == Some(f))
        {
            let ids = index.ids_at(task.workdir, f, fr.line);
            if let Some(func) = &ids.function {
                func_scores.add(func, top_term * w);
            }
            if let Some(m) = &ids.module {
                mod_scores.add(m, top_term * w);
            }
        }
    }

    let take = |v: Vec<String>| v.into_iter().take(ANSWER_LEN).collect::<Vec<_>>();
    Ok(Locations {
        files: take(ranked_files),
        modules: take(mod_scores.ranked()),
        functions: take(func_scores.ranked()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_recognized() {
        assert!(is_test_file("tests/test_a.py"));
        assert!(is_test_file("pkg/conftest.py"));
        assert!(is_test_file("pkg/a_test.py"));
        assert!(!is_test_file("pkg/testing_utils_x/a.py") || is_test_file("pkg/testing/a.py"));
        assert!(!is_test_file("pkg/contest.py"));
    }

    #[test]
    fn definitions_are_recognized() {
        assert!(is_definition("    def apply(self):", "apply"));
        assert!(is_definition("class Cart(Base):", "Cart"));
        assert!(is_definition("async def fetch():", "fetch"));
        assert!(!is_definition("    def apply_all(self):", "apply"));
        assert!(!is_definition("x = apply(1)", "apply"));
    }

    #[test]
    fn mentioned_paths_match_by_suffix() {
        let files = vec!["shop/a.py".to_string(), "a.py".to_string()];
        assert_eq!(
            match_mentioned("/usr/lib/python3/site-packages/shop/a.py", &files),
            Some(&files[0])
        );
        assert_eq!(match_mentioned("a.py", &files), Some(&files[1]));
        assert_eq!(match_mentioned("b.py", &files), None);
    }
}
