//! The retrieval back ends the tools use, behind two small traits.
//!
//! - [`ContentRetriever`]: BM25 over code chunks (SPEC.md §3.1–3.3), used by
//!   `search_code` (`bm25_content_retrieve`, SPEC.md §4.4).
//! - [`ModuleRetriever`]: BM25 over entity ids (SPEC.md §3.4), used by `search_code`'s
//!   entity step and by the invalid-entity hints of the traversal tools (SPEC.md §4.8).
//!
//! [`open_or_build`] provides both for a repository from [`crate::bm25`]
//! ([`open_or_build_content`] and [`with_content`] when the content index is built
//! beside the graph); it is the single place that knows the BM25 implementation.
//! When the content index cannot be built, the tools fall back to entity search only
//! and say so.

use std::path::Path;
use std::sync::Arc;

use navbench_lang::family::{Families, Selection};

use crate::bm25::{Bm25Error, Bm25Index, ModuleIndex};
use crate::chunk::ChunkStore;
use crate::graph::CodeGraph;

/// One chunk returned by content search.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentHit {
    /// Repo-relative path of the chunk's file.
    pub file_path: String,
    /// First line of the chunk (1-based).
    pub start_line: u32,
    /// Last line of the chunk (inclusive).
    pub end_line: u32,
    /// The chunk's span ids (`Foo.bar`, `imports`, `docstring`, `impl:2`, ...).
    pub span_ids: Vec<String>,
    /// BM25 score.
    pub score: f32,
}

/// BM25 over code chunks.
pub trait ContentRetriever: Send + Sync {
    /// The best `top_k` chunks for `query`, best first (empty when the query has no
    /// indexable token).
    fn retrieve(&self, query: &str, top_k: usize) -> Vec<ContentHit>;
}

/// BM25 over entity ids.
pub trait ModuleRetriever: Send + Sync {
    /// The best `top_k` ids for `query` with their scores, best first.
    fn retrieve(&self, query: &str, top_k: usize) -> Vec<(String, f32)>;
}

/// The retrievers of one repository.
#[derive(Clone, Default)]
pub struct Retrievers {
    /// Content search, when available.
    pub content: Option<Arc<dyn ContentRetriever>>,
    /// Entity-id search, when available.
    pub modules: Option<Arc<dyn ModuleRetriever>>,
    /// True when the content index was loaded from the cache.
    pub cache_hit: bool,
    /// Why a retriever is missing, for the init summary.
    pub note: Option<String>,
}

impl std::fmt::Debug for Retrievers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retrievers")
            .field("content", &self.content.is_some())
            .field("modules", &self.modules.is_some())
            .field("cache_hit", &self.cache_hit)
            .field("note", &self.note)
            .finish()
    }
}

/// Content search over a [`Bm25Index`].
struct ContentIndex(Bm25Index);

impl ContentRetriever for ContentIndex {
    fn retrieve(&self, query: &str, top_k: usize) -> Vec<ContentHit> {
        match self.0.search(query, top_k) {
            Ok(results) => results
                .hits
                .into_iter()
                .map(|h| ContentHit {
                    file_path: h.file,
                    start_line: u32::try_from(h.start_line).unwrap_or(u32::MAX),
                    end_line: u32::try_from(h.end_line).unwrap_or(u32::MAX),
                    span_ids: h.span_ids,
                    score: h.score,
                })
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "BM25 content search failed");
                Vec::new()
            }
        }
    }
}

/// Entity-id search over a [`ModuleIndex`].
struct ModuleIds(ModuleIndex);

impl ModuleRetriever for ModuleIds {
    fn retrieve(&self, query: &str, top_k: usize) -> Vec<(String, f32)> {
        self.0
            .search(query, top_k)
            .into_iter()
            .map(|h| (h.id, h.score))
            .collect()
    }
}

/// Opens the retrievers of the repository at `root`: the content index from
/// `index_dir` (a directory of the cache entry) when it is intact and current, else
/// built and persisted there (always rebuilt when `rebuild`); the entity-id index
/// from the graph's non-test node ids (directories included), in graph order.
pub fn open_or_build(
    root: &Path,
    graph: &CodeGraph,
    index_dir: &Path,
    rebuild: bool,
) -> Retrievers {
    let languages = Selection::Only(graph_families(graph));
    let content = open_or_build_content(root, index_dir, rebuild, None, &languages);
    with_content(graph, content)
}

/// The language families of `graph`'s file nodes: what its content index reads, so
/// that `search_code` finds code in the graph's files only.
pub fn graph_families(graph: &CodeGraph) -> Families {
    Families::present(
        graph
            .node_indices()
            .filter(|&ix| graph.node(ix).kind == crate::graph::NodeKind::File)
            .map(|ix| graph.node(ix).id.as_str()),
    )
}

/// The content index of the tree at `root` and whether it was loaded from
/// `index_dir`: loaded when an intact index there was built from the tree's current
/// corpus (and `rebuild` is false), else built into `index_dir` with the chunks of
/// unchanged files from `store`. It needs no graph, so it can be built while the
/// graph is.
pub fn open_or_build_content(
    root: &Path,
    index_dir: &Path,
    rebuild: bool,
    store: Option<&ChunkStore>,
    languages: &Selection,
) -> Result<(Bm25Index, bool), Bm25Error> {
    if !rebuild && let Some(idx) = open_content(root, index_dir)? {
        return Ok((idx, true));
    }
    build_content(root, index_dir, store, None, languages)
}

/// The content index saved in `index_dir` if it is intact and was built from the
/// tree's current corpus; `None` (logged) when it must be built.
pub fn open_content(root: &Path, index_dir: &Path) -> Result<Option<Bm25Index>, Bm25Error> {
    match Bm25Index::open(index_dir) {
        Ok(idx) if idx.source_fingerprint() == crate::bm25::source_fingerprint(root)? => {
            return Ok(Some(idx));
        }
        Ok(_) => {
            tracing::info!(dir = %index_dir.display(), "the saved BM25 index is stale; building it")
        }
        Err(e) => tracing::info!(error = %e, "building the BM25 index"),
    }
    Ok(None)
}

/// The content index of the tree at `root`, built into `index_dir` (in memory when
/// it cannot be saved there) over the corpus files of the families `languages`
/// chooses, with the chunks of unchanged files from `store` and those made from the
/// graph builder's parse from `shared`; `false`: not loaded.
pub fn build_content(
    root: &Path,
    index_dir: &Path,
    store: Option<&ChunkStore>,
    shared: Option<&crate::chunk::TreeChunks>,
    languages: &Selection,
) -> Result<(Bm25Index, bool), Bm25Error> {
    match Bm25Index::build_saved(root, index_dir, store, shared, languages) {
        Ok(idx) => Ok((idx, false)),
        Err(e @ (Bm25Error::Chunk(_) | Bm25Error::Json(_))) => Err(e),
        Err(e) => {
            // The tree is fine but the cache is not: serve from memory.
            tracing::warn!(error = %e, dir = %index_dir.display(), "cannot persist the BM25 index");
            Ok((Bm25Index::build_for(root, languages)?, false))
        }
    }
}

/// The retrievers of a repository from its graph and its content index (or why
/// there is none).
pub fn with_content(
    graph: &CodeGraph,
    content: Result<(Bm25Index, bool), Bm25Error>,
) -> Retrievers {
    with_modules(module_retriever(graph), content)
}

/// The entity-id retriever of `graph`: BM25 over its non-test node ids (directories
/// included), in graph order.
pub fn module_retriever(graph: &CodeGraph) -> Arc<dyn ModuleRetriever> {
    let ids: Vec<String> = graph
        .node_indices()
        .map(|ix| graph.node(ix).id.clone())
        .filter(|id| !crate::traverse::is_test_file(id))
        .collect();
    Arc::new(ModuleIds(ModuleIndex::build(&ids)))
}

/// The retrievers of a repository from its entity-id retriever ([`module_retriever`])
/// and its content index (or why there is none).
pub fn with_modules(
    modules: Arc<dyn ModuleRetriever>,
    content: Result<(Bm25Index, bool), Bm25Error>,
) -> Retrievers {
    match content {
        Ok((idx, cache_hit)) => Retrievers {
            content: Some(Arc::new(ContentIndex(idx))),
            modules: Some(modules),
            cache_hit,
            note: None,
        },
        Err(e) => {
            tracing::warn!(error = %e, "BM25 content index unavailable");
            Retrievers {
                content: None,
                modules: Some(modules),
                cache_hit: false,
                note: Some(format!("BM25 content search is unavailable: {e}")),
            }
        }
    }
}
