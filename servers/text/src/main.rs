//! `navbench-text --root <dir>`: serves list_files / read_file / grep over MCP on stdio
//! (or Streamable HTTP with `--http ADDR`).

use std::process::ExitCode;

use clap::Parser as _;
use navbench_server_support::start;

fn main() -> ExitCode {
    let cli = navbench_text::Cli::parse();
    start::main("navbench-text", "warn", || {
        start::runtime()?.block_on(navbench_text::serve(&cli))
    })
}
