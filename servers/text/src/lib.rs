//! `navbench-text`: the baseline MCP server with nothing but plain file tools.
//!
//! It stands for "an agent with only built-in file tools" in the benchmark: three
//! read-only tools over one repository root, served over stdio or Streamable HTTP.
//!
//! - [`tools::TextTools`] holds the logic: `list_files`, `read_file` and `grep`, each
//!   taking an argument struct ([`tools::ListFilesArgs`], [`tools::ReadFileArgs`],
//!   [`tools::GrepArgs`]) and returning a [`tools::ToolOutput`] — the text an agent
//!   reads plus the same data as a struct — or a [`tools::ToolError`] with an
//!   actionable message. Paths go through [`navbench_server_support::sandbox::Sandbox`], file
//!   lists through [`navbench_server_support::walk`].
//! - [`server::TextServer`] exposes them over MCP (rmcp): JSON arguments in, a
//!   `CallToolResult` out with a text content item and `structuredContent`; bad
//!   arguments and refused paths become results with `isError: true`.
//! - [`Cli`] and [`serve`] are what the binary runs: parse `--root`, build the
//!   tools, serve on stdin/stdout until the client disconnects (or, with `--http`,
//!   over Streamable HTTP until stopped). Logs go to stderr.
//!
//! Data flow: client `tools/call` → [`server::TextServer`] (parse arguments) →
//! [`tools::TextTools`] on a blocking thread (sandbox → walk/read/search) → text +
//! structured result → client.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # std::fs::write(dir.path().join("app.py"), "def parse(x):\n    return x\n")?;
//! use navbench_server_support::sandbox::Sandbox;
//! use navbench_text::tools::{GrepArgs, Limits, TextTools};
//!
//! let tools = TextTools::new(Sandbox::new(dir.path())?, Limits::default());
//! let out = tools.grep(&GrepArgs { pattern: "def parse".into(), ..GrepArgs::default() })?;
//! assert_eq!(out.text, "app.py:1:def parse(x):");
//! assert_eq!(out.data.total_matches, 1);
//! # Ok(())
//! # }
//! ```

pub mod server;
pub mod tools;

use std::path::PathBuf;

use anyhow::Context as _;

/// Command line of the `navbench-text` binary.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "navbench-text",
    version,
    about = "MCP server (stdio, or Streamable HTTP with --http) with plain list_files / read_file / grep tools over one repository"
)]
pub struct Cli {
    /// Repository root; every path the tools accept or return is relative to it.
    #[arg(long)]
    pub root: PathBuf,
    /// Cap on the text of one tool result, in bytes (cut at a line boundary with a marker).
    #[arg(long, default_value_t = tools::Limits::default().max_output_bytes)]
    pub max_output_bytes: usize,
    /// Most lines returned by one read_file call.
    #[arg(long, default_value_t = tools::Limits::default().read_max_lines)]
    pub max_read_lines: usize,
    /// Default max_results of list_files.
    #[arg(long, default_value_t = tools::Limits::default().list_default_max)]
    pub list_default_max: usize,
    /// Default max_results of grep.
    #[arg(long, default_value_t = tools::Limits::default().grep_default_max)]
    pub grep_default_max: usize,
    /// Serve Streamable HTTP at http://ADDR/mcp (plus GET /health) instead of stdio,
    /// e.g. 127.0.0.1:8765 (port 0 picks a free one; the URL is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: accept connections on a non-loopback address (only loopback
    /// otherwise, so the files are never exposed to the network by mistake).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
}

impl Cli {
    /// The output limits requested on the command line.
    pub fn limits(&self) -> anyhow::Result<tools::Limits> {
        anyhow::ensure!(
            self.max_output_bytes >= 1000,
            "--max-output-bytes {} is too small; pass at least 1000",
            self.max_output_bytes
        );
        anyhow::ensure!(
            self.max_read_lines >= 1,
            "--max-read-lines must be at least 1"
        );
        anyhow::ensure!(
            (1..=tools::LIST_MAX_RESULTS_LIMIT).contains(&self.list_default_max),
            "--list-default-max must be between 1 and {}",
            tools::LIST_MAX_RESULTS_LIMIT
        );
        anyhow::ensure!(
            (1..=tools::GREP_MAX_RESULTS_LIMIT).contains(&self.grep_default_max),
            "--grep-default-max must be between 1 and {}",
            tools::GREP_MAX_RESULTS_LIMIT
        );
        Ok(tools::Limits {
            max_output_bytes: self.max_output_bytes,
            read_max_lines: self.max_read_lines,
            list_default_max: self.list_default_max,
            grep_default_max: self.grep_default_max,
        })
    }
}

/// Serves the tools over stdin/stdout until the client closes the connection, or
/// over Streamable HTTP until Ctrl-C / SIGTERM when `--http` is given.
pub async fn serve(cli: &Cli) -> anyhow::Result<()> {
    let sandbox = navbench_server_support::sandbox::Sandbox::new(&cli.root)
        .with_context(|| "--root must name the repository to serve".to_string())?;
    let limits = cli.limits()?;
    tracing::info!(root = %sandbox.root().display(), ?limits, "navbench-text starting");
    let root = sandbox.root().display().to_string();
    let server = server::TextServer::new(tools::TextTools::new(sandbox, limits));
    let Some(addr) = &cli.http else {
        navbench_server_support::mcp::serve_stdio(server, "navbench-text").await?;
        return Ok(());
    };
    let health = std::sync::Arc::new(
        move || serde_json::json!({"status": "ok", "server": "navbench-text", "root": root}),
    );
    let listen = navbench_server_support::http::Listen {
        name: "navbench-text",
        addr,
        allow_remote: cli.allow_remote,
    };
    navbench_server_support::http::serve_http(move || Ok(server.clone()), health, listen).await
}
