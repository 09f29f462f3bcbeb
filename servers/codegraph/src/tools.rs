//! The logic behind the MCP tools, free of MCP: arguments in, text plus data out.
//!
//! [`CodegraphTools`] holds the cache directory, the output [`Limits`] and the
//! current [`Repository`] (graph, precomputed traversal and fuzzy indexes,
//! retrievers). Each tool method takes its argument struct and returns a
//! [`ToolOutput`] — the text an agent reads (the original's formats) and the same
//! data as a serializable struct — or a [`ToolError`] whose message says what to do.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use navbench_server_support::sandbox::{Sandbox, SandboxError};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::cache::{CacheEntry, CacheError, CacheKey};
use crate::format::{CodeLimit, snippet_block};
use crate::fuzzy::FuzzyIndex;
use crate::graph::{NodeIndex, NodeKind};
use crate::retrieve::{self, Retrievers};
use crate::snippets::{SearchContext, SearchGroup, search_code_snippets};
use crate::traverse::subgraph::traverse_graph;
use crate::traverse::tree::traverse_tree;
use crate::traverse::{
    RepoGraph, TraverseOptions, is_test_file, parse_depth, parse_direction, parse_edge_kinds,
    parse_node_kinds,
};

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

/// Why a tool call failed; the message is written for the agent.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A tool other than `init_repository` was called first.
    #[error(
        "No repository is initialized. Call init_repository first, e.g. {{\"repo_path\": \"/path/to/repo\"}} (the absolute path of the checkout); then use this tool again."
    )]
    NotInitialized,
    /// A path was refused or does not exist.
    #[error(transparent)]
    Path(#[from] SandboxError),
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    InvalidArgument(String),
    /// Building or loading the graph failed.
    #[error("{0}")]
    Init(String),
}

fn invalid(msg: impl Into<String>) -> ToolError {
    ToolError::InvalidArgument(msg.into())
}

/// Accepts a list of strings or a single string.
fn string_or_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

// ---------------------------------------------------------------------------------
// Arguments

/// Arguments of `init_repository`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitRepositoryArgs {
    /// Absolute path of the repository checkout to index.
    pub repo_path: String,
    /// Rebuild the graph and indexes even if a cached copy exists (default false).
    #[serde(default)]
    pub force_rebuild: Option<bool>,
}

/// Arguments of `get_dependencies`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetDependenciesArgs {
    /// Start entities: 'file_path:QualifiedName' (e.g. 'src/app.py:App.run'), a file ('src/app.py'), a directory ('src'), or '/'.
    #[serde(deserialize_with = "string_or_list")]
    pub entities: Vec<String>,
    /// 'downstream' (what they contain/call/import/inherit; alias 'outgoing'), 'upstream' (what contains/calls/imports/inherits them; alias 'incoming') or 'both' (default).
    #[serde(default)]
    pub direction: Option<String>,
    /// Hops to traverse: a non-negative integer, or -1 for unlimited (20). Default 2.
    #[serde(default)]
    #[schemars(range(min = -1))]
    pub depth: Option<i64>,
    /// Keep only neighbours of these types: 'directory', 'file', 'class', 'function'. Default: all.
    #[serde(default)]
    pub entity_types: Option<Vec<String>>,
    /// Follow only these edge types: 'contains', 'imports', 'invokes', 'inherits'. Default: all.
    #[serde(default)]
    pub dependency_types: Option<Vec<String>>,
}

/// Arguments of `explore_tree`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreTreeArgs {
    /// Entity to start from: '/' (the repository root, default), a directory, a file, or 'file_path:QualifiedName'.
    #[serde(default)]
    pub path: Option<String>,
    /// Levels to show: a non-negative integer, or -1 for unlimited (20). Default 2.
    #[serde(default)]
    #[schemars(range(min = -1))]
    pub depth: Option<i64>,
    /// 'downstream' (default; alias 'outgoing'), 'upstream' (alias 'incoming') or 'both'.
    #[serde(default)]
    pub direction: Option<String>,
    /// Keep only entities of these types: 'directory', 'file', 'class', 'function'. Default: all.
    #[serde(default)]
    pub entity_types: Option<Vec<String>>,
    /// Follow only these edge types: 'contains', 'imports', 'invokes', 'inherits'. Default: all.
    #[serde(default)]
    pub dependency_types: Option<Vec<String>>,
}

/// Arguments of `search_code`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeArgs {
    /// Search terms: entity names ('QuerySet', 'Engine.run'), entity ids ('pkg/core.py:Engine'), file paths, or keywords/code fragments from the issue.
    #[serde(deserialize_with = "string_or_list")]
    pub query: Vec<String>,
    /// Most code-content (BM25) results per term (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub top_k: Option<u64>,
    /// Only search files matching this glob ('src/**/*.py', '*' also matches '/') or containing this substring ('models/'). Default: all non-test files.
    #[serde(default)]
    pub file_pattern: Option<String>,
}

/// Arguments of `search_entities`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchEntitiesArgs {
    /// Names to look for, each searched separately ('ConfigLoader', 'parse config', 'query.py').
    #[serde(deserialize_with = "string_or_list")]
    pub query: Vec<String>,
    /// Matches per query (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub top_k: Option<u64>,
    /// Only entities of this type: 'file', 'class' or 'function'. Default: all three.
    #[serde(default)]
    pub entity_type: Option<String>,
}

/// Arguments of `get_code`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCodeArgs {
    /// Entity ids: 'file_path:QualifiedName' (e.g. 'src/app.py:App.run') or a file path ('src/app.py').
    #[serde(deserialize_with = "string_or_list")]
    pub entities: Vec<String>,
}

/// Arguments of `get_code_snippet`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCodeSnippetArgs {
    /// File path relative to the repository root, e.g. 'src/app.py'.
    pub file: String,
    /// First line, 1-based.
    #[schemars(range(min = 1))]
    pub start_line: i64,
    /// Last line, inclusive (clamped to the file's length).
    #[schemars(range(min = 1))]
    pub end_line: i64,
}

/// Arguments of `reset_repository` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetRepositoryArgs {}

// ---------------------------------------------------------------------------------
// Outputs

/// Structured result of `init_repository`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InitOutput {
    /// Canonical repository root.
    pub root: String,
    /// Nodes in the graph.
    pub nodes: usize,
    /// Edges (parallel edges counted).
    pub edges: usize,
    /// Directory nodes.
    pub directories: usize,
    /// File nodes.
    pub files: usize,
    /// Class nodes.
    pub classes: usize,
    /// Function (and method) nodes.
    pub functions: usize,
    /// Time to build or load everything, in milliseconds.
    pub build_ms: f64,
    /// `hit` (loaded from the cache), `miss` (built and cached), `forced` (rebuilt on request) or `corrupt` (a damaged cache file was rebuilt).
    pub cache: String,
    /// The tree's fingerprint (`git:<commit>` or `content:<hash>`).
    pub fingerprint: String,
    /// Whether BM25 code-content search is available.
    pub content_search: bool,
    /// The BM25 content index: `cached` (loaded), `built` or `unavailable`.
    pub content_index: String,
    /// What to do next.
    pub next_step: String,
}

/// A node of a dependency graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphNode {
    /// Node id.
    pub id: String,
    /// Node type.
    pub r#type: String,
}

/// An edge of a dependency graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphEdge {
    /// Source id.
    pub source: String,
    /// Target id.
    pub target: String,
    /// `contains`, `imports`, `invokes` or `inherits`.
    pub r#type: String,
}

/// An entity that was not found, with candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InvalidEntity {
    /// The entity as given (normalized).
    pub name: String,
    /// Why it was refused: `unknown` or `test`.
    pub reason: String,
    /// Closest existing ids.
    pub candidates: Vec<String>,
}

/// Structured result of `get_dependencies`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DependenciesOutput {
    /// Valid start entities.
    pub roots: Vec<String>,
    /// Direction used.
    pub direction: String,
    /// Hops used.
    pub depth: usize,
    /// Nodes shown (roots first).
    pub nodes: Vec<GraphNode>,
    /// Edges shown.
    pub edges: Vec<GraphEdge>,
    /// Edges found in total.
    pub total_edges: usize,
    /// Edges left out by the cap.
    pub truncated_edges: usize,
    /// Entities that were not usable.
    pub invalid: Vec<InvalidEntity>,
}

/// A line of a tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TreeLine {
    /// Level (0 for the start entity).
    pub depth: usize,
    /// Edge label that led here (`contains`, `invokes-by`, ...), none for the start.
    pub relation: Option<String>,
    /// Node id.
    pub id: String,
    /// Node type.
    pub r#type: String,
}

/// Structured result of `explore_tree`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TreeOutput {
    /// The start entity (normalized), if valid.
    pub root: Option<String>,
    /// Direction used.
    pub direction: String,
    /// Levels used.
    pub depth: usize,
    /// The lines shown.
    pub lines: Vec<TreeLine>,
    /// Lines left out by the cap.
    pub truncated_lines: usize,
    /// The start entity, when it was not usable.
    pub invalid: Vec<InvalidEntity>,
}

/// Structured result of `search_code`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchCodeOutput {
    /// Terms searched (test terms dropped; with several terms, the joint term added).
    pub terms: Vec<String>,
    /// Result groups, in display order.
    pub groups: Vec<SearchGroup>,
    /// Whether BM25 content search took part.
    pub content_search: bool,
}

/// One fuzzy match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntityMatch {
    /// Node id.
    pub id: String,
    /// Node type.
    pub r#type: String,
    /// rapidfuzz `token_set_ratio`, 0-100.
    pub score: f64,
    /// First line (classes and functions).
    pub start_line: Option<u32>,
    /// Last line.
    pub end_line: Option<u32>,
}

/// The matches of one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntityQueryResult {
    /// The query.
    pub query: String,
    /// Best matches first.
    pub matches: Vec<EntityMatch>,
}

/// Structured result of `search_entities`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchEntitiesOutput {
    /// One entry per query.
    pub results: Vec<EntityQueryResult>,
}

/// One requested entity of `get_code`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeEntity {
    /// The name as searched.
    pub name: String,
    /// Whether it exists (non-test).
    pub found: bool,
    /// Node type, when found.
    pub r#type: Option<String>,
    /// First line, when it has code.
    pub start_line: Option<u32>,
    /// Last line.
    pub end_line: Option<u32>,
    /// Code lines left out by the cap.
    pub truncated_lines: usize,
    /// Closest ids, when not found.
    pub candidates: Vec<String>,
}

/// Structured result of `get_code`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetCodeOutput {
    /// One entry per requested entity.
    pub entities: Vec<CodeEntity>,
}

/// Structured result of `get_code_snippet`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SnippetOutput {
    /// Repo-relative path.
    pub file: String,
    /// First line shown.
    pub start_line: usize,
    /// Last line requested (after clamping).
    pub end_line: usize,
    /// Lines in the file.
    pub total_lines: usize,
    /// Lines of the range left out by the cap.
    pub truncated_lines: usize,
}

/// Structured result of `reset_repository`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResetOutput {
    /// The root that was active, if any.
    pub previous_root: Option<String>,
}

// ---------------------------------------------------------------------------------
// State

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
    state: RwLock<Option<Arc<Repository>>>,
}

/// The default cache directory: `$NAVBENCH_CACHE/codegraph`, else
/// `~/.cache/navbench/codegraph`, else a directory under the system temp dir.
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("NAVBENCH_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("codegraph");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache/navbench/codegraph");
    }
    std::env::temp_dir().join("navbench-cache/codegraph")
}

const NEXT_STEP: &str = "Next: explore_tree(path='/') for the layout; search_code / search_entities with names and keywords from the issue; get_dependencies on candidates (callers: direction='upstream'); get_code for their full code.";

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

/// Normalizes a start entity as `_validate_graph_explorer_inputs` does.
fn normalize_root(name: &str) -> String {
    let name = name.trim();
    let mut root = if name == "/" {
        name.to_string()
    } else {
        name.trim_matches('/').to_string()
    };
    if let Some(stripped) = root.strip_suffix(".__init__") {
        root = stripped.to_string();
    }
    if root.is_empty() {
        root = "/".to_string();
    }
    root
}

/// Validates start entities: the valid ones, the hints text (§4.8) and the invalid list.
fn validate_roots(
    repo: &Repository,
    names: &[String],
) -> (Vec<NodeIndex>, String, Vec<InvalidEntity>) {
    let g = &repo.graph;
    let mut valid = Vec::new();
    let mut hints = String::new();
    let mut invalid = Vec::new();
    for name in names {
        let root = normalize_root(name);
        match g.find(&root, true) {
            None => {
                let (cands, source) = candidates_for(repo, &root);
                if cands.is_empty() {
                    hints += &format!(
                        "The entity name `{root}` is invalid. There are no possible candidate entities in record.\n"
                    );
                } else {
                    hints += &format!(
                        "The entity name `{root}` is invalid. Based on your input, here are some candidate entities you might be referring to:\n"
                    );
                    for &c in &cands {
                        hints += &format!("{}: `{}`\n", g.kind(c), g.id(c));
                    }
                    hints += &format!("Source: {source}\n\n");
                }
                invalid.push(InvalidEntity {
                    name: root,
                    reason: "unknown".into(),
                    candidates: cands.iter().map(|&c| g.id(c).to_string()).collect(),
                });
            }
            Some(ix) if g.is_test(ix) => {
                hints += &format!(
                    "No results for the test entity: `{root}`. Please do not include any test entities.\n\n"
                );
                invalid.push(InvalidEntity {
                    name: root,
                    reason: "test".into(),
                    candidates: Vec::new(),
                });
            }
            Some(ix) => {
                if !valid.contains(&ix) {
                    valid.push(ix);
                }
            }
        }
    }
    (valid, hints, invalid)
}

/// Parses the shared traversal arguments.
fn traverse_options(
    direction: Option<&str>,
    default_direction: crate::traverse::Direction,
    depth: Option<i64>,
    entity_types: Option<&[String]>,
    dependency_types: Option<&[String]>,
) -> Result<TraverseOptions, ToolError> {
    let direction = match direction {
        Some(d) => parse_direction(d.trim()).map_err(invalid)?,
        None => default_direction,
    };
    let hops = parse_depth(depth.unwrap_or(2)).map_err(invalid)?;
    let node_types = match entity_types.filter(|t| !t.is_empty()) {
        Some(t) => Some(parse_node_kinds(t).map_err(invalid)?),
        None => None,
    };
    let edge_types = match dependency_types.filter(|t| !t.is_empty()) {
        Some(t) => Some(parse_edge_kinds(t).map_err(invalid)?),
        None => None,
    };
    Ok(TraverseOptions {
        direction,
        hops,
        node_types,
        edge_types,
    })
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

/// Reads a text file as Python's text mode does (UTF-8, universal newlines).
fn read_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    let bytes = std::fs::read(path).map_err(|e| invalid(format!("cannot read '{shown}': {e}")))?;
    if bytes.contains(&0) {
        return Err(invalid(format!(
            "'{shown}' is a binary file; get_code_snippet reads text files only"
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

impl CodegraphTools {
    /// Tools with no repository yet, caching under `cache_dir`.
    pub fn new(cache_dir: PathBuf, limits: Limits) -> CodegraphTools {
        CodegraphTools {
            cache_dir,
            limits,
            state: RwLock::new(None),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn repo(&self) -> Result<Arc<Repository>, ToolError> {
        let guard = self.state.read().map_err(|_| {
            ToolError::Init("internal state lock poisoned; restart the server".into())
        })?;
        guard.clone().ok_or(ToolError::NotInitialized)
    }

    fn code_limit(&self) -> CodeLimit {
        CodeLimit {
            max_lines: self.limits.max_code_lines,
        }
    }

    fn top_k(&self, requested: Option<u64>, default: usize) -> Result<usize, ToolError> {
        match requested {
            None => Ok(default.min(self.limits.max_results)),
            Some(0) => Err(invalid("top_k must be at least 1")),
            Some(k) => Ok(usize::try_from(k)
                .unwrap_or(usize::MAX)
                .min(self.limits.max_results)),
        }
    }

    /// `init_repository`: builds (or loads from the cache) the graph and indexes.
    pub fn init_repository(
        &self,
        args: &InitRepositoryArgs,
    ) -> Result<ToolOutput<InitOutput>, ToolError> {
        let started = Instant::now();
        let path = args.repo_path.trim();
        if path.is_empty() {
            return Err(invalid(
                "repo_path is empty; pass the absolute path of the repository checkout",
            ));
        }
        let sandbox = Sandbox::new(path).map_err(|e| {
            invalid(format!(
                "{e}. repo_path must be an existing directory (the repository checkout)"
            ))
        })?;
        let root = sandbox.root().to_path_buf();
        let force = args.force_rebuild.unwrap_or(false);
        let entry = CacheEntry::new(&self.cache_dir, CacheKey::of(&root));
        let (graph, cache) = if force {
            (self.build_and_save(&root, &entry)?, "forced")
        } else {
            match entry.load_graph() {
                Ok(g) => (g, "hit"),
                Err(CacheError::Missing) => (self.build_and_save(&root, &entry)?, "miss"),
                Err(e @ (CacheError::Corrupt(_) | CacheError::Io(_))) => {
                    tracing::warn!(error = %e, path = %entry.graph_path().display(), "rebuilding");
                    (self.build_and_save(&root, &entry)?, "corrupt")
                }
                Err(e @ CacheError::Stale(_)) => {
                    tracing::info!(error = %e, "rebuilding");
                    (self.build_and_save(&root, &entry)?, "miss")
                }
            }
        };
        let retrievers = retrieve::open_or_build(
            &root,
            &graph,
            &entry.dir.join("bm25"),
            force || cache != "hit",
        );
        let rg = RepoGraph::new(graph);
        let fuzzy = FuzzyIndex::build(rg.graph());
        let all_files: Vec<String> = rg
            .graph()
            .node_indices()
            .filter(|&ix| rg.kind(ix) == NodeKind::File && !rg.is_test(ix))
            .map(|ix| rg.id(ix).to_string())
            .collect();
        let counts = rg.graph().node_counts();
        let count = |k: NodeKind| counts.iter().find(|(kk, _)| *kk == k).map_or(0, |c| c.1);
        let data = InitOutput {
            root: root.to_string_lossy().into_owned(),
            nodes: rg.graph().node_count(),
            edges: rg.graph().edge_count(),
            directories: count(NodeKind::Directory),
            files: count(NodeKind::File),
            classes: count(NodeKind::Class),
            functions: count(NodeKind::Function),
            build_ms: (started.elapsed().as_secs_f64() * 1e4).round() / 10.0,
            cache: cache.to_string(),
            fingerprint: entry.key.fingerprint.clone(),
            content_search: retrievers.content.is_some(),
            content_index: match (&retrievers.content, retrievers.cache_hit) {
                (None, _) => "unavailable",
                (Some(_), true) => "cached",
                (Some(_), false) => "built",
            }
            .to_string(),
            next_step: NEXT_STEP.to_string(),
        };
        let mut text = format!(
            "Initialized repository {}\ngraph: {} nodes, {} edges ({} directories, {} files, {} classes, {} functions)\nbuild time: {:.1} ms; cache: {} ({}); BM25 code index: {}\n",
            data.root,
            data.nodes,
            data.edges,
            data.directories,
            data.files,
            data.classes,
            data.functions,
            data.build_ms,
            data.cache,
            data.fingerprint,
            data.content_index
        );
        if let Some(note) = &retrievers.note {
            text += &format!("note: {note}\n");
        }
        text += NEXT_STEP;
        let repo = Repository {
            sandbox,
            graph: rg,
            fuzzy,
            retrievers,
            all_files,
        };
        let mut guard = self.state.write().map_err(|_| {
            ToolError::Init("internal state lock poisoned; restart the server".into())
        })?;
        *guard = Some(Arc::new(repo));
        tracing::info!(root = %data.root, cache = %data.cache, ms = data.build_ms, "repository initialized");
        Ok(ToolOutput::ok(text, data))
    }

    fn build_and_save(
        &self,
        root: &Path,
        entry: &CacheEntry,
    ) -> Result<crate::graph::CodeGraph, ToolError> {
        let graph = crate::builder::build_graph(root).map_err(|e| {
            ToolError::Init(format!(
                "building the graph of {} failed: {e}",
                root.display()
            ))
        })?;
        if let Err(e) = entry.save_graph(&graph) {
            tracing::warn!(error = %e, dir = %entry.dir.display(), "cannot write the graph cache");
        }
        Ok(graph)
    }

    /// `reset_repository`: forgets the current repository.
    pub fn reset_repository(&self) -> Result<ToolOutput<ResetOutput>, ToolError> {
        let mut guard = self.state.write().map_err(|_| {
            ToolError::Init("internal state lock poisoned; restart the server".into())
        })?;
        let previous = guard
            .take()
            .map(|r| r.sandbox.root().to_string_lossy().into_owned());
        let text = match &previous {
            Some(r) => format!(
                "Repository context reset (was {r}). Call init_repository to work on a repository again."
            ),
            None => "No repository was initialized; nothing to reset.".to_string(),
        };
        Ok(ToolOutput::ok(
            text,
            ResetOutput {
                previous_root: previous,
            },
        ))
    }

    /// `get_dependencies`: the DOT subgraph around the entities (spec §2.5, §4.8).
    pub fn get_dependencies(
        &self,
        args: &GetDependenciesArgs,
    ) -> Result<ToolOutput<DependenciesOutput>, ToolError> {
        let repo = self.repo()?;
        let entities = clean_terms(
            &args.entities,
            "entities",
            "[\"pkg/module.py:Class.method\"] or [\"/\"]",
        )?;
        let opts = traverse_options(
            args.direction.as_deref(),
            crate::traverse::Direction::Both,
            args.depth,
            args.entity_types.as_deref(),
            args.dependency_types.as_deref(),
        )?;
        let (roots, hints, invalid_list) = validate_roots(&repo, &entities);
        let g = &repo.graph;
        let sub = traverse_graph(g, &roots, &opts);
        let edges = sub.edges();
        let total_edges = edges.len();
        let cap = self.limits.max_graph_edges;
        let mut text = if total_edges > cap {
            // Keep the first `cap` edges and the nodes they (or the roots) touch.
            let kept = &edges[..cap];
            let mut shown: Vec<NodeIndex> = Vec::new();
            for &n in sub.nodes() {
                if roots.contains(&n) || kept.iter().any(|(u, v, _)| *u == n || *v == n) {
                    shown.push(n);
                }
            }
            let mut s = String::from("digraph {\n");
            for &n in &shown {
                s += &format!("\"{}\";\n", g.id(n));
            }
            for (u, v, k) in kept {
                s += &format!("\"{}\" -> \"{}\" [type={}];\n", g.id(*u), g.id(*v), k);
            }
            s += &format!(
                "// ... {} more edges ({} more nodes) not shown; narrow the query with depth, direction, entity_types or dependency_types\n}}",
                total_edges - cap,
                sub.node_count() - shown.len()
            );
            s
        } else {
            sub.to_dot(g)
        };
        if !hints.trim().is_empty() {
            text += "\n\n";
            text += &hints;
        }
        let shown_edges = &edges[..total_edges.min(cap)];
        let data = DependenciesOutput {
            roots: roots.iter().map(|&r| g.id(r).to_string()).collect(),
            direction: opts.direction.to_string(),
            depth: opts.hops,
            nodes: sub
                .nodes()
                .iter()
                .filter(|&&n| {
                    total_edges <= cap
                        || roots.contains(&n)
                        || shown_edges.iter().any(|(u, v, _)| *u == n || *v == n)
                })
                .map(|&n| GraphNode {
                    id: g.id(n).to_string(),
                    r#type: g.kind(n).to_string(),
                })
                .collect(),
            edges: shown_edges
                .iter()
                .map(|(u, v, k)| GraphEdge {
                    source: g.id(*u).to_string(),
                    target: g.id(*v).to_string(),
                    r#type: k.to_string(),
                })
                .collect(),
            total_edges,
            truncated_edges: total_edges.saturating_sub(cap),
            invalid: invalid_list,
        };
        Ok(ToolOutput {
            text: text.trim().to_string(),
            is_error: roots.is_empty(),
            data,
        })
    }

    /// `explore_tree`: the tree view around one entity (spec §2.4).
    pub fn explore_tree(
        &self,
        args: &ExploreTreeArgs,
    ) -> Result<ToolOutput<TreeOutput>, ToolError> {
        let repo = self.repo()?;
        let path = args.path.clone().unwrap_or_else(|| "/".to_string());
        let opts = traverse_options(
            args.direction.as_deref(),
            crate::traverse::Direction::Downstream,
            args.depth,
            args.entity_types.as_deref(),
            args.dependency_types.as_deref(),
        )?;
        let (roots, hints, invalid_list) = validate_roots(&repo, &[path]);
        let g = &repo.graph;
        let mut data = TreeOutput {
            root: None,
            direction: opts.direction.to_string(),
            depth: opts.hops,
            lines: Vec::new(),
            truncated_lines: 0,
            invalid: invalid_list,
        };
        let mut text = String::new();
        if let Some(&root) = roots.first() {
            let tree = traverse_tree(g, root, &opts);
            let cap = self.limits.max_tree_lines;
            let total = tree.lines.len();
            let shown = total.min(cap);
            text = tree.lines[..shown].join("\n");
            if shown < total {
                text += &format!(
                    "\n... [{} more lines not shown; reduce depth, or filter with entity_types / dependency_types, or explore a child entity]",
                    total - shown
                );
            }
            data.root = Some(g.id(root).to_string());
            data.truncated_lines = total - shown;
            data.lines = tree.rows[..shown]
                .iter()
                .map(|r| TreeLine {
                    depth: r.depth,
                    relation: r.relation.clone(),
                    id: g.id(r.node).to_string(),
                    r#type: g.kind(r.node).to_string(),
                })
                .collect();
        }
        if !hints.trim().is_empty() {
            text += "\n\n";
            text += &hints;
        }
        Ok(ToolOutput {
            text: text.trim().to_string(),
            is_error: roots.is_empty(),
            data,
        })
    }

    /// `search_code`: the original's `search_code_snippets` (spec §4.2).
    pub fn search_code(
        &self,
        args: &SearchCodeArgs,
    ) -> Result<ToolOutput<SearchCodeOutput>, ToolError> {
        let repo = self.repo()?;
        let terms = clean_terms(&args.query, "query", "[\"QuerySet.filter\", \"timezone\"]")?;
        let top_k = self.top_k(args.top_k, 5)?;
        let pattern = args
            .file_pattern
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty());
        let ctx = SearchContext {
            graph: &repo.graph,
            fuzzy: &repo.fuzzy,
            content: repo.retrievers.content.as_deref(),
            modules: repo.retrievers.modules.as_deref(),
            all_files: &repo.all_files,
            limit: self.code_limit(),
        };
        let out = search_code_snippets(&ctx, &terms, pattern, top_k);
        let mut text = out.text;
        if repo.retrievers.content.is_none() {
            text += "\n\n(Note: BM25 code-content search is not available; results come from entity names and fuzzy matching only.)";
        }
        Ok(ToolOutput::ok(
            text,
            SearchCodeOutput {
                terms: out.terms,
                groups: out.groups,
                content_search: repo.retrievers.content.is_some(),
            },
        ))
    }

    /// `search_entities`: fuzzy entity-name search (spec §3.5).
    pub fn search_entities(
        &self,
        args: &SearchEntitiesArgs,
    ) -> Result<ToolOutput<SearchEntitiesOutput>, ToolError> {
        let repo = self.repo()?;
        let terms = clean_terms(&args.query, "query", "[\"ConfigLoader\", \"parse config\"]")?;
        let top_k = self.top_k(args.top_k, 10)?;
        let kind = match args
            .entity_type
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            None => None,
            Some("file") => Some(NodeKind::File),
            Some("class") => Some(NodeKind::Class),
            Some("function") => Some(NodeKind::Function),
            Some(other) => {
                return Err(invalid(format!(
                    "Invalid entity_type '{other}': expected 'file', 'class' or 'function' (methods are 'function'), or omit it to search all three"
                )));
            }
        };
        let g = &repo.graph;
        let mut text = String::new();
        let mut results = Vec::new();
        for term in &terms {
            let term = term.trim();
            let matches = repo.fuzzy.search(g.graph(), term, kind, None, top_k);
            text += &format!("##Searching for entity `{term}`...\n### Search Result:\n");
            if matches.is_empty() {
                text += "No entities found.\n";
            }
            let mut list = Vec::new();
            for m in matches {
                let data = g.node_data(m.node);
                let lines = data.lines.filter(|_| data.kind.is_entity());
                text += &format!("{}: `{}`", data.kind, g.id(m.node));
                if let Some((s, e)) = lines {
                    text += &format!(" (lines {s}-{e})");
                }
                text += &format!(" score {:.1}\n", m.score);
                list.push(EntityMatch {
                    id: g.id(m.node).to_string(),
                    r#type: data.kind.to_string(),
                    score: m.score,
                    start_line: lines.map(|l| l.0),
                    end_line: lines.map(|l| l.1),
                });
            }
            text += "Source: Retrieved entity using fuzzy search (rapidfuzz token_set_ratio).\n\n";
            results.push(EntityQueryResult {
                query: term.to_string(),
                matches: list,
            });
        }
        Ok(ToolOutput::ok(
            text.trim().to_string(),
            SearchEntitiesOutput { results },
        ))
    }

    /// `get_code`: the original's `get_entity_contents` (spec §4.7), with candidates
    /// for unknown names and long code cut.
    pub fn get_code(&self, args: &GetCodeArgs) -> Result<ToolOutput<GetCodeOutput>, ToolError> {
        let repo = self.repo()?;
        let names = clean_terms(
            &args.entities,
            "entities",
            "[\"pkg/module.py:Class.method\"]",
        )?;
        let g = &repo.graph;
        let limit = self.code_limit();
        let mut text = String::new();
        let mut entities = Vec::new();
        for name in &names {
            let name = name.trim().trim_matches('.');
            if name.is_empty() {
                continue;
            }
            text += &format!("##Searching for entity `{name}`...\n### Search Result:\n");
            if let Some(ix) = g.find(name, false) {
                let qr = crate::format::QueryResult::for_node(
                    0,
                    crate::format::FormatMode::Complete,
                    g,
                    g.node_data(ix),
                    format!("Exact match found for entity name `{name}`."),
                );
                text += &qr.format_output(g, limit);
                text += "\n\n";
                let data = g.node_data(ix);
                let code_lines = data.lines.map_or(0, |(s, e)| (e - s + 1) as usize);
                entities.push(CodeEntity {
                    name: name.to_string(),
                    found: true,
                    r#type: Some(data.kind.to_string()),
                    start_line: data.lines.map(|l| l.0),
                    end_line: data.lines.map(|l| l.1),
                    truncated_lines: code_lines.saturating_sub(limit.max_lines),
                    candidates: Vec::new(),
                });
            } else {
                text += "Invalid name. \nHint: Valid entity name should be formatted as \"file_path:QualifiedName\" or just \"file_path\".\n";
                let cands = if is_test_file(name) {
                    text += "Test files are excluded from the graph tools.\n";
                    Vec::new()
                } else {
                    let (cands, source) = candidates_for(&repo, name);
                    if !cands.is_empty() {
                        text += "Closest matches:\n";
                        for &c in &cands {
                            text += &format!("{}: `{}`\n", g.kind(c), g.id(c));
                        }
                        text += &format!("Source: {source}\n");
                    }
                    cands
                };
                text += "\n";
                entities.push(CodeEntity {
                    name: name.to_string(),
                    found: false,
                    r#type: None,
                    start_line: None,
                    end_line: None,
                    truncated_lines: 0,
                    candidates: cands.iter().map(|&c| g.id(c).to_string()).collect(),
                });
            }
        }
        let none_found = entities.iter().all(|e| !e.found);
        Ok(ToolOutput {
            text: text.trim().to_string(),
            is_error: none_found,
            data: GetCodeOutput { entities },
        })
    }

    /// `get_code_snippet`: numbered lines of a file (the `code_snippet` format).
    pub fn get_code_snippet(
        &self,
        args: &GetCodeSnippetArgs,
    ) -> Result<ToolOutput<SnippetOutput>, ToolError> {
        let repo = self.repo()?;
        let abs = repo.sandbox.resolve(&args.file)?;
        if abs.is_dir() {
            return Err(invalid(format!(
                "'{}' is a directory; pass a file path (explore_tree shows the files of a directory)",
                args.file.trim()
            )));
        }
        let rel = repo.sandbox.relative(&abs);
        let owned;
        let text: &str = match repo
            .graph
            .graph()
            .node_by_id(&rel)
            .and_then(|n| n.code.as_ref())
        {
            Some(code) => code.as_str(),
            None => {
                owned = read_text(&abs, &rel)?;
                &owned
            }
        };
        let total = text.split('\n').count();
        if args.start_line < 1 {
            return Err(invalid(format!(
                "start_line must be at least 1 (got {})",
                args.start_line
            )));
        }
        if args.end_line < args.start_line {
            return Err(invalid(format!(
                "end_line ({}) is before start_line ({}); pass a range with start_line <= end_line",
                args.end_line, args.start_line
            )));
        }
        let start = usize::try_from(args.start_line).unwrap_or(usize::MAX);
        if start > total {
            return Err(invalid(format!(
                "start_line {start} is past the end of '{rel}', which has {total} lines; pass start_line between 1 and {total}"
            )));
        }
        let end = usize::try_from(args.end_line)
            .unwrap_or(usize::MAX)
            .min(total);
        let limit = self.code_limit();
        let (block, cut) = snippet_block(text, start as u32, end as u32, limit);
        let mut out = format!(
            "Found code snippet in file `{rel}`.\nSource: Retrieved code context including {rel}:line {start}-{end}.\n{block}\n"
        );
        if cut > 0 {
            out += &format!(
                "... [truncated: {cut} more lines; call get_code_snippet with file='{rel}', start_line={}, end_line={end} to read them]\n",
                end - cut + 1
            );
        }
        Ok(ToolOutput::ok(
            out.trim_end().to_string(),
            SnippetOutput {
                file: rel,
                start_line: start,
                end_line: end,
                total_lines: total,
                truncated_lines: cut,
            },
        ))
    }
}
