//! `navbench-codegraph`: LocAgent's code graph, as an MCP server on stdio (the
//! default, or `serve`; `--root DIR` initializes at start-up, `--allow-root DIR` lets
//! `init_repository` open repositories under DIR besides `--root`, `--cache DIR` sets
//! the cache, `--http ADDR` serves Streamable HTTP instead, `--tools functions` serves
//! the per-function BM25 tools of the paper's baseline instead of the graph tools) and
//! as a command-line tool (`export`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tracing::info;

use navbench_codegraph::{builder, export};
use navbench_lang::family::Selection;
use navbench_server_support::roots::AllowedRoots;
use navbench_server_support::start;

/// mimalloc, not glibc's malloc: building the indexes is millions of small
/// allocations, and with glibc a third of a warm init went to malloc, free and page
/// faults (docs/servers.md has the figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    version,
    about = "LocAgent's dependency graph of a repository (Python, TS/JS, Java, Go, Rust)"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Server options when no subcommand is given.
    #[command(flatten)]
    serve: ServeArgs,
}

/// Options of the MCP server mode.
#[derive(clap::Args, Debug, Clone, Default)]
struct ServeArgs {
    /// Repository to initialize at start-up (as init_repository would); always
    /// allowed to init_repository.
    #[arg(long)]
    root: Option<PathBuf>,
    /// Let init_repository open repositories under DIR (repeatable). Only --root and
    /// these are allowed: any other path is refused, naming this flag.
    #[arg(long = "allow-root", value_name = "DIR")]
    allow_roots: Vec<PathBuf>,
    /// Cache directory [default: <cache>/codegraph, where <cache> is $NAVBENCH_CACHE,
    /// else $XDG_CACHE_HOME/navbench, else ~/.cache/navbench].
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Serve Streamable HTTP at http://ADDR/mcp (plus GET /health) instead of stdio,
    /// e.g. 127.0.0.1:8766 (port 0 picks a free one; the URL is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: accept connections on a non-loopback address (only loopback
    /// otherwise, so the repository is never exposed to the network by mistake).
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// Which tools to serve: `codegraph` (LocAgent's graph tools) or `functions`
    /// (`index_functions` / `search_functions`: BM25 over one document per function,
    /// the LocAgent paper's BM25 baseline).
    #[arg(long, value_enum, default_value_t = ToolSet::Codegraph)]
    tools: ToolSet,
    /// Which languages the graph (and the functions corpus) reads: `auto` (the
    /// repository's own: each of Python, TS/JS, Java, Go, Rust holding at least 10% of
    /// its non-test source files; a Python project's graph is then LocAgent's), `all`,
    /// or a list such as `python,ecma` (`ecma` is TypeScript and JavaScript).
    #[arg(long, default_value = "auto", value_name = "LIST")]
    languages: Selection,
}

/// The tool sets the server can expose.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ToolSet {
    /// LocAgent's graph-guided tools.
    #[default]
    Codegraph,
    /// BM25 over per-function documents.
    Functions,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the MCP tools on stdin/stdout (the default mode).
    Serve(ServeArgs),
    /// Build the graph of a repository and write PREFIX.nodes.tsv and PREFIX.edges.tsv
    /// in the reference format.
    Export {
        /// The repository's root directory.
        #[arg(long)]
        root: PathBuf,
        /// Output path prefix.
        #[arg(long)]
        out: PathBuf,
        /// Disable the global name fallback (LocAgent runs with it on).
        #[arg(long)]
        no_global_import: bool,
        /// Reuse per-file parse results stored in DIR by earlier exports (of any
        /// commit), parsing only new or changed files; the graph is the same.
        #[arg(long, value_name = "DIR")]
        reuse: Option<PathBuf>,
        /// Which languages the graph reads: `auto`, `all` or a list (as for serving).
        #[arg(long, default_value = "auto", value_name = "LIST")]
        languages: Selection,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    start::main("navbench-codegraph", "info", || match cli.command {
        Some(Command::Export {
            root,
            out,
            no_global_import,
            reuse,
            languages,
        }) => run_export(root, out, !no_global_import, reuse, languages),
        Some(Command::Serve(args)) => run_serve(args),
        None => run_serve(cli.serve),
    })
}

fn run_serve(args: ServeArgs) -> anyhow::Result<()> {
    let roots: Vec<PathBuf> = args.allow_roots.iter().chain(&args.root).cloned().collect();
    if roots.is_empty() {
        tracing::warn!(
            "no --allow-root or --root given: init_repository / index_functions will refuse every directory; restart with --allow-root DIR to allow repositories under DIR"
        );
    } else {
        let listed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        info!(roots = %listed.join(", "), "repositories may be opened under these directories");
    }
    let allowed = AllowedRoots::only(roots);
    if args.tools == ToolSet::Functions {
        return start::runtime()?.block_on(navbench_codegraph::functions::server::serve(
            args.root,
            args.cache,
            args.http,
            args.allow_remote,
            allowed,
            args.languages,
        ));
    }
    start::runtime()?.block_on(navbench_codegraph::server::serve(
        navbench_codegraph::server::ServeOptions {
            root: args.root,
            cache: args.cache,
            http: args.http,
            allow_remote: args.allow_remote,
            allowed_roots: allowed,
            languages: args.languages,
            ..Default::default()
        },
    ))
}

fn run_export(
    root: PathBuf,
    out: PathBuf,
    global_import: bool,
    reuse: Option<PathBuf>,
    languages: Selection,
) -> anyhow::Result<()> {
    let options = builder::BuildOptions {
        global_import,
        reuse: reuse.map(builder::FileStore::new),
        trees: None,
        languages,
    };
    let (graph, report) = builder::build_graph_with(&root, &options)
        .with_context(|| format!("building the graph of {}", root.display()))?;
    for (file, reason) in &report.rejected {
        info!(
            file,
            reason, "file not parsable by Python's ast: orphan file node"
        );
    }
    for file in &report.undecodable {
        info!(file, "file is not UTF-8: no node");
    }
    info!(
        root = %root.display(),
        nodes = graph.node_count(),
        edges = graph.edge_count(),
        files = report.files,
        parsed = report.parsed,
        reused = report.reused,
        languages = %report.languages.join(","),
        build_ms = format!("{:.1}", report.elapsed.as_secs_f64() * 1000.0),
        "graph built"
    );
    let (n, e) = export::write_tsv(&graph, &out)
        .with_context(|| format!("writing TSV files with prefix {}", out.display()))?;
    info!(nodes = %n.display(), edges = %e.display(), "written");
    Ok(())
}
