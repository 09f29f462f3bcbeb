//! What navbench's MCP servers share (the harness does not depend on this crate).
//!
//! - [`walk`]: a deterministic, `.gitignore`-aware walk of a repository's files.
//! - [`sandbox`]: confining caller-supplied paths to a root directory.
//! - [`mcp`]: the MCP plumbing every server shares: [`mcp::ToolOutput`], tidy
//!   schemas and [`mcp::call_tool`] (arguments → blocking tool call → result).
//!
//! Python parsing lives in `navbench-python`, which servers and harness both use.

pub mod mcp;
pub mod sandbox;
pub mod walk;
