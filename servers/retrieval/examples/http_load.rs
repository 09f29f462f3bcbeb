//! Load on the Streamable HTTP transport, loopback only: N concurrent MCP clients each
//! make M calls, alternating `codebase_retrieval` (the workspace) and `search_code`,
//! while another thread keeps editing workspace files so the watcher re-indexes under
//! load. Prints throughput, latency percentiles, errors and the server's RSS.
//!
//! ```sh
//! cargo build -p navbench-retrieval --bins --examples
//! cargo run -p navbench-retrieval --example http_load -- [CLIENTS=8] [CALLS=50] [FILES=200]
//! ```
//!
//! It uses the tiny random-weight test model (no download) on a generated workspace
//! in a temporary directory, and runs the `navbench-retrieval` binary found next to
//! this example's directory (`target/<profile>/`). Bounded: at most 120 s of calls.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// No call is started after this.
const TIME_BUDGET: Duration = Duration::from_secs(120);

/// The server process, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One MCP session over Streamable HTTP (JSON-RPC POSTs with the session header).
struct Session {
    agent: ureq::Agent,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl Session {
    fn open(url: &str) -> anyhow::Result<Session> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(60)))
            .http_status_as_error(false)
            .build()
            .into();
        let mut s = Session {
            agent,
            url: url.to_string(),
            session: None,
            next_id: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "http_load", "version": "0"}}),
        )?;
        s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(s)
    }

    /// POSTs one message; returns the JSON-RPC messages of the answer.
    fn post(&mut self, message: &Value) -> anyhow::Result<Vec<Value>> {
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(s) = &self.session {
            req = req
                .header("Mcp-Session-Id", s)
                .header("MCP-Protocol-Version", "2025-06-18");
        }
        let mut resp = req.send(message.to_string()).context("POST /mcp")?;
        let status = resp.status().as_u16();
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_string());
        }
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        if status >= 400 {
            bail!("HTTP {status}: {body}");
        }
        Ok(match serde_json::from_str::<Value>(&body) {
            Ok(v) => vec![v],
            Err(_) => body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect(),
        })
    }

    /// A request's `result`; a JSON-RPC error or `isError` result is an `Err`.
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let messages =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let reply = messages
            .into_iter()
            .find(|m| m["id"] == id)
            .with_context(|| format!("no reply to {method}"))?;
        if let Some(e) = reply.get("error") {
            bail!("{method}: {e}");
        }
        if reply["result"]["isError"] == true {
            bail!("{method}: {}", reply["result"]["content"]);
        }
        Ok(reply["result"].clone())
    }
}

/// Writes `files` Python modules of 20 small functions each.
fn workspace(root: &Path, files: usize) -> anyhow::Result<()> {
    for f in 0..files {
        let dir = root.join(format!("pkg{}", f % 10));
        std::fs::create_dir_all(&dir)?;
        let body: String = (0..20)
            .map(|i| format!("def handle_{f}_{i}(request, user):\n    \"\"\"Checks the session of user {i} for route {f}.\"\"\"\n    return request.session.get('user_{i}') == user\n\n\n"))
            .collect();
        std::fs::write(dir.join(format!("module_{f}.py")), body)?;
    }
    Ok(())
}

/// Starts the binary on 127.0.0.1:0 and waits for its address.
fn start(bin: &Path, model: &Path, data: &Path, ws: &Path) -> anyhow::Result<Server> {
    let mut child = Command::new(bin)
        .args(["--model-dir".as_ref(), model.as_os_str()])
        .args(["--data-dir".as_ref(), data.as_os_str()])
        .args(["--workspace".as_ref(), ws.as_os_str()])
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let stderr = child.stderr.take().context("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            match line.strip_prefix(navbench_retrieval::http::LISTENING_PREFIX) {
                Some(url) => {
                    let _ = tx.send(url.to_string());
                }
                None => eprintln!("{line}"),
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .context("the server never said where it listens")?;
    Ok(Server { child, url })
}

/// The server's resident set size in MiB (Linux; 0 elsewhere).
fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Waits until the workspace is `ready`; returns its repo id.
fn ready_workspace(url: &str) -> anyhow::Result<String> {
    let mut s = Session::open(url)?;
    let started = Instant::now();
    loop {
        let v = s.request(
            "tools/call",
            json!({"name": "list_repositories", "arguments": {}}),
        )?;
        let ws = v["structuredContent"]["repositories"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["workspace"] == true).cloned())
            .unwrap_or_default();
        if ws["status"] == "ready" {
            return Ok(ws["repo_id"].as_str().unwrap_or_default().to_string());
        }
        if started.elapsed() > Duration::from_secs(120) {
            bail!("the workspace never became ready: {ws}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One client's calls: (tool, latency in ms, error).
fn client(
    url: &str,
    repo: &str,
    calls: usize,
    seed: usize,
    deadline: Instant,
) -> Vec<(&'static str, f64, Option<String>)> {
    let mut out = Vec::new();
    let mut s = match Session::open(url) {
        Ok(s) => s,
        Err(e) => return vec![("initialize", 0.0, Some(e.to_string()))],
    };
    for i in 0..calls {
        if Instant::now() > deadline {
            break;
        }
        let k = seed * 31 + i;
        let (tool, args) = if i % 2 == 0 {
            (
                "codebase_retrieval",
                json!({"query": format!("check the session of user {} for a route", k % 20), "top_k": 10}),
            )
        } else {
            (
                "search_code",
                json!({"repo_id": repo, "query": format!("handle_{}_{}", k % 50, k % 20), "top_k": 10}),
            )
        };
        let t = Instant::now();
        let r = s.request("tools/call", json!({"name": tool, "arguments": args}));
        out.push((
            tool,
            t.elapsed().as_secs_f64() * 1e3,
            r.err().map(|e| e.to_string()),
        ));
    }
    out
}

/// Whether the last edit reached the index (the watcher kept up), within 10 s.
fn last_edit_visible(url: &str, edits: usize) -> anyhow::Result<bool> {
    let Some(last) = edits.checked_sub(1) else {
        return Ok(false);
    };
    let mut s = Session::open(url)?;
    let name = format!("edited_{last}");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let args = json!({"entity_name": name, "scope": "minimal"});
        if let Ok(v) = s.request(
            "tools/call",
            json!({"name": "get_implementation", "arguments": args}),
        ) && v["content"].to_string().contains(&name)
        {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(false)
}

/// The latency table: per tool and overall, calls, errors, calls/s and percentiles.
fn print_table(results: &[(&'static str, f64, Option<String>)], wall: f64) {
    println!("| tool | calls | errors | calls/s | p50 ms | p95 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for tool in ["codebase_retrieval", "search_code", "all"] {
        let mut lat: Vec<f64> = results
            .iter()
            .filter(|(t, _, _)| tool == "all" || *t == tool)
            .map(|(_, ms, _)| *ms)
            .collect();
        let errors = results
            .iter()
            .filter(|(t, _, e)| (tool == "all" || *t == tool) && e.is_some())
            .count();
        lat.sort_by(f64::total_cmp);
        println!(
            "| {tool} | {} | {errors} | {:.1} | {:.1} | {:.1} | {:.1} |",
            lat.len(),
            lat.len() as f64 / wall,
            percentile(&lat, 0.50),
            percentile(&lat, 0.95),
            percentile(&lat, 0.99)
        );
    }
}

/// Edits while the clients run, one file every 200 ms (the watcher re-indexes each);
/// the thread returns how many edits it made.
fn spawn_editor(
    stop: Arc<AtomicBool>,
    ws: PathBuf,
    files: usize,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut edits = 0usize;
        while !stop.load(Ordering::Relaxed) {
            let f = edits % files.max(1);
            let path: PathBuf = ws.join(format!("pkg{}/module_{f}.py", f % 10));
            let body = format!(
                "def edited_{edits}(request):\n    \"\"\"Edit number {edits}.\"\"\"\n    return request\n"
            );
            if std::fs::write(&path, body).is_ok() {
                edits += 1;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        edits
    })
}

fn main() -> anyhow::Result<()> {
    let arg = |i: usize, default: usize| -> anyhow::Result<usize> {
        std::env::args().nth(i).map_or(Ok(default), |s| {
            s.parse()
                .with_context(|| format!("argument {i} ({s}) is not a number"))
        })
    };
    let (clients, calls, files) = (arg(1, 8)?, arg(2, 50)?, arg(3, 200)?);
    let bin = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("navbench-retrieval"))
        .filter(|p| p.is_file())
        .context("no navbench-retrieval binary next to examples/; run `cargo build -p navbench-retrieval --bins` first")?;
    let tmp = tempfile::tempdir()?;
    let (model, data, ws) = (
        tmp.path().join("model"),
        tmp.path().join("data"),
        tmp.path().join("ws"),
    );
    navbench_retrieval::model::write_tiny_model(&model, 11)?;
    workspace(&ws, files)?;
    let server = start(&bin, &model, &data, &ws)?;
    let pid = server.child.id();
    let t0 = Instant::now();
    let repo = ready_workspace(&server.url)?;
    println!(
        "workspace: {files} files indexed in {:.1} s; RSS {:.0} MiB",
        t0.elapsed().as_secs_f64(),
        rss_mib(pid)
    );

    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(Mutex::new(0f64));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let mut p = peak
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                *p = p.max(rss_mib(pid));
                drop(p);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let editor = spawn_editor(Arc::clone(&stop), ws.clone(), files);
    let deadline = Instant::now() + TIME_BUDGET;
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let (url, repo) = (server.url.clone(), repo.clone());
            std::thread::spawn(move || client(&url, &repo, calls, c, deadline))
        })
        .collect();
    let mut results = Vec::new();
    for h in handles {
        results.extend(h.join().unwrap_or_default());
    }
    let wall = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let edits = editor.join().unwrap_or(0);
    let _ = sampler.join();
    let peak = *peak
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);

    println!(
        "\n{clients} clients x {calls} calls, {edits} file edits during the run, {wall:.1} s\n"
    );
    print_table(&results, wall);
    println!(
        "\nserver RSS: peak {peak:.0} MiB, at the end {:.0} MiB",
        rss_mib(pid)
    );
    println!(
        "last edit searchable: {}",
        last_edit_visible(&server.url, edits)?
    );
    for (tool, _, e) in results.iter().filter(|r| r.2.is_some()).take(5) {
        println!("error in {tool}: {}", e.as_deref().unwrap_or_default());
    }
    Ok(())
}
