//! Odd repositories every server's `tests/odd_repos.rs` indexes and queries (included
//! with `#[path]`; this directory is no test target of its own): empty, without Python,
//! and one holding a 20 MB generated module, binary files named `.py`, syntax errors,
//! deeply nested code, CRLF line ends and a byte-order mark. Each server must index
//! them and answer without panicking.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;

/// A running stdio client.
pub type Client = RunningService<RoleClient, ()>;

/// Longest any call may take (the 20 MB module is parsed in the first ones).
pub const PER_CALL: Duration = Duration::from_secs(180);

/// Size of the generated module.
pub const BIG_BYTES: usize = 20 * 1024 * 1024;

/// Starts `bin` with `args` over stdio.
pub async fn spawn(bin: &str, args: &[&std::ffi::OsStr]) -> Client {
    let transport =
        TokioChildProcess::builder(tokio::process::Command::new(bin).configure(|cmd| {
            cmd.args(args);
            cmd.env("RUST_LOG", "error");
        }))
        .stderr(Stdio::inherit())
        .spawn()
        .map(|(transport, _stderr)| transport)
        .expect("spawn the server");
    ().serve(transport).await.expect("MCP handshake")
}

/// Calls `tool`, bounded by [`PER_CALL`]; panics on a hang or a dead server.
pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map as JsonObject);
    tokio::time::timeout(PER_CALL, client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} hung"))
        .unwrap_or_else(|e| panic!("{tool}: the server stopped answering ({e})"))
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

/// Asserts success and returns the text.
pub fn ok_text(result: &CallToolResult) -> String {
    let t = text(result);
    assert_eq!(
        result.is_error,
        Some(false),
        "expected success, got {t:.600}"
    );
    t
}

fn write(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, body).expect("write");
}

/// An empty directory.
pub fn empty(tmp: &Path) -> PathBuf {
    let root = tmp.join("empty");
    std::fs::create_dir_all(&root).expect("mkdir");
    root
}

/// A repository without a single Python file.
pub fn no_python(tmp: &Path) -> PathBuf {
    let root = tmp.join("no_python");
    write(
        &root,
        "README.md",
        b"# Docs only\n\nNothing to import here.\n",
    );
    write(&root, "data/config.json", b"{\"answer\": 42}\n");
    write(&root, "src/main.rs", b"fn main() { println!(\"hi\"); }\n");
    root
}

/// Depth of the nested functions and of the nested brackets in `pkg/deep.py`.
pub const NESTED_DEFS: usize = 90;
/// Depth of the nested list literal.
pub const NESTED_BRACKETS: usize = 3000;

/// The odd repository: `pkg/generated.py` (20 MB), `pkg/blob.py` and `pkg/image.py`
/// (binary), `pkg/broken.py` (syntax errors), `pkg/deep.py` (nesting), `pkg/crlf.py`,
/// `pkg/bom.py`, and an ordinary `pkg/normal.py` that must still be found.
pub fn odd(tmp: &Path) -> PathBuf {
    let root = tmp.join("odd");
    write(
        &root,
        "pkg/normal.py",
        b"def ordinary_function(a, b):\n    \"\"\"Adds two numbers.\"\"\"\n    return a + b\n",
    );
    write(&root, "pkg/__init__.py", b"");
    let mut big = String::with_capacity(BIG_BYTES + 64);
    big.push_str("# generated\nTABLE = {\n");
    let mut i = 0usize;
    while big.len() < BIG_BYTES {
        big.push_str(&format!("    'key_{i:08}': {i},\n"));
        i += 1;
    }
    big.push_str("}\n\ndef generated_lookup(k):\n    return TABLE[k]\n");
    write(&root, "pkg/generated.py", big.as_bytes());
    let blob: Vec<u8> = (0..65_536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    write(&root, "pkg/blob.py", &blob);
    write(
        &root,
        "pkg/image.py",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01def fake(): pass\0\xff\xfe",
    );
    write(
        &root,
        "pkg/broken.py",
        b"def broken_function(:\n    return )(\nclass Unfinished(\n    def method(self) -> :\n\tx = [1, 2\n\"\"\"unterminated\n",
    );
    let mut deep = String::new();
    for d in 0..NESTED_DEFS {
        deep.push_str(&format!("{}def level_{d}():\n", "    ".repeat(d)));
    }
    deep.push_str(&format!("{}return 0\n", "    ".repeat(NESTED_DEFS)));
    deep.push_str(&format!(
        "\nDEEP = {}0{}\n",
        "[".repeat(NESTED_BRACKETS),
        "]".repeat(NESTED_BRACKETS)
    ));
    deep.push_str(&format!(
        "\ndef deep_expression():\n    return {}1{}\n",
        "(".repeat(NESTED_BRACKETS),
        ")".repeat(NESTED_BRACKETS)
    ));
    write(&root, "pkg/deep.py", deep.as_bytes());
    write(
        &root,
        "pkg/crlf.py",
        b"class CrlfClass:\r\n    def crlf_method(self):\r\n        return 'windows'\r\n",
    );
    write(
        &root,
        "pkg/bom.py",
        b"\xef\xbb\xbfdef bom_function():\n    return 'bom'\n",
    );
    root
}
