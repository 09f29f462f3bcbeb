//! The `navbench` command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::checkout::DEFAULT_URL_TEMPLATE;
use crate::run::{self, RunConfig};
use crate::tokens::Tokenizer;

/// Measures code-navigation MCP servers on bug-localization tasks.
#[derive(Debug, Parser)]
#[command(name = "navbench", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run variants on a dataset and write calls.csv, instances.csv and summary.csv.
    Run(RunArgs),
    /// Derive gold locations from each instance's patch and print them as JSONL; report
    /// the agreement with the dataset's own gold where it has one.
    Gold(GoldArgs),
}

/// Where instances come from and how repositories are fetched.
#[derive(Debug, clap::Args)]
pub struct SourceArgs {
    /// `mini` (embedded, offline), `dev` (embedded SWE-bench Lite dev set; needs the
    /// repositories), or a .jsonl / .parquet file.
    #[arg(long, default_value = "mini")]
    pub dataset: String,
    /// Repository URL template with {owner} and {name}; file:// URLs and local paths work.
    #[arg(long, default_value = DEFAULT_URL_TEMPLATE)]
    pub repo_url: String,
    /// Cache for mirrors and work dirs [default: $NAVBENCH_CACHE or ~/.cache/navbench].
    #[arg(long)]
    pub cache: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Comma-separated variants [default: every variant].
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Output dir [default: results/<timestamp>]; re-using one skips finished pairs.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Instances run in parallel.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Comma-separated instance ids to run (default: all).
    #[arg(long, value_delimiter = ',')]
    pub instances: Vec<String>,
    /// Run at most this many instances.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Tokenizer for response and schema tokens: cl100k_base or o200k_base.
    #[arg(long, default_value = "cl100k_base")]
    pub tokenizer: Tokenizer,
    /// Per-call timeout in seconds (also bounds server start-up); a hung server is killed.
    #[arg(long, default_value_t = 120.0)]
    pub timeout: f64,
    /// Directory holding the server binaries [default: next to navbench].
    #[arg(long)]
    pub server_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct GoldArgs {
    #[command(flatten)]
    pub source: SourceArgs,
}

fn default_cache() -> PathBuf {
    if let Some(c) = std::env::var_os("NAVBENCH_CACHE") {
        return PathBuf::from(c);
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("navbench"),
        None => std::env::temp_dir().join("navbench-cache"),
    }
}

/// Parses the arguments and runs the command; returns the process exit code.
pub fn main() -> i32 {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("NAVBENCH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let result = rt.block_on(dispatch(cli));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}

async fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run(a) => {
            if !(a.timeout > 0.0 && a.timeout.is_finite()) {
                anyhow::bail!(
                    "--timeout must be a positive number of seconds, got {}",
                    a.timeout
                );
            }
            let variants = if a.variants.is_empty() {
                crate::policy::VARIANTS
                    .iter()
                    .map(|v| v.name.to_string())
                    .collect()
            } else {
                a.variants
            };
            let out = a.out.unwrap_or_else(|| {
                PathBuf::from("results")
                    .join(chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string())
            });
            let cfg = RunConfig {
                dataset: a.source.dataset,
                variants,
                repo_url: a.source.repo_url,
                cache: a.source.cache.unwrap_or_else(default_cache),
                out: out.clone(),
                jobs: a.jobs,
                instances: a.instances,
                limit: a.limit,
                tokenizer: a.tokenizer,
                call_timeout: Duration::from_secs_f64(a.timeout),
                server_dir: a.server_dir,
            };
            let sums = run::run(cfg).await?;
            println!("{}", crate::output::format_table(&sums));
            println!("results: {}", out.display());
            Ok(0)
        }
        Command::Gold(a) => {
            let cache = a.source.cache.unwrap_or_else(default_cache);
            let (ds, repos) = run::load_dataset(&a.source.dataset, &cache, &a.source.repo_url)?;
            let (lines, agr) =
                tokio::task::spawn_blocking(move || crate::agreement::derive_all(&ds, &repos))
                    .await?;
            crate::agreement::print(&lines, &agr, &mut std::io::stdout(), &mut std::io::stderr())?;
            Ok(0)
        }
    }
}
