//! MCP round-trip latency of the `navbench-codegraph` server: spawns the binary over
//! stdio with `--root TREE --cache DIR` (rmcp's child-process client), then times
//! repeated `search_code`, `search_entities` and `get_dependencies` (depth 2) calls with
//! arguments taken from the tree and from issue texts, and prints p50/p95/max per tool
//! and the server's peak RSS (`VmHWM`) after initialization and at the end.
//!
//! ```text
//! cargo build --release -p navbench-codegraph --bin navbench-codegraph --example mcp_latency
//! NAVBENCH_BENCH_TREE=/path/to/checkout target/release/examples/mcp_latency
//! ```
//!
//! Environment: `NAVBENCH_BENCH_TREE` (default: the mini repository, `datasets/mini/repo`),
//! `NAVBENCH_BENCH_CALLS` (calls per tool, default 200), `NAVBENCH_BENCH_DATASET` (a JSONL
//! file with `problem_statement`s for `search_code`; default: the dev dataset in
//! `datasets/dev/`), `NAVBENCH_BENCH_CACHE` (cache directory; default: a fresh temporary
//! one, so the first start builds), `NAVBENCH_CODEGRAPH_BIN` (the server binary; default:
//! `navbench-codegraph` beside the `examples/` directory of this program).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use navbench_codegraph::builder::build_graph;
use navbench_codegraph::graph::NodeKind;
use navbench_codegraph::traverse::is_test_file;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use serde_json::{Value, json};
use tokio::process::Command;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from)
}

/// `VmHWM` and `VmRSS` of a process, in KiB.
fn memory_kib(pid: u32) -> (Option<u64>, Option<u64>) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn problem_statements(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["problem_statement"].as_str().map(str::to_string))
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Res<()> {
    let tree = env_path("NAVBENCH_BENCH_TREE")
        .unwrap_or_else(|| Path::new(MANIFEST).join("../../datasets/mini/repo"));
    let tree = tree.canonicalize()?;
    let calls: usize = std::env::var("NAVBENCH_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dataset = env_path("NAVBENCH_BENCH_DATASET")
        .unwrap_or_else(|| Path::new(MANIFEST).join("../../datasets/dev/swe-bench-lite-dev.jsonl"));
    let bin = match env_path("NAVBENCH_CODEGRAPH_BIN") {
        Some(b) => b,
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .map(|d| d.join("navbench-codegraph"))
            .ok_or("cannot locate navbench-codegraph; set NAVBENCH_CODEGRAPH_BIN")?,
    };
    let tmp_cache = tempfile::tempdir()?;
    let cache = env_path("NAVBENCH_BENCH_CACHE").unwrap_or_else(|| tmp_cache.path().to_path_buf());

    // Arguments from the tree itself: class and function ids and names.
    let graph = build_graph(&tree)?;
    let entities: Vec<String> = graph
        .node_indices()
        .map(|ix| graph.node(ix))
        .filter(|n| matches!(n.kind, NodeKind::Class | NodeKind::Function) && !is_test_file(&n.id))
        .map(|n| n.id.clone())
        .collect();
    if entities.is_empty() {
        return Err("the tree has no class or function".into());
    }
    let pick = |i: usize| &entities[(i * 7919) % entities.len()];
    let short = |id: &str| -> String {
        let qual = id.rsplit(':').next().unwrap_or(id);
        qual.rsplit('.').next().unwrap_or(qual).to_string()
    };
    let mut issues = problem_statements(&dataset);
    if issues.is_empty() {
        issues = vec![
            "Money.allocate() can hand out more than the original amount".into(),
            "Tax is sometimes one cent lower than our accounting system computes".into(),
        ];
    }

    let started = Instant::now();
    let (transport, _stderr) = TokioChildProcess::builder(Command::new(&bin).configure(|cmd| {
        cmd.arg("--root").arg(&tree).arg("--cache").arg(&cache);
        cmd.env("RUST_LOG", "warn");
    }))
    .stderr(Stdio::inherit())
    .spawn()?;
    let pid = transport.id().ok_or("the server exited at start-up")?;
    let client = ().serve(transport).await?;
    let ready = started.elapsed();
    let (hwm_init, rss_init) = memory_kib(pid);
    println!(
        "tree {} ({} nodes, {} edges); server ready in {:.1} ms; after init VmHWM {} KiB, VmRSS {} KiB",
        tree.display(),
        graph.node_count(),
        graph.edge_count(),
        ms(ready),
        hwm_init.unwrap_or(0),
        rss_init.unwrap_or(0)
    );

    type ArgFn<'a> = Box<dyn Fn(usize) -> Value + 'a>;
    let workloads: Vec<(&str, &str, ArgFn)> = vec![
        (
            "search_code",
            "issue text (<=4000 chars), top_k 10",
            Box::new(|i| {
                let q: String = issues[i % issues.len()].chars().take(4000).collect();
                json!({"query": [q], "top_k": 10})
            }),
        ),
        (
            "search_code",
            "one entity name",
            Box::new(|i| json!({"query": [short(pick(i))]})),
        ),
        (
            "search_entities",
            "one name, top_k 10",
            Box::new(|i| json!({"query": [short(pick(i))], "top_k": 10})),
        ),
        (
            "search_entities",
            "8 names, top_k 5 (the harness policy)",
            Box::new(|i| {
                let q: Vec<String> = (0..8).map(|k| short(pick(i * 8 + k))).collect();
                json!({"query": q, "top_k": 5})
            }),
        ),
        (
            "get_dependencies",
            "one entity, depth 2, both",
            Box::new(|i| json!({"entities": [pick(i)], "depth": 2, "direction": "both"})),
        ),
        (
            "get_dependencies",
            "one entity, depth 2, downstream",
            Box::new(|i| json!({"entities": [pick(i)], "depth": 2, "direction": "downstream"})),
        ),
        (
            "get_dependencies",
            "one entity, depth 2, upstream",
            Box::new(|i| json!({"entities": [pick(i)], "depth": 2, "direction": "upstream"})),
        ),
    ];
    println!(
        "{:<17} {:<40} {:>9} {:>9} {:>9}",
        "tool", "arguments", "p50 ms", "p95 ms", "max ms"
    );
    for (tool, what, args) in &workloads {
        let mut times = Vec::with_capacity(calls);
        let mut errors = 0;
        // A few warm-up calls, then the measured ones.
        for i in 0..calls + 5 {
            let Value::Object(map) = args(i) else {
                return Err("arguments must be an object".into());
            };
            let params =
                CallToolRequestParams::new(tool.to_string()).with_arguments(map as JsonObject);
            let t = Instant::now();
            let r = client.call_tool(params).await?;
            let d = t.elapsed();
            if r.is_error == Some(true) {
                errors += 1;
            }
            if i >= 5 {
                times.push(d);
            }
        }
        times.sort();
        println!(
            "{:<17} {:<40} {:>9.3} {:>9.3} {:>9.3}{}",
            tool,
            what,
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.95)),
            ms(times.last().copied().unwrap_or_default()),
            if errors > 0 {
                format!("  ({errors} tool errors)")
            } else {
                String::new()
            }
        );
    }
    let (hwm_end, rss_end) = memory_kib(pid);
    println!(
        "server at the end: VmHWM {} KiB, VmRSS {} KiB",
        hwm_end.unwrap_or(0),
        rss_end.unwrap_or(0)
    );
    client.cancel().await?;
    Ok(())
}
