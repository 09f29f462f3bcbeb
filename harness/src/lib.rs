//! navbench's harness: measures code-navigation MCP servers on bug-localization tasks.
//!
//! # Stages, one folder each
//! 1. [`data`]: the tasks — [`data::dataset::Instance`] (repository, base commit,
//!    issue text, patch) read by [`data::dataset::Dataset`] from JSONL, parquet or the
//!    embedded [`data::mini`] set, or mined by [`data::from_git`];
//!    [`data::dataset::Locations`] are ranked files, modules and functions, both gold
//!    and answers.
//! 2. [`checkout`]: [`checkout::RepoCache`], one bare git mirror per repository and
//!    verified work trees of base commits.
//! 3. [`session`]: [`session::mcp_client::McpSession`], a variant's server as a live
//!    child process spoken to over MCP; [`session::proxy`] puts one behind an external
//!    agent.
//! 4. [`policy`]: who plays the agent. [`variants`] are the kinds of server measured
//!    (text, codegraph, retrieval, retrieval-static, bm25, or one declared in a TOML
//!    file: [`variants::declared`]), each with its binary, arguments, setup calls and
//!    **scripted** policy; [`policy`] holds what those share ([`policy::Driver`] calls
//!    tools and keeps a [`policy::CallRecord`] of each call's cost). The **agent**
//!    policies are [`policy::agent::Agent`] (an LLM behind an OpenAI-compatible
//!    endpoint, `run --agent`) and [`policy::agent_cmd`] (an external agent started
//!    per instance × variant, `run --agent-cmd`).
//! 5. [`score`]: gold from the patch ([`score::gold`]), LocAgent's metrics
//!    ([`score::metrics`]), token cost ([`score::tokens`]).
//! 6. [`record`]: [`record::output::InstanceRow`] and the other CSVs, appended as the
//!    run goes; [`record::run_dir::Run`] is a finished run directory read back.
//! 7. [`report`]: `report.md`, `report.csv` and plots from finished runs, with
//!    [`report::stats`]; [`report::compare`] checks a run against a baseline (CI's
//!    regression gate); [`report::merge`] combines the shards of one run.
//!
//! [`run`] drives stages 1–6 for every instance × variant ([`run::pipeline`], with
//! [`run::config::RunConfig`] and [`run::inputs`] checked before any work) and
//! [`run::tune`] runs the scripted policies over a grid of their constants; [`cli`] is
//! the command line.
//!
//! # Data flow of `navbench run` ([`run::pipeline`])
//! dataset → checkout → gold → for each variant: its server (session) + its policy
//! (scripted or agent) → metrics and token cost → rows in `calls.csv`,
//! `instances.csv`, `summary.csv`.
//!
//! The harness never links a server crate: servers are separate processes reached only
//! over MCP.
//!
//! # Example
//! Score a ranked answer against the gold, as the pipeline does for each level:
//! ```
//! use navbench::score::metrics::{Level, score_level};
//! let gold = vec!["pkg/a.py".to_string()];
//! let pred = vec!["pkg/b.py".to_string(), "pkg/a.py".to_string()];
//! let s = score_level(Level::File, &gold, &pred).unwrap();
//! assert_eq!(s.acc, vec![0.0, 1.0, 1.0]); // Acc@1, Acc@3, Acc@5
//! ```
//! and launch a variant's server on a tree (see [`session::mcp_client`] for a whole
//! session):
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

pub mod checkout;
pub mod cli;
pub mod data;
pub mod policy;
pub mod record;
pub mod report;
pub mod run;
pub mod score;
pub mod session;
pub mod variants;
