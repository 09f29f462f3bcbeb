//! Shared by the integration tests: fixture repositories, the tiny model, a stdio
//! client for the real binary, and a one-shot OpenAI-compatible HTTP server.

#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;
use tokio::process::Command;

/// A running stdio client.
pub type Client = RunningService<RoleClient, ()>;

/// Generous bound for anything that waits on indexing or the file watcher.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Writes `body` at `root/rel`, creating directories.
pub fn write(root: &Path, rel: &str, body: &str) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, body).expect("write");
}

/// Temporary directories of one test: model, data, workspace and a second repository.
pub struct Fixture {
    /// Keeps everything alive.
    pub tmp: tempfile::TempDir,
    /// The tiny model.
    pub model: PathBuf,
    /// `--data-dir`.
    pub data: PathBuf,
    /// `--workspace`.
    pub workspace: PathBuf,
    /// A second local repository for index_repository.
    pub other: PathBuf,
}

/// The workspace: an auth module whose `login` calls a same-file helper and an
/// imported function, a utility module, and a README.
pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let model = root.join("model");
    navbench_retrieval::model::write_tiny_model(&model, 42).expect("tiny model");
    let workspace = root.join("ws");
    write(
        &workspace,
        "pkg/auth.py",
        "from pkg.util import hash_password\n\n\ndef _check(user, digest):\n    return user.digest == digest\n\n\ndef login(user, password):\n    \"\"\"Authenticate a user with a password.\"\"\"\n    digest = hash_password(password)\n    if not _check(user, digest):\n        raise PermissionError('bad password')\n    return True\n",
    );
    write(
        &workspace,
        "pkg/util.py",
        "import hashlib\n\n\ndef hash_password(password):\n    return hashlib.sha256(password.encode()).hexdigest()\n",
    );
    write(&workspace, "pkg/__init__.py", "");
    write(
        &workspace,
        "README.md",
        "# Demo\n\nA demo package with password authentication.\n",
    );
    let other = root.join("other");
    write(
        &other,
        "shop/cart.py",
        "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def add_item(self, item):\n        self.items.append(item)\n\n    def total_price(self):\n        return sum(i.price for i in self.items)\n",
    );
    write(
        &other,
        "shop/payment.py",
        "def charge_card(card, amount):\n    return card.charge(amount)\n",
    );
    write(
        &other,
        "docs/guide.md",
        "# Guide\n\nHow to add items to the cart.\n",
    );
    Fixture {
        model,
        data: root.join("data"),
        workspace,
        other,
        tmp,
    }
}

/// Starts the binary over stdio with `args` and `envs`.
pub async fn start(args: &[&std::ffi::OsStr], envs: &[(&str, &str)]) -> Client {
    let transport = TokioChildProcess::builder(
        Command::new(env!("CARGO_BIN_EXE_navbench-retrieval")).configure(|cmd| {
            cmd.args(args);
            cmd.env("RUST_LOG", "warn");
            for k in [
                "NAVBENCH_LLM_BASE_URL",
                "NAVBENCH_LLM_MODEL",
                "NAVBENCH_LLM_API_KEY",
                "NAVBENCH_MODEL_DIR",
            ] {
                cmd.env_remove(k);
            }
            for (k, v) in envs {
                cmd.env(k, v);
            }
        }),
    )
    .stderr(Stdio::inherit())
    .spawn()
    .map(|(transport, _stderr)| transport)
    .expect("spawn navbench-retrieval");
    ().serve(transport).await.expect("MCP handshake")
}

/// Starts the binary over stdio with the fixture's model and data dirs.
pub async fn start_with(fx: &Fixture, workspace: bool, envs: &[(&str, &str)]) -> Client {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "--model-dir".as_ref(),
        fx.model.as_os_str(),
        "--data-dir".as_ref(),
        fx.data.as_os_str(),
        // The tests index repositories beside the workspace (`other`, git upstreams).
        "--allow-root".as_ref(),
        fx.tmp.path().as_os_str(),
    ];
    if workspace {
        args.push("--workspace".as_ref());
        args.push(fx.workspace.as_os_str());
    }
    start(&args, envs).await
}

/// Calls a tool.
pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map as JsonObject);
    client.call_tool(params).await.expect("tools/call")
}

/// The text of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts success; returns the structured content.
pub fn ok(result: &CallToolResult) -> Value {
    let t = text(result);
    assert_eq!(result.is_error, Some(false), "expected success, got {t}");
    result
        .structured_content
        .clone()
        .expect("structured content")
}

/// Asserts a tool error whose text contains `needle`.
pub fn assert_tool_error(result: &CallToolResult, needle: &str) {
    let t = text(result);
    assert_eq!(result.is_error, Some(true), "expected an error, got {t}");
    assert!(t.contains(needle), "error {t:?} lacks {needle:?}");
}

/// Calls `tool` until `done` accepts the result (or panics after [`PATIENCE`]).
pub async fn poll(
    client: &Client,
    tool: &str,
    args: Value,
    done: impl Fn(&CallToolResult) -> bool,
) -> CallToolResult {
    let start = Instant::now();
    loop {
        let r = call(client, tool, args.clone()).await;
        if done(&r) {
            return r;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{tool} never reached the expected state; last: {}",
            text(&r)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Files of a `codebase_retrieval` / `search_code` structured result.
pub fn result_files(v: &Value, key: &str) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r[key].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Makes `dir` a git repository and commits everything; returns the commit id.
pub fn git_commit_all(dir: &Path, message: &str) -> String {
    let repo = git2::Repository::open(dir)
        .or_else(|_| git2::Repository::init(dir))
        .expect("git init");
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
        .expect("add");
    index.update_all(["*"].iter(), None).expect("update");
    index.write().expect("write index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("find tree");
    let sig = git2::Signature::now("t", "t@example.org").expect("sig");
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .expect("commit")
        .to_string()
}

/// A one-shot OpenAI-compatible server on 127.0.0.1 that answers every chat request
/// with `content`; returns its base URL and a handle yielding the requests received.
pub fn canned_llm(
    content: &str,
    requests: usize,
) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let body = serde_json::json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": content}}]
    })
    .to_string();
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..requests {
            let Ok((stream, _)) = listener.accept() else {
                break;
            };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut head = String::new();
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut req = vec![0u8; length];
            let _ = reader.read_exact(&mut req);
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            seen.push(format!("{head}{}", String::from_utf8_lossy(&req)));
        }
        seen
    });
    (format!("http://{addr}/v1"), handle)
}

/// The real binary serving Streamable HTTP on a free loopback port (`--http
/// 127.0.0.1:0`) for a fixture; killed and reaped when dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`, as the server printed it (without `/mcp`).
    pub base: String,
}

impl HttpServer {
    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts [`HttpServer`] on `fx` (model, data dir, workspace) with `extra` arguments,
/// and waits for the line saying where it listens; its other stderr lines are echoed.
pub fn spawn_http(fx: &Fixture, extra: &[&std::ffi::OsStr]) -> HttpServer {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_navbench-retrieval"))
        .arg("--model-dir")
        .arg(&fx.model)
        .arg("--data-dir")
        .arg(&fx.data)
        .arg("--workspace")
        .arg(&fx.workspace)
        .args(extra)
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .env_remove("NAVBENCH_LLM_BASE_URL")
        .env_remove("NAVBENCH_LLM_MODEL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix(navbench_retrieval::http::LISTENING_PREFIX) {
                let _ = tx.send(url.trim_end_matches("/mcp").to_string());
            } else {
                eprintln!("{line}");
            }
        }
    });
    let base = rx
        .recv_timeout(PATIENCE)
        .expect("the server never said where it listens");
    HttpServer { child, base }
}
