//! External agents through the recording proxy, end to end: the real `navbench` runs
//! `--agent-cmd` with a real MCP client program as the agent
//! (`fixtures/mcp_client_agent.py`, on the official `mcp` Python SDK from PyPI) against
//! the real `navbench-text` and `navbench-codegraph` servers, on a repository made
//! here; and `navbench proxy` is driven over stdio and Streamable HTTP by the same
//! client.
//!
//! Checked: rows are scored from the command's stdout; `calls.csv` holds exactly the
//! calls the agent logged, after the variant's setup, which counts as index time; a
//! command that crashes or hangs is an error row with its stderr while the run goes on;
//! an answer without a location is `answer_unparsed`; the standalone proxy records
//! every call as it happens and refuses a foreign `Host`.
//!
//! The client's Python comes from `NAVBENCH_TEST_MCP_PYTHON` (a Python with `mcp`
//! installed; `agents/local-llama.sh install` makes one). The tests are ignored unless
//! asked for (`cargo test -p navbench --test agent_cmd -- --ignored`, as `.ci/run`
//! does), so a missing Python shows as ignored, never as passed; asked for without
//! it, they fail saying how to get it. Needs every binary built (`cargo test
//! --workspace` does it).

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;

use common::navbench;
use common::repo::{Setup, instance, read_csv, setup};

const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/mcp_client_agent.py"
);

fn mcp_python() -> String {
    match std::env::var("NAVBENCH_TEST_MCP_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => panic!(
            "agent_cmd needs the MCP Python SDK: set NAVBENCH_TEST_MCP_PYTHON to a python with the `mcp` package (after `agents/local-llama.sh install`: <cache>/llm-venv/bin/python; .ci/run does)"
        ),
    }
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The agent's command, logging its calls under `logs/`.
fn template(py: &str, logs: &Path, extra: &str) -> String {
    format!(
        "{py} {AGENT} --config {{mcp_config}} --prompt {{prompt_file}} --log {}/{{instance_id}}__{{variant}}.jsonl {extra}",
        logs.display()
    )
}

/// The calls an agent logged: (tool, arguments).
fn logged(path: &Path) -> Vec<(String, Value)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["tool"].as_str().unwrap().to_string(), v["args"].clone()))
        .collect()
}

/// `calls.csv` rows of one pair, in step order.
fn calls_of(dir: &Path, id: &str, variant: &str) -> Vec<HashMap<String, String>> {
    let mut rows: Vec<_> = read_csv(&dir.join("calls.csv"))
        .into_iter()
        .filter(|c| c["instance_id"] == id && c["variant"] == variant)
        .collect();
    rows.sort_by_key(|c| c["step"].parse::<usize>().unwrap());
    rows
}

fn as_calls(rows: &[HashMap<String, String>]) -> Vec<(String, Value)> {
    rows.iter()
        .map(|c| (c["tool"].clone(), serde_json::from_str(&c["args"]).unwrap()))
        .collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row[col].parse().unwrap()
}

#[test]
#[ignore = "needs the MCP Python SDK: run with --ignored and NAVBENCH_TEST_MCP_PYTHON set (.ci/run does)"]
fn an_external_agent_plays_every_variant_through_the_proxy() {
    let py = mcp_python();
    let s = setup();
    let logs = s.work.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let ds = s.write_dataset(&[
        instance("acme__shop-1", &s.commit),
        instance("acme__shop-2", &s.commit),
    ]);
    let cmd = template(&py, &logs, "");
    let out = s.run(
        &ds,
        "out",
        &["--variants", "text,codegraph", "--agent-cmd", &cmd],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = s.work.path().join("out");
    let rows = read_csv(&dir.join("instances.csv"));
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in &rows {
        let (id, variant) = (r["instance_id"].as_str(), r["variant"].as_str());
        assert_eq!(r["status"], "ok", "{r:?}");
        // Scored from the command's stdout: the agent names the culprit.
        assert!(
            r["pred_functions"].contains("shop/store.py:Store.total_price"),
            "{r:?}"
        );
        assert_eq!(r["file_acc_1"], "1.0000", "{r:?}");
        assert_eq!(
            r["stop_reason"], "",
            "no LLM columns for an external agent: {r:?}"
        );
        assert!(
            num(r, "schema_tokens") > 50.0 && num(r, "response_tokens") > 0.0,
            "{r:?}"
        );
        // calls.csv: the variant's setup, then exactly the calls the agent made.
        let recorded = calls_of(&dir, id, variant);
        let setup = usize::from(variant == "codegraph");
        let made = logged(&logs.join(format!("{id}__{variant}.jsonl")));
        assert!(!made.is_empty(), "{id} × {variant}: the agent made no call");
        assert_eq!(as_calls(&recorded[setup..]), made, "{id} × {variant}");
        assert_eq!(recorded.len().to_string(), r["n_calls"]);
        assert!(
            recorded.iter().all(|c| c["is_error"] == "false"),
            "{recorded:?}"
        );
        // The setup is index time, measured through the proxy's own session.
        if variant == "codegraph" {
            assert_eq!(recorded[0]["tool"], "init_repository");
            let init = num(&recorded[0], "latency_ms");
            assert!((num(r, "init_ms") - init).abs() < 0.01, "{r:?}");
            assert!(
                num(r, "index_ms") >= init + num(r, "start_ms") - 0.01,
                "{r:?}"
            );
        } else {
            assert_eq!(num(r, "init_ms"), 0.0, "{r:?}");
        }
        // What the agent was handed, and what it said, are kept.
        let pair = dir.join(format!("agent-cmd/{id}__{variant}"));
        let prompt = std::fs::read_to_string(pair.join("prompt.md")).unwrap();
        assert!(
            prompt.contains("<issue>\n`Store.total_price()` ignores quantity"),
            "{prompt}"
        );
        assert!(prompt.contains("path/to/file.py:Class.method"), "{prompt}");
        let config: Value =
            serde_json::from_str(&std::fs::read_to_string(pair.join("mcp.json")).unwrap()).unwrap();
        assert!(
            config["mcpServers"]["navbench"]["url"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:")
        );
        let printed = std::fs::read_to_string(pair.join("stdout.txt")).unwrap();
        assert!(
            printed.contains("shop/store.py:Store.total_price"),
            "{printed}"
        );
    }
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["agent_cmd"]["template"], cmd);
}

#[test]
#[ignore = "needs the MCP Python SDK: run with --ignored and NAVBENCH_TEST_MCP_PYTHON set (.ci/run does)"]
fn a_crashing_hanging_or_mute_command_is_recorded_and_the_run_goes_on() {
    let py = mcp_python();
    let s = setup();
    let logs = s.work.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let ds = s.write_dataset(&[
        instance("acme__crash", &s.commit),
        instance("acme__hang", &s.commit),
        instance("acme__silent", &s.commit),
        instance("acme__fine", &s.commit),
    ]);
    let cmd = format!(
        "case {{instance_id}} in acme__crash) m=crash;; acme__hang) m=hang;; acme__silent) m=silent;; *) m=normal;; esac; {}",
        template(&py, &logs, "--mode $m")
    );
    let started = std::time::Instant::now();
    let out = s.run(
        &ds,
        "out",
        &[
            "--variants",
            "text",
            "--agent-cmd",
            &cmd,
            "--agent-timeout",
            "8",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the hang was not cut short"
    );
    let dir = s.work.path().join("out");
    let rows: HashMap<String, HashMap<String, String>> = read_csv(&dir.join("instances.csv"))
        .into_iter()
        .map(|r| (r["instance_id"].clone(), r))
        .collect();
    let crash = &rows["acme__crash"];
    assert_eq!(crash["status"], "error", "{crash:?}");
    assert!(
        crash["error"].contains("exit status: 3") && crash["error"].contains("crashing on purpose"),
        "{crash:?}"
    );
    let hang = &rows["acme__hang"];
    assert_eq!(hang["status"], "error", "{hang:?}");
    assert!(
        hang["error"].contains("--agent-timeout") && hang["error"].contains("hanging on purpose"),
        "{hang:?}"
    );
    let silent = &rows["acme__silent"];
    assert_eq!(silent["status"], "answer_unparsed", "{silent:?}");
    assert_eq!(silent["file_acc_5"], "0.0000", "{silent:?}");
    assert_eq!(
        rows["acme__fine"]["status"], "ok",
        "{:?}",
        rows["acme__fine"]
    );
    // The calls the failing agents made before failing are recorded all the same.
    for id in ["acme__crash", "acme__hang", "acme__silent"] {
        let made = logged(&logs.join(format!("{id}__text.jsonl")));
        assert!(!made.is_empty(), "{id}");
        assert_eq!(as_calls(&calls_of(&dir, id, "text")), made, "{id}");
    }
}

/// Launches `navbench proxy` on the shop repository, recording into `record`.
fn proxy_args(s: &Setup, record: &Path) -> Vec<String> {
    let root = s.repo_path.display().to_string();
    [
        "proxy",
        "--variant",
        "text",
        "--root",
        &root,
        "--record",
        &record.display().to_string(),
        "--instance-id",
        "by-hand",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
#[ignore = "needs the MCP Python SDK: run with --ignored and NAVBENCH_TEST_MCP_PYTHON set (.ci/run does)"]
fn navbench_proxy_over_stdio_records_every_call() {
    let py = mcp_python();
    let s = setup();
    let (record, log) = (s.work.path().join("rec"), s.work.path().join("calls.jsonl"));
    let out = Command::new(&py)
        .arg(AGENT)
        .arg("--log")
        .arg(&log)
        .arg("--stdio")
        .arg(env!("CARGO_BIN_EXE_navbench"))
        .args(proxy_args(&s, &record))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains("shop/store.py:Store.total_price"),
        "{answer}"
    );
    assert!(
        stderr(&out).contains("instructions: True"),
        "{}",
        stderr(&out)
    );
    let rows = read_csv(&record.join("calls.csv"));
    assert_eq!(as_calls(&rows), logged(&log));
    assert!(
        rows.iter()
            .all(|r| r["instance_id"] == "by-hand" && r["variant"] == "text")
    );
    assert!(
        rows.iter()
            .all(|r| num(r, "response_tokens") > 0.0 && num(r, "latency_ms") > 0.0)
    );
}

#[test]
#[ignore = "needs the MCP Python SDK: run with --ignored and NAVBENCH_TEST_MCP_PYTHON set (.ci/run does)"]
fn navbench_proxy_over_http_refuses_foreign_hosts_and_records_as_calls_happen() {
    let py = mcp_python();
    let s = setup();
    let (record, log) = (s.work.path().join("rec"), s.work.path().join("calls.jsonl"));
    let mut proxy = navbench()
        .args(proxy_args(&s, &record))
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(proxy.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "the proxy exited before listening"
        );
        if let Some(u) = line.trim().strip_prefix("navbench proxy: listening on ") {
            break u.to_string();
        }
    };
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let status = |host: &str| -> String {
        let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        write!(
            tcp,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reply = String::new();
        tcp.read_to_string(&mut reply).unwrap();
        reply.lines().next().unwrap_or("").to_string()
    };
    assert!(
        status("evil.example").contains("403"),
        "a foreign Host must be refused"
    );
    assert!(!status(&addr).contains("403"));

    let config = s.work.path().join("mcp.json");
    let json = serde_json::json!({"mcpServers": {"navbench": {"type": "http", "url": url}}});
    std::fs::write(&config, json.to_string()).unwrap();
    let out = Command::new(&py)
        .arg(AGENT)
        .arg("--config")
        .arg(&config)
        .arg("--log")
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Written as the calls happened: the proxy is still serving.
    let rows = read_csv(&record.join("calls.csv"));
    assert_eq!(as_calls(&rows), logged(&log));
    // SIGTERM, as a user stopping the proxy would send.
    let killed = Command::new("kill")
        .args(["-TERM", &proxy.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = proxy.wait().unwrap();
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{rest}");
    assert!(
        rest.contains(&format!("{} call(s) recorded", rows.len())),
        "{rest}"
    );
}
