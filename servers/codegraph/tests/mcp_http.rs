//! Spawns the real `navbench-codegraph --http 127.0.0.1:0` and talks to it over
//! Streamable HTTP with rmcp's client: the printed URL, `GET /health`, two sessions
//! sharing the repository initialized at start-up, and a non-loopback address refused
//! without `--allow-remote`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Command, Stdio};

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server on a free loopback port; returns it and its `http://…/mcp` URL,
/// read from the line it prints on stderr once listening.
fn start(root: &std::path::Path, cache: &std::path::Path) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_navbench-codegraph"))
        .args(["--http", "127.0.0.1:0", "--root"])
        .arg(root)
        .arg("--cache")
        .arg(cache)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn navbench-codegraph");
    let stderr = child.stderr.take().expect("stderr");
    let server = Server(child);
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the server exited before saying where it listens")
            .expect("read stderr");
        if let Some(url) = line.strip_prefix("navbench-codegraph: listening on ") {
            break url.trim().to_string();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (server, url)
}

/// `GET /health` over a plain TCP connection; returns the status line and the body.
fn health(url: &str) -> (String, Value) {
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&host).expect("connect");
    write!(
        stream,
        "GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read");
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    let json = body
        .find('{')
        .and_then(|i| body.rfind('}').map(|j| &body[i..=j]))
        .and_then(|b| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    (status, json)
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    std::fs::write(
        pkg.join("util.py"),
        "def helper():\n    stop()\n\n\ndef stop():\n    pass\n",
    )
    .expect("write");
    dir
}

#[tokio::test]
async fn two_http_sessions_share_the_repository_initialized_at_start_up() {
    let (root, cache) = (repo(), tempfile::tempdir().expect("tempdir"));
    let (_server, url) = start(root.path(), cache.path());
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let (status, body) = health(&url);
    assert!(status.contains("200"), "{status}");
    assert_eq!(body["server"], "navbench-codegraph", "{body}");
    assert_eq!(
        body["root"],
        root.path().display().to_string().as_str(),
        "{body}"
    );

    let mut sessions = Vec::new();
    for _ in 0..2 {
        let transport = StreamableHttpClientTransport::from_uri(url.as_str());
        sessions.push(().serve(transport).await.expect("MCP handshake over HTTP"));
    }
    for client in &sessions {
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "search_code"));
        let Value::Object(args) = json!({"query": ["pkg/util.py:helper"]}) else {
            unreachable!()
        };
        let params = CallToolRequestParams::new("search_code").with_arguments(args as JsonObject);
        let r = client.call_tool(params).await.expect("tools/call");
        let text: String = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        assert_eq!(r.is_error, Some(false), "{text}");
        assert!(
            text.contains("Found function `pkg/util.py:helper`."),
            "{text}"
        );
    }
    for client in sessions {
        client.cancel().await.expect("close");
    }
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let out = Command::new(env!("CARGO_BIN_EXE_navbench-codegraph"))
        .args(["--http", "0.0.0.0:0"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run navbench-codegraph");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
}
