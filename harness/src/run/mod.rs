//! The run: stages 1 to 6 driven for every instance × variant (`navbench run`), and
//! `navbench tune`, which runs the scripted policies over a grid of their constants.
//!
//! - [`config`]: [`config::RunConfig`], what `navbench run` was given, and
//!   [`config::Policy`], who plays the agent.
//! - [`inputs`]: everything a run reads, checked before anything is written, fetched,
//!   installed or started.
//! - [`pipeline`]: dataset → checkout → gold → each variant (server + policy) →
//!   scores → rows, in `--jobs` lanes.
//! - [`progress`], [`phases`]: a progress bar or log lines, and where the time went.
//! - [`rows`]: a pair's status and call costs on its row; how trials are named.
//! - [`shard`]: a stable slice of the instances for `run --shard I/N`.
//! - [`tune`]: the constants' grid and leave-one-repository-out tables.

pub mod config;
pub mod inputs;
pub mod phases;
pub mod pipeline;
pub mod progress;
pub mod rows;
pub mod shard;
pub mod tune;
