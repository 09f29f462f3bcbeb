//! Times one `init_repository` in a fresh process, as the harness's server sees it
//! (start-up costs included), and prints its parts.
//!
//! ```text
//! init_time CACHE TREE   # e.g. once on a repository's tree, then on the next commit's
//! ```
//!
//! Run it on one tree to fill CACHE's shared stores, then on a tree a few commits
//! away: the second run is the warm path a benchmark run takes for every instance
//! after a repository's first. `RUST_LOG=navbench_codegraph=debug` logs the steps.

use std::path::PathBuf;
use std::time::Instant;

use navbench_codegraph::tools::{CodegraphTools, InitRepositoryArgs, Limits};

/// The server binary's allocator, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(cache), Some(tree)) = (args.first(), args.get(1)) else {
        return Err("usage: init_time CACHE TREE".into());
    };
    navbench_server_support::start::init_tracing("warn");
    let started = Instant::now();
    let tools = CodegraphTools::new(PathBuf::from(cache), Limits::default());
    let out = tools.init_repository(&InitRepositoryArgs {
        repo_path: tree.clone(),
        force_rebuild: None,
    })?;
    let meta = out
        .meta
        .map(|m| serde_json::Value::Object(m).to_string())
        .unwrap_or_default();
    println!(
        "{tree} cache={} {:.1} ms {meta}",
        out.data.cache,
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
