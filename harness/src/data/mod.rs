//! Stage 1, the tasks: what an instance is and where instances come from.
//!
//! - [`dataset`]: [`dataset::Instance`] and [`dataset::Dataset`], read from SWE-bench
//!   JSONL (Multi-SWE-bench records too) or parquet; [`dataset::Locations`], the
//!   ranked files, modules and functions both gold and answers are.
//! - [`mini`]: the embedded `mini` dataset and its repositories.
//! - [`from_git`]: instances mined from a repository's history
//!   (`navbench dataset from-git`).
//! - [`patch`]: unified diffs, parsed and applied by LocAgent's rules (the gold's
//!   source, and how a tree is derived from another).

pub mod dataset;
pub mod from_git;
pub mod mini;
pub mod patch;
