//! The `bm25` variant: the LocAgent paper's BM25 retrieval baseline, so that anyone
//! can rerun that row of the paper's tables beside the agentic variants.
//!
//! # The baseline
//! A retrieval baseline has no agent. The paper's retrievers rank a per-function
//! corpus in the CoRNStack / SweRank format (one document per function and per method,
//! nested functions included, no class or module documents, paths with `test` left
//! out) with the whole issue text as the query, and LocAgent's evaluation reads the
//! ranked document ids back as locations (`evaluation/eval_metric.py`, the `docs` key):
//! - files: the `path.py` of each document, first seen first;
//! - functions: one id per document, `path.py/Class/method` → `path.py:Class.method`
//!   (the original's `.__init__` strip tests the `/`-separated id, so it never fires:
//!   an `__init__` document stays `path.py:Class.__init__`, which the function gold,
//!   saying `path.py:Class`, never holds);
//! - modules: `path.py:` plus the id's first component (the class, or the function);
//! - each level de-duplicated over the whole ranked list, then cut.
//!
//! Nested types read back as gold names them (the corpus keeps the outer types, see
//! the server's `functions::corpus`): `Outer.java/Outer.Inner/method` →
//! function `Outer.java:Outer.Inner.method`, module `Outer.java:Outer.Inner`; a
//! constructor of another language, which the corpus writes as its type
//! (`Outer.java/Outer.Inner`), → `Outer.java:Outer.Inner` at both levels; a method
//! of a Python class nested in a class, `m.py/Outer.Inner/method`, → `m.py:Outer` at
//! both levels (LocAgent's gold counts a nested class's lines for the outermost
//! class). Top-level Python ids are the paper's, read the paper's way.
//!
//! The corpus, the index and the BM25 choices the paper leaves open (bm25s' Lucene
//! BM25, k1 = 1.5, b = 0.75, its tokenizer and Snowball stems) are the server's:
//! `navbench-codegraph --tools functions` (its `functions` module says why).
//!
//! # How the script does it
//! 1. `index_functions` on the checked-out tree (index time). Test files are those with
//!    `test` in their path; for a repository whose name itself contains `test`, those
//!    with `test` in their file name (SweRank's exception for pytest, whose source lives
//!    under `src/_pytest`), stated as a rule on the name so that no repository is named.
//! 2. One `search_functions` call with the whole issue text and `top_k` [`TOP_K`] (the
//!    100 documents CoRNStack's evaluation keeps per query).
//! 3. [`docs_locations`] turns the ranked ids into files, modules and functions.
//!
//! The policy answers every ranked document; the run's last step, as for every
//! scripted policy (`policy::fitted::finish`), puts tests and derived code below
//! source ([`crate::policy::secondary`]) and then cuts each level to [`ANSWER_LEN`]
//! as [`docs_locations`] does, so a bundle that copies the source gives its place to
//! the next source document; the
//! corpus already leaves `test` paths out, so for `bm25` that moves only build
//! output, bundles, vendored, minified and generated files, which the paper's Python
//! repositories hardly have (dev and mini rankings are unchanged by it).

use std::path::Path;

use serde_json::json;

use super::codegraph::Codegraph;
use super::{PolicyFuture, SetupFuture, Variant};
use crate::data::dataset::{Locations, push_unique};
use crate::policy::fitted::cut;
use crate::policy::{Driver, Task};

/// The `bm25` variant (see the module doc).
pub struct Bm25;

/// Documents asked of `search_functions`.
pub const TOP_K: usize = 100;
/// Locations answered per level.
pub const ANSWER_LEN: usize = 10;

impl Variant for Bm25 {
    fn name(&self) -> &'static str {
        "bm25"
    }
    fn binary(&self) -> &'static str {
        Codegraph.binary()
    }
    fn about(&self) -> &'static str {
        "the LocAgent paper's BM25 baseline: the issue text ranks one document per function (no agent)"
    }
    fn setup_tools(&self) -> &'static [&'static str] {
        &["index_functions"]
    }
    /// The codegraph binary serving its per-function BM25 tools instead of the graph
    /// tools, allowed the checked-out tree; pointed at it by `index_functions`, so
    /// indexing is a tool call. Its per-file corpus store shares codegraph's cache
    /// directory (`<cache>/codegraph/functions`), so a repository's next tree reads
    /// only the files that changed.
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String> {
        vec![
            "--tools".to_string(),
            "functions".to_string(),
            "--cache".to_string(),
            super::arg(&cache.join("codegraph")),
            "--allow-root".to_string(),
            super::arg(workdir),
        ]
    }
    fn setup<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> SetupFuture<'a> {
        Box::pin(setup(driver, task))
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(localize(driver, task))
    }
}

/// The test-file rule for a repository `owner/name` (step 1 of the module doc).
pub fn test_filter_for(repo: &str) -> &'static str {
    let name = repo.rsplit('/').next().unwrap_or(repo);
    if name.to_lowercase().contains("test") {
        "file_name"
    } else {
        "path"
    }
}

/// Step 1 of the module doc: `index_functions` on the checked-out tree.
pub async fn setup(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<()> {
    let root = task.workdir.to_string_lossy().into_owned();
    let filter = test_filter_for(&task.instance.repo);
    let index = driver
        .call(
            "index_functions",
            json!({"repo_path": root, "test_filter": filter}),
        )
        .await;
    if index.is_error {
        anyhow::bail!(
            "index_functions failed: {}",
            index.error.unwrap_or_else(|| index.text.clone())
        );
    }
    Ok(())
}

/// Runs the baseline (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    setup(driver, task).await?;
    let query = task.instance.problem_statement.as_str();
    let out = driver
        .call("search_functions", json!({"query": query, "top_k": TOP_K}))
        .await;
    if out.is_error {
        anyhow::bail!(
            "search_functions failed: {}",
            out.error.unwrap_or_else(|| out.text.clone())
        );
    }
    // Every level read from all the ranked documents: the run's last step
    // (`policy::fitted::finish`) puts secondary files below source over all of them,
    // then cuts, so a bundle that copies the source does not push the source out.
    Ok(docs_locations_uncut(&ranked_ids(out.structured.as_ref())))
}

/// The document ids of a `search_functions` result, best first.
pub fn ranked_ids(structured: Option<&serde_json::Value>) -> Vec<String> {
    structured
        .and_then(|v| v.get("documents"))
        .and_then(|d| d.as_array())
        .map(|docs| {
            docs.iter()
                .filter_map(|d| d.get("id").and_then(|id| id.as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Splits a document id at the end of its file path: the last `.py` followed by `/`
/// or the end (the original's `(.+\.py)(/.*)?`), or as well the last such end of a
/// path in another language navbench reads (`src/cart.ts/Cart/total`); `None` for an
/// id without a source file.
fn split_doc_id(id: &str) -> Option<(&str, &str)> {
    // The file is the longest `/`-bounded prefix with a source extension.
    let ends = id.match_indices('/').map(|(i, _)| i).chain([id.len()]);
    let at = ends
        .rev()
        .find(|&end| crate::policy::languages::family_of(&id[..end]).is_some())?;
    let (file, rest) = id.split_at(at);
    Some((file, rest.trim_start_matches('/')))
}

/// LocAgent's `docs` conversion of ranked document ids (see the module doc), each level
/// de-duplicated and cut at [`ANSWER_LEN`].
pub fn docs_locations(ids: &[String]) -> Locations {
    cut(docs_locations_uncut(ids), ANSWER_LEN)
}

/// [`docs_locations`] before the cut: every level of every ranked id (the policy's
/// answer, which the run cuts after putting source first).
fn docs_locations_uncut(ids: &[String]) -> Locations {
    let mut loc = Locations::default();
    for id in ids {
        let Some((file, entity)) = split_doc_id(id) else {
            continue;
        };
        push_unique(&mut loc.files, file.to_string());
        let entity = entity.trim_matches('/');
        if entity.is_empty() {
            continue;
        }
        let first = entity.split('/').next().unwrap_or(entity);
        // A Python class nested in another (`Outer.Inner/method`): LocAgent's gold
        // counts its lines for the outermost class, at both levels.
        let function = match first.split_once('.') {
            Some((outer, _)) if file.ends_with(".py") => outer.to_string(),
            _ => entity.replace('/', "."),
        };
        let module = match first.split_once('.') {
            Some((outer, _)) if file.ends_with(".py") => outer,
            _ => first,
        };
        push_unique(&mut loc.functions, format!("{file}:{function}"));
        push_unique(&mut loc.modules, format!("{file}:{module}"));
    }
    loc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn docs_conversion_reads_files_functions_and_modules_in_rank_order() {
        let ranked = ids(&[
            "pkg/cart.py/Cart/total",
            "pkg/util.py/fmt",
            "pkg/cart.py/Cart/__init__",
            "pkg/cart.py/Line/cost",
            "pkg/util.py/helper",
            "pkg/a.py/deep/x.py/f",
            "no_python_here",
        ]);
        let loc = docs_locations(&ranked);
        assert_eq!(
            loc.files,
            ["pkg/cart.py", "pkg/util.py", "pkg/a.py/deep/x.py"]
        );
        assert_eq!(
            loc.functions,
            [
                "pkg/cart.py:Cart.total",
                "pkg/util.py:fmt",
                "pkg/cart.py:Cart.__init__",
                "pkg/cart.py:Line.cost",
                "pkg/util.py:helper",
                "pkg/a.py/deep/x.py:f"
            ]
        );
        assert_eq!(
            loc.modules,
            [
                "pkg/cart.py:Cart",
                "pkg/util.py:fmt",
                "pkg/cart.py:Line",
                "pkg/util.py:helper",
                "pkg/a.py/deep/x.py:f"
            ]
        );
    }

    #[test]
    fn docs_of_other_languages_split_at_their_extension() {
        let loc = docs_locations(&ids(&[
            "web/src/cart.ts/Cart/subtotalCents",
            "gateway/queue/queue.go/Queue/Pop",
            "cli/src/duration.rs/parse_duration",
            "sdk/src/main/java/dev/Box.java/Box/size",
        ]));
        assert_eq!(
            loc.functions,
            [
                "web/src/cart.ts:Cart.subtotalCents",
                "gateway/queue/queue.go:Queue.Pop",
                "cli/src/duration.rs:parse_duration",
                "sdk/src/main/java/dev/Box.java:Box.size"
            ]
        );
        assert_eq!(loc.modules[1], "gateway/queue/queue.go:Queue");
    }

    #[test]
    fn docs_of_nested_types_read_back_as_gold_names_them() {
        let loc = docs_locations(&ids(&[
            "src/shop/Outer.java/Outer.Inner/method",
            "web/shop.ts/Shop.Cart/total",
            "src/w.rs/inner.W/get",
            "src/w.rs/inner.parse",
            "pkg/shop.py/Cart.Line/cost",
        ]));
        assert_eq!(
            loc.functions,
            [
                "src/shop/Outer.java:Outer.Inner.method",
                "web/shop.ts:Shop.Cart.total",
                "src/w.rs:inner.W.get",
                "src/w.rs:inner.parse",
                "pkg/shop.py:Cart"
            ]
        );
        assert_eq!(
            loc.modules,
            [
                "src/shop/Outer.java:Outer.Inner",
                "web/shop.ts:Shop.Cart",
                "src/w.rs:inner.W",
                "src/w.rs:inner.parse",
                "pkg/shop.py:Cart"
            ]
        );
    }

    /// The corpus writes another language's constructor as its type (`path/Type`):
    /// it reads back as the type at both levels, gold's id for an edit in it.
    #[test]
    fn docs_of_constructors_read_back_as_their_type() {
        let loc = docs_locations(&ids(&[
            "src/p/Cache.java/Cache",
            "src/p/Cache.java/Cache.Entry",
            "web/cart.ts/Cart",
            "src/p/Cache.java/Cache/get",
        ]));
        assert_eq!(
            loc.functions,
            [
                "src/p/Cache.java:Cache",
                "src/p/Cache.java:Cache.Entry",
                "web/cart.ts:Cart",
                "src/p/Cache.java:Cache.get"
            ]
        );
        assert_eq!(
            loc.modules,
            [
                "src/p/Cache.java:Cache",
                "src/p/Cache.java:Cache.Entry",
                "web/cart.ts:Cart"
            ]
        );
    }

    #[test]
    fn docs_conversion_cuts_each_level_after_de_duplicating() {
        let ranked: Vec<String> = (0..30)
            .map(|i| format!("pkg/m{}.py/C/f{i}", i % 12))
            .collect();
        let loc = docs_locations(&ranked);
        assert_eq!(loc.files.len(), ANSWER_LEN);
        assert_eq!(loc.files[0], "pkg/m0.py");
        assert_eq!(loc.modules[1], "pkg/m1.py:C");
        assert_eq!(loc.functions.len(), ANSWER_LEN);
    }

    #[test]
    fn test_rule_follows_the_repository_name() {
        assert_eq!(test_filter_for("pytest-dev/pytest"), "file_name");
        assert_eq!(test_filter_for("psf/requests"), "path");
        assert_eq!(test_filter_for("navbench/mini"), "path");
    }

    #[test]
    fn ranked_ids_read_the_structured_result() {
        let v = serde_json::json!({"documents": [{"rank": 1, "id": "a.py/f"}, {"rank": 2, "id": "b.py/C/g"}], "total_documents": 2});
        assert_eq!(ranked_ids(Some(&v)), ["a.py/f", "b.py/C/g"]);
        assert!(ranked_ids(None).is_empty());
    }
}
