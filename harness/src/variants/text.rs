//! The `text` variant: a server with no special tools (`navbench-text`: list, read and
//! grep files under `--root`), and the policy that plays an agent using them.
//!
//! # The strategy an agent with these tools follows
//! With no index and no graph, an agent works as a developer in a terminal does: it
//! picks the identifiers, file names and traceback frames out of the issue, greps for
//! each (a rare identifier says more than a common one, and the line that *defines* a
//! name says more than a use of it), opens the few files where the hits concentrate
//! or that the issue names, and reads the functions around the hits to decide which
//! one must change. Tests are read for usage, not taken as the place to fix.
//!
//! # How the script follows it
//! Deterministically, one call per grep and per file read:
//!
//! 1. `list_files` with a glob of every source extension navbench reads gives the
//!    repository's languages ([`Families`]: those with a real share of its files)
//!    and the universe of their source files (N).
//! 2. Terms are extracted from the issue ([`crate::policy::terms`]); the top
//!    [`MAX_TERMS`] are grepped one call each, as whole words (`\bterm\b`), in those
//!    languages' files (`*.py` for a Python project). An issue with fewer than
//!    [`terms::FEW_IDENTIFIERS`] identifiers (a commit message such as "HTTP redirects use standard
//!    URL resolution") has its plain words grepped too, case-insensitively
//!    ([`terms::plain_words`]).
//! 3. Files are ranked by IDF-weighted hits: for term t with document frequency df,
//!    `idf = ln(1 + N / df)`; a file gains `weight(t) · idf · (1 + ln hits)`, plus
//!    `2 · idf` more when a hit is t's definition (`def t`, `class t`, `func t`,
//!    a method header: [`is_definition`]). Files named
//!    in the issue (paths, traceback frames) gain the largest single-term score.
//!    Test files (`test_*.py`, `*_test.py`, `conftest.py`, under `tests/`) are scaled
//!    by [`TEST_FILE_FACTOR`]: the fix is rarely in a test.
//! 4. The top [`FILES_TO_READ`] files are read with `read_file` (the cost an agent
//!    pays to look at them), source first: tests and derived files (bundles, build
//!    output, minified and generated files: [`secondary`]) only after every source
//!    file, unless the issue names them, as an agent skips a bundle that copies the
//!    source it is looking for; the harness parses them with tree-sitter to map each hit
//!    line to its enclosing function and module, as the agent reading the file would.
//! 5. Functions and modules are ranked by the IDF-weighted hits inside them (a
//!    definition of a term counts 3×, except that a type's own declaration line
//!    scores the type as a module only: its fields and variants name it as an edited
//!    function, its header does not; a traceback frame naming the function adds the
//!    top term score), multiplied by their file's normalized score so evidence in a
//!    better file ranks higher. Ties break by file rank, then by first appearance.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use std::path::Path;

use super::{PolicyFuture, Variant};
use crate::data::dataset::Locations;
use crate::policy::entities::EntityIndex;
use crate::policy::knobs::Knob;
use crate::policy::languages::{Families, is_definition};
use crate::policy::ranking::Scores;
use crate::policy::terms::{self, Extracted, Term};
use crate::policy::{Driver, Task, is_test_file, secondary};

/// The `text` variant (see the module doc).
pub struct Text;

impl Variant for Text {
    fn name(&self) -> &'static str {
        "text"
    }
    fn binary(&self) -> &'static str {
        "navbench-text"
    }
    fn about(&self) -> &'static str {
        "no special tools: list, read and grep files"
    }
    /// text serves the tree it is given: nothing to index, no setup call.
    fn server_args(&self, workdir: &Path, _cache: &Path) -> Vec<String> {
        vec!["--root".to_string(), super::arg(workdir)]
    }
    fn knobs(&self) -> &'static [Knob] {
        &KNOBS
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(localize(driver, task))
    }
}

/// How many terms are grepped (one call each).
pub const MAX_TERMS: Knob = Knob::count("max_terms", 12, "terms grepped, one call each");
/// How many top-ranked files are read and ranked at function level.
pub const FILES_TO_READ: Knob = Knob::count("files_to_read", 5, "top files read and ranked");
/// Score factor for test files.
pub const TEST_FILE_FACTOR: Knob = Knob::weight("test_file_factor", 0.25, "factor on test files");

/// Every tuned constant of the policy, for `navbench tune`.
pub static KNOBS: [Knob; 4] = [MAX_TERMS, FILES_TO_READ, TEST_FILE_FACTOR, FITTED];
/// Whether the fitted ranker reorders the answer ([`crate::policy::fitted`]).
pub const FITTED: Knob = crate::policy::fitted::knob(0.0);
/// How many locations of each level a run answers with (the policy answers
/// [`crate::policy::fitted::POOL_LEN`], cut by the run).
pub const ANSWER_LEN: usize = crate::policy::fitted::ANSWER_LEN;
/// Matches asked of one grep call.
const GREP_MAX: usize = 300;

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

/// Matches a path mentioned in the issue (possibly absolute or site-packages-rooted)
/// to a repository file: the longest repository path that is a suffix of it.
pub fn match_mentioned<'f>(mentioned: &str, files: &'f [String]) -> Option<&'f String> {
    let m = mentioned.trim_start_matches("./");
    files
        .iter()
        .filter(|f| m == f.as_str() || m.ends_with(&format!("/{f}")))
        .max_by_key(|f| f.len())
}

/// The grep hits of one term and the term's IDF weight.
struct TermHits {
    idf: f64,
    term: String,
    hits: Vec<Hit>,
}

/// Runs the policy (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    let ex: Extracted = terms::extract(&task.instance.problem_statement);
    let (langs, files) = list_source_files(driver).await?;
    let n_files = files.len().max(1) as f64;
    let max_terms = task.knobs.count(&MAX_TERMS);
    let issue = task.instance.problem_statement.as_str();
    let (mut file_scores, term_hits) =
        grep_terms(driver, (&ex, issue), (&langs, n_files), max_terms).await;
    let top_term = term_hits.iter().map(|t| t.idf).fold(1.0_f64, f64::max);
    let test_factor = task.knobs.get(&TEST_FILE_FACTOR);
    adjust_file_scores(&mut file_scores, &ex, &files, (top_term, test_factor));
    let ranked_files = file_scores.ranked();

    // Read the best source files, then rank their functions and modules: tests and
    // derived files (bundles, build output) are read after every source file, unless
    // the issue names them, so a bundle that copies the source does not take the
    // reads the source needs.
    let reading = Locations {
        files: ranked_files.clone(),
        ..Locations::default()
    };
    let to_read: Vec<String> = secondary::source_first(reading, task.workdir, issue)
        .files
        .into_iter()
        .take(task.knobs.count(&FILES_TO_READ))
        .collect();
    for f in &to_read {
        driver.call("read_file", json!({"path": f})).await;
    }
    let evidence = Evidence {
        ex: &ex,
        files: &files,
        term_hits: &term_hits,
        top_term,
    };
    let mut index = driver.take_entities();
    let (func_scores, mod_scores) =
        rank_entities(task, &mut index, &evidence, &file_scores, &to_read);
    driver.keep_entities(index);

    let take = |v: Vec<String>| {
        v.into_iter()
            .take(crate::policy::fitted::POOL_LEN)
            .collect::<Vec<_>>()
    };
    Ok(Locations {
        files: take(ranked_files),
        modules: take(mod_scores.ranked()),
        functions: take(func_scores.ranked()),
    })
}

/// Step 1: the repository's languages and every source file in them.
async fn list_source_files(driver: &mut Driver<'_>) -> anyhow::Result<(Families, Vec<String>)> {
    let listed = driver
        .call(
            "list_files",
            json!({"glob": Families::all().glob(), "max_results": 10_000}),
        )
        .await;
    if listed.is_error {
        anyhow::bail!(
            "list_files failed: {}",
            listed.error.unwrap_or_else(|| listed.text.clone())
        );
    }
    let all = (listed.structured.as_ref())
        .map(parse_files)
        .unwrap_or_default();
    let langs = Families::of(all.iter().map(String::as_str));
    let files = all.into_iter().filter(|f| langs.contains(f)).collect();
    Ok((langs, files))
}

/// The terms grepped for, with their patterns: the issue's identifiers as whole words;
/// when it has fewer than [`terms::FEW_IDENTIFIERS`], its plain words too
/// ([`terms::plain_words`]), case-insensitive inside identifiers (`redirect` finds
/// `followRedirects`), at half a bare identifier's weight. A developer whose report
/// names no code greps for what it talks about rather than for nothing.
fn search_terms(ex: &Extracted, issue: &str, max_terms: usize) -> Vec<(Term, String)> {
    let mut out: Vec<(Term, String)> = (ex.terms.iter().take(max_terms))
        .map(|t| (t.clone(), format!(r"\b{}\b", regex::escape(&t.text))))
        .collect();
    if out.len() < terms::FEW_IDENTIFIERS {
        let words = terms::words_to_search(ex, issue);
        for w in words.into_iter().take(max_terms.saturating_sub(out.len())) {
            let pattern = format!("(?i){}", regex::escape(&w));
            let term = Term {
                text: w,
                weight: 0.3,
                count: 1,
            };
            out.push((term, pattern));
        }
    }
    out
}

/// Steps 2–3: greps the top terms and scores files by IDF-weighted hits; keeps each
/// term's hits for the entity stage.
async fn grep_terms(
    driver: &mut Driver<'_>,
    (ex, issue): (&Extracted, &str),
    (langs, n_files): (&Families, f64),
    max_terms: usize,
) -> (Scores, Vec<TermHits>) {
    let glob = langs.glob();
    let mut file_scores = Scores::default();
    let mut term_hits: Vec<TermHits> = Vec::new();
    for (term, pattern) in search_terms(ex, issue, max_terms) {
        let term = &term;
        let out = driver
            .call(
                "grep",
                json!({
                    "pattern": pattern,
                    "glob": glob,
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
            e.1 |= is_definition(&h.path, &h.text, &term.text);
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
        term_hits.push(TermHits {
            idf,
            term: term.text.clone(),
            hits,
        });
    }
    (file_scores, term_hits)
}

/// Step 3's adjustments: files named by the issue get the largest single-term score;
/// test files are scaled down by `test_factor`.
fn adjust_file_scores(
    file_scores: &mut Scores,
    ex: &Extracted,
    files: &[String],
    (top_term, test_factor): (f64, f64),
) {
    let mut mentioned: Vec<String> = Vec::new();
    for p in ex.paths.iter().chain(ex.frames.iter().map(|f| &f.path)) {
        if let Some(f) = match_mentioned(p, files)
            && !mentioned.contains(f)
        {
            mentioned.push(f.clone());
            file_scores.add(f, 3.0 * top_term);
        }
    }
    for f in files.iter().filter(|f| is_test_file(f)) {
        file_scores.scale(f, test_factor);
    }
}

/// What the grep stage found, for ranking entities.
struct Evidence<'e> {
    ex: &'e Extracted,
    files: &'e [String],
    term_hits: &'e [TermHits],
    top_term: f64,
}

/// Step 5: scores the functions and modules of the files read, returned as
/// (functions, modules).
fn rank_entities(
    task: &Task<'_>,
    index: &mut EntityIndex,
    ev: &Evidence<'_>,
    file_scores: &Scores,
    to_read: &[String],
) -> (Scores, Scores) {
    let max_file = to_read
        .first()
        .map(|f| file_scores.get(f))
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0);
    let mut func_scores = Scores::default();
    let mut mod_scores = Scores::default();
    let file_weight: HashMap<&str, f64> = to_read
        .iter()
        .map(|f| (f.as_str(), file_scores.get(f) / max_file))
        .collect();
    // Evidence is added file by file in rank order, so ties break by file rank.
    for f in to_read {
        let w = file_weight[f.as_str()];
        for th in ev.term_hits {
            for h in th.hits.iter().filter(|h| &h.path == f) {
                let ids = index.ids_at(task.workdir, f, h.line);
                let mut s = th.idf;
                let defines = is_definition(f, &h.text, &th.term);
                if defines {
                    s *= 3.0;
                }
                // A type's own declaration (`struct Batcher`, `impl Batcher`) says where
                // the type is, not that its body (fields, variants) is edited: it scores
                // the type as a module only, and the type's methods take the hits.
                let type_level = ids.short_name.is_none() && ids.function == ids.module;
                if let Some(func) = ids.function.as_ref().filter(|_| !(defines && type_level)) {
                    func_scores.add(func, s * w);
                }
                if let Some(m) = &ids.module {
                    mod_scores.add(m, s * w);
                }
            }
        }
        for fr in ev
            .ex
            .frames
            .iter()
            .filter(|fr| match_mentioned(&fr.path, ev.files) == Some(f))
        {
            let ids = index.ids_at(task.workdir, f, fr.line);
            if let Some(func) = &ids.function {
                func_scores.add(func, ev.top_term * w);
            }
            if let Some(m) = &ids.module {
                mod_scores.add(m, ev.top_term * w);
            }
        }
    }
    (func_scores, mod_scores)
}

#[cfg(test)]
mod tests {
    use super::*;

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
