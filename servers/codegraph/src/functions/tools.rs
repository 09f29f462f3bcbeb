//! The tools of `navbench-codegraph --tools functions`, free of MCP: arguments in,
//! text plus data out. `index_functions` builds the [`FunctionIndex`] of a checkout;
//! `search_functions` ranks its documents for a query.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use navbench_lang::family::Selection;
use navbench_server_support::mcp::ToolOutput;
use navbench_server_support::roots::AllowedRoots;
use navbench_server_support::sandbox::Sandbox;
use navbench_server_support::timings::TimingsRecorder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{FunctionIndex, TestFilter};

/// Documents returned when `top_k` is not given: as many as LocAgent's evaluation of
/// retrievers reads (the top 100 of CoRNStack's `get_top_docs`).
pub const DEFAULT_TOP_K: usize = 100;
/// Most documents one call returns.
pub const MAX_TOP_K: usize = 1000;

/// Arguments of `index_functions`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexFunctionsArgs {
    /// Absolute path of the repository checkout to index.
    pub repo_path: String,
    /// Which files are tests, left out: 'path' (default: 'test' anywhere in the lower-cased path) or 'file_name' ('test' in the file name only, for a project whose own source sits under a test-named directory).
    #[serde(default)]
    pub test_filter: Option<String>,
}

/// Arguments of `search_functions`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFunctionsArgs {
    /// The query: any text, e.g. a whole issue.
    pub query: String,
    /// Documents to return, best first (default 100, max 1000).
    #[serde(default)]
    pub top_k: Option<u64>,
}

/// Structured result of `index_functions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexFunctionsOutput {
    /// Canonical repository root.
    pub root: String,
    /// The test filter applied (`path` or `file_name`).
    pub test_filter: String,
    /// Source files under the root (Python and the `navbench-lang` languages).
    pub source_files: usize,
    /// Files left out as tests.
    pub test_files: usize,
    /// Files left out because they are not UTF-8.
    pub undecodable_files: usize,
    /// Python files left out because CPython would not parse them.
    pub unparsable_files: usize,
    /// Documents indexed (one per function and per method).
    pub documents: usize,
    /// Files whose documents came from the per-file store (unchanged since a build
    /// of an earlier tree) instead of a parse.
    pub reused_files: usize,
}

/// One ranked document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankedDocument {
    /// 1 = best.
    pub rank: usize,
    /// Document id: 'path.py/Class/method' or 'path.py/function'.
    pub id: String,
    /// Repo-relative path of its file.
    pub file: String,
    /// First line (the def line).
    pub start_line: usize,
    /// Last line.
    pub end_line: usize,
    /// BM25 score.
    pub score: f32,
}

/// Structured result of `search_functions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchFunctionsOutput {
    /// Documents with a positive score, best first.
    pub documents: Vec<RankedDocument>,
    /// Documents in the index.
    pub total_documents: usize,
}

/// Why a call failed, worded for the caller.
#[derive(Debug, thiserror::Error)]
pub enum FunctionToolError {
    /// `search_functions` before `index_functions`.
    #[error(
        "No repository is indexed. Call index_functions first, e.g. {{\"repo_path\": \"/path/to/repo\"}} (the absolute path of the checkout); then search again."
    )]
    NotIndexed,
    /// A bad argument.
    #[error("{0}")]
    Invalid(String),
    /// Building the index failed.
    #[error("{0}")]
    Build(String),
}

/// The tools and the current index.
#[derive(Debug, Default)]
pub struct FunctionTools {
    /// Where `index_functions` may open a repository (`--allow-root`).
    allowed_roots: AllowedRoots,
    /// Which language families the corpus reads (`--languages`).
    languages: Selection,
    /// The per-file corpus store (`<cache>/functions`), when there is a cache.
    store: Option<PathBuf>,
    state: RwLock<Option<Arc<FunctionIndex>>>,
}

impl FunctionTools {
    /// Tools with nothing indexed yet that may index any directory (for a trusted
    /// embedding process; the binary confines them with
    /// [`FunctionTools::with_allowed_roots`]).
    pub fn new() -> FunctionTools {
        FunctionTools {
            allowed_roots: AllowedRoots::any(),
            languages: Selection::Auto,
            store: None,
            state: RwLock::default(),
        }
    }

    /// The same tools, indexing the families `languages` chooses.
    pub fn with_languages(mut self, languages: Selection) -> FunctionTools {
        self.languages = languages;
        self
    }

    /// The same tools, keeping what each file gave the corpus in `dir` between
    /// builds, so that a tree a few files apart from one indexed before costs the
    /// changed files' parses only.
    pub fn with_store(mut self, dir: PathBuf) -> FunctionTools {
        self.store = Some(dir);
        self
    }

    /// The same tools, with `index_functions` confined to `roots`.
    pub fn with_allowed_roots(mut self, roots: AllowedRoots) -> FunctionTools {
        self.allowed_roots = roots;
        self
    }

    /// `index_functions`: builds the index of `repo_path`, replacing the current one.
    pub fn index_functions(
        &self,
        args: &IndexFunctionsArgs,
    ) -> Result<ToolOutput<IndexFunctionsOutput>, FunctionToolError> {
        let path = args.repo_path.trim();
        if path.is_empty() {
            return Err(FunctionToolError::Invalid(
                "repo_path is empty; pass the absolute path of the repository checkout".into(),
            ));
        }
        let filter = match args.test_filter.as_deref().map(str::trim) {
            None | Some("") => TestFilter::default(),
            Some(v) => TestFilter::parse(v).ok_or_else(|| {
                FunctionToolError::Invalid(format!(
                    "Invalid test_filter '{v}': expected 'path' (default) or 'file_name'"
                ))
            })?,
        };
        let sandbox = Sandbox::new(path).map_err(|e| {
            FunctionToolError::Invalid(format!(
                "{e}. repo_path must be an existing directory (the repository checkout)"
            ))
        })?;
        self.allowed_roots
            .check("index_functions", sandbox.root())
            .map_err(|e| FunctionToolError::Invalid(e.to_string()))?;
        let timings = TimingsRecorder::default();
        let index = FunctionIndex::build_with(
            sandbox.root(),
            filter,
            &self.languages,
            self.store.as_deref(),
            &timings,
        )
        .map_err(|e| FunctionToolError::Build(e.to_string()))?;
        let s = index.stats().clone();
        let data = IndexFunctionsOutput {
            root: index.root().display().to_string(),
            test_filter: filter.as_str().to_string(),
            source_files: s.source_files,
            test_files: s.test_files,
            undecodable_files: s.undecodable_files,
            unparsable_files: s.unparsable_files,
            documents: s.documents,
            reused_files: index.reused_files(),
        };
        // Times go in `_meta`: `build_ms` (the index build) and `timings_ms` (where it
        // went: fingerprint — walk, read and hash files —, parse — parse and tokenize,
        // or load from the store —, text — the BM25 statistics —, write — the
        // store's new pack), so the structured result of one tree is one set of bytes.
        let meta =
            serde_json::json!({"build_ms": index.build_ms(), "timings_ms": timings.snapshot()});
        tracing::info!(root = %data.root, documents = data.documents, build_ms = format!("{:.0}", index.build_ms()), "function index built");
        let text = format!(
            "Indexed {} function/method documents from {} of {} source files under {} ({} test files left out by the '{}' rule, {} not UTF-8, {} not parsable).\nNext: search_functions(query=<issue text>).",
            data.documents,
            s.source_files - s.test_files - s.undecodable_files - s.unparsable_files,
            s.source_files,
            data.root,
            s.test_files,
            data.test_filter,
            s.undecodable_files,
            s.unparsable_files,
        );
        let mut state = self.state.write().map_err(|_| {
            FunctionToolError::Build("internal state lock poisoned; restart the server".into())
        })?;
        *state = Some(Arc::new(index));
        Ok(ToolOutput::ok(text, data).with_meta(meta))
    }

    /// `search_functions`: the best documents for `query`.
    pub fn search_functions(
        &self,
        args: &SearchFunctionsArgs,
    ) -> Result<ToolOutput<SearchFunctionsOutput>, FunctionToolError> {
        let index = self
            .state
            .read()
            .map_err(|_| {
                FunctionToolError::Build("internal state lock poisoned; restart the server".into())
            })?
            .clone()
            .ok_or(FunctionToolError::NotIndexed)?;
        if args.query.trim().is_empty() {
            return Err(FunctionToolError::Invalid(
                "query is empty; pass the text to search for, e.g. the issue".into(),
            ));
        }
        let top_k = match args.top_k {
            None => DEFAULT_TOP_K,
            Some(0) => {
                return Err(FunctionToolError::Invalid(
                    "top_k must be at least 1".into(),
                ));
            }
            Some(k) => usize::try_from(k).unwrap_or(usize::MAX).min(MAX_TOP_K),
        };
        let found = index.search(&args.query, top_k);
        let documents: Vec<RankedDocument> = found
            .hits
            .into_iter()
            .enumerate()
            .map(|(i, h)| RankedDocument {
                rank: i + 1,
                id: h.id,
                file: h.file,
                start_line: h.start_line,
                end_line: h.end_line,
                score: h.score,
            })
            .collect();
        let total = index.stats().documents;
        let mut text = match found.empty_reason {
            Some(reason) => format!("No function matches: {reason}.\n"),
            None => format!(
                "Top {} of {total} function documents by BM25:\n",
                documents.len()
            ),
        };
        for d in &documents {
            text += &format!(
                "{}. {} (lines {}-{}) score {:.4}\n",
                d.rank, d.id, d.start_line, d.end_line, d.score
            );
        }
        let data = SearchFunctionsOutput {
            documents,
            total_documents: total,
        };
        Ok(ToolOutput::ok(text.trim_end().to_string(), data))
    }
}
