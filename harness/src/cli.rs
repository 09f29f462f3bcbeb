//! The `navbench` command line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::checkout::DEFAULT_URL_TEMPLATE;
use crate::report::compare::{self, Thresholds};
use crate::report::stats::{self, Bootstrap};
use crate::run::pipeline::{self, RunConfig};
use crate::run::shard::Shard;
use crate::score::tokens::Tokenizer;
use crate::session::mcp_config;
use crate::variants::declared::commands;

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
    /// Aggregate one or more runs: report.md, report.csv and plots (PNG and SVG) with
    /// bootstrap intervals, per-repository figures and paired comparisons, and
    /// index.html (all of it in one page, with a drill-down per instance).
    Report(ReportArgs),
    /// Compare a new run with a baseline; exit 1 when a threshold is crossed, 2 when
    /// the runs cannot be compared.
    Compare(CompareArgs),
    /// Combine the shards of one run (`run --shard I/N`) into one run directory.
    Merge(MergeArgs),
    /// Print the MCP client configuration that launches each variant's server.
    McpConfig(McpConfigArgs),
    /// Serve a variant's server to any MCP client through a proxy that records every
    /// call in calls.csv (stdio, or Streamable HTTP with --http).
    Proxy(ProxyArgs),
    /// Score each scripted policy under other values of its fitted constants, and
    /// tell how the constants chosen on all repositories but one do on the one left
    /// out (scores.csv, settings.csv, loo.csv, tune.md).
    Tune(TuneArgs),
    /// Build datasets.
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// List variants (built-in and declared in `variants/*.toml`); install a declared one.
    #[command(subcommand)]
    Variant(VariantCommand),
}

#[derive(Debug, Subcommand)]
pub enum VariantCommand {
    /// Every variant, its kind, and for declared ones the package and whether it is installed.
    List {
        /// Cache holding installed packages [default: as for `run`].
        #[arg(long)]
        cache: Option<PathBuf>,
    },
    /// Install a declared variant's pinned npm/PyPI package into <cache>/variants/<name>/.
    Install {
        /// A declared variant's name (from `variants/`) or its file.
        name: String,
        /// Cache to install into [default: as for `run`].
        #[arg(long)]
        cache: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Turn commits that edit existing Python functions into localization instances
    /// (JSONL, as `run --dataset FILE` reads); what was kept and skipped goes to stderr.
    FromGit(FromGitArgs),
}

#[derive(Debug, clap::Args)]
pub struct FromGitArgs {
    /// A local repository (bare or not), or a URL fetched into the cache's mirrors.
    #[arg(long, value_name = "PATH|URL")]
    pub repo: String,
    /// `owner/name` the instances carry (default: from the URL or the `origin` remote,
    /// else `local/<directory>`); `run --repo-url` fills {owner} and {name} from it.
    #[arg(long, value_name = "OWNER/NAME")]
    pub name: Option<String>,
    /// Only commits after this revision (sha, tag, branch), or committed on or after
    /// this day (YYYY-MM-DD, committer date, UTC).
    #[arg(long, value_name = "REF|DATE")]
    pub since: Option<String>,
    /// Walk from this revision instead of HEAD, or only commits committed on or before
    /// this day (YYYY-MM-DD, committer date, UTC).
    #[arg(long, value_name = "REF|DATE")]
    pub until: Option<String>,
    /// Stop after this many instances.
    #[arg(long, value_name = "N")]
    pub max: Option<usize>,
    /// Skip a commit whose patch edits more source files outside the tests than this
    /// (a refactor, not one bug); 0: no limit.
    #[arg(long, value_name = "N", default_value_t = crate::data::from_git::DEFAULT_MAX_FILES)]
    pub max_files: usize,
    /// Skip a commit whose message (the problem statement) has fewer words than this
    /// ("typo", "lint", "bump version"); 0: no minimum.
    #[arg(long, value_name = "N", default_value_t = crate::data::from_git::DEFAULT_MIN_WORDS)]
    pub min_words: usize,
    /// Keep a commit whose changes repeat those of one kept before (a backport or
    /// cherry-pick of the same fix), skipped by default.
    #[arg(long)]
    pub keep_duplicates: bool,
    /// Output file [default: stdout].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Cache for mirrors [default: as for `run`].
    #[arg(long)]
    pub cache: Option<PathBuf>,
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
    /// Cache for mirrors, work dirs, indexes and models [default: $NAVBENCH_CACHE, else
    /// $XDG_CACHE_HOME/navbench, else ~/.cache/navbench].
    #[arg(long)]
    pub cache: Option<PathBuf>,
}

/// How servers are found, timed and their responses counted (`run`, `tune`, `proxy`).
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Tokenizer for response and schema tokens: cl100k_base or o200k_base.
    #[arg(long, default_value = "cl100k_base")]
    pub tokenizer: Tokenizer,
    /// Per-call timeout in seconds (also bounds server start-up); a hung server is killed.
    #[arg(long, default_value_t = 120.0)]
    pub timeout: f64,
    /// Timeout in seconds of indexing calls (init_repository, index_repository): a
    /// large repository can take minutes to embed on a small machine.
    #[arg(long, default_value_t = 3600.0)]
    pub index_timeout: f64,
    /// Directory holding the server binaries [default: next to navbench].
    #[arg(long)]
    pub server_dir: Option<PathBuf>,
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
    #[command(flatten)]
    pub server: ServerArgs,
    /// Run only the I-th of N disjoint, stable slices (by a hash of the instance id),
    /// after --instances and --limit; combine the shards with `navbench merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Play each instance × variant pair K times (a `trial` column, 1..K); `report`
    /// then gives means over trials with intervals. For an agent at temperature > 0.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub repeats: u32,
    /// An LLM agent plays every variant instead of its scripted policy: an agent file
    /// (`FILE.toml`) or the name of one under `agents/` (docs/agents.md).
    #[arg(long, value_name = "FILE|NAME")]
    pub agent: Option<String>,
    /// With --agent: answer each model request from DIR when it was recorded there, and
    /// record it otherwise; a rerun replays the run without the endpoint, and a copy of
    /// DIR replays it under another --cache or on another machine. Default:
    /// `<out>/llm-cache`.
    #[arg(long, value_name = "DIR", requires = "agent")]
    pub llm_cache: Option<PathBuf>,
    /// With --agent: stop starting pairs once the run's cost reaches this many US
    /// dollars (priced with the agent file's [prices]); pairs in flight finish, the
    /// rest are left for a resume.
    #[arg(long, value_name = "USD", requires = "agent")]
    pub max_cost_usd: Option<f64>,
    /// An external agent plays every variant: a named command (`claude-code`, `codex`,
    /// `gemini-cli`: agents/cmd/NAME.toml, a CLI sealed to the variant's tools, its JSON
    /// report read; docs/cli-agents.md), or a shell command template run per instance ×
    /// variant with {prompt_file}, {mcp_config}, {mcp_url}, {root}, … filled in, its
    /// tools behind a recording proxy, its answer read from stdout (docs/agents.md: "External
    /// agents").
    #[arg(long, value_name = "NAME|TEMPLATE", conflicts_with = "agent")]
    pub agent_cmd: Option<String>,
    /// With --agent-cmd: seconds the command may run before it is killed with
    /// everything it started (the row is then an error).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 1800.0,
        requires = "agent_cmd"
    )]
    pub agent_timeout: f64,
}

#[derive(Debug, clap::Args)]
pub struct ProxyArgs {
    /// The variant whose server is behind the proxy.
    #[arg(long)]
    pub variant: String,
    /// The directory the server serves.
    #[arg(long)]
    pub root: PathBuf,
    /// Directory receiving calls.csv (created; appended to when it exists).
    #[arg(long, value_name = "DIR")]
    pub record: PathBuf,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (port 0: a free port,
    /// printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: allow binding a non-loopback address.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// The instance_id column of the recorded rows [default: the root's directory name].
    #[arg(long, value_name = "ID")]
    pub instance_id: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Cache handed to servers that keep indexes [default: as for `run`].
    #[arg(long)]
    pub cache: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Comma-separated variants [default: codegraph, retrieval-static, text].
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Output dir [default: results/tune-<timestamp>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only these instances (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    pub instances: Vec<String>,
    /// Only the first N instances.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Values to try for some knobs instead of off / half / double:
    /// `name=v1,v2;name=v3` (names as in tune.md).
    #[arg(long, default_value = "")]
    pub grid: crate::run::tune::grid::GridOverrides,
    /// Instead of the grid: play each instance × variant once and write every
    /// candidate's features (features.csv) for `--fit` (docs/tune.md).
    #[arg(long)]
    pub features: bool,
    /// With --features: only the first N instances of each repository.
    #[arg(long)]
    pub per_repo: Option<usize>,
    /// Fit the rankers on the features.csv of these comma-separated tune outputs and
    /// write fit.md and fitted/<variant>.json to --out (no server runs).
    #[arg(long, value_delimiter = ',')]
    pub fit: Vec<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, clap::Args)]
pub struct GoldArgs {
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run directories (the --out of `navbench run` or `navbench merge`).
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,
    /// Where report.md, report.csv, the plots and index.html go [default: RUN_DIR/report for one
    /// run, results/report-<timestamp> for several].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Bootstrap resamples per interval.
    #[arg(long, default_value_t = stats::DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// Bootstrap seed (fixed by default, so a report is reproducible).
    #[arg(long, default_value_t = stats::DEFAULT_SEED)]
    pub seed: u64,
    /// The runs' dataset (`mini`, `dev` or a JSONL/Parquet file), for the issue texts
    /// of index.html's drill-downs [default: the runs' own when embedded; an agent's
    /// run shows its task prompt].
    #[arg(long, value_name = "DATASET")]
    pub dataset: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The reference run directory.
    pub baseline: PathBuf,
    /// The run directory to check against it.
    pub new: PathBuf,
    /// Largest allowed drop of any accuracy metric (Acc, recall, NDCG, MAP), in points.
    #[arg(long, value_name = "PTS", default_value_t = 0.0)]
    pub max_acc_drop: f64,
    /// Largest allowed new/baseline ratio of mean tool time and index time per instance
    /// [default: report only].
    #[arg(long, value_name = "R")]
    pub max_latency_ratio: Option<f64>,
    /// Largest allowed new/baseline ratio of mean response and schema tokens per
    /// instance [default: report only].
    #[arg(long, value_name = "R")]
    pub max_token_ratio: Option<f64>,
    /// Latency changes smaller than this (ms per instance) never count as regressions.
    #[arg(long, value_name = "MS", default_value_t = 20.0)]
    pub min_latency_ms: f64,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards' run directories.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,
    /// The merged run directory (must not exist or be empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Merge even when some shards of the run are missing.
    #[arg(long)]
    pub allow_partial: bool,
}

#[derive(Debug, clap::Args)]
pub struct McpConfigArgs {
    /// Only this variant [default: every variant].
    #[arg(long)]
    pub variant: Option<String>,
    /// The directory the servers serve [default: the current directory].
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: mcp_config::Format,
    /// Directory holding the server binaries [default: next to navbench].
    #[arg(long)]
    pub server_dir: Option<PathBuf>,
    /// Cache dir handed to servers that keep indexes [default: $NAVBENCH_CACHE, else
    /// $XDG_CACHE_HOME/navbench, else ~/.cache/navbench].
    #[arg(long)]
    pub cache: Option<PathBuf>,
}

/// The cache directory when `--cache` is not given, by the rule every navbench binary
/// follows: `$NAVBENCH_CACHE` if set and non-empty, else `$XDG_CACHE_HOME/navbench` if
/// set, non-empty and absolute, else `$HOME/.cache/navbench` (a temp dir without `HOME`).
pub fn default_cache() -> PathBuf {
    cache_dir_from(|k| std::env::var_os(k))
}

fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(c) = set("NAVBENCH_CACHE") {
        return c;
    }
    if let Some(x) = set("XDG_CACHE_HOME").filter(|x| x.is_absolute()) {
        return x.join("navbench");
    }
    match set("HOME") {
        Some(h) => h.join(".cache").join("navbench"),
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
        Command::Run(a) => run_command(a).await,
        Command::Gold(a) => gold_command(a).await,
        Command::Report(a) => report_command(a).await,
        Command::Compare(a) => compare_command(a).await,
        Command::Merge(a) => Ok(merge_command(a)),
        Command::McpConfig(a) => mcp_config_command(a),
        Command::Proxy(a) => proxy_command(a).await,
        Command::Tune(a) => tune_command(a).await,
        Command::Dataset(DatasetCommand::FromGit(a)) => {
            let opts = crate::data::from_git::FromGitOptions {
                since: a.since,
                until: a.until,
                max: a.max,
                quality: crate::data::from_git::Quality {
                    max_files: (a.max_files > 0).then_some(a.max_files),
                    min_words: a.min_words,
                    skip_duplicates: !a.keep_duplicates,
                },
                name: a.name,
            };
            let cache = a.cache.unwrap_or_else(default_cache);
            let report = tokio::task::spawn_blocking(move || {
                crate::data::from_git::command(&a.repo, &cache, &opts, a.out.as_deref())
            })
            .await??;
            eprint!("{report}");
            Ok(0)
        }
        Command::Variant(VariantCommand::List { cache }) => {
            print!("{}", commands::list(&cache.unwrap_or_else(default_cache)));
            Ok(0)
        }
        Command::Variant(VariantCommand::Install { name, cache }) => {
            let cache = cache.unwrap_or_else(default_cache);
            let done = tokio::task::spawn_blocking(move || commands::install(&name, &cache));
            println!("{}", done.await??);
            Ok(0)
        }
    }
}

async fn run_command(a: RunArgs) -> anyhow::Result<i32> {
    let (call_timeout, index_timeout) = a.server.timeouts()?;
    let repeats = check_repeats(a.repeats)?;
    let variants = if a.variants.is_empty() {
        crate::variants::all()
            .iter()
            .map(|v| v.name().to_string())
            .collect()
    } else {
        a.variants
    };
    let out = a.out.unwrap_or_else(|| {
        PathBuf::from("results").join(chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string())
    });
    let policy = match (&a.agent, &a.agent_cmd) {
        (None, None) => pipeline::Policy::Scripted,
        (_, Some(template)) => {
            let timeout = positive_secs("--agent-timeout", a.agent_timeout)?;
            pipeline::Policy::Command(std::sync::Arc::new(
                crate::policy::agent_cmd::named::resolve(template, timeout)?,
            ))
        }
        (Some(spec), None) => {
            use crate::policy::agent::{Agent, AgentConfig, LlmCache, config};
            let cfg = AgentConfig::load(&config::locate(spec)?)?;
            let dir = a.llm_cache.unwrap_or_else(|| out.join("llm-cache"));
            let cache = Some(LlmCache::open(&dir)?);
            pipeline::Policy::Agent(std::sync::Arc::new(
                Agent::new(cfg, cache, a.server.tokenizer)?
                    .with_max_cost(a.max_cost_usd)?
                    .with_transcripts(out.join("transcripts")),
            ))
        }
    };
    let cfg = RunConfig {
        dataset: a.source.dataset,
        variants,
        repo_url: a.source.repo_url,
        cache: a.source.cache.unwrap_or_else(default_cache),
        out: out.clone(),
        jobs: a.jobs,
        instances: a.instances,
        limit: a.limit,
        tokenizer: a.server.tokenizer,
        call_timeout,
        index_timeout,
        server_dir: a.server.server_dir,
        shard: a.shard,
        policy,
        repeats,
    };
    let sums = pipeline::run(cfg).await?;
    println!("{}", crate::record::output::format_table(&sums));
    println!("results: {}", out.display());
    Ok(0)
}

/// `--repeats`, refused when 0.
fn check_repeats(k: u32) -> anyhow::Result<u32> {
    if k == 0 {
        anyhow::bail!(
            "--repeats must be at least 1 (the number of times each instance × variant pair is played), got 0"
        );
    }
    Ok(k)
}

/// `secs` as a duration, refused unless positive and finite.
fn positive_secs(flag: &str, secs: f64) -> anyhow::Result<Duration> {
    if !(secs > 0.0 && secs.is_finite()) {
        anyhow::bail!("{flag} must be a positive number of seconds, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}

impl ServerArgs {
    /// `--timeout` and `--index-timeout`, refused unless positive and finite.
    fn timeouts(&self) -> anyhow::Result<(Duration, Duration)> {
        Ok((
            positive_secs("--timeout", self.timeout)?,
            positive_secs("--index-timeout", self.index_timeout)?,
        ))
    }
}

async fn proxy_command(a: ProxyArgs) -> anyhow::Result<i32> {
    let (call_timeout, index_timeout) = a.server.timeouts()?;
    let opts = crate::session::proxy::command::ProxyOptions {
        call_timeout,
        index_timeout,
        variant: a.variant,
        root: a.root,
        record: a.record,
        http: a.http,
        allow_remote: a.allow_remote,
        instance_id: a.instance_id,
        server_dir: a.server.server_dir,
        cache: a.cache.unwrap_or_else(default_cache),
        tokenizer: a.server.tokenizer,
    };
    crate::session::proxy::command::run(opts).await?;
    Ok(0)
}

async fn tune_command(a: TuneArgs) -> anyhow::Result<i32> {
    let out = a.out.unwrap_or_else(|| {
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        PathBuf::from("results").join(format!("tune-{stamp}"))
    });
    if !a.fit.is_empty() {
        return fit_command(&a.fit, &out);
    }
    let mut cfg = crate::run::tune::TuneConfig::new(&a.source.dataset, out.clone());
    if !a.variants.is_empty() {
        cfg.variants = a.variants;
    }
    cfg.repo_url = a.source.repo_url;
    cfg.cache = a.source.cache.unwrap_or_else(default_cache);
    cfg.instances = a.instances;
    cfg.limit = a.limit;
    cfg.grid = a.grid;
    (cfg.call_timeout, cfg.index_timeout) = a.server.timeouts()?;
    cfg.tokenizer = a.server.tokenizer;
    cfg.server_dir = a.server.server_dir;
    if a.features {
        let secs = crate::run::tune::fit::extract::extract(&cfg, a.per_repo).await?;
        println!(
            "features: {} ({secs:.1} s)",
            out.join("features.csv").display()
        );
        return Ok(0);
    }
    let tables = crate::run::tune::tune(cfg).await?;
    print!("{}", tables.markdown);
    println!("results: {}", out.display());
    Ok(0)
}

/// `navbench tune --fit`: fits the rankers from feature tables (no server runs).
fn fit_command(dirs: &[PathBuf], out: &Path) -> anyhow::Result<i32> {
    use crate::run::tune::fit;
    let t = std::time::Instant::now();
    let data = fit::read(dirs)?;
    let read_s = t.elapsed().as_secs_f64();
    if data.is_empty() {
        anyhow::bail!(
            "no played instance in the feature tables of {dirs:?}: run `navbench tune --features` first"
        );
    }
    // The refit command as anyone can type it: the directories by name, not by where
    // they lay on the machine that fitted (the models are committed).
    let names: Vec<String> = dirs.iter().map(|d| fit::dir_name(d)).collect();
    let command = format!(
        "navbench tune --fit {} --out {}",
        names.join(","),
        fit::dir_name(out)
    );
    let fitted = fit::fit_tables(&data, dirs, &command);
    fit::write(out, &fitted)?;
    print!("{}", fitted.markdown);
    println!(
        "read in {read_s:.1} s, fitted in {:.1} s; models: {}",
        fitted.fit_seconds,
        out.join("fitted").display()
    );
    Ok(0)
}

async fn gold_command(a: GoldArgs) -> anyhow::Result<i32> {
    let cache = a.source.cache.unwrap_or_else(default_cache);
    let (ds, repos) =
        crate::run::inputs::load_dataset(&a.source.dataset, &cache, &a.source.repo_url)?;
    let (lines, agr) =
        tokio::task::spawn_blocking(move || crate::score::agreement::derive_all(&ds, &repos))
            .await?;
    crate::score::agreement::print(&lines, &agr, &mut std::io::stdout(), &mut std::io::stderr())?;
    Ok(0)
}

async fn report_command(a: ReportArgs) -> anyhow::Result<i32> {
    let out = match (&a.out, a.runs.as_slice()) {
        (Some(o), _) => o.clone(),
        (None, [one]) => one.join("report"),
        (None, _) => PathBuf::from("results").join(format!(
            "report-{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        )),
    };
    if a.resamples == 0 {
        anyhow::bail!("--resamples must be at least 1");
    }
    let cfg = Bootstrap {
        resamples: a.resamples,
        seed: a.seed,
        ..Bootstrap::default()
    };
    let runs = a.runs.clone();
    let dataset = a.dataset.clone();
    let files = tokio::task::spawn_blocking(move || {
        crate::report::run(&runs, &out, cfg, dataset.as_deref())
    })
    .await??;
    println!("report: {}", files.markdown.display());
    println!("html:   {}", files.html.display());
    println!("table:  {}", files.csv.display());
    for p in &files.plots {
        println!("plot:   {}", p.display());
    }
    Ok(0)
}

async fn compare_command(a: CompareArgs) -> anyhow::Result<i32> {
    for (name, v) in [
        ("--max-latency-ratio", a.max_latency_ratio),
        ("--max-token-ratio", a.max_token_ratio),
    ] {
        if let Some(r) = v
            && !(r >= 1.0 && r.is_finite())
        {
            eprintln!("refused: {name} must be a ratio ≥ 1 (e.g. 5), got {r}");
            return Ok(compare::EXIT_REFUSED);
        }
    }
    if !(a.max_acc_drop >= 0.0 && a.max_acc_drop.is_finite()) {
        eprintln!(
            "refused: --max-acc-drop must be ≥ 0 percentage points, got {}",
            a.max_acc_drop
        );
        return Ok(compare::EXIT_REFUSED);
    }
    let th = Thresholds {
        max_acc_drop: a.max_acc_drop,
        max_latency_ratio: a.max_latency_ratio,
        max_token_ratio: a.max_token_ratio,
        min_latency_ms: a.min_latency_ms.max(0.0),
    };
    let (base, new) = (a.baseline.clone(), a.new.clone());
    let result =
        tokio::task::spawn_blocking(move || compare::compare_dirs(&base, &new, &th)).await?;
    match result {
        Ok(c) => {
            print!("{}", c.text);
            for r in &c.regressions {
                eprintln!("regression: {r}");
            }
            Ok(c.exit_code())
        }
        Err(refusal) => {
            eprintln!("refused: {refusal}");
            Ok(compare::EXIT_REFUSED)
        }
    }
}

fn merge_command(a: MergeArgs) -> i32 {
    match crate::report::merge::merge(&a.runs, &a.out, a.allow_partial) {
        Ok(m) => {
            println!(
                "merged {} run(s): {} instance row(s), {} call row(s) → {}",
                a.runs.len(),
                m.instance_rows,
                m.call_rows,
                a.out.display()
            );
            println!("{}", crate::record::output::format_table(&m.summaries));
            0
        }
        Err(refusal) => {
            eprintln!("refused: {refusal}");
            compare::EXIT_REFUSED
        }
    }
}

fn mcp_config_command(a: McpConfigArgs) -> anyhow::Result<i32> {
    let root = match &a.root {
        Some(r) => r.clone(),
        None => std::env::current_dir()?,
    };
    let root = std::fs::canonicalize(&root).map_err(|e| {
        anyhow::anyhow!(
            "--root {}: {e} (pass an existing directory)",
            root.display()
        )
    })?;
    let cache = a.cache.clone().unwrap_or_else(default_cache);
    let (entries, warnings) =
        mcp_config::entries(a.variant.as_deref(), &root, &cache, a.server_dir.as_deref())?;
    for w in warnings {
        eprintln!("{w}");
    }
    print!("{}", mcp_config::render(&entries, a.format)?);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_with(vars: &[(&str, &str)]) -> PathBuf {
        cache_dir_from(|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn cache_dir_follows_the_one_rule() {
        let home = [("HOME", "/h")];
        assert_eq!(cache_with(&home), PathBuf::from("/h/.cache/navbench"));
        let all = [
            ("NAVBENCH_CACHE", "/n"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(cache_with(&all), PathBuf::from("/n"));
        // An empty variable is unset, not a path.
        let empty = [
            ("NAVBENCH_CACHE", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(cache_with(&empty), PathBuf::from("/x/navbench"));
        // A relative XDG_CACHE_HOME is invalid by the XDG spec and ignored.
        let relative = [("XDG_CACHE_HOME", "rel"), ("HOME", "/h")];
        assert_eq!(cache_with(&relative), PathBuf::from("/h/.cache/navbench"));
        let xdg_empty = [("XDG_CACHE_HOME", ""), ("HOME", "/h")];
        assert_eq!(cache_with(&xdg_empty), PathBuf::from("/h/.cache/navbench"));
    }
}
