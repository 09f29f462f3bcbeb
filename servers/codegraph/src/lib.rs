//! `navbench-codegraph`: a faithful, fast Rust port of LocAgent's graph-guided code
//! localization tools (arXiv 2503.09089, `gersteinlab/LocAgent`).
//!
//! It builds LocAgent's dependency graph (`dependency_graph/build_graph.py`, graph
//! version v2.3), its BM25 indexes and fuzzy entity search, and serves LocAgent's
//! tools over MCP. The behaviour reproduced, quirks included, is specified in
//! `SPEC.md` at the top of the repository; deliberate differences are listed in
//! `FIDELITY.md`.
//!
//! # Principal types and data flow
//!
//! ```text
//! repo dir ──builder::build_graph──► graph::CodeGraph ──export::write_tsv──► *.nodes.tsv / *.edges.tsv
//!            walk → extract (parallel) → nodes/contains → imports → invokes/inherits
//!            (extract reuses builder::FileStore's results for files an earlier build saw)
//!          ──chunk::chunk_repo──► chunks ──bm25::Bm25Index──► BM25 code search (bm25s scoring; tantivy
//!            postings when saved, scores straight from the terms in the server: Bm25Index::build_in_memory)
//!            (chunks and their terms come from chunk::ChunkStore for files an earlier build chunked;
//!             init_repository builds the graph and this index at once)
//! CodeGraph ──bm25::ModuleIndex / fuzzy──► entity search;  ──traverse──► BFS subgraphs → format (DOT, tree, JSON)
//! cache (keyed by cache::CacheKey: root + fingerprint) persists the graph; tools::CodegraphTools answers
//! each tool; server::CodegraphServer exposes them over MCP (rmcp, stdio).
//! ```
//!
//! - [`graph::CodeGraph`]: a multigraph of [`graph::Node`]s (ids `/`, `dir`, `dir/f.py`,
//!   `dir/f.py:Cls.meth`; types [`graph::NodeKind`]; code and line spans) and
//!   [`graph::Edge`]s ([`graph::EdgeKind`] `contains`/`inherits`/`invokes`/`imports`,
//!   `imports` with an optional alias), with an id index and networkx-ordered
//!   neighbour access for the traversal tools.
//! - [`builder::build_graph`] / [`builder::build_graph_with`]: build it from a directory.
//!   Python files are read as LocAgent reads them; TypeScript/TSX, JavaScript/JSX,
//!   Java, Go and Rust files through `navbench-lang`'s front ends, into the same kinds
//!   of nodes and edges ([`builder::polyglot`] says, per language, what the graph
//!   models and what it leaves out).
//! - [`export`]: the reference TSV format.
//! - [`chunk`], [`bm25`]: LocAgent's code chunks (and, for the other languages,
//!   chunks cut at definition boundaries: [`chunk::defs`]) and its BM25 retrievers.
//! - [`fuzzy`], [`traverse`], [`format`], [`search_code`] (the `search_code` tool's
//!   engine), [`retrievers`] (the BM25 back ends behind two traits): the tool logic.
//! - [`cache`], [`tools`], [`server`]: persistence, the tool surface (split by
//!   concept: arguments, results, repository, traversal, search, code), MCP.
//! - [`functions`]: BM25 over one document per function (the LocAgent paper's BM25
//!   baseline), served instead of the graph tools with `--tools functions`.
//!
//! # Example
//!
//! ```
//! use navbench_codegraph::builder::build_graph;
//! use navbench_codegraph::graph::{EdgeKind, EdgeRef};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("m.py"), "def helper():\n    pass\n\ndef main():\n    helper()\n")?;
//! let graph = build_graph(dir.path())?;
//! let main = graph.index_of("m.py:main").expect("main is a node");
//! let calls: Vec<&str> = graph
//!     .out_edges(main)
//!     .iter()
//!     .filter(|e| e.weight().kind == EdgeKind::Invokes)
//!     .map(|e| graph.node(e.target()).id.as_str())
//!     .collect();
//! assert_eq!(calls, ["m.py:helper"]);
//! assert_eq!(graph.node_by_id("m.py:main").and_then(|n| n.lines), Some((4, 5)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bm25;
pub mod builder;
pub mod chunk;
pub mod export;
pub mod functions;
pub mod graph;
// MCP server side: traversal, fuzzy search, formats, cache, tools.
pub mod cache;
pub mod format;
pub mod fuzzy;
pub mod retrievers;
pub mod search_code;
pub mod server;
pub mod tools;
pub mod traverse;

#[cfg(test)]
mod test_git;
