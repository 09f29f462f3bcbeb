//! The `codegraph` variant: LocAgent's graph-guided tools (`navbench-codegraph`: a
//! code graph of the repository with fuzzy entity search, BM25 over code and
//! dependency traversal), and the policy that plays an agent using them.
//!
//! An agent with these tools indexes the repository, looks up the entities the issue
//! names, searches the code with the issue text, and follows the best entities'
//! dependencies one hop. The script does the same, deterministically:
//!
//! 1. `init_repository` on the checked-out tree (its time counts as index time).
//! 2. `search_entities` with the top [`ENTITY_TERMS`] terms extracted from the issue
//!    ([`crate::policy::terms`]): each query's fuzzy matches form one ranking.
//! 3. `search_code` with the issue text itself (BM25 over code chunks, as LocAgent's
//!    agents do with the problem statement): hits map to their entities (a chunk's
//!    lines → the functions holding them, through tree-sitter, as an agent reading
//!    it would) and form one more ranking.
//! 4. The rankings are fused with reciprocal rank fusion (`k` = [`RRF_K`]; each
//!    entity query weighted by its term's weight, the BM25 ranking by
//!    [`BM25_WEIGHT`]); the best [`EXPAND`] entities are expanded one hop with
//!    `get_dependencies` (both directions, invokes and inherits), whose neighbours join
//!    as a further ranking weighted [`EXPANSION_WEIGHT`].
//! 5. The fused entity ranking gives functions (mapped to LocAgent function ids) and
//!    modules; files come in order of their best entity, then of their BM25 hits.
//!    Test files are dropped: LocAgent's tools hide them too.

use serde_json::{Value, json};

use std::path::Path;

use super::{PolicyFuture, Variant};
use crate::dataset::{Locations, push_unique};
use crate::policy::entities::{EntityIndex, LineIds};
use crate::policy::ranking::Scores;
use crate::policy::terms;
use crate::policy::{Driver, Task, is_test_file};

/// The `codegraph` variant (see the module doc).
pub struct Codegraph;

impl Variant for Codegraph {
    fn name(&self) -> &'static str {
        "codegraph"
    }
    fn binary(&self) -> &'static str {
        "navbench-codegraph"
    }
    fn about(&self) -> &'static str {
        "LocAgent's graph-guided tools: dependency graph, BM25, fuzzy entity search"
    }
    fn setup_tools(&self) -> &'static [&'static str] {
        &["init_repository"]
    }
    /// codegraph is pointed at the tree by the policy (`init_repository`), so that
    /// indexing is measured as a tool call; its graphs are cached under the cache.
    fn server_args(&self, _workdir: &Path, cache: &Path) -> Vec<String> {
        vec!["--cache".to_string(), super::arg(&cache.join("codegraph"))]
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(localize(driver, task))
    }
}

/// Terms sent to `search_entities`.
pub const ENTITY_TERMS: usize = 8;
/// Fuzzy matches asked per term.
pub const ENTITY_TOP_K: usize = 5;
/// BM25 results asked for the issue text.
pub const CODE_TOP_K: usize = 10;
/// Entities expanded with `get_dependencies`.
pub const EXPAND: usize = 3;
/// Reciprocal rank fusion constant.
pub const RRF_K: f64 = 10.0;
/// Weight of the BM25 ranking in the fusion.
pub const BM25_WEIGHT: f64 = 1.5;
/// Weight of the dependency-expansion ranking.
pub const EXPANSION_WEIGHT: f64 = 0.5;
/// Locations answered per level.
pub const ANSWER_LEN: usize = 10;
/// Longest query text sent to `search_code` (the issue is cut there, on a char boundary).
const MAX_QUERY_CHARS: usize = 4000;

fn is_entity(kind: &str) -> bool {
    kind == "class" || kind == "function"
}

/// Maps a graph node id of a class or function to LocAgent ids.
fn entity_ids(index: &mut EntityIndex, task: &Task<'_>, id: &str) -> LineIds {
    match id.split_once(':') {
        Some((file, qual)) => index.ids_of(task.workdir, file, qual),
        None => LineIds::default(),
    }
}

fn add_ranking(scores: &mut Scores, ranking: &[String], weight: f64) {
    for (i, id) in ranking.iter().enumerate() {
        scores.add(id, weight / (RRF_K + (i + 1) as f64));
    }
}

/// Runs the policy (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    let root = task.workdir.to_string_lossy().into_owned();
    let init = driver
        .call("init_repository", json!({"repo_path": root}))
        .await;
    if init.is_error {
        anyhow::bail!(
            "init_repository failed: {}",
            init.error.unwrap_or_else(|| init.text.clone())
        );
    }

    let ex = terms::extract(&task.instance.problem_statement);
    let mut index = EntityIndex::default();
    // Entity ids (graph node ids of classes and functions) per ranking.
    let mut fused = Scores::default();
    search_entities(driver, &ex, &mut fused).await;
    let (bm25_ranking, files_by_bm25) = search_code(driver, task, &mut index).await;
    add_ranking(&mut fused, &bm25_ranking, BM25_WEIGHT);
    expand_best(driver, &mut fused).await;
    Ok(answer(&fused, files_by_bm25, &mut index, task))
}

/// Step 2: fuzzy entity search, one ranking per term, fused into `fused`.
async fn search_entities(driver: &mut Driver<'_>, ex: &terms::Extracted, fused: &mut Scores) {
    let queries: Vec<&terms::Term> = ex.terms.iter().take(ENTITY_TERMS).collect();
    if queries.is_empty() {
        return;
    }
    let q: Vec<&str> = queries.iter().map(|t| t.text.as_str()).collect();
    let out = driver
        .call(
            "search_entities",
            json!({"query": q, "top_k": ENTITY_TOP_K}),
        )
        .await;
    if let Some(results) = out
        .structured
        .as_ref()
        .and_then(|v| v.get("results"))
        .and_then(Value::as_array)
    {
        for (term, r) in queries.iter().zip(results) {
            let ranking: Vec<String> = r
                .get("matches")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|m| m.get("type").and_then(Value::as_str).is_some_and(is_entity))
                .filter_map(|m| m.get("id").and_then(Value::as_str).map(String::from))
                .filter(|id| !is_test_file(id.split(':').next().unwrap_or(id)))
                .collect();
            add_ranking(fused, &ranking, term.weight);
        }
    }
}

/// Step 3: BM25 over code with the issue text. Returns the entity ranking of the hits
/// and the files of the hits in order.
async fn search_code(
    driver: &mut Driver<'_>,
    task: &Task<'_>,
    index: &mut EntityIndex,
) -> (Vec<String>, Vec<String>) {
    let query: String = task
        .instance
        .problem_statement
        .chars()
        .take(MAX_QUERY_CHARS)
        .collect();
    let out = driver
        .call(
            "search_code",
            json!({"query": [query], "top_k": CODE_TOP_K}),
        )
        .await;
    let mut bm25_ranking: Vec<String> = Vec::new();
    let mut files_by_bm25: Vec<String> = Vec::new();
    let Some(groups) = out
        .structured
        .as_ref()
        .and_then(|v| v.get("groups"))
        .and_then(Value::as_array)
    else {
        return (bm25_ranking, files_by_bm25);
    };
    for hit in groups
        .iter()
        .filter_map(|g| g.get("results").and_then(Value::as_array))
        .flatten()
    {
        let kind = hit.get("type").and_then(Value::as_str).unwrap_or("");
        let id = hit.get("id").and_then(Value::as_str).unwrap_or("");
        let file = hit.get("file").and_then(Value::as_str).unwrap_or("");
        if file.is_empty() || is_test_file(file) {
            continue;
        }
        push_unique(&mut files_by_bm25, file.to_string());
        if is_entity(kind) {
            push_unique(&mut bm25_ranking, id.to_string());
            continue;
        }
        // A code snippet: the entities holding its lines, in line order.
        let line = |k: &str| hit.get(k).and_then(Value::as_u64).map(|v| v as usize);
        if let (Some(start), Some(end)) = (line("start_line"), line("end_line")) {
            for l in start..=end.min(start + 400) {
                let ids = index.ids_at(task.workdir, file, l);
                if let Some(f) = ids.function.or(ids.module) {
                    push_unique(&mut bm25_ranking, f);
                }
            }
        }
    }
    (bm25_ranking, files_by_bm25)
}

/// Step 4: expands the best entities one hop; their neighbours join as one ranking.
async fn expand_best(driver: &mut Driver<'_>, fused: &mut Scores) {
    let best: Vec<String> = fused
        .ranked()
        .into_iter()
        .filter(|id| id.contains(':'))
        .take(EXPAND)
        .collect();
    if best.is_empty() {
        return;
    }
    let out = driver
        .call(
            "get_dependencies",
            json!({
                "entities": best,
                "direction": "both",
                "depth": 1,
                "dependency_types": ["invokes", "inherits"],
            }),
        )
        .await;
    let ranking: Vec<String> = out
        .structured
        .as_ref()
        .and_then(|v| v.get("nodes"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|n| n.get("type").and_then(Value::as_str).is_some_and(is_entity))
        .filter_map(|n| n.get("id").and_then(Value::as_str).map(String::from))
        .filter(|id| !best.contains(id) && !is_test_file(id.split(':').next().unwrap_or(id)))
        .collect();
    add_ranking(fused, &ranking, EXPANSION_WEIGHT);
}

/// Step 5: from the fused entity ranking to the three levels.
fn answer(
    fused: &Scores,
    files_by_bm25: Vec<String>,
    index: &mut EntityIndex,
    task: &Task<'_>,
) -> Locations {
    let mut loc = Locations::default();
    for id in fused.ranked() {
        let file = id.split(':').next().unwrap_or(&id).to_string();
        let ids = if id.contains(':') {
            entity_ids(index, task, &id)
        } else {
            LineIds::default()
        };
        push_unique(&mut loc.files, file);
        if let Some(m) = ids.module {
            push_unique(&mut loc.modules, m);
        }
        if let Some(f) = ids.function {
            push_unique(&mut loc.functions, f);
        }
    }
    for f in files_by_bm25 {
        push_unique(&mut loc.files, f);
    }
    loc.files.truncate(ANSWER_LEN);
    loc.modules.truncate(ANSWER_LEN);
    loc.functions.truncate(ANSWER_LEN);
    loc
}
