//! navbench's harness: measures code-navigation MCP servers on bug-localization tasks.
//!
//! Data flows through these modules, in order:
//! - [`dataset`] reads instances ([`dataset::Instance`]: repo, base commit, issue
//!   text, patch) from JSONL or parquet, or the embedded [`mini`] set;
//! - [`checkout`] keeps a bare git mirror per repository ([`checkout::RepoCache`]) and
//!   writes each instance's base tree into a work dir;
//! - [`gold`] derives the gold [`dataset::Locations`] from the patch ([`patch`] parses
//!   and applies unified diffs) with LocAgent's rules;
//! - [`mcp`] spawns a server binary and talks MCP to it over stdio
//!   ([`mcp::McpSession`]); [`policy`] holds one scripted localization policy per
//!   variant, driving the session through a [`policy::Driver`] that records each call;
//! - [`metrics`] scores the ranked answer with LocAgent's definitions, [`tokens`]
//!   counts what responses and tool schemas cost, and [`output`] appends the rows to
//!   CSV as the run goes; [`run`] orchestrates it all ([`shard`] picks a stable slice of
//!   the dataset for `run --shard I/N`), [`cli`] is the command line.
//!
//! After a run, finished run directories are read back by [`runs`] (polars lazy scans):
//! - [`report`] aggregates one or more runs into `report.md`, `report.csv` and plots,
//!   with the statistics of [`stats`] (bootstrap intervals, paired bootstrap, exact
//!   McNemar);
//! - [`compare`] checks a new run against a baseline (CI's regression gate);
//! - [`merge`] combines the shards of one run into one run directory;
//! - [`mcp_config`] prints the client configuration that launches the same servers for a
//!   real agent.
//!
//! The harness never links a server crate: servers are separate processes reached only
//! over MCP.
//!
//! ```
//! use navbench::metrics::{Level, score_level};
//! let gold = vec!["pkg/a.py".to_string()];
//! let pred = vec!["pkg/b.py".to_string(), "pkg/a.py".to_string()];
//! let s = score_level(Level::File, &gold, &pred).unwrap();
//! assert_eq!(s.acc, vec![0.0, 1.0, 1.0]); // Acc@1, Acc@3, Acc@5
//! ```

pub mod agreement;
pub mod checkout;
pub mod cli;
pub mod compare;
pub mod dataset;
pub mod gold;
pub mod mcp;
pub mod mcp_config;
pub mod merge;
pub mod metrics;
pub mod mini;
pub mod output;
pub mod patch;
pub mod policy;
pub mod report;
pub mod run;
pub mod runs;
pub mod shard;
pub mod stats;
pub mod tokens;
