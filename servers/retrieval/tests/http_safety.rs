//! The HTTP transport's safety rules, against the real binary: a foreign `Host` or
//! `Origin` is refused (DNS-rebinding protection) on `/mcp` and `/health`, a
//! non-loopback address is not bound without `--allow-remote`, and
//! `index_repository` / `delete_repository` refuse directories outside the allowed
//! roots (`--allow-root`; the workspace and the data directory always).

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

/// Sends one raw HTTP/1.1 request (any `Host` and extra headers) and returns the status
/// code and body.
fn raw(
    addr: &str,
    method: &str,
    path: &str,
    host: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(req.as_bytes()).expect("send");
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const MCP_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

#[test]
fn foreign_host_and_origin_are_refused_loopback_is_served() {
    let fx = fixture();
    let server = spawn_http(&fx, &[]);
    let port = server.addr().rsplit(':').next().unwrap_or("0").to_string();

    // Loopback Host (with and without a loopback Origin) is served.
    let (status, body) = raw(
        server.addr(),
        "POST",
        "/mcp",
        server.addr(),
        &MCP_HEADERS,
        INIT,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("navbench-retrieval"), "{body}");
    let mut with_origin = MCP_HEADERS.to_vec();
    let local_origin = format!("http://localhost:{port}");
    with_origin.push(("Origin", &local_origin));
    let (status, _) = raw(
        server.addr(),
        "POST",
        "/mcp",
        &format!("localhost:{port}"),
        &with_origin,
        INIT,
    );
    assert_eq!(status, 200);
    let (status, _) = raw(server.addr(), "GET", "/health", server.addr(), &[], "");
    assert_eq!(status, 200);

    // A foreign Host: what a DNS-rebound page would send.
    let (status, body) = raw(
        server.addr(),
        "POST",
        "/mcp",
        &format!("evil.example:{port}"),
        &MCP_HEADERS,
        INIT,
    );
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("evil.example") && body.contains("DNS-rebinding"),
        "{body}"
    );
    let (status, _) = raw(server.addr(), "GET", "/health", "evil.example", &[], "");
    assert_eq!(status, 403, "/health is behind the same check");

    // A foreign Origin with a loopback Host.
    let mut foreign = MCP_HEADERS.to_vec();
    foreign.push(("Origin", "https://evil.example"));
    let (status, body) = raw(server.addr(), "POST", "/mcp", server.addr(), &foreign, INIT);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Origin 'https://evil.example'"), "{body}");
    let (status, _) = raw(
        server.addr(),
        "GET",
        "/health",
        server.addr(),
        &[("Origin", "http://evil.example")],
        "",
    );
    assert_eq!(status, 403);
}

#[test]
fn non_loopback_address_needs_allow_remote() {
    let fx = fixture();
    let out = Command::new(env!("CARGO_BIN_EXE_navbench-retrieval"))
        .arg("--model-dir")
        .arg(&fx.model)
        .arg("--data-dir")
        .arg(&fx.data)
        .args(["--http", "0.0.0.0:0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-remote"),
        "{err}"
    );
}

#[tokio::test]
async fn repositories_outside_the_allowed_roots_are_refused() {
    let fx = fixture();
    let args = |extra: &[&std::ffi::OsStr]| {
        let mut v: Vec<std::ffi::OsString> = vec![
            "--model-dir".into(),
            fx.model.clone().into(),
            "--data-dir".into(),
            fx.data.clone().into(),
            "--workspace".into(),
            fx.workspace.clone().into(),
        ];
        v.extend(extra.iter().map(|s| s.to_os_string()));
        v
    };
    let other = fx.other.to_string_lossy().into_owned();

    // Allowed: registered and indexed.
    let allowed = args(&["--allow-root".as_ref(), fx.other.as_os_str()]);
    let refs: Vec<&std::ffi::OsStr> = allowed.iter().map(|s| s.as_os_str()).collect();
    let client = start(&refs, &[]).await;
    let v = ok(&call(&client, "index_repository", json!({"url_or_path": other})).await);
    let id = v["repo_id"].as_str().unwrap_or_default().to_string();
    client.cancel().await.expect("close");

    // Default roots (workspace, data dir): the same directory is refused, saying how
    // to allow it; so are /etc, a file:// URL outside and a link out of the workspace.
    let plain = args(&[]);
    let refs: Vec<&std::ffi::OsStr> = plain.iter().map(|s| s.as_os_str()).collect();
    let client = start(&refs, &[]).await;
    let r = call(&client, "index_repository", json!({"url_or_path": other})).await;
    assert_tool_error(&r, "--allow-root");
    assert_tool_error(&r, "outside the directories this server may use");
    assert_tool_error(
        &call(&client, "index_repository", json!({"url_or_path": "/etc"})).await,
        "refused",
    );
    let url = format!("file://{other}");
    assert_tool_error(
        &call(&client, "index_repository", json!({"url_or_path": url})).await,
        "refused",
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&fx.other, fx.workspace.join("escape")).expect("symlink");
        let link = fx.workspace.join("escape").to_string_lossy().into_owned();
        assert_tool_error(
            &call(&client, "index_repository", json!({"url_or_path": link})).await,
            "refused",
        );
    }
    // Deleting the repository registered outside is refused too; it is still there.
    let r = call(&client, "delete_repository", json!({"repo_id": id})).await;
    assert_tool_error(&r, "delete_repository refused");
    let v = ok(&call(&client, "list_repositories", json!({})).await);
    assert!(
        v["repositories"]
            .as_array()
            .is_some_and(|a| a.iter().any(|r| r["repo_id"] == id.as_str()))
    );
    // Inside the workspace is fine.
    let inside = fx.workspace.join("pkg").to_string_lossy().into_owned();
    ok(&call(&client, "index_repository", json!({"url_or_path": inside})).await);
    client.cancel().await.expect("close");
}
