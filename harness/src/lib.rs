//! navbench's harness: measures code-navigation MCP servers on bug-localization tasks.
//!
//! # Principal types
//! - [`dataset::Instance`]: one task (repository, base commit, issue text, patch), read
//!   by [`dataset::Dataset`] from JSONL, parquet or the embedded [`mini`] set.
//! - [`checkout::RepoCache`]: one bare git mirror per repository, and work trees of
//!   base commits.
//! - [`dataset::Locations`]: ranked files, modules and functions — both the gold
//!   (derived by [`gold`] from the patch) and a policy's answer.
//! - [`variants::Variant`]: one kind of server measured (text, codegraph, retrieval,
//!   retrieval-static, bm25, or one declared in a TOML file: [`variants::declared`]):
//!   its binary, arguments, preparation, setup calls and scripted policy.
//! - [`mcp_client::McpSession`]: a live server child process spoken to over MCP;
//!   [`policy::Driver`] calls its tools for a policy and keeps a
//!   [`policy::CallRecord`] of each call's cost.
//! - [`policy::agent::Agent`]: an LLM behind an OpenAI-compatible endpoint that plays
//!   the agent instead of a variant's scripted policy (`run --agent`), with the same
//!   tools, records and scores ([`run_config::Policy`] chooses).
//! - [`output::InstanceRow`]: one (instance, variant) result as `instances.csv` holds
//!   it; [`run_dir::Run`] is a finished run directory read back.
//!
//! # Data flow of `navbench run` ([`pipeline`])
//! dataset → checkout ([`checkout`]) → gold ([`gold`], with [`patch`] parsing and
//! applying unified diffs by LocAgent's rules) → for each variant: its server
//! ([`mcp_client`]) + its policy ([`variants`]' scripted ones, helpers in [`policy`]; or
//! an LLM, [`policy::agent`]) → metrics
//! ([`metrics`]: Acc@k, recall, NDCG, MAP; [`tokens`] counts response and schema
//! tokens) → output ([`output`]: `calls.csv`, `instances.csv`, `summary.csv`, appended
//! as the run goes). [`shard`] picks a stable slice for `run --shard I/N`; [`cli`] is
//! the command line.
//!
//! Afterwards, finished run directories are read by [`run_dir`] (streamed, only the columns used):
//! [`report`] aggregates runs into `report.md`, `report.csv` and plots with the
//! statistics of [`stats`]; [`compare`] checks a run against a baseline (CI's
//! regression gate); [`merge`] combines the shards of one run; [`agreement`] compares
//! derived gold with a dataset's own. [`mcp_config`] prints the client configuration
//! that launches the same servers for a real agent. [`dataset_from_git`] turns a
//! repository's history into a dataset (`navbench dataset from-git`).
//!
//! External agents (Claude Code, Codex CLI, Gemini CLI, any MCP client) are measured
//! through [`proxy`], an MCP server that forwards every call to a variant's server and
//! records it as the harness records its own calls: `navbench proxy` for an agent run
//! by hand, and [`agent_cmd`] (`navbench run --agent-cmd`) for one the run starts on
//! every instance × variant.
//!
//! The harness never links a server crate: servers are separate processes reached only
//! over MCP.
//!
//! # Example
//! Score a ranked answer against the gold, as the pipeline does for each level:
//! ```
//! use navbench::metrics::{Level, score_level};
//! let gold = vec!["pkg/a.py".to_string()];
//! let pred = vec!["pkg/b.py".to_string(), "pkg/a.py".to_string()];
//! let s = score_level(Level::File, &gold, &pred).unwrap();
//! assert_eq!(s.acc, vec![0.0, 1.0, 1.0]); // Acc@1, Acc@3, Acc@5
//! ```
//! and launch a variant's server on a tree (see [`mcp_client`] for a whole session):
//! ```
//! use std::path::Path;
//! use navbench::variants::{self, Prepared};
//! let text = variants::by_name("text").unwrap();
//! let spec = text.server_spec(
//!     "navbench-text".into(),
//!     Path::new("/tmp/tree"),
//!     Path::new("/tmp/cache"),
//!     &Prepared::default(),
//! );
//! assert_eq!(spec.args, ["--root", "/tmp/tree"]);
//! ```

pub mod agent_cmd;
pub mod agreement;
pub mod checkout;
pub mod cli;
pub mod compare;
pub mod dataset;
pub mod dataset_from_git;
pub mod gold;
pub mod mcp_client;
pub mod mcp_config;
pub mod merge;
pub mod metrics;
pub mod mini;
pub mod output;
pub mod patch;
pub mod phases;
pub mod pipeline;
pub mod policy;
pub mod proxy;
pub mod report;
pub mod run_config;
pub mod run_dir;
pub mod run_inputs;
pub mod run_progress;
pub mod shard;
pub mod stats;
pub mod tokens;
pub mod tune;
pub mod variants;
