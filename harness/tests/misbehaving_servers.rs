//! Servers that misbehave, one test per way: each must end as an error outcome (or a
//! start-up error) naming what happened, with the server killed and reaped, and — run
//! through the real `navbench run` — as that instance × variant's error row while the
//! run goes on.
//!
//! The servers are `tests/fixtures/misbehaving_server.py` (a real MCP stdio server in
//! Python, mode chosen by its first argument), spoken to through the real client.

use std::path::{Path, PathBuf};
use std::time::Duration;

use navbench::session::mcp_client::guard::MAX_MESSAGE_BYTES;
use navbench::session::mcp_client::{CallOutcome, McpError, McpSession, ServerSpec};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(5);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehaving_server.py")
}

fn server(mode: &str) -> ServerSpec {
    ServerSpec::new("python3")
        .arg(fixture().display().to_string())
        .arg(mode)
}

/// True when no live process has this pid (gone, or a zombie waiting for init).
fn not_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Polls (bounded) until `pid` is not running.
async fn gone(pid: u32) -> bool {
    for _ in 0..100 {
        if not_running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Starts `mode`, makes one call, and checks the session died with the server reaped.
async fn one_failing_call(mode: &str) -> CallOutcome {
    let mut session = McpSession::start(&server(mode), TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{mode}: start: {e}"));
    let pid = session.pid().expect("pid");
    let outcome = session.call("any", json!({"q": 1})).await;
    assert!(outcome.is_error, "{mode}: {outcome:?}");
    assert!(!session.is_alive(), "{mode}: session still alive");
    assert!(session.failure().is_some(), "{mode}");
    assert!(gone(pid).await, "{mode}: server {pid} still running");
    let after = session.call("any", json!({})).await;
    assert!(after.is_error && after.error.unwrap_or_default().contains("no longer usable"));
    session.shutdown().await;
    outcome
}

#[tokio::test]
async fn well_behaved_fixture_works() {
    let mut session = McpSession::start(&server("ok"), TIMEOUT)
        .await
        .expect("start");
    let out = session.call("any", json!({"q": 1})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text, r#"{"q": 1}"#);
    session.shutdown().await;
}

#[tokio::test]
async fn server_exiting_mid_call() {
    let out = one_failing_call("exit-mid-call").await;
    let msg = out.error.unwrap_or_default();
    assert!(msg.contains("exit status: 5"), "{msg}");
    assert!(msg.contains("exiting mid-call"), "{msg}");
}

#[tokio::test]
async fn server_hanging_in_a_call() {
    let mut session = McpSession::start(&server("hang"), TIMEOUT)
        .await
        .expect("start");
    let pid = session.pid().expect("pid");
    let out = session
        .call_within("any", json!({}), Duration::from_millis(500))
        .await;
    assert!(out.is_error);
    assert!(out.error.unwrap_or_default().contains("timed out"));
    assert!(gone(pid).await);
    session.shutdown().await;
}

#[tokio::test]
async fn server_writing_non_json_to_stdout() {
    let out = one_failing_call("non-json").await;
    let msg = out.error.unwrap_or_default();
    assert!(msg.contains("not a JSON-RPC message"), "{msg}");
    assert!(msg.contains("handling tools/call, please wait"), "{msg}");
    // Named at once, not after the timeout.
    assert!(out.latency < TIMEOUT, "{:?}", out.latency);
}

#[tokio::test]
async fn server_answering_with_50_megabytes() {
    let out = one_failing_call("huge").await;
    let msg = out.error.clone().unwrap_or_default();
    assert!(msg.contains("more than") && msg.contains("cut"), "{msg}");
    // Cut at the limit (plus at most one read chunk), never buffered whole.
    assert!(out.response_bytes > MAX_MESSAGE_BYTES, "{out:?}");
    assert!(
        out.response_bytes <= MAX_MESSAGE_BYTES + 64 * 1024,
        "{out:?}"
    );
    assert!(out.text.is_empty());
}

#[tokio::test]
async fn server_answering_with_the_wrong_id() {
    let out = one_failing_call("wrong-id").await;
    let msg = out.error.unwrap_or_default();
    assert!(msg.contains("matches no request in flight"), "{msg}");
    assert!(out.latency < TIMEOUT, "{:?}", out.latency);
}

#[tokio::test]
async fn server_never_answering_initialize() {
    let err = McpSession::start(&server("no-initialize"), Duration::from_millis(800))
        .await
        .expect_err("no handshake");
    assert!(matches!(err, McpError::StartupTimeout { .. }), "{err}");
    assert!(err.to_string().contains("was killed"), "{err}");
}

#[tokio::test]
async fn grandchildren_are_killed_with_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("grandchild.pid");
    let spec = server("grandchild").arg(pid_file.display().to_string());
    // Once through a clean shutdown, once through dropping the session (as when its
    // task is cancelled).
    for clean in [true, false] {
        let session = McpSession::start(&spec, TIMEOUT).await.expect("start");
        let grandchild: u32 = std::fs::read_to_string(&pid_file)
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid");
        assert!(!not_running(grandchild), "the grandchild should run first");
        if clean {
            session.shutdown().await;
        } else {
            drop(session);
        }
        assert!(
            gone(grandchild).await,
            "grandchild {grandchild} left running"
        );
    }
}

/// True once nothing has this pid: not running, and not a zombie either (reaped).
async fn reaped(pid: u32) -> bool {
    for _ in 0..100 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A grandchild in a session of its own (`setsid`) is out of the server's process
/// group, so the group kill misses it: it is found by the session's token, killed, and
/// reaped by the harness (its subreaper once the server is gone).
#[tokio::test]
async fn setsid_grandchildren_are_killed_and_reaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("grandchild.pid");
    let spec = server("setsid-grandchild").arg(pid_file.display().to_string());
    // Through a clean shutdown, and through dropping the session.
    for clean in [true, false] {
        let end = if clean { "shutdown" } else { "drop" };
        let _ = std::fs::remove_file(&pid_file);
        let session = McpSession::start(&spec, TIMEOUT).await.expect("start");
        let grandchild: u32 = std::fs::read_to_string(&pid_file)
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid");
        assert!(
            !not_running(grandchild),
            "{end}: the grandchild should run first"
        );
        let session_id = std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(')')
                    .next()?
                    .split_whitespace()
                    // After the name: state, ppid, pgrp, session.
                    .nth(3)?
                    .parse::<u32>()
                    .ok()
            });
        assert_eq!(
            session_id,
            Some(grandchild),
            "{end}: the fixture did not setsid"
        );
        if clean {
            session.shutdown().await;
        } else {
            drop(session);
        }
        assert!(
            reaped(grandchild).await,
            "{end}: setsid grandchild {grandchild} left running or unreaped"
        );
    }
}

/// The same failures through `navbench run`: a stand-in `navbench-text` that runs the
/// fixture; each instance gets an error row naming the failure, and the run finishes.
#[test]
fn run_records_each_failure_on_its_row_and_goes_on() {
    use std::os::unix::fs::PermissionsExt as _;
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    for (mode, expect) in [
        ("exit-mid-call", "exit status: 5"),
        ("non-json", "not a JSON-RPC message"),
        ("huge", "more than"),
        ("wrong-id", "matches no request in flight"),
    ] {
        let bin = work.path().join(format!("bin-{mode}"));
        std::fs::create_dir_all(&bin).expect("mkdir");
        let exe = bin.join("navbench-text");
        std::fs::write(
            &exe,
            format!("#!/bin/sh\nexec python3 '{}' {mode}\n", fixture().display()),
        )
        .expect("write");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let out_dir = work.path().join(mode);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_navbench"))
            .args([
                "run",
                "--dataset",
                "mini",
                "--limit",
                "2",
                "--variants",
                "text",
            ])
            .args(["--timeout", "20", "--cache"])
            .arg(&cache)
            .arg("--out")
            .arg(&out_dir)
            .arg("--server-dir")
            .arg(&bin)
            .output()
            .expect("run navbench");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {stderr}");
        let mut rdr = csv::Reader::from_path(out_dir.join("instances.csv")).expect("csv");
        let header = rdr.headers().expect("header").clone();
        let col = |n: &str| header.iter().position(|h| h == n).expect("column");
        let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.expect("row")).collect();
        assert_eq!(
            rows.len(),
            2,
            "{mode}: the run went on to the second instance"
        );
        for r in &rows {
            assert_eq!(&r[col("status")], "error", "{mode}: {r:?}");
            assert!(r[col("error")].contains(expect), "{mode}: {r:?}");
        }
    }
}
