//! What navbench's servers and its harness have in common.
//!
//! - [`python`]: parsing Python with tree-sitter into a tree and into the entities
//!   (classes, functions, methods) that localization is scored on.
//! - [`walk`]: a deterministic, `.gitignore`-aware walk of a repository's files.
//! - [`sandbox`]: confining caller-supplied paths to a root directory.
//! - [`mcp`]: the MCP plumbing every server shares: [`mcp::ToolOutput`], tidy
//!   schemas and [`mcp::call_tool`] (arguments → blocking tool call → result).
//!
//! The harness never links a server crate and no server knows the harness; this crate
//! is the only code both sides share.

pub mod mcp;
pub mod python;
pub mod sandbox;
pub mod walk;
