//! The logic behind the MCP tools, free of MCP: arguments in, text plus data out.
//!
//! [`CodegraphTools`] holds the cache directory, the output [`Limits`] and the
//! current [`Repository`] (graph, precomputed traversal and fuzzy indexes,
//! retrievers). Each tool method takes its argument struct and returns a
//! [`ToolOutput`] — the text an agent reads (the original's formats) and the same
//! data as a serializable struct — or a [`ToolError`] whose message says what to do.
//!
//! By concept: [`args`] (argument structs), [`results`] (output structs), [`errors`];
//! [`repository`] (`init_repository`, `reset_repository`), [`traversal`]
//! (`get_dependencies`, `explore_tree`), [`search`] (`search_code`,
//! `search_entities`), [`code`] (`get_code`, `get_code_snippet`).

mod args;
mod code;
mod errors;
mod repository;
mod results;
mod search;
mod traversal;

#[cfg(test)]
mod polyglot_tests;
#[cfg(test)]
mod sequence_tests;
#[cfg(test)]
mod warm_tests;

pub use args::*;
pub use errors::ToolError;
pub use results::*;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use navbench_lang::family::Selection;
use navbench_server_support::roots::AllowedRoots;
use navbench_server_support::sandbox::Sandbox;

use crate::format::CodeLimit;
use crate::fuzzy::FuzzyIndex;
use crate::graph::{NodeIndex, NodeKind};
use crate::retrievers::Retrievers;
use crate::traverse::{RepoGraph, is_test_file};
use errors::invalid;

/// Output limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Cap on `top_k` of the search tools (default 20).
    pub max_results: usize,
    /// Most numbered code lines per entity or snippet before a truncation marker (500).
    pub max_code_lines: usize,
    /// Most lines of one `explore_tree` tree (400).
    pub max_tree_lines: usize,
    /// Most edges of one `get_dependencies` graph (300).
    pub max_graph_edges: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_results: 20,
            max_code_lines: 500,
            max_tree_lines: 400,
            max_graph_edges: 300,
        }
    }
}

/// What a tool returns (shared by every navbench server).
pub use navbench_server_support::mcp::ToolOutput;

/// An initialized repository.
pub struct Repository {
    sandbox: Sandbox,
    graph: RepoGraph,
    fuzzy: FuzzyIndex,
    retrievers: Retrievers,
    /// Non-test file ids in graph order (`ALL_FILE`).
    all_files: Vec<String>,
}

impl std::fmt::Debug for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repository")
            .field("root", &self.sandbox.root())
            .field("nodes", &self.graph.graph().node_count())
            .field("retrievers", &self.retrievers)
            .finish()
    }
}

/// The tools and their state.
#[derive(Debug)]
pub struct CodegraphTools {
    cache_dir: PathBuf,
    limits: Limits,
    /// Where `init_repository` may open a repository (`--allow-root`).
    allowed_roots: AllowedRoots,
    /// Which language families the graph reads (`--languages`; default: the
    /// repository's own, `navbench_lang::family`).
    languages: Selection,
    state: RwLock<Option<Arc<Repository>>>,
}

/// Candidate ids for an unknown entity: BM25 over entity ids when available (top 5
/// positive hits), otherwise the fuzzy retriever's top 5.
fn candidates_for(repo: &Repository, name: &str) -> (Vec<NodeIndex>, &'static str) {
    if let Some(m) = &repo.retrievers.modules {
        let hits: Vec<NodeIndex> = m
            .retrieve(name, 10)
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .filter_map(|(id, _)| repo.graph.graph().index_of(&id))
            .take(5)
            .collect();
        if !hits.is_empty() {
            return (hits, "Retrieved entity using keyword search (bm25).");
        }
    }
    let hits = repo
        .fuzzy
        .search(repo.graph.graph(), name, None, None, 5)
        .into_iter()
        .filter(|m| m.score > 0.0)
        .map(|m| m.node)
        .collect();
    (hits, "Retrieved entity using fuzzy search (rapidfuzz).")
}

fn clean_terms(terms: &[String], what: &str, example: &str) -> Result<Vec<String>, ToolError> {
    let kept: Vec<String> = terms
        .iter()
        .filter(|t| !t.trim().is_empty())
        .cloned()
        .collect();
    if kept.is_empty() {
        return Err(invalid(format!(
            "{what} is empty; pass one or more non-empty strings, e.g. {example}"
        )));
    }
    Ok(kept)
}

impl CodegraphTools {
    /// Tools with no repository yet, caching under `cache_dir`, that may open any
    /// directory (for a trusted embedding process; the binary confines them with
    /// [`CodegraphTools::with_allowed_roots`]).
    pub fn new(cache_dir: PathBuf, limits: Limits) -> CodegraphTools {
        CodegraphTools {
            cache_dir,
            limits,
            allowed_roots: AllowedRoots::any(),
            languages: Selection::Auto,
            state: RwLock::new(None),
        }
    }

    /// The same tools, building graphs of the families `languages` chooses.
    pub fn with_languages(mut self, languages: Selection) -> CodegraphTools {
        self.languages = languages;
        self
    }

    /// The same tools, with `init_repository` confined to `roots`.
    pub fn with_allowed_roots(mut self, roots: AllowedRoots) -> CodegraphTools {
        self.allowed_roots = roots;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(super) fn repo(&self) -> Result<Arc<Repository>, ToolError> {
        let guard = self.state.read().map_err(|_| {
            ToolError::Init("internal state lock poisoned; restart the server".into())
        })?;
        guard.clone().ok_or(ToolError::NotInitialized)
    }

    pub(super) fn code_limit(&self) -> CodeLimit {
        CodeLimit {
            max_lines: self.limits.max_code_lines,
        }
    }

    pub(super) fn top_k(&self, requested: Option<u64>, default: usize) -> Result<usize, ToolError> {
        match requested {
            None => Ok(default.min(self.limits.max_results)),
            Some(0) => Err(invalid("top_k must be at least 1")),
            Some(k) => Ok(usize::try_from(k)
                .unwrap_or(usize::MAX)
                .min(self.limits.max_results)),
        }
    }
}
