//! The `codegraph` variant: LocAgent's graph-guided tools (`navbench-codegraph`: a
//! code graph of the repository with fuzzy entity search, BM25 over code and
//! dependency traversal), and the policy that plays an agent using them.
//!
//! # The strategy an agent with these tools follows
//! LocAgent's prompts (`util/prompts` of the original) have the agent (1) pull
//! keywords out of the issue — the modules, classes, functions and files it names,
//! error messages and the frames of a traceback; (2) look them up with
//! `search_code_snippets` (here `search_code`: an exact name or id gives the entity,
//! else BM25 over entity names and code) and fuzzy entity search; (3) read the code of
//! the promising hits; (4) follow the dependency graph from them, upstream and
//! downstream (who calls this failing function, which class defines this method,
//! what does this function invoke), to the place that must change; (5) rank the
//! files, classes and functions it found.
//!
//! # How the script follows it
//! Deterministically, with one call per step:
//! 1. `init_repository` on the checked-out tree (its time counts as index time).
//! 2. Keywords: the top [`MAX_TERMS`] terms of the issue ([`crate::policy::terms`]),
//!    with traceback frames and quoted paths.
//! 3. `search_code` with those terms. An entity the term *names* gains
//!    `weight(term) · specificity` ([`evidence::specificity`]: a name defined once
//!    points at one place, one every class defines says little); a BM25 hit gains
//!    [`TERM_BM25`] of that, decaying with its position. Terms the name lookup did not
//!    resolve go to `search_entities` (fuzzy), whose close matches (token-set ratio
//!    at least [`FUZZY_MIN`]) gain [`FUZZY`].
//! 4. `search_code` with the issue text itself (BM25 over code chunks, as LocAgent's
//!    agents do with the problem statement): hits gain [`ISSUE_BM25`], decaying
//!    with rank, and their files form a file ranking.
//! 5. Traceback frames in repository files: the function at each frame's line gains
//!    [`FRAME`], the deepest frame most (where the error surfaced).
//! 6. `get_dependencies` (invokes, inherits; both directions, one hop) from the best
//!    [`EXPAND`] entities. Two candidates joined by an edge (a caller and the failing
//!    function it calls, a subclass and its base) confirm each other: each gains
//!    [`LINK`] of the other's score. A neighbour found only through the graph gains
//!    [`NEIGHBOUR`] of its root's score, shared among the root's neighbours on the
//!    same side (callees and bases; callers and subclasses).
//! 7. `get_code` on the best [`READ`] entities: an entity's score is multiplied by
//!    `1 + COVERAGE · share of the issue's terms its code uses`.
//! 8. Functions rank by score; a class's methods roll up to the class, and entities
//!    roll up to their files ([`evidence::roll_up`]: best entity fully, further ones
//!    with decreasing weight), plus the issue-BM25 file ranking. Test files are
//!    dropped: LocAgent's tools hide them too.
//!
//! Two rules were dropped because no setting of their constants changed any answer
//! on dev, the mined tuning set or the polyglot set (`navbench tune`): a bonus for the
//! files the issue names (step 3's name lookup already finds a named file) and a
//! factor on documentation, examples and benchmarks (every policy's last step ranks
//! tests and derived code last, `crate::policy::secondary`). The fuzzy threshold
//! stays as a plain constant for the same reason: no value of it changed an answer.

use serde_json::{Value, json};

use std::collections::HashMap;
use std::path::Path;

use super::{PolicyFuture, SetupFuture, Variant};
use crate::data::dataset::{Locations, push_unique};
use crate::policy::code_search::{self, CodeHit, Origin};
use crate::policy::entities::EntityIndex;
use crate::policy::evidence::{self, roll_up, specificity};
use crate::policy::fitted::POOL_LEN;
use crate::policy::knobs::{Knob, Knobs};
use crate::policy::ranking::Scores;
use crate::policy::terms::{self, Extracted, Term};
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
    /// indexing is measured as a tool call, and may open that tree only
    /// (`--allow-root`); its graphs are cached under the cache.
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String> {
        vec![
            "--cache".to_string(),
            super::arg(&cache.join("codegraph")),
            "--allow-root".to_string(),
            super::arg(workdir),
        ]
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

/// Terms looked up with `search_code` (one call).
pub const MAX_TERMS: Knob = Knob::count("max_terms", 10, "terms looked up with search_code");
/// Results asked per term (and of the issue-text search).
pub const CODE_TOP_K: Knob = Knob::count("code_top_k", 10, "results asked per search_code query");
/// Share of a name match's weight that a BM25 hit of the same term gets.
pub const TERM_BM25: Knob = Knob::weight(
    "term_bm25",
    0.3,
    "a term's BM25 hit, against its name match",
);
/// Weight of the joint term (all terms together) that `search_code` adds.
pub const JOINT_WEIGHT: Knob = Knob::weight("joint_weight", 0.6, "the joint term of search_code");
/// Weight of a fuzzy match (token-set ratio ≥ [`FUZZY_MIN`]) of an unresolved term.
pub const FUZZY: Knob = Knob::weight("fuzzy", 0.3, "a fuzzy entity match of an unresolved term");
/// Lowest fuzzy score (0–100) taken. Not tuned: 80, 90, 95 and 101 (none) answered
/// alike on dev, the tuning set and the polyglot set; only [`FUZZY`]'s weight mattered.
pub const FUZZY_MIN: f64 = 90.0;
/// Weight of the top hit of the issue-text BM25 search.
pub const ISSUE_BM25: Knob = Knob::weight(
    "issue_bm25",
    1.0,
    "the top hit of the issue-text BM25 search",
);
/// Weight of the deepest traceback frame in the repository.
pub const FRAME: Knob = Knob::weight("frame", 2.0, "the deepest traceback frame");
/// Entities whose dependencies are followed.
pub const EXPAND: Knob = Knob::count("expand", 5, "entities whose dependencies are followed");
/// Share of a linked candidate's score an entity gains.
pub const LINK: Knob = Knob::weight("link", 0.3, "share of a linked candidate's score");
/// Share of its root's score a graph-only neighbour gains (divided by √neighbours).
pub const NEIGHBOUR: Knob = Knob::weight(
    "neighbour",
    0.3,
    "share of its root's score a graph-only neighbour gains",
);
/// Share of an entity's score the files importing it gain (divided by √importers).
pub const IMPORTER: Knob = Knob::weight(
    "importer",
    0.5,
    "share of an entity's score its importing files gain",
);
/// Importing files searched for the code that uses the imported names.
pub const IMPORTER_FILES: Knob = Knob::count(
    "importer_files",
    2,
    "importing files searched for the using code",
);
/// Share of its file's importer gain the code using the imported names gains.
pub const IMPORTER_USE: Knob = Knob::weight(
    "importer_use",
    0.5,
    "share of its file's gain the using code gains",
);
/// Entities whose code is read with `get_code`.
pub const READ: Knob = Knob::count("read", 5, "entities whose code is read");
/// How much reading an entity's code can raise its score.
pub const COVERAGE: Knob = Knob::weight(
    "coverage",
    1.0,
    "how much the issue's terms in read code raise a score",
);
/// How much an entity's rank depends on its file's score (0: not at all).
pub const FILE_SHARE: Knob = Knob::weight(
    "file_share",
    0.5,
    "how much an entity's rank depends on its file's",
);
/// Factor on a class's score when it is answered as a function (for its
/// `__init__` or class body, as LocAgent's ids have it).
pub const CLASS_AS_FUNCTION: Knob = Knob::weight(
    "class_as_function",
    0.25,
    "factor on a class answered as a function",
);

/// Every tuned constant of the policy, for `navbench tune`.
pub static KNOBS: [Knob; 18] = [
    MAX_TERMS,
    CODE_TOP_K,
    TERM_BM25,
    JOINT_WEIGHT,
    FUZZY,
    ISSUE_BM25,
    FRAME,
    EXPAND,
    LINK,
    NEIGHBOUR,
    IMPORTER,
    IMPORTER_FILES,
    IMPORTER_USE,
    READ,
    COVERAGE,
    FILE_SHARE,
    CLASS_AS_FUNCTION,
    FITTED,
];
/// Whether the fitted ranker reorders the answer ([`crate::policy::fitted`]).
pub const FITTED: Knob = crate::policy::fitted::knob(0.0);
/// Locations answered per level (the policy answers [`POOL_LEN`], cut by the run).
pub const ANSWER_LEN: usize = crate::policy::fitted::ANSWER_LEN;
/// Longest query text sent to `search_code` (the issue is cut there, on a char boundary).
const MAX_QUERY_CHARS: usize = 4000;

/// Decay of evidence with its position in a result list (0-based).
fn decay(pos: usize) -> f64 {
    1.0 / (1.0 + pos as f64 / 3.0)
}

/// What the policy has found so far: entity scores (graph ids of classes and
/// functions) and file-level evidence.
#[derive(Default)]
struct Found {
    entities: Scores,
    files: Scores,
    index: EntityIndex,
    /// The policy's constants (the defaults, or a tuning run's values).
    k: Knobs,
}

/// Step 1: `init_repository` on the checked-out tree (index time).
pub async fn setup(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<()> {
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
    Ok(())
}

/// Runs the policy (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    setup(driver, task).await?;
    let ex = terms::extract(&task.instance.problem_statement);
    let terms: Vec<Term> = ex
        .terms
        .iter()
        .take(task.knobs.count(&MAX_TERMS))
        .cloned()
        .collect();
    let mut found = Found {
        k: task.knobs.clone(),
        index: driver.take_entities(),
        ..Found::default()
    };
    let unresolved = search_terms(driver, task, &terms, &mut found).await;
    search_fuzzy(driver, &unresolved, &mut found).await;
    search_issue(driver, task, &mut found).await;
    add_frames(task, &ex, &mut found);
    expand(driver, task, &mut found).await;
    read_best(driver, &terms, &mut found).await;
    let loc = answer(&mut found, task);
    driver.keep_entities(found.index);
    Ok(loc)
}

/// Step 3: `search_code` with the terms. Returns the terms no name lookup resolved.
async fn search_terms(
    driver: &mut Driver<'_>,
    task: &Task<'_>,
    terms: &[Term],
    found: &mut Found,
) -> Vec<Term> {
    if terms.is_empty() {
        return Vec::new();
    }
    let q: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
    let out = driver
        .call(
            "search_code",
            json!({"query": q, "top_k": found.k.count(&CODE_TOP_K)}),
        )
        .await;
    let hits = code_search::parse(out.structured.as_ref());
    score_term_hits(&hits, terms, task.workdir, found);
    terms
        .iter()
        .filter(|t| {
            !hits
                .iter()
                .any(|h| h.origin == Origin::Name && h.terms.contains(&t.text))
        })
        .cloned()
        .collect()
}

/// Scores the hits of the term search (see step 3 of the module doc).
fn score_term_hits(hits: &[CodeHit], terms: &[Term], root: &Path, found: &mut Found) {
    let weight: HashMap<&str, f64> = terms.iter().map(|t| (t.text.as_str(), t.weight)).collect();
    let (joint, term_bm25) = (found.k.get(&JOINT_WEIGHT), found.k.get(&TERM_BM25));
    let term_weight = |t: &str| weight.get(t).copied().unwrap_or(joint);
    // How many entities each term names, and each term's BM25 hit count so far.
    let mut defs: HashMap<&str, usize> = HashMap::new();
    for h in hits
        .iter()
        .filter(|h| h.origin == Origin::Name && h.is_entity())
    {
        for t in &h.terms {
            *defs.entry(t.as_str()).or_default() += 1;
        }
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for h in hits {
        for t in &h.terms {
            let w = term_weight(t);
            let s = match h.origin {
                Origin::Name => w * specificity(defs.get(t.as_str()).copied().unwrap_or(1)),
                _ => {
                    let pos = seen.entry(t.as_str()).or_default();
                    *pos += 1;
                    w * term_bm25 * decay(*pos - 1)
                }
            };
            if h.kind == "file" && h.origin == Origin::Name {
                found.files.add(&h.file, s);
            }
            for id in h.entities(&mut found.index, root) {
                found.entities.add(&id, s);
            }
        }
    }
}

/// Step 3, fuzzy fallback: `search_entities` with the unresolved terms.
async fn search_fuzzy(driver: &mut Driver<'_>, unresolved: &[Term], found: &mut Found) {
    if unresolved.is_empty() {
        return;
    }
    let q: Vec<&str> = unresolved.iter().map(|t| t.text.as_str()).collect();
    let out = driver
        .call("search_entities", json!({"query": q, "top_k": 5}))
        .await;
    let results = out
        .structured
        .as_ref()
        .and_then(|v| v.get("results"))
        .and_then(Value::as_array);
    let (fuzzy, fuzzy_min) = (found.k.get(&FUZZY), FUZZY_MIN);
    for (term, r) in unresolved.iter().zip(results.into_iter().flatten()) {
        let matches = r.get("matches").and_then(Value::as_array);
        for m in matches.into_iter().flatten() {
            let kind = m.get("type").and_then(Value::as_str).unwrap_or("");
            let id = m.get("id").and_then(Value::as_str).unwrap_or("");
            let score = m.get("score").and_then(Value::as_f64).unwrap_or(0.0);
            let file = id.split(':').next().unwrap_or(id);
            if (kind == "class" || kind == "function") && score >= fuzzy_min && !is_test_file(file)
            {
                found.entities.add(id, term.weight * fuzzy);
            }
        }
    }
}

/// Step 4: BM25 over code with the issue text.
async fn search_issue(driver: &mut Driver<'_>, task: &Task<'_>, found: &mut Found) {
    let query: String = task
        .instance
        .problem_statement
        .chars()
        .take(MAX_QUERY_CHARS)
        .collect();
    let out = driver
        .call(
            "search_code",
            json!({"query": [query], "top_k": found.k.count(&CODE_TOP_K)}),
        )
        .await;
    let hits = code_search::parse(out.structured.as_ref());
    let (mut files, mut entities) = (Vec::new(), Vec::new());
    for h in &hits {
        push_unique(&mut files, h.file.clone());
        for id in h.entities(&mut found.index, task.workdir) {
            push_unique(&mut entities, id);
        }
    }
    let issue_bm25 = found.k.get(&ISSUE_BM25);
    for (i, id) in entities.iter().enumerate() {
        found.entities.add(id, issue_bm25 * decay(i));
    }
    for (i, f) in files.iter().enumerate() {
        found.files.add(f, issue_bm25 * decay(i));
    }
}

/// Step 5: frames in repository files, deepest
/// first. A frame's function is found by its name in the file when it has one there
/// (a frame's line is from the reporter's version of the file), else by its line;
/// a file counts its strongest frame once.
fn add_frames(task: &Task<'_>, ex: &Extracted, found: &mut Found) {
    let frames: Vec<(String, &terms::Frame)> = ex
        .frames
        .iter()
        .filter_map(|f| Some((evidence::resolve_path(task.workdir, &f.path)?, f)))
        .filter(|(p, _)| !is_test_file(p))
        .collect();
    let n = frames.len();
    let mut file_best: Vec<(String, f64)> = Vec::new();
    for (i, (file, frame)) in frames.iter().enumerate() {
        let s = found.k.get(&FRAME) * (0.5 + 0.5 * (i + 1) as f64 / n as f64);
        if let Some(id) = frame_entity(&mut found.index, task.workdir, file, frame) {
            found.entities.add(&id, s);
        }
        match file_best.iter_mut().find(|(f, _)| f == file) {
            Some((_, best)) => *best = best.max(s),
            None => file_best.push((file.clone(), s)),
        }
    }
    for (file, s) in file_best {
        found.files.add(&file, s);
    }
}

/// The entity of `frame` in `file`: one its function names (the one holding the
/// frame's line, else the first in the file), else the one at its line.
fn frame_entity(
    index: &mut EntityIndex,
    root: &Path,
    file: &str,
    frame: &terms::Frame,
) -> Option<String> {
    let at_line = index.ids_at(root, file, frame.line);
    let by_name: Vec<(String, usize, usize)> = (index.entities(root, file).into_iter())
        .filter(|e| e.name == frame.func)
        .map(|e| (e.qualname, e.start_line, e.end_line))
        .collect();
    let named = by_name
        .iter()
        .find(|(_, s, e)| (*s..=*e).contains(&frame.line))
        .or(by_name.first());
    match named {
        Some((qual, ..)) => Some(format!("{file}:{qual}")),
        None => at_line.function.or(at_line.module),
    }
}

/// Step 6: one hop of `get_dependencies` from the best entities (see the module doc).
async fn expand(driver: &mut Driver<'_>, task: &Task<'_>, found: &mut Found) {
    let roots: Vec<String> = (found.entities.ranked().into_iter())
        .take(found.k.count(&EXPAND))
        .collect();
    if roots.is_empty() {
        return;
    }
    let out = driver
        .call(
            "get_dependencies",
            json!({
                "entities": roots,
                "direction": "both",
                "depth": 1,
                "dependency_types": ["invokes", "inherits"],
            }),
        )
        .await;
    let edges = edge_pairs(out.structured.as_ref());
    let shares = (found.k.get(&NEIGHBOUR), found.k.get(&LINK));
    let gains = graph_gains(&found.entities, &roots, &edges, shares);
    for (id, g) in gains {
        found.entities.add(&id, g);
    }
    add_importers(driver, task, &roots, found).await;
}

/// Step 6, imports: the files importing the best entities (a module that imports the
/// class or function an issue is about is where it is used: caught, wrapped,
/// re-exported) gain [`IMPORTER`] of the entity's score, shared among its importers.
/// In the best [`IMPORTER_FILES`] of them, `search_code` restricted to the file finds
/// the code using the imported names, whose entities gain [`IMPORTER_USE`] of it.
async fn add_importers(
    driver: &mut Driver<'_>,
    task: &Task<'_>,
    roots: &[String],
    found: &mut Found,
) {
    let out = driver
        .call(
            "get_dependencies",
            json!({
                "entities": roots,
                "direction": "upstream",
                "depth": 1,
                "dependency_types": ["imports"],
            }),
        )
        .await;
    let edges = edge_pairs(out.structured.as_ref());
    let mut gained = Scores::default();
    let mut names: HashMap<String, Vec<String>> = HashMap::new();
    for root in roots {
        let (own, qual) = root.split_once(':').unwrap_or((root, root));
        let mut importers: Vec<&str> = Vec::new();
        for (s, t) in &edges {
            if t == root && !s.contains(':') && s != own && !is_test_file(s) {
                push_unique_str(&mut importers, s);
            }
        }
        let share = found.k.get(&IMPORTER) / (importers.len().max(1) as f64).sqrt();
        let r = found.entities.get(root);
        for f in importers {
            gained.add(f, share * r);
            let short = qual.rsplit('.').next().unwrap_or(qual).to_string();
            let v = names.entry(f.to_string()).or_default();
            if !v.contains(&short) {
                v.push(short);
            }
        }
    }
    for f in gained.ranked() {
        found.files.add(&f, gained.get(&f));
    }
    let importer_use = found.k.get(&IMPORTER_USE);
    for f in (gained.ranked().into_iter()).take(found.k.count(&IMPORTER_FILES)) {
        let q = names.get(&f).cloned().unwrap_or_default();
        let out = driver
            .call(
                "search_code",
                json!({"query": q, "file_pattern": f, "top_k": 5}),
            )
            .await;
        let hits = code_search::parse(out.structured.as_ref());
        let mut pos = 0;
        for h in hits
            .iter()
            .filter(|h| h.origin == Origin::Bm25Content && h.file == f)
        {
            for id in h.entities(&mut found.index, task.workdir) {
                found
                    .entities
                    .add(&id, importer_use * gained.get(&f) * decay(pos));
                pos += 1;
            }
        }
    }
}

fn push_unique_str<'a>(v: &mut Vec<&'a str>, s: &'a str) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// The (source, target) pairs of a `get_dependencies` result.
fn edge_pairs(structured: Option<&Value>) -> Vec<(String, String)> {
    structured
        .and_then(|v| v.get("edges"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let s = e.get("source")?.as_str()?;
            let t = e.get("target")?.as_str()?;
            Some((s.to_string(), t.to_string()))
        })
        .collect()
}

/// What the edges around `roots` add (see step 6 of the module doc), in edge order,
/// with the [`NEIGHBOUR`] and [`LINK`] shares given. Pure, so it is tested on its own.
fn graph_gains(
    scores: &Scores,
    roots: &[String],
    edges: &[(String, String)],
    (neighbour, link): (f64, f64),
) -> Vec<(String, f64)> {
    let mut gains: Vec<(String, f64)> = Vec::new();
    let mut linked: Vec<(&str, &str)> = Vec::new();
    for root in roots {
        let r = scores.get(root);
        // Downstream (what the root invokes or inherits) and upstream (its callers and
        // subclasses) share separately: a widely used function's many callers must
        // not drown the few functions it delegates to.
        for side in [Side::Down, Side::Up] {
            let neighbours = side.neighbours(root, edges);
            let share = neighbour / (neighbours.len().max(1) as f64).sqrt();
            for n in neighbours {
                let other = scores.get(n);
                if other <= 0.0 {
                    gains.push((n.to_string(), share * r));
                    continue;
                }
                let pair = if root.as_str() < n {
                    (root.as_str(), n)
                } else {
                    (n, root.as_str())
                };
                if !linked.contains(&pair) {
                    linked.push(pair);
                    gains.push((root.clone(), link * other));
                    gains.push((n.to_string(), link * r));
                }
            }
        }
    }
    gains
}

/// A direction along the edges from a root.
#[derive(Clone, Copy)]
enum Side {
    Down,
    Up,
}

impl Side {
    /// The distinct non-test class and function neighbours of `root` on this side.
    fn neighbours<'e>(self, root: &str, edges: &'e [(String, String)]) -> Vec<&'e str> {
        let mut out: Vec<&str> = Vec::new();
        for (s, t) in edges {
            let n = match self {
                Side::Down if s == root => t.as_str(),
                Side::Up if t == root => s.as_str(),
                _ => continue,
            };
            let code = n.contains(':') && !is_test_file(n.split(':').next().unwrap_or(n));
            if n != root && code && !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }
}

/// Step 7: reads the best entities and scales each by how much of the issue it uses.
async fn read_best(driver: &mut Driver<'_>, terms: &[Term], found: &mut Found) {
    let best: Vec<String> = (found.entities.ranked().into_iter())
        .take(found.k.count(&READ))
        .collect();
    if best.is_empty() {
        return;
    }
    let out = driver.call("get_code", json!({"entities": best})).await;
    for (name, code) in split_code(&out.text) {
        if best.contains(&name) {
            let cover = evidence::term_coverage(code, terms);
            let coverage = found.k.get(&COVERAGE);
            found.entities.scale(&name, 1.0 + coverage * cover);
        }
    }
}

/// `get_code`'s text split per requested entity: (name, its section).
fn split_code(text: &str) -> Vec<(String, &str)> {
    const HEAD: &str = "##Searching for entity `";
    text.split(HEAD)
        .skip(1)
        .filter_map(|sec| {
            let (name, rest) = sec.split_once('`')?;
            Some((name.to_string(), rest))
        })
        .collect()
}

/// Step 8: from entity and file scores to the three levels.
fn answer(found: &mut Found, task: &Task<'_>) -> Locations {
    let file_of = |id: &str| id.split(':').next().unwrap_or(id).to_string();
    let class_as_function = found.k.get(&CLASS_AS_FUNCTION);
    let file_share = found.k.get(&FILE_SHARE);
    let mut functions: Vec<(String, f64)> = Vec::new();
    let mut modules: Vec<(String, f64)> = Vec::new();
    for id in found.entities.ranked() {
        let s = found.entities.get(&id);
        let ids = match id.split_once(':') {
            Some((file, qual)) => found.index.answer_ids_of(task.workdir, file, qual),
            None => continue,
        };
        if let Some(f) = ids.function {
            // A class answers for its `__init__` and body; its methods answer first.
            let w = if f == id && ids.short_name.is_none() {
                class_as_function
            } else {
                1.0
            };
            functions.push((f, s * w));
        }
        if let Some(m) = ids.module {
            modules.push((m, s));
        }
    }
    let mut files = roll_up(&modules, |m| Some(file_of(m)));
    for f in found.files.ranked() {
        files.add(&f, found.files.get(&f));
    }
    // An entity in a strong file outranks an equal one in a weak file.
    let best_file = files.ranked().first().map_or(1.0, |f| files.get(f));
    let standing = |id: &str| 1.0 - file_share + file_share * files.get(&file_of(id)) / best_file;
    let weigh = |v: Vec<(String, f64)>| -> Vec<(String, f64)> {
        v.into_iter()
            .map(|(id, s)| {
                let w = standing(&id);
                (id, s * w)
            })
            .collect()
    };
    let function_scores = roll_up(&weigh(functions), |f| Some(f.to_string()));
    let module_scores = roll_up(&weigh(modules), |m| Some(m.to_string()));
    let take = |v: Vec<String>| v.into_iter().take(POOL_LEN).collect::<Vec<_>>();
    Locations {
        files: take(files.ranked()),
        modules: take(module_scores.ranked()),
        functions: take(function_scores.ranked()),
    }
}

#[cfg(test)]
mod tests;
