//! `report/index.html`, end to end: the real `navbench run` (scripted policies, and the
//! agent with a scripted endpoint standing in for the model) and the real `navbench
//! report`; then the page itself in headless Chromium (Debian's `chromium`, which
//! `.ci/run` installs): every variant and instance in the DOM, a drill-down opened by
//! `#open=<instance>`, the agent's transcript shown, no network request, screenshots
//! kept. A synthetic 3,000-row run measures the page's size and render time.
//!
//! Needs every binary built (`cargo test --workspace` does it). The browser tests are
//! ignored without `--include-ignored` (`.ci/run` passes it); run that way on a machine
//! without Chromium they fail, saying so, rather than pass.

use std::collections::BTreeSet;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

mod common;

use common::endpoint::{self, Reply, agent_file, turns_so_far};
use common::navbench;
use common::repo::{Setup, instance, setup};

const SCRIPTED_VARIANTS: [&str; 3] = ["text", "codegraph", "bm25"];
const AGENT_VARIANTS: [&str; 2] = ["text", "codegraph"];

/// A scripted run of three variants over two instances, the second with a commit the
/// repository lacks (an error row); returns the run directory.
fn scripted_run(s: &Setup) -> PathBuf {
    let ds = s.write_dataset(&[
        instance("acme__shop-1", &s.commit),
        instance("acme__shop-2", "0000000000000000000000000000000000000bad"),
    ]);
    let o = s.run(
        &ds,
        "scripted",
        &["--variants", &SCRIPTED_VARIANTS.join(",")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    s.work.path().join("scripted")
}

/// The agent on two variants of one instance: a grep, then an answer naming the gold.
fn agent_run(s: &Setup) -> PathBuf {
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit)]);
    let ep = endpoint::start(|_, body| match turns_so_far(body) {
        0 => Reply::calls(&[("grep", r#"{"pattern": "total_price"}"#)]),
        _ => Reply::answer("The fix goes in:\n1. shop/store.py:Store.total_price\n"),
    });
    let agent = agent_file(s.work.path(), &ep.base_url, "");
    let o = s.run(
        &ds,
        "agent",
        &[
            "--variants",
            &AGENT_VARIANTS.join(","),
            "--agent",
            &agent.to_string_lossy(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    s.work.path().join("agent")
}

/// `navbench report RUN --out RUN/report [extra]`; returns index.html's path.
fn report(run: &Path, extra: &[&str]) -> PathBuf {
    let out = run.join("report");
    let o = navbench()
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("index.html"), "{stdout}");
    out.join("index.html")
}

/// The JSON block `id` of a page.
fn block(html: &str, id: &str) -> Value {
    let start = format!("<script type=\"application/json\" id=\"{id}\">");
    let at = html.find(&start).unwrap_or_else(|| panic!("no block {id}")) + start.len();
    let end = at + html[at..].find("</script>").unwrap();
    serde_json::from_str(&html[at..end]).unwrap()
}

/// What every page must be: the policy meta, nothing that points off the page.
fn assert_self_contained(html: &str) {
    assert!(
        html.contains("default-src 'none'"),
        "no Content-Security-Policy"
    );
    let off_page =
        regex::Regex::new(r#"(?i)\b(src|href|action)\s*=\s*["']?\s*(https?:)?//"#).unwrap();
    assert!(
        !off_page.is_match(html),
        "{:?}",
        off_page.find(html).map(|m| m.as_str())
    );
    assert!(!html.contains("@import") && !html.contains("url(http"));
}

#[test]
fn the_page_of_a_scripted_and_of_an_agent_run_holds_every_row() {
    let s = setup();
    let run = scripted_run(&s);
    let html = std::fs::read_to_string(report(&run, &[])).unwrap();
    assert_self_contained(&html);
    // The summary is report.md's: the accuracy table and the plots, inlined.
    assert!(html.contains("Accuracy per variant"), "no summary");
    assert!(html.contains("<svg"), "no inline plot");
    let rows = block(&html, "nb-rows");
    let cols: Vec<&str> = rows[0]["cols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let at = |c: &str| cols.iter().position(|x| *x == c).unwrap();
    let records = rows[0]["rows"].as_array().unwrap();
    let pairs: BTreeSet<(String, String)> = records
        .iter()
        .map(|r| {
            (
                r[at("instance_id")].as_str().unwrap().to_string(),
                r[at("variant")].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for v in SCRIPTED_VARIANTS {
        for i in ["acme__shop-1", "acme__shop-2"] {
            assert!(pairs.contains(&(i.to_string(), v.to_string())), "{i} {v}");
        }
    }
    let calls = block(&html, "nb-calls");
    assert!(!calls[0]["rows"].as_array().unwrap().is_empty());
    let meta = block(&html, "nb-meta");
    assert_eq!(meta["variants"].as_array().unwrap().len(), 3);
    // No dataset given and not an embedded one: no issue text; --dataset gives it.
    assert!(meta["issues"].as_object().unwrap().is_empty());
    let ds = s.work.path().join("ds.jsonl");
    let html =
        std::fs::read_to_string(report(&run, &["--dataset", &ds.to_string_lossy()])).unwrap();
    let meta = block(&html, "nb-meta");
    assert!(
        meta["issues"]["acme__shop-1"]
            .as_str()
            .unwrap()
            .contains("ignores quantity")
    );

    let s = setup();
    let run = agent_run(&s);
    let html = std::fs::read_to_string(report(&run, &[])).unwrap();
    assert_self_contained(&html);
    assert!(
        html.contains("Does the tool help the agent?"),
        "no paired table"
    );
    let meta = block(&html, "nb-meta");
    let ids = meta["transcripts"].as_object().unwrap();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let t = block(&html, &format!("tr-{}", ids["acme__shop-1\u{1}text"]));
    let roles: Vec<&str> = t
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.contains(&"assistant") && roles.contains(&"tool") && roles.contains(&"navbench"),
        "{roles:?}"
    );
}

/// A synthetic run of `instances` × 3 variants: ranked predictions, 8 calls per row,
/// an agent-like transcript for every row of one variant. Written with the real
/// header of `instances.csv` / `calls.csv`.
fn synthetic_run(dir: &Path, instances: usize) {
    use navbench::record::output::{CALL_HEADER, instance_header, metric_columns};
    std::fs::create_dir_all(dir.join("transcripts")).unwrap();
    let header = instance_header();
    let metrics = metric_columns();
    let mut rows = csv::Writer::from_path(dir.join("instances.csv")).unwrap();
    rows.write_record(&header).unwrap();
    let mut calls = csv::Writer::from_path(dir.join("calls.csv")).unwrap();
    calls.write_record(CALL_HEADER).unwrap();
    for i in 0..instances {
        let id = format!("org__proj-{i}");
        let gold = format!("proj/mod{}/file{}.py", i % 40, i % 7);
        for (vi, v) in ["text", "codegraph", "bm25"].iter().enumerate() {
            let hit = (i + vi) % 3 != 0;
            let preds: Vec<String> = (0..10)
                .map(|k| {
                    if hit && k == vi {
                        gold.clone()
                    } else {
                        format!("proj/mod{}/other{k}.py", (i + k) % 40)
                    }
                })
                .collect();
            let rec: Vec<String> = header
                .iter()
                .map(|h| match h.as_str() {
                    "instance_id" => id.clone(),
                    "repo" => format!("org/proj{}", i % 12),
                    "variant" => v.to_string(),
                    "status" => "ok".into(),
                    "gold_files" => gold.clone(),
                    "gold_functions" => format!("{gold}:Thing.method{}", i % 5),
                    "pred_files" => preds.join(";"),
                    "pred_modules" => preds
                        .iter()
                        .map(|p| format!("{p}:Thing"))
                        .collect::<Vec<_>>()
                        .join(";"),
                    "pred_functions" => preds
                        .iter()
                        .map(|p| format!("{p}:Thing.method{}", i % 5))
                        .collect::<Vec<_>>()
                        .join(";"),
                    "n_calls" => "8".into(),
                    "n_errors" | "index_ms" | "schema_tokens" => "0".into(),
                    "tool_ms" | "wall_ms" => format!("{}", 100 + i % 900),
                    "response_bytes" => "40000".into(),
                    "response_tokens" => format!("{}", 4000 + i % 3000),
                    m if metrics.iter().any(|x| x == m) => {
                        (if hit { "1.0000" } else { "0.0000" }).into()
                    }
                    _ => String::new(),
                })
                .collect();
            rows.write_record(&rec).unwrap();
            for step in 1..=8 {
                calls
                    .write_record([
                        id.as_str(),
                        v,
                        &step.to_string(),
                        "grep",
                        &format!(r#"{{"pattern":"thing{step}","glob":"*.py"}}"#),
                        "4.2",
                        "5000",
                        "500",
                        "false",
                        "",
                        "1",
                    ])
                    .unwrap();
            }
            if *v == "codegraph" {
                let t = [
                    serde_json::json!({"role": "system", "content": "You localize bugs."}),
                    serde_json::json!({"role": "user", "content": format!("Issue {i}: the thing breaks")}),
                    serde_json::json!({"role": "assistant", "turn": 1, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":\"thing\"}"}}]}, "usage": {"prompt_tokens": 900, "completion_tokens": 30}, "llm_ms": 800.0, "cached": false}),
                    serde_json::json!({"role": "tool", "tool_call_id": "c0", "name": "grep", "arguments": "{\"pattern\":\"thing\"}", "content": "proj/a.py:1: thing\n".repeat(40), "is_error": false, "latency_ms": 4.2}),
                    serde_json::json!({"role": "assistant", "turn": 2, "message": {"role": "assistant", "content": gold.clone()}, "usage": {"prompt_tokens": 1900, "completion_tokens": 20}, "llm_ms": 700.0, "cached": false}),
                    serde_json::json!({"role": "navbench", "answer": gold.clone(), "parsed": [gold.clone()]}),
                    serde_json::json!({"role": "navbench", "stop_reason": "answered", "llm_turns": 2}),
                ];
                let text: String = t.iter().map(|l| l.to_string() + "\n").collect();
                std::fs::write(
                    dir.join("transcripts").join(format!("{id}__{v}.jsonl")),
                    text,
                )
                .unwrap();
            }
        }
    }
    rows.flush().unwrap();
    calls.flush().unwrap();
}

/// Rows of the large run the tests try (3 variants each).
const LARGE_INSTANCES: usize = 1000;

/// Writes the synthetic large run and its report under `dir`; returns the page, its
/// size in bytes and how long `navbench report` took. 100 bootstrap resamples: the
/// default 10,000 take most of a minute here and have nothing to do with the page.
fn large_report(dir: &Path) -> (PathBuf, u64, std::time::Duration) {
    let run = dir.join("large");
    synthetic_run(&run, LARGE_INSTANCES);
    let t = Instant::now();
    let page = report(&run, &["--resamples", "100"]);
    let took = t.elapsed();
    let size = std::fs::metadata(&page).unwrap().len();
    (page, size, took)
}

#[test]
fn a_3000_row_run_makes_one_page_with_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let (page, size, took) = large_report(dir.path());
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    let rows = block(&html, "nb-rows");
    assert_eq!(
        rows[0]["rows"].as_array().unwrap().len(),
        3 * LARGE_INSTANCES
    );
    let meta = block(&html, "nb-meta");
    assert_eq!(
        meta["transcripts"].as_object().unwrap().len(),
        LARGE_INSTANCES
    );
    eprintln!(
        "large run: {} rows, index.html {:.1} MB, `navbench report --resamples 100` {:.2} s",
        3 * LARGE_INSTANCES,
        size as f64 / 1e6,
        took.as_secs_f64()
    );
}

// ---- Headless Chromium ----

/// Chromium: `NAVBENCH_CHROMIUM`, else `chromium` / `chromium-browser` on PATH. A
/// test run with `--include-ignored` without it fails with what to install.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("NAVBENCH_CHROMIUM") {
        return PathBuf::from(p);
    }
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "this test needs Chromium: apt-get install -y chromium (.ci/run does), or set NAVBENCH_CHROMIUM"
    );
}

/// Where screenshots go: `NAVBENCH_ARTIFACTS`, else `navbench-artifacts/` beside the
/// build's `debug/` directory (`.ci/run` prints it).
fn artifacts() -> PathBuf {
    let dir = std::env::var_os("NAVBENCH_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_BIN_EXE_navbench"))
                .parent()
                .and_then(Path::parent)
                .unwrap()
                .join("navbench-artifacts")
        });
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A loopback listener standing as Chromium's proxy for every scheme: any network
/// request the page makes arrives here, and its first line is recorded.
struct Tripwire {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

fn tripwire() -> Tripwire {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let mut buf = [0u8; 512];
            // A connection that sends nothing (Chromium's speculative preconnect)
            // is no request.
            let n = stream.read(&mut buf).unwrap_or(0);
            if n == 0 {
                continue;
            }
            let text = String::from_utf8_lossy(&buf[..n]);
            record
                .lock()
                .unwrap()
                .push(text.lines().next().unwrap_or_default().to_string());
        }
    });
    Tripwire { port, seen }
}

/// Runs headless Chromium on `page` + `hash` with `extra` arguments (a fresh profile,
/// every background service off, every request sent to `trip`); returns stdout,
/// stderr and the time it took.
fn headless(page: &Path, hash: &str, trip: &Tripwire, extra: &[String]) -> (String, String, f64) {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}{hash}", page.display());
    let t = Instant::now();
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{}", trip.port))
        .arg("--proxy-bypass-list=<-loopback>")
        .args(extra)
        .arg(url)
        .output()
        .unwrap();
    let took = t.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "chromium failed: {stderr}");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr,
        took,
    )
}

/// The DOM after the page's script ran, up to its first `<script>` (the data blocks
/// and the script's own text, which spells markup, follow the rendered page).
fn dump_dom(page: &Path, hash: &str, trip: &Tripwire) -> (String, f64) {
    let (mut dom, stderr, took) = headless(page, hash, trip, &["--dump-dom".to_string()]);
    assert!(
        !stderr.contains("Content Security Policy") && !stderr.contains("Uncaught"),
        "the page tried something: {stderr}"
    );
    assert!(dom.contains("<script"), "not the whole page: {dom}");
    dom.truncate(dom.find("<script").unwrap_or(dom.len()));
    (dom, took)
}

/// A 1400×1000 screenshot of `page` + `hash` into the artifacts as `name`.
fn screenshot(page: &Path, hash: &str, trip: &Tripwire, name: &str) -> PathBuf {
    let png = artifacts().join(name);
    let _ = std::fs::remove_file(&png);
    headless(
        page,
        hash,
        trip,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,1000".to_string(),
        ],
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{}",
        png.display()
    );
    png
}

/// Values of `attr` on the grid's rows.
fn grid_values(dom: &str, attr: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r#"<tr data-instance="[^"]*" data-variant="[^"]*""#).unwrap();
    let pick = regex::Regex::new(&format!(r#"{attr}="([^"]*)""#)).unwrap();
    re.find_iter(dom)
        .filter_map(|m| pick.captures(m.as_str()).map(|c| c[1].to_string()))
        .collect()
}

#[test]
#[ignore = "needs chromium: apt-get install chromium (.ci/run does)"]
fn chromium_renders_both_reports_with_drill_down_and_transcript() {
    let trip = tripwire();
    let s = setup();
    let run = scripted_run(&s);
    let ds = s.work.path().join("ds.jsonl");
    let page = report(&run, &["--dataset", &ds.to_string_lossy()]);
    let (dom, small) = dump_dom(&page, "", &trip);
    assert!(
        dom.contains("data-rendered=\"6\""),
        "the script did not run"
    );
    assert_eq!(
        grid_values(&dom, "data-variant"),
        SCRIPTED_VARIANTS.iter().map(|v| v.to_string()).collect()
    );
    assert_eq!(
        grid_values(&dom, "data-instance"),
        ["acme__shop-1", "acme__shop-2"].map(String::from).into()
    );
    let (dom, _) = dump_dom(&page, "#open=acme__shop-1", &trip);
    assert!(
        dom.contains("id=\"detail\" data-instance=\"acme__shop-1\""),
        "no drill-down"
    );
    assert!(dom.contains("ignores quantity"), "no issue text");
    assert!(
        dom.contains("✓ <code>shop/store.py</code>"),
        "no hit marked"
    );
    for v in SCRIPTED_VARIANTS {
        assert!(
            dom.contains(&format!("<section class=\"pair\" data-variant=\"{v}\"")),
            "{v}"
        );
    }
    screenshot(&page, "", &trip, "report-scripted.png");
    screenshot(
        &page,
        "#open=acme__shop-1",
        &trip,
        "report-scripted-drilldown.png",
    );

    let s = setup();
    let run = agent_run(&s);
    let page = report(&run, &[]);
    let (dom, _) = dump_dom(&page, "#open=acme__shop-1", &trip);
    assert!(dom.contains("Does the tool help the agent?"));
    assert_eq!(
        grid_values(&dom, "data-variant"),
        AGENT_VARIANTS.iter().map(|v| v.to_string()).collect()
    );
    assert!(
        dom.contains("id=\"detail\" data-instance=\"acme__shop-1\""),
        "no drill-down"
    );
    assert_eq!(
        dom.matches("<details class=\"transcript\" open").count(),
        2,
        "transcripts"
    );
    assert!(dom.contains("<b>final answer</b>") && dom.contains("stop: answered"));
    // The issue text comes from the agent's task prompt.
    assert!(dom.contains("from the agent's task prompt"));
    screenshot(
        &page,
        "#open=acme__shop-1",
        &trip,
        "report-agent-drilldown.png",
    );
    screenshot(&page, "#instances", &trip, "report-agent-table.png");

    let dir = tempfile::tempdir().unwrap();
    let (page, size, took) = large_report(dir.path());
    let (dom, render) = dump_dom(&page, "", &trip);
    assert!(dom.contains(&format!("data-rendered=\"{}\"", 3 * LARGE_INSTANCES)));
    assert_eq!(
        dom.matches("<tr data-instance=").count(),
        500,
        "the first page of rows"
    );
    let (dom_open, open) = dump_dom(&page, "#open=org__proj-999", &trip);
    assert!(dom_open.contains("id=\"detail\" data-instance=\"org__proj-999\""));
    screenshot(&page, "", &trip, "report-large.png");
    let ms = |dom: &str, what: &str| {
        let re = regex::Regex::new(&format!(r#"data-{what}-ms="(\d+)""#)).unwrap();
        re.captures(dom)
            .map_or(-1, |c| c[1].parse::<i64>().unwrap())
    };
    eprintln!(
        "large run: {} rows, index.html {:.1} MB, `navbench report --resamples 100` {:.2} s; chromium start+load+render+dump {:.2} s (a 6-row page: {small:.2} s), with a drill-down {open:.2} s; in the page: script {} ms (table {} ms), drill-down {} ms",
        3 * LARGE_INSTANCES,
        size as f64 / 1e6,
        took.as_secs_f64(),
        render,
        ms(&dom, "script"),
        ms(&dom, "table"),
        ms(&dom_open, "open"),
    );

    let seen: Vec<String> = trip
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|r| !browsers_own(r))
        .cloned()
        .collect();
    assert!(seen.is_empty(), "network requests: {seen:?}");
    eprintln!("screenshots in {}", artifacts().display());
}

/// True for a request Chromium makes for itself whatever the page (its clock, update
/// and account services, which the flags do not all turn off): to Google's hosts,
/// which no report names (the page is checked to name no host at all).
fn browsers_own(request: &str) -> bool {
    let host = request
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .trim_start_matches("http://")
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    ["google.com", "googleapis.com", "gstatic.com", "gvt1.com"]
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

#[test]
#[ignore = "needs chromium: apt-get install chromium (.ci/run does)"]
fn the_tripwire_sees_a_page_that_fetches() {
    // The control: a page with an off-page image and no policy; its request must
    // reach the tripwire, else "no request" above would prove nothing.
    let trip = tripwire();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("fetches.html");
    std::fs::write(
        &page,
        "<!doctype html><p>x</p><img src=\"http://navbench-canary.example/x.png\">",
    )
    .unwrap();
    headless(&page, "", &trip, &["--dump-dom".to_string()]);
    let seen = trip.seen.lock().unwrap();
    assert!(
        seen.iter().any(|r| r.contains("navbench-canary.example")),
        "{seen:?}"
    );
    assert!(!browsers_own(
        "GET http://navbench-canary.example/x.png HTTP/1.1"
    ));
    assert!(browsers_own("CONNECT update.googleapis.com:443 HTTP/1.1"));
}
