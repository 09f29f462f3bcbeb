//! Spawns the real `navbench-text` binary over stdio with rmcp's child-process client
//! transport and exercises every tool against a small repository in a tempdir.

use std::path::Path;
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::process::Command;

type Client = RunningService<RoleClient, ()>;

fn write(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, body).expect("write");
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(
        r,
        "pkg/core.py",
        b"import re\n\nclass Parser:\n    def parse(self, text):\n        return re.split(',', text)\n",
    );
    write(r, "pkg/__init__.py", b"from .core import Parser\n");
    write(
        r,
        "tests/test_core.py",
        b"def test_parse():\n    assert Parser().parse('a,b')\n",
    );
    write(r, "vendor/lib.py", b"def parse(): pass\n");
    write(r, ".gitignore", b"vendor/\n");
    write(r, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0parse\0");
    let long: String = (1..=2100).map(|i| format!("x{i} = {i}\n")).collect();
    write(r, "pkg/big.py", long.as_bytes());
    dir
}

async fn start(root: &Path) -> Client {
    let transport = TokioChildProcess::builder(
        Command::new(env!("CARGO_BIN_EXE_navbench-text")).configure(|cmd| {
            cmd.arg("--root").arg(root);
        }),
    )
    .stderr(Stdio::inherit())
    .spawn()
    .map(|(transport, _stderr)| transport)
    .expect("spawn navbench-text");
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

fn assert_tool_error(result: &CallToolResult, needle: &str) {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error, got {}",
        text(result)
    );
    let t = text(result);
    assert!(t.contains(needle), "error {t:?} lacks {needle:?}");
}

#[tokio::test]
async fn lists_tools_with_schemas_and_instructions() {
    let dir = fixture();
    let client = start(dir.path()).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("navbench-text")
    );
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("grep"))
    );
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, ["grep", "list_files", "read_file"]);
    assert!(tools.iter().all(|t| t.output_schema.is_some()));
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn list_files_respects_gitignore_and_globs() {
    let dir = fixture();
    let client = start(dir.path()).await;
    let all = call(&client, "list_files", json!({})).await;
    assert_eq!(all.is_error, Some(false));
    assert_eq!(
        text(&all),
        "logo.png\npkg/__init__.py\npkg/big.py\npkg/core.py\ntests/test_core.py"
    );
    let structured = all.structured_content.clone().expect("structured");
    assert_eq!(structured["total_files"], 5);
    assert_eq!(structured["truncated"], 0);

    let py = call(
        &client,
        "list_files",
        json!({"glob": "*.py", "max_results": 2}),
    )
    .await;
    assert!(text(&py).starts_with("pkg/__init__.py\npkg/big.py\n... [truncated: 2 more files"));
    assert_eq!(py.structured_content.expect("structured")["truncated"], 2);

    let bad = call(&client, "list_files", json!({"glob": "pkg/[x"})).await;
    assert_tool_error(&bad, "invalid glob 'pkg/[x'");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn read_file_lines_ranges_and_truncation() {
    let dir = fixture();
    let client = start(dir.path()).await;
    let r = call(
        &client,
        "read_file",
        json!({"path": "pkg/core.py", "start_line": 3, "end_line": 4}),
    )
    .await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(
        text(&r),
        "     3\tclass Parser:\n     4\t    def parse(self, text):"
    );
    let s = r.structured_content.expect("structured");
    assert_eq!(s["total_lines"], 5);
    assert_eq!(
        s["lines"][1],
        json!({"line": 4, "text": "    def parse(self, text):"})
    );

    let big = call(&client, "read_file", json!({"path": "./pkg/big.py"})).await;
    assert!(
        text(&big).ends_with("... [truncated: 100 more lines ('pkg/big.py' has 2100 lines); call read_file with start_line=2001 to continue]"),
        "{}",
        text(&big).lines().last().unwrap_or_default()
    );
    assert_eq!(
        big.structured_content.expect("structured")["next_start_line"],
        2001
    );

    let past = call(
        &client,
        "read_file",
        json!({"path": "pkg/core.py", "start_line": 9}),
    )
    .await;
    assert_tool_error(&past, "has 5 lines");
    let missing = call(&client, "read_file", json!({"path": "pkg/nope.py"})).await;
    assert_tool_error(&missing, "'pkg/nope.py' does not exist");
    let binary = call(&client, "read_file", json!({"path": "logo.png"})).await;
    assert_tool_error(&binary, "binary");
    let no_path = call(&client, "read_file", json!({})).await;
    assert_tool_error(&no_path, "missing field `path`");
    let wrong_type = call(
        &client,
        "read_file",
        json!({"path": "pkg/core.py", "start_line": "x"}),
    )
    .await;
    assert_tool_error(&wrong_type, "invalid arguments for read_file");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn paths_escaping_the_root_are_refused() {
    let dir = fixture();
    let outside = tempfile::tempdir().expect("outside");
    write(outside.path(), "secret.txt", b"top secret\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("pkg/link.txt"),
    )
    .expect("symlink");
    let client = start(dir.path()).await;

    let up = call(&client, "read_file", json!({"path": "../secret.txt"})).await;
    assert_tool_error(&up, "leaves the repository root");
    assert_tool_error(&up, "list_files");
    let abs = outside.path().join("secret.txt");
    let absolute = call(&client, "read_file", json!({"path": abs.to_string_lossy()})).await;
    assert_tool_error(&absolute, "outside the repository root");
    #[cfg(unix)]
    {
        let link = call(&client, "read_file", json!({"path": "pkg/link.txt"})).await;
        assert_tool_error(&link, "symbolic link");
        assert!(!text(&link).contains("top secret"));
    }
    // An absolute path inside the root is fine.
    let inside = dir.path().join("pkg/core.py");
    let ok = call(
        &client,
        "read_file",
        json!({"path": inside.to_string_lossy(), "end_line": 1}),
    )
    .await;
    assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn grep_formats_counts_and_skips() {
    let dir = fixture();
    let client = start(dir.path()).await;
    let r = call(&client, "grep", json!({"pattern": "parse"})).await;
    assert_eq!(r.is_error, Some(false));
    // vendor/ is gitignored and logo.png is binary: neither shows up.
    assert_eq!(
        text(&r),
        "pkg/core.py:4:    def parse(self, text):\ntests/test_core.py:1:def test_parse():\ntests/test_core.py:2:    assert Parser().parse('a,b')"
    );
    let s = r.structured_content.expect("structured");
    assert_eq!(s["total_matches"], 3);
    assert_eq!(s["matches"][0]["path"], "pkg/core.py");
    assert_eq!(s["matches"][0]["line"], 4);

    let ctx = call(
        &client,
        "grep",
        json!({"pattern": "class", "context_lines": 1, "glob": "pkg/*.py"}),
    )
    .await;
    assert_eq!(
        text(&ctx),
        "pkg/core.py-2-\npkg/core.py:3:class Parser:\npkg/core.py-4-    def parse(self, text):"
    );

    let many = call(
        &client,
        "grep",
        json!({"pattern": "^x\\d+ =", "max_results": 5}),
    )
    .await;
    assert!(
        text(&many).ends_with("... [truncated: 2095 more matches in 1 files (2100 matches in 1 files in total); narrow the pattern or glob, or raise max_results (at most 1000)]"),
        "{}",
        text(&many)
    );
    assert_eq!(
        many.structured_content.expect("structured")["truncated"],
        2095
    );

    let bad = call(&client, "grep", json!({"pattern": "parse("})).await;
    assert_tool_error(&bad, "invalid regular expression");
    assert_tool_error(&bad, "fixed_strings=true");
    let literal = call(
        &client,
        "grep",
        json!({"pattern": "parse(", "fixed_strings": true}),
    )
    .await;
    assert_eq!(
        literal.structured_content.expect("structured")["total_matches"],
        3
    );
    let insensitive = call(
        &client,
        "grep",
        json!({"pattern": "PARSER", "case_insensitive": true}),
    )
    .await;
    assert_eq!(
        insensitive.structured_content.expect("structured")["total_matches"],
        3
    );
    let ctx_range = call(
        &client,
        "grep",
        json!({"pattern": "x", "context_lines": 50}),
    )
    .await;
    assert_tool_error(&ctx_range, "between 0 and 20");
    client.cancel().await.expect("close");
}
