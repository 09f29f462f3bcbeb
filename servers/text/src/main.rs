//! `navbench-text --root <dir>`: serves list_files / read_file / grep over MCP on stdio.

use std::process::ExitCode;

use clap::Parser as _;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = navbench_text::Cli::parse();
    // stdout carries MCP only; every log line goes to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .init();
    match navbench_text::serve_stdio(&cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("navbench-text: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
