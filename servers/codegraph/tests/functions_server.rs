//! Spawns the real `navbench-codegraph --tools functions` over stdio and drives its
//! per-function BM25 tools (the paper's BM25 baseline) on a repository the test
//! writes, error paths included.

use std::path::Path;
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::process::Command;

type Client = RunningService<RoleClient, ()>;

fn write(root: &Path, rel: &str, body: &str) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, body).expect("write");
}

/// The server in functions mode, allowed to index under `allowed`.
async fn start(allowed: &Path) -> Client {
    let transport = TokioChildProcess::builder(
        Command::new(env!("CARGO_BIN_EXE_navbench-codegraph")).configure(|cmd| {
            cmd.args(["--tools", "functions", "--allow-root"])
                .arg(allowed);
            cmd.env("RUST_LOG", "warn");
        }),
    )
    .stderr(Stdio::inherit())
    .spawn()
    .map(|(transport, _stderr)| transport)
    .expect("spawn navbench-codegraph");
    ().serve(transport).await.expect("MCP handshake")
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map as JsonObject);
    client.call_tool(params).await.expect("tools/call")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn functions_mode_indexes_and_ranks_per_function_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(
        r,
        "shop/cart.py",
        "class Cart:\n    def total(self):\n        return sum(i.price for i in self.items)\n\n    def clear(self):\n        self.items = []\n\n\ndef checkout(cart):\n    return cart.total()\n",
    );
    write(
        r,
        "shop/tests/test_cart.py",
        "def test_total():\n    assert Cart().total() == 0\n",
    );
    let client = start(r).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, ["index_functions", "search_functions"]);

    let early = call(&client, "search_functions", json!({"query": "total"})).await;
    assert_eq!(early.is_error, Some(true));
    assert!(
        text(&early).contains("Call index_functions first"),
        "{}",
        text(&early)
    );

    // Only the allowed roots: another directory is refused, naming the flag.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let outside = call(
        &client,
        "index_functions",
        json!({"repo_path": elsewhere.path().to_string_lossy()}),
    )
    .await;
    assert_eq!(outside.is_error, Some(true));
    assert!(
        text(&outside).contains("--allow-root"),
        "{}",
        text(&outside)
    );
    let bad = call(
        &client,
        "index_functions",
        json!({"repo_path": r.to_string_lossy(), "test_filter": "none"}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("expected 'path'"), "{}", text(&bad));

    let index = call(
        &client,
        "index_functions",
        json!({"repo_path": r.to_string_lossy()}),
    )
    .await;
    assert_eq!(index.is_error, Some(false), "{}", text(&index));
    let data = index.structured_content.clone().expect("structured");
    assert_eq!(data["documents"], 3);
    assert_eq!(data["test_files"], 1);

    let found = call(
        &client,
        "search_functions",
        json!({"query": "Cart total ignores the item price", "top_k": 2}),
    )
    .await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    let docs = found.structured_content.clone().expect("structured")["documents"].clone();
    let ids: Vec<&str> = docs
        .as_array()
        .expect("documents")
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], "shop/cart.py/Cart/total");
    assert!(text(&found).contains("1. shop/cart.py/Cart/total (lines 2-3) score"));
    client.cancel().await.expect("shutdown");
}
