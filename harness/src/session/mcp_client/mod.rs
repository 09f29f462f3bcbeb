//! The harness's MCP client: launch one server as a child process, talk MCP over its
//! stdin/stdout (or Streamable HTTP), call tools under a timeout, and always clean the child up.
//!
//! - [`ServerSpec`] says how to launch a server; [`locate_server_binary`] finds a
//!   navbench server binary next to the running executable.
//! - [`McpSession::start`] spawns the child (its stderr is kept in a bounded buffer,
//!   never mixed into our stdout), performs the `initialize` handshake and
//!   `tools/list` within the call timeout.
//! - [`McpSession::call`] calls one tool and returns a [`CallOutcome`] — never an
//!   `Err`, never a panic: tool errors, JSON-RPC errors, crashes and timeouts all come
//!   back as outcomes with `is_error` set. A timeout kills the child and marks the
//!   session dead; later calls fail immediately.
//! - [`McpSession::shutdown`] closes the connection, lets the server exit, kills it
//!   if it does not, and reaps it. Dropping a session kills the child too. The server
//!   leads a process group of its own, and the whole group is killed, so nothing it
//!   spawned outlives it; on Linux it also dies with the harness, and what it started
//!   that left its group (`setsid`) is found by a token in its environment, killed,
//!   and reaped by the harness as their child subreaper ([`reap`]).
//! - [`guard`] sits between the server's pipes and rmcp: a line that is not JSON-RPC,
//!   a message over [`guard::MAX_MESSAGE_BYTES`] (cut, never buffered) or a response
//!   to no request in flight kills the server and fails the call at once, naming it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), navbench::session::mcp_client::McpError> {
//! use std::time::Duration;
//! use navbench::session::mcp_client::{locate_server_binary, McpSession, ServerSpec};
//!
//! let program = locate_server_binary("navbench-text", None)?;
//! let spec = ServerSpec::new(program).arg("--root").arg("/tmp/checkout");
//! let mut session = McpSession::start(&spec, Duration::from_secs(30)).await?;
//! let outcome = session
//!     .call("grep", serde_json::json!({"pattern": "def parse"}))
//!     .await;
//! println!("{} ({} bytes, {:?})", outcome.text, outcome.response_bytes, outcome.latency);
//! session.shutdown().await;
//! # Ok(())
//! # }
//! ```

//!
//! - A spec with [`Transport::Http`] launches the server the same way but speaks
//!   Streamable HTTP to it, at the URL the spec names or the one the server prints.
//!
//! Its parts: [`launch`] (what to run and where the binary is), [`session`] (the live
//! connection), [`child`] (the server process: spawn, output tail, group signals),
//! [`reap`] (descendants that left the group),
//! [`http`] (reaching a server over Streamable HTTP), [`guard`] (the
//! checks on its stdio) and [`outcome`] (what one call gave).

mod child;
pub mod guard;
mod http;
mod launch;
mod outcome;
pub mod progress;
mod reap;
mod session;

use std::path::PathBuf;
use std::time::Duration;

pub(crate) use child::{Signal, own_process_group, signal_group};
pub use launch::{ServerSpec, Transport, locate_server_binary};
pub use outcome::{CallOutcome, content_json};
pub(crate) use reap::{TOKEN_VAR, become_subreaper, new_token, sweep_async};
pub use session::McpSession;

/// Why a server could not be found, launched or initialized.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// No server binary at any of the places searched.
    #[error(
        "server binary '{name}' not found; looked in: {searched}. Build it with `cargo build -p {name}`, or pass --server-dir <directory containing {name}>",
        searched = searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    BinaryNotFound {
        /// The binary's name.
        name: String,
        /// Every directory looked in.
        searched: Vec<PathBuf>,
    },
    /// The process could not be started.
    #[error(
        "cannot start server `{command}`: {source}; check that the program exists and is executable"
    )]
    Spawn {
        /// The command line.
        command: String,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The server failed or exited during the handshake or `tools/list`.
    #[error("server `{command}` failed during {phase}: {reason}{status}{stderr}",
        status = status.as_deref().map(|s| format!("; {s}")).unwrap_or_default(),
        stderr = stderr_suffix(stderr))]
    Startup {
        /// The command line.
        command: String,
        /// `MCP initialize` or `tools/list`.
        phase: &'static str,
        /// What went wrong.
        reason: String,
        /// How the process ended, if it did.
        status: Option<String>,
        /// The end of its stderr.
        stderr: String,
    },
    /// The server did not complete the handshake and `tools/list` in time.
    #[error(
        "server `{command}` did not complete the MCP handshake and tools/list within {timeout:?}; it was killed{stderr}",
        stderr = stderr_suffix(stderr)
    )]
    StartupTimeout {
        /// The command line.
        command: String,
        /// The limit that passed.
        timeout: Duration,
        /// The end of its stderr.
        stderr: String,
    },
}

pub(crate) fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n{trimmed}")
    }
}
