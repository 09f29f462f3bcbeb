//! What the recording proxy costs per call: N identical `grep` calls to `navbench-text`
//! in one process run, three ways, and the medians side by side:
//!
//! 1. direct over stdio: the harness's own client (`McpSession`), as a run calls;
//! 2. direct over Streamable HTTP: the same client to `navbench-text --http`, the
//!    transport an external agent uses;
//! 3. through the proxy: an rmcp Streamable HTTP client (standing in for the agent) →
//!    the proxy (`navbench::session::proxy`, served as `run --agent-cmd` serves it) → stdio →
//!    `navbench-text`, every call recorded.
//!
//! The proxy's overhead is (3) against (1) (what `--agent-cmd` adds to a scripted
//! run's call) and against (2) (what it adds to an agent connecting by URL). The three
//! runs interleave in rounds, so a slow moment of a shared machine hits all three.
//!
//! ```text
//! cargo build -p navbench-text --bin navbench-text && cargo run -p navbench --example proxy_overhead -- 300
//! ```
//!
//! Arguments: N (calls per way, default 300). Environment: `NAVBENCH_BENCH_TREE` (the
//! tree served; default the mini repository, `datasets/mini/repo`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use navbench::session::mcp_client::{McpSession, ServerSpec, Transport, locate_server_binary};
use navbench::session::proxy::{self, Proxy};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const TIMEOUT: Duration = Duration::from_secs(30);

fn args() -> Value {
    json!({"pattern": "def ", "glob": "*.py", "max_results": 20})
}

fn median_ms(v: &mut [Duration]) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn p95_ms(v: &[Duration]) -> f64 {
    v.get(v.len() * 95 / 100)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

async fn timed(session: &mut McpSession) -> Res<Duration> {
    let t = Instant::now();
    let out = session.call("grep", args()).await;
    let took = t.elapsed();
    if out.is_error {
        return Err(format!("grep failed: {:?}", out.error).into());
    }
    Ok(took)
}

#[tokio::main]
async fn main() -> Res<()> {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => a
            .parse()
            .map_err(|e| format!("N must be a number of calls: {e}"))?,
        None => 300,
    };
    let tree = std::env::var_os("NAVBENCH_BENCH_TREE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../datasets/mini/repo"
            ))
        });
    let tree = std::fs::canonicalize(&tree).map_err(|e| {
        format!(
            "{}: {e}; set NAVBENCH_BENCH_TREE to a checkout",
            tree.display()
        )
    })?;
    let bin = locate_server_binary("navbench-text", None)?;
    let root = tree.display().to_string();
    let stdio = ServerSpec::new(&bin).arg("--root").arg(&root);
    let mut http = stdio.clone().arg("--http").arg("127.0.0.1:0");
    http.transport = Transport::Http(None);

    let mut direct = McpSession::start(&stdio, TIMEOUT).await?;
    let mut direct_http = McpSession::start(&http, TIMEOUT).await?;
    let upstream = McpSession::start(&stdio, TIMEOUT).await?;
    let settings = proxy::Settings {
        tokenizer: navbench::score::tokens::Tokenizer::default(),
        setup_tools: &[],
        index_timeout: TIMEOUT,
    };
    let recorder = Proxy::new("text", upstream, settings);
    let served = proxy::http::serve(recorder.clone(), "127.0.0.1:0", false).await?;
    let reqwest = reqwest::Client::builder().no_proxy().build()?;
    let transport = StreamableHttpClientTransport::with_client(
        reqwest,
        StreamableHttpClientTransportConfig::with_uri(served.url.as_str()),
    );
    let agent = ().serve(transport).await?;
    let Value::Object(arguments) = args() else {
        return Err("arguments are an object".into());
    };

    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    // Warm-up: first calls pay for connections and caches.
    for _ in 0..10 {
        timed(&mut direct).await?;
        timed(&mut direct_http).await?;
        agent
            .call_tool(CallToolRequestParams::new("grep").with_arguments(arguments.clone()))
            .await?;
    }
    for _ in 0..n {
        a.push(timed(&mut direct).await?);
        b.push(timed(&mut direct_http).await?);
        let t = Instant::now();
        let r = agent
            .call_tool(CallToolRequestParams::new("grep").with_arguments(arguments.clone()))
            .await?;
        c.push(t.elapsed());
        if r.is_error == Some(true) {
            return Err("grep through the proxy failed".into());
        }
    }
    let (ma, mb, mc) = (median_ms(&mut a), median_ms(&mut b), median_ms(&mut c));
    println!(
        "proxy overhead: {n} × grep on {} (median / p95 per call)",
        tree.display()
    );
    println!(
        "  direct, stdio          {ma:8.3} ms  {:8.3} ms",
        p95_ms(&a)
    );
    println!(
        "  direct, HTTP           {mb:8.3} ms  {:8.3} ms",
        p95_ms(&b)
    );
    println!(
        "  through the proxy      {mc:8.3} ms  {:8.3} ms",
        p95_ms(&c)
    );
    println!(
        "  proxy / direct stdio   ×{:.2} (+{:.3} ms);  proxy / direct HTTP ×{:.2} (+{:.3} ms)",
        mc / ma,
        mc - ma,
        mc / mb,
        mc - mb
    );

    let _ = agent.cancel().await;
    served.stop().await;
    if let Some(up) = recorder.finish().await {
        println!("  the proxy recorded {} calls", up.records.len());
        up.session.shutdown().await;
    }
    direct.shutdown().await;
    direct_http.shutdown().await;
    Ok(())
}
