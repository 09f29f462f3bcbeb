//! Scripted localization policies, one per server variant, and what they share.
//!
//! A policy plays the agent: it reads the issue text, calls the variant's MCP tools
//! through a [`Driver`] (which records every call's cost), and returns ranked
//! [`Locations`]. Policies are deterministic — the same instance and server give the
//! same calls and the same ranking — so runs are comparable and CI can demand exact
//! accuracy against a baseline.

pub mod codegraph;
pub mod entities;
pub mod ranking;
pub mod retrieval;
pub mod terms;
pub mod text;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::dataset::{Instance, Locations};
use crate::mcp::{CallOutcome, McpSession, ServerSpec};
use crate::tokens::Tokenizer;

/// A server variant the harness can measure: its name on the command line, the binary
/// that serves it, and the policy that drives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantDef {
    pub name: &'static str,
    /// Binary name, looked up next to `navbench` (or in `--server-dir`).
    pub binary: &'static str,
    /// Cargo package that builds the binary (for error messages).
    pub package: &'static str,
    pub about: &'static str,
    /// Tools whose calls build the server's index: their time counts as index time.
    pub setup_tools: &'static [&'static str],
}

/// Every variant, in report order.
pub const VARIANTS: &[VariantDef] = &[
    VariantDef {
        name: "text",
        binary: "navbench-text",
        package: "navbench-text",
        about: "no special tools: list, read and grep files",
        setup_tools: &[],
    },
    VariantDef {
        name: "codegraph",
        binary: "navbench-codegraph",
        package: "navbench-codegraph",
        about: "LocAgent's graph-guided tools: dependency graph, BM25, fuzzy entity search",
        setup_tools: &["init_repository"],
    },
    VariantDef {
        name: "retrieval",
        binary: "navbench-retrieval",
        package: "navbench-retrieval",
        about: "codebase_retrieval: MiniLM embeddings fused with BM25 over code chunks",
        setup_tools: &["index_repository"],
    },
];

/// The sentence-embedding model the `retrieval` server loads: `NAVBENCH_MODEL_DIR` when
/// set, else all-MiniLM-L6-v2 under the cache (where `navbench-retrieval fetch-model
/// --cache-dir CACHE` installs it).
pub fn retrieval_model_dir(cache: &Path) -> PathBuf {
    match std::env::var_os("NAVBENCH_MODEL_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => cache.join("models").join("all-MiniLM-L6-v2"),
    }
}

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Looks up a variant by name; the error lists the valid names.
pub fn find_variant(name: &str) -> Result<&'static VariantDef, String> {
    VARIANTS.iter().find(|v| v.name == name).ok_or_else(|| {
        let names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
        format!(
            "unknown variant '{name}': choose from {} (comma-separated in --variants)",
            names.join(", ")
        )
    })
}

impl VariantDef {
    /// How to launch this variant's server on one checked-out tree.
    pub fn server_spec(&self, program: PathBuf, workdir: &Path, cache: &Path) -> ServerSpec {
        // codegraph is pointed at the tree by its policy (init_repository), so that
        // indexing is measured as a tool call; text serves the tree it starts in.
        let args = match self.name {
            "codegraph" => vec![
                "--cache".to_string(),
                cache.join("codegraph").to_string_lossy().into_owned(),
            ],
            // retrieval serves the tree as its --workspace (codebase_retrieval's scope) and
            // indexes it at start-up; the policy's index_repository on the same path waits
            // for that indexing, so it is measured as a tool call. Each tree gets its own
            // data dir, so parallel instances never share a registry file.
            "retrieval" => {
                let tree = workdir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "tree".to_string());
                vec![
                    "--workspace".to_string(),
                    workdir.to_string_lossy().into_owned(),
                    "--data-dir".to_string(),
                    cache
                        .join("retrieval")
                        .join(tree)
                        .to_string_lossy()
                        .into_owned(),
                    "--model-dir".to_string(),
                    retrieval_model_dir(cache).to_string_lossy().into_owned(),
                    // Vectors are shared across trees: a chunk is embedded once per run
                    // cache, whichever instance meets it first.
                    "--embedding-cache".to_string(),
                    cache
                        .join("retrieval")
                        .join("embeddings")
                        .to_string_lossy()
                        .into_owned(),
                ]
            }
            _ => vec!["--root".to_string(), workdir.to_string_lossy().into_owned()],
        };
        ServerSpec {
            program,
            args,
            env: Vec::new(),
            cwd: None,
        }
    }
}

/// One tool call as `calls.csv` records it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub step: usize,
    pub tool: String,
    /// The arguments as compact JSON.
    pub args: String,
    pub latency_ms: f64,
    pub response_bytes: usize,
    /// Tokens of the text an agent reads (the text content of the result).
    pub response_tokens: usize,
    pub is_error: bool,
    pub error: String,
}

/// Calls tools on a live session and records what each call cost.
pub struct Driver<'a> {
    session: &'a mut McpSession,
    tokenizer: Tokenizer,
    /// Tools that index (the variant's `setup_tools`) and their own timeout.
    setup: (&'static [&'static str], Option<Duration>),
    /// Every call made so far, in order.
    pub records: Vec<CallRecord>,
}

impl<'a> Driver<'a> {
    /// A driver over `session`, counting response tokens with `tokenizer`.
    pub fn new(session: &'a mut McpSession, tokenizer: Tokenizer) -> Self {
        Driver {
            session,
            tokenizer,
            setup: (&[], None),
            records: Vec::new(),
        }
    }

    /// Gives calls of `tools` (indexing) `timeout` instead of the session's call timeout.
    pub fn with_setup_timeout(mut self, tools: &'static [&'static str], timeout: Duration) -> Self {
        self.setup = (tools, Some(timeout));
        self
    }

    /// Calls `tool` with `args` and records the call. Errors are outcomes, not panics:
    /// the policy decides whether it can go on.
    pub async fn call(&mut self, tool: &str, args: Value) -> CallOutcome {
        let args_text = args.to_string();
        let out = match self.setup {
            (tools, Some(timeout)) if tools.contains(&tool) => {
                self.session.call_within(tool, args, timeout).await
            }
            _ => self.session.call(tool, args).await,
        };
        self.records.push(CallRecord {
            step: self.records.len() + 1,
            tool: tool.to_string(),
            args: args_text,
            latency_ms: out.latency.as_secs_f64() * 1000.0,
            response_bytes: out.response_bytes,
            response_tokens: self.tokenizer.count(&out.text),
            is_error: out.is_error,
            error: out.error.clone().unwrap_or_default(),
        });
        out
    }
}

/// What a policy gets to work with: the instance and its checked-out tree (which a
/// policy may read directly, as an agent reading a file it was shown would).
pub struct Task<'a> {
    pub instance: &'a Instance,
    pub workdir: &'a Path,
}

/// Runs `variant`'s policy on `task` and returns its ranked locations.
pub async fn run_policy(
    variant: &VariantDef,
    driver: &mut Driver<'_>,
    task: &Task<'_>,
) -> anyhow::Result<Locations> {
    match variant.name {
        "text" => text::localize(driver, task).await,
        "codegraph" => codegraph::localize(driver, task).await,
        "retrieval" => retrieval::localize(driver, task).await,
        other => anyhow::bail!("no policy for variant '{other}'"),
    }
}
