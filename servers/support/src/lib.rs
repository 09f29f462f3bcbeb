//! What navbench's MCP servers share, so each server holds only its own tools (the
//! harness does not depend on this crate; Python parsing lives in `navbench-python`).
//!
//! Principal types and functions:
//! - [`start`]: a binary's life: [`start::main`] (logs to stderr via `tracing`, error →
//!   message + failing exit code), [`start::runtime`], and [`start::server_info`], the
//!   identity and instructions a server answers to `initialize`.
//! - [`cache`]: [`cache::default_cache_dir`], the one rule for where caches live.
//! - [`frame`]: [`frame::frame`] / [`frame::unframe`], the checked header of cache
//!   files (magic, version, length, checksum), so a damaged entry is rebuilt, never served.
//! - [`lru`]: size bounds for directories of cache entries ([`lru::evict`], least
//!   recently used first, sparing entries used within [`lru::EVICTION_GRACE`]).
//! - [`mcp`]: tool plumbing: [`mcp::ToolOutput`] (agent text + structured data), tidy
//!   schemas, [`mcp::call_tool`] (raw arguments → typed call on a blocking thread →
//!   `CallToolResult`) and [`mcp::serve_stdio`].
//! - [`http`]: [`http::serve_http`], the same server over Streamable HTTP (`/mcp`,
//!   `GET /health`, loopback only unless allowed, Host/Origin checks).
//! - [`walk`]: a deterministic, `.gitignore`-aware walk of a repository's files.
//! - [`sandbox`]: [`sandbox::Sandbox`], confining caller-supplied paths to a root.
//! - [`roots`]: [`roots::AllowedRoots`], the directories a tool may open as a
//!   repository at all (`--allow-root`).
//! - [`timings`]: [`timings::InitTimings`], the parts of an indexing call (fingerprint,
//!   parse, graph, text index, vectors, write) its result reports as `timings_ms`.
//!
//! Data flow of a server built on it: `start::main` → parse the command line →
//! `start::runtime` → `mcp::serve_stdio(server)`; each `tools/call` → `mcp::call_tool`
//! → the server's tool function (paths through `Sandbox`, files through `walk`) →
//! `ToolOutput` → text content + `structuredContent`.
//!
//! ```no_run
//! use std::process::ExitCode;
//! use navbench_server_support::{cache, start};
//!
//! fn main() -> ExitCode {
//!     start::main("navbench-example", "info", || {
//!         let data = cache::default_cache_dir().join("example");
//!         tracing::info!(data = %data.display(), "starting");
//!         start::runtime()?.block_on(async {
//!             // navbench_server_support::mcp::serve_stdio(MyServer::new(data), "navbench-example").await
//!             Ok::<(), Box<dyn std::error::Error>>(())
//!         })
//!     })
//! }
//! ```

pub mod cache;
pub mod frame;
pub mod http;
pub mod lru;
pub mod mcp;
pub mod roots;
pub mod sandbox;
pub mod start;
pub mod timings;
pub mod walk;
