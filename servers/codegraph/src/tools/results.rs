//! What the tools return: the structs their `outputSchema`s come from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::search_code::SearchGroup;

// Outputs

/// Structured result of `init_repository`. Its times are in the result's `_meta`:
/// `build_ms` (to build or load everything) and `timings_ms` (where that went:
/// fingerprint — the cache key —, parse — reading files, or reusing earlier reads —,
/// graph — assembling or loading it —, text — BM25 content, module and fuzzy
/// indexes —, write — the graph cache; parts run concurrently count each their own
/// time), so that the structured result of the same tree is the same bytes.
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
    /// `hit` (loaded from the cache), `miss` (built and cached), `forced` (rebuilt on request) or `corrupt` (a damaged cache file was rebuilt).
    pub cache: String,
    /// The tree's fingerprint (`git:<commit>` or `content:<hash>`, followed by
    /// `;languages=<list>` when the server was told which languages to read).
    pub fingerprint: String,
    /// The language families whose files are in the graph (`python`, `ecma` for
    /// TypeScript and JavaScript, `java`, `go`, `rust`).
    pub languages: Vec<String>,
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
