//! The `bm25` variant: the LocAgent paper's BM25 retrieval baseline, reproduced over
//! the codegraph server's `search_code`, so that anyone can rerun that row of the
//! paper's tables beside the agentic variants.
//!
//! # The baseline
//! A retrieval baseline has no agent: the issue text is the query, BM25 (bm25s'
//! Lucene scoring over LocAgent's EpicSplitter code chunks, test files left out,
//! SPEC.md §3.1–3.3) ranks the chunks, and the ranked chunks are read off as
//! locations, which LocAgent's evaluation then scores at three levels: a file at its
//! first chunk, a function (and its module: the class holding a method, else the
//! function) at the first chunk that shows it. The original repository does not ship
//! the baseline's script; this follows the paper's description and the original's
//! own entity rules (`util/process_output.py`: a function id counts for the class
//! holding it at module level).
//!
//! # How the script does it
//! 1. `init_repository` on the checked-out tree (index time).
//! 2. One `search_code` call with the issue text (cut at [`MAX_QUERY_CHARS`]) and
//!    `top_k` [`TOP_K`]. Only its BM25 code-content hits are kept: the name lookups
//!    `search_code` also runs are the agentic tools' part, not the baseline's.
//! 3. Hits are read in BM25 rank order (the `bm25_rank` of each structured hit; the
//!    text groups them by file, as the original's tool does, and hits without a rank
//!    keep their display order after the ranked ones): files by first hit; each
//!    hit's entities (the functions holding a snippet's lines, or the previewed
//!    entity) give function and module ids by first hit, as
//!    [`crate::policy::entities`] maps them.

use std::path::Path;

use serde_json::json;

use super::codegraph::Codegraph;
use super::{PolicyFuture, SetupFuture, Variant};
use crate::dataset::{Locations, push_unique};
use crate::policy::code_search::{self, CodeHit, Origin};
use crate::policy::entities::EntityIndex;
use crate::policy::{Driver, Task};

/// The `bm25` variant (see the module doc).
pub struct Bm25;

/// Chunks asked of `search_code` (the server's cap on results per call).
pub const TOP_K: usize = 20;
/// Locations answered per level.
pub const ANSWER_LEN: usize = 10;
/// Longest query text sent (the issue is cut there, on a char boundary).
pub const MAX_QUERY_CHARS: usize = 4000;

impl Variant for Bm25 {
    fn name(&self) -> &'static str {
        "bm25"
    }
    fn binary(&self) -> &'static str {
        Codegraph.binary()
    }
    fn about(&self) -> &'static str {
        "the LocAgent paper's BM25 baseline: the issue text ranks code chunks (no agent)"
    }
    fn setup_tools(&self) -> &'static [&'static str] {
        Codegraph.setup_tools()
    }
    /// The codegraph server as the `codegraph` variant runs it, sharing its cache:
    /// the BM25 index is part of the same build.
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String> {
        Codegraph.server_args(workdir, cache)
    }
    fn setup<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> SetupFuture<'a> {
        Codegraph.setup(driver, task)
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(localize(driver, task))
    }
}

/// Runs the baseline (see the module doc).
pub async fn localize(driver: &mut Driver<'_>, task: &Task<'_>) -> anyhow::Result<Locations> {
    super::codegraph::setup(driver, task).await?;
    let query: String = task
        .instance
        .problem_statement
        .chars()
        .take(MAX_QUERY_CHARS)
        .collect();
    let out = driver
        .call("search_code", json!({"query": [query], "top_k": TOP_K}))
        .await;
    if out.is_error {
        anyhow::bail!(
            "search_code failed: {}",
            out.error.unwrap_or_else(|| out.text.clone())
        );
    }
    let hits = code_search::parse(out.structured.as_ref());
    Ok(locations(&hits, &mut EntityIndex::default(), task.workdir))
}

/// The three levels read off the BM25 content hits, in order (step 3 of the module doc).
pub fn locations(hits: &[CodeHit], index: &mut EntityIndex, root: &Path) -> Locations {
    let mut loc = Locations::default();
    let mut content: Vec<&CodeHit> = hits
        .iter()
        .filter(|h| h.origin == Origin::Bm25Content)
        .collect();
    // Stable: unranked hits keep their display order, after the ranked ones.
    content.sort_by_key(|h| h.bm25_rank.unwrap_or(usize::MAX));
    for h in content {
        push_unique(&mut loc.files, h.file.clone());
        for id in h.entities(index, root) {
            let Some((file, qual)) = id.split_once(':') else {
                continue;
            };
            let ids = index.answer_ids_of(root, file, qual);
            if let Some(f) = ids.function {
                push_unique(&mut loc.functions, f);
            }
            if let Some(m) = ids.module {
                push_unique(&mut loc.modules, m);
            }
        }
    }
    loc.files.truncate(ANSWER_LEN);
    loc.modules.truncate(ANSWER_LEN);
    loc.functions.truncate(ANSWER_LEN);
    loc
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_hits_give_files_modules_and_functions_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        let a = "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return sum(self.items)\n";
        std::fs::write(root.join("pkg/cart.py"), a).unwrap();
        std::fs::write(root.join("pkg/util.py"), "def fmt(x):\n    return str(x)\n").unwrap();
        // The wire shape of `search_code` for one long query: a name-lookup hit (not
        // the baseline's), a preview of a function shown before the snippet over the
        // whole class that BM25 ranked first.
        let result = json!({"terms": ["cart total is wrong"], "content_search": true,
        "groups": [{"terms": ["cart total is wrong"], "results": [
          {"format": "fold", "id": "pkg/util.py:fmt", "type": "function", "file": "pkg/util.py",
           "start_line": 1, "end_line": 2, "source": "Retrieved entity using keyword search (bm25)."},
          {"format": "preview", "id": "pkg/util.py:fmt", "type": "function", "file": "pkg/util.py",
           "start_line": 1, "end_line": 2, "source": "Retrieved code content using keyword search (bm25).",
           "bm25_rank": 2},
          {"format": "code_snippet", "id": "pkg/cart.py", "type": "file", "file": "pkg/cart.py",
           "start_line": 1, "end_line": 6, "source": "Retrieved code content using keyword search (bm25).",
           "bm25_rank": 1}
        ]}]});
        let hits = code_search::parse(Some(&result));
        let loc = locations(&hits, &mut EntityIndex::default(), root);
        assert_eq!(loc.files, ["pkg/cart.py", "pkg/util.py"]);
        // `__init__` counts for its class, as LocAgent's ids do.
        assert_eq!(
            loc.functions,
            [
                "pkg/cart.py:Cart",
                "pkg/cart.py:Cart.total",
                "pkg/util.py:fmt"
            ]
        );
        assert_eq!(loc.modules, ["pkg/cart.py:Cart", "pkg/util.py:fmt"]);
    }
}
