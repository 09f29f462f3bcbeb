//! Spawns the real `navbench-codegraph` binary over stdio with rmcp's child-process
//! client transport and drives every tool, error paths included, against small
//! repositories created in temporary directories.

use std::path::{Path, PathBuf};
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

/// A small package: SPEC.md's worked example (§1.9), plus a root-level file and a test.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "pkg/__init__.py", "from .core import Engine\n");
    write(
        r,
        "pkg/core.py",
        "from pkg.util import helper, stop\nfrom pkg.base import Base\n\n\nclass Engine(Base):\n    \"\"\"Runs things.\"\"\"\n\n    def run(self):\n        def inner():\n            pass\n        inner()\n        stop()\n        self.stop()\n\n    def stop(self):\n        pass\n\n\ndef make():\n    helper()\n    return Engine()\n",
    );
    write(
        r,
        "pkg/util.py",
        "def helper():\n    stop()\n\n\ndef stop():\n    pass\n",
    );
    write(
        r,
        "pkg/base.py",
        "class Base:\n    def run(self):\n        pass\n",
    );
    write(r, "setup.py", "def setup_all():\n    pass\n");
    write(
        r,
        "pkg/session.py",
        "class Session:\n    def send(self, request):\n        cookies = request.cookies\n        return merge_cookies(cookies, self.jar)\n\n\ndef merge_cookies(a, b):\n    return a\n",
    );
    write(
        r,
        "tests/test_core.py",
        "from pkg.core import Engine\n\n\ndef test_run():\n    Engine().run()\n",
    );
    write(r, "README.md", "# demo\nline two\n");
    dir
}

/// The server with `--root` (initialized at start-up, and allowed) when given.
async fn start(cache: &Path, root: Option<&Path>) -> Client {
    start_allowing(cache, root, &[]).await
}

/// The server with `--root` when given and an `--allow-root` per `allowed`.
async fn start_allowing(cache: &Path, root: Option<&Path>, allowed: &[&Path]) -> Client {
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    if let Some(root) = root {
        args.extend(["--root".into(), root.into()]);
    }
    for dir in allowed {
        args.extend(["--allow-root".into(), dir.into()]);
    }
    start_with(cache, &args).await
}

/// The server with `--cache cache` and `args`.
async fn start_with(cache: &Path, args: &[std::ffi::OsString]) -> Client {
    let transport = TokioChildProcess::builder(
        Command::new(env!("CARGO_BIN_EXE_navbench-codegraph")).configure(|cmd| {
            cmd.arg("--cache").arg(cache).args(args);
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

fn ok(result: &CallToolResult) -> String {
    let t = text(result);
    assert_eq!(result.is_error, Some(false), "expected success, got {t}");
    t
}

fn structured(result: &CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structured content")
}

fn assert_tool_error(result: &CallToolResult, needle: &str) {
    let t = text(result);
    assert_eq!(result.is_error, Some(true), "expected an error, got {t}");
    assert!(t.contains(needle), "error {t:?} lacks {needle:?}");
}

async fn init(client: &Client, root: &Path, force: bool) -> CallToolResult {
    call(
        client,
        "init_repository",
        json!({"repo_path": root.to_string_lossy(), "force_rebuild": force}),
    )
    .await
}

fn graph_files(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![cache.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "graph.bin") {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test]
async fn lists_tools_with_schemas_and_instructions() {
    let cache = tempfile::tempdir().expect("cache");
    let client = start(cache.path(), None).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("navbench-codegraph")
    );
    let instructions = info.instructions.clone().unwrap_or_default();
    for tool in [
        "init_repository",
        "explore_tree",
        "search_code",
        "get_dependencies",
        "get_code",
    ] {
        assert!(instructions.contains(tool), "{instructions}");
    }
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "explore_tree",
            "get_code",
            "get_code_snippet",
            "get_dependencies",
            "init_repository",
            "reset_repository",
            "search_code",
            "search_entities"
        ]
    );
    assert!(tools.iter().all(|t| t.output_schema.is_some()));
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn every_tool_before_init_asks_for_init_repository() {
    let cache = tempfile::tempdir().expect("cache");
    let client = start_allowing(cache.path(), None, &[cache.path()]).await;
    for (tool, args) in [
        ("get_dependencies", json!({"entities": ["/"]})),
        ("explore_tree", json!({})),
        ("search_code", json!({"query": ["x"]})),
        ("search_entities", json!({"query": ["x"]})),
        ("get_code", json!({"entities": ["a.py"]})),
        (
            "get_code_snippet",
            json!({"file": "a.py", "start_line": 1, "end_line": 2}),
        ),
    ] {
        let r = call(&client, tool, args).await;
        assert_tool_error(&r, "Call init_repository first");
    }
    let r = call(&client, "reset_repository", json!({})).await;
    assert!(ok(&r).contains("nothing to reset"));
    let r = call(
        &client,
        "init_repository",
        json!({"repo_path": cache.path().join("definitely/not/here")}),
    )
    .await;
    assert_tool_error(&r, "repo_path must be an existing directory");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn full_workflow_through_every_tool() {
    let repo = fixture();
    let cache = tempfile::tempdir().expect("cache");
    let client = start_allowing(cache.path(), None, &[repo.path()]).await;

    let r = init(&client, repo.path(), false).await;
    let t = ok(&r);
    let s = structured(&r);
    assert_eq!(s["cache"], "miss", "{t}");
    assert_eq!(s["files"], 7);
    assert_eq!(s["classes"], 3);
    assert_eq!(s["content_search"], true);
    assert_eq!(s["content_index"], "built");
    assert!(t.contains("cache: miss") && t.contains("Next:"), "{t}");

    // The tree from the root: the original's layout view.
    let r = call(
        &client,
        "explore_tree",
        json!({"dependency_types": ["contains"], "depth": 1}),
    )
    .await;
    let t = ok(&r);
    assert!(t.starts_with("/\n"), "{t}");
    assert!(t.contains("── contains ── pkg"), "{t}");
    assert!(t.contains("contains ── setup.py"), "{t}");
    assert!(
        !t.contains("tests"),
        "explore_tree leaves test directories out: {t}"
    );

    // Like SPEC.md's worked example (§2.4): both directions, 2 hops; a node is
    // expanded once (pkg/core.py under make is a leaf), invokes in builder order.
    let r = call(
        &client,
        "explore_tree",
        json!({"path": "pkg/core.py:Engine", "direction": "both"}),
    )
    .await;
    let t = ok(&r);
    let want = "\
pkg/core.py:Engine
├── contains ── pkg/core.py:Engine.run
│               ├── contains ── pkg/core.py:Engine.run.inner
│               ├── invokes ── pkg/core.py:Engine.run.inner
│               ├── invokes ── pkg/core.py:Engine.stop
│               └── invokes ── pkg/util.py:stop
├── contains ── pkg/core.py:Engine.stop
├── inherits ── pkg/base.py:Base
│               └── contains ── pkg/base.py:Base.run
├── contains-by ── pkg/core.py
│                  └── contains-by ── pkg
├── imports-by ── pkg/__init__.py
│                 └── contains-by ── pkg
└── invokes-by ── pkg/core.py:make
                  └── contains-by ── pkg/core.py";
    assert_eq!(t, want);
    assert_eq!(structured(&r)["lines"][1]["relation"], "contains");

    // DOT, downstream, one hop.
    let r = call(
        &client,
        "get_dependencies",
        json!({"entities": ["pkg/core.py:Engine.run"], "direction": "outgoing", "depth": 1}),
    )
    .await;
    let t = ok(&r);
    assert_eq!(
        t,
        "digraph {\n\"pkg/core.py:Engine.run\";\n\"pkg/core.py:Engine.run.inner\";\n\"pkg/core.py:Engine.stop\";\n\"pkg/util.py:stop\";\n\"pkg/core.py:Engine.run\" -> \"pkg/core.py:Engine.run.inner\" [type=contains];\n\"pkg/core.py:Engine.run\" -> \"pkg/core.py:Engine.run.inner\" [type=invokes];\n\"pkg/core.py:Engine.run\" -> \"pkg/core.py:Engine.stop\" [type=invokes];\n\"pkg/core.py:Engine.run\" -> \"pkg/util.py:stop\" [type=invokes];\n}"
    );
    let s = structured(&r);
    assert_eq!(s["edges"].as_array().map(Vec::len), Some(4));
    assert_eq!(s["direction"], "downstream");

    // Callers (default depth 2) with an entity-type filter; test callers are skipped.
    let r = call(
        &client,
        "get_dependencies",
        json!({"entities": ["pkg/util.py:stop"], "direction": "upstream", "entity_types": ["function"], "dependency_types": ["invokes"]}),
    )
    .await;
    let t = ok(&r);
    assert!(
        t.contains("\"pkg/util.py:helper\" -> \"pkg/util.py:stop\" [type=invokes];"),
        "{t}"
    );
    assert!(
        t.contains("\"pkg/core.py:make\" -> \"pkg/util.py:helper\" [type=invokes];"),
        "{t}"
    );
    assert!(!t.contains("test_"), "{t}");

    // Fuzzy entity search.
    let r = call(
        &client,
        "search_entities",
        json!({"query": ["Engine run"], "top_k": 3}),
    )
    .await;
    let t = ok(&r);
    let s = structured(&r);
    assert_eq!(
        s["results"][0]["matches"][0]["id"], "pkg/core.py:Engine.run",
        "{t}"
    );
    assert_eq!(s["results"][0]["matches"][0]["score"], 100.0);
    assert_eq!(s["results"][0]["matches"].as_array().map(Vec::len), Some(3));
    let r = call(
        &client,
        "search_entities",
        json!({"query": "Base", "entity_type": "class"}),
    )
    .await;
    assert_eq!(
        structured(&r)["results"][0]["matches"][0]["id"],
        "pkg/base.py:Base"
    );

    // search_code: exact id → complete code; a name → preview; root-level files searched.
    let r = call(
        &client,
        "search_code",
        json!({"query": ["pkg/util.py:helper"]}),
    )
    .await;
    let t = ok(&r);
    assert!(
        t.starts_with("##Searching for term \"pkg/util.py:helper\"...\n### Search Result:\nFound function `pkg/util.py:helper`.\nSource: Exact match found for entity name `pkg/util.py:helper`.\n```\n1 | def helper():\n2 |     stop()\n```"),
        "{t}"
    );
    let r = call(&client, "search_code", json!({"query": ["setup_all"]})).await;
    let t = ok(&r);
    assert!(t.contains("Found function `setup.py:setup_all`."), "{t}");
    assert!(
        t.contains("Source: Match found for entity name `setup_all`."),
        "{t}"
    );
    let r = call(
        &client,
        "search_code",
        json!({"query": ["class Engine", "make"]}),
    )
    .await;
    let t = ok(&r);
    let s = structured(&r);
    assert_eq!(
        s["terms"],
        json!(["class Engine", "make", "class Engine make"])
    );
    assert!(t.contains("Found class `pkg/core.py:Engine`."), "{t}");
    assert!(t.contains("Found function `pkg/core.py:make`."), "{t}");

    // A keyword found only in code bodies: BM25 content search.
    let r = call(&client, "search_code", json!({"query": ["jar"]})).await;
    let t = ok(&r);
    // The file is one chunk: previews of its spans, nested ones (Session.send)
    // folded into the enclosing class's preview.
    assert!(
        t.contains("Found class `pkg/session.py:Session`.\nSource: Retrieved code content using keyword search (bm25).\n```\n1 | class Session:"),
        "{t}"
    );
    assert!(
        !t.contains("Found function `pkg/session.py:Session.send`"),
        "{t}"
    );
    assert_eq!(structured(&r)["content_search"], true);
    // Content hits carry their BM25 rank (the text groups them by file); name
    // lookups carry none.
    let hits = &structured(&r)["groups"][0]["results"];
    let ranks: Vec<u64> = hits
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["bm25_rank"].as_u64())
        .collect();
    assert!(ranks.contains(&1), "{hits}");
    assert!(ranks.iter().all(|r| *r >= 1), "{hits}");

    // get_code: numbered code, and candidates for an unknown name.
    let r = call(
        &client,
        "get_code",
        json!({"entities": ["pkg/core.py:Engine.stop", "pkg/core.py:Engine.stopp"]}),
    )
    .await;
    let t = ok(&r);
    assert!(
        t.contains("```\n15 | def stop(self):\n16 |         pass\n```"),
        "{t}"
    );
    assert!(t.contains("Invalid name. \nHint: Valid entity name"), "{t}");
    assert!(t.contains("function: `pkg/core.py:Engine.stop`"), "{t}");
    let s = structured(&r);
    assert_eq!(s["entities"][0]["found"], true);
    assert_eq!(s["entities"][1]["found"], false);

    // get_code_snippet on a graph file and on a non-Python file.
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "pkg/util.py", "start_line": 5, "end_line": 100}),
    )
    .await;
    let t = ok(&r);
    assert!(
        t.contains("```\n5 | def stop():\n6 |     pass\n7 | \n```"),
        "{t}"
    );
    assert_eq!(structured(&r)["end_line"], 7);
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "README.md", "start_line": 2, "end_line": 2}),
    )
    .await;
    assert!(ok(&r).contains("2 | line two"));

    // reset: later calls ask for init again.
    let r = call(&client, "reset_repository", json!({})).await;
    assert!(ok(&r).contains("Repository context reset"));
    let r = call(&client, "get_code", json!({"entities": ["setup.py"]})).await;
    assert_tool_error(&r, "init_repository");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn bad_arguments_are_actionable_errors() {
    let repo = fixture();
    let cache = tempfile::tempdir().expect("cache");
    let client = start(cache.path(), Some(repo.path())).await;

    let r = call(
        &client,
        "get_dependencies",
        json!({"entities": ["pkg/core.py:Engine"], "direction": "sideways"}),
    )
    .await;
    assert_tool_error(
        &r,
        "Invalid value for `direction`: Expected one of 'downstream', 'upstream', and 'both'. Received: 'sideways'.",
    );
    let r = call(
        &client,
        "get_dependencies",
        json!({"entities": ["pkg/core.py:Engine"], "depth": -2}),
    )
    .await;
    assert_tool_error(
        &r,
        "It must be either -1 or a non-negative integer (>= 0). Received: -2.",
    );
    let r = call(
        &client,
        "get_dependencies",
        json!({"entities": ["pkg/core.py:Engine"], "dependency_types": ["calls"]}),
    )
    .await;
    assert_tool_error(&r, "Invalid edge types [\"calls\"] in edge_type_filter");
    let r = call(
        &client,
        "explore_tree",
        json!({"path": "pkg", "entity_types": ["method"]}),
    )
    .await;
    assert_tool_error(&r, "Invalid node types [\"method\"]");
    let r = call(
        &client,
        "search_entities",
        json!({"query": ["x"], "entity_type": "module"}),
    )
    .await;
    assert_tool_error(&r, "Invalid entity_type 'module'");
    let r = call(&client, "get_dependencies", json!({"entities": []})).await;
    assert_tool_error(&r, "entities is empty");
    let r = call(&client, "get_dependencies", json!({"entity": ["x"]})).await;
    assert_tool_error(&r, "unknown field `entity`");
    assert_tool_error(&r, "Example of valid arguments");

    // Unknown entities answer with the closest ids.
    let r = call(
        &client,
        "get_dependencies",
        json!({"entities": ["pkg/core.py:Engin"]}),
    )
    .await;
    assert_tool_error(
        &r,
        "The entity name `pkg/core.py:Engin` is invalid. Based on your input, here are some candidate entities you might be referring to:\n",
    );
    assert!(
        text(&r).contains("class: `pkg/core.py:Engine`"),
        "{}",
        text(&r)
    );
    assert_eq!(structured(&r)["invalid"][0]["reason"], "unknown");
    let r = call(
        &client,
        "explore_tree",
        json!({"path": "tests/test_core.py"}),
    )
    .await;
    assert_tool_error(&r, "No results for the test entity: `tests/test_core.py`");
    let r = call(
        &client,
        "get_code",
        json!({"entities": ["pkg/util.py:helpr"]}),
    )
    .await;
    assert_tool_error(&r, "function: `pkg/util.py:helper`");

    // Paths and line ranges.
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "../etc/passwd", "start_line": 1, "end_line": 2}),
    )
    .await;
    assert_tool_error(&r, "leaves the repository root");
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "/etc/passwd", "start_line": 1, "end_line": 2}),
    )
    .await;
    assert_tool_error(&r, "outside the repository root");
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "pkg/util.py", "start_line": 50, "end_line": 60}),
    )
    .await;
    assert_tool_error(
        &r,
        "start_line 50 is past the end of 'pkg/util.py', which has 7 lines",
    );
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "pkg/util.py", "start_line": 3, "end_line": 2}),
    )
    .await;
    assert_tool_error(&r, "end_line (2) is before start_line (3)");
    let r = call(
        &client,
        "get_code_snippet",
        json!({"file": "pkg/util.py", "start_line": 0, "end_line": 2}),
    )
    .await;
    assert_tool_error(&r, "start_line must be at least 1");

    // Empty queries.
    let r = call(&client, "search_code", json!({"query": []})).await;
    assert_tool_error(&r, "query is empty");
    let r = call(&client, "search_entities", json!({"query": ["  "]})).await;
    assert_tool_error(&r, "query is empty");
    // A query that tokenizes to nothing does not crash.
    let r = call(&client, "search_code", json!({"query": ["()"]})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn cache_hit_force_rebuild_and_corrupt_file() {
    let repo = fixture();
    let cache = tempfile::tempdir().expect("cache");
    let client = start_allowing(cache.path(), None, &[repo.path()]).await;

    let r = init(&client, repo.path(), false).await;
    assert_eq!(structured(&r)["cache"], "miss", "{}", text(&r));
    let first = structured(&r);
    let r = init(&client, repo.path(), false).await;
    let t = ok(&r);
    let second = structured(&r);
    assert_eq!(second["cache"], "hit", "{t}");
    assert_eq!(second["content_index"], "cached", "{t}");
    assert!(t.contains("cache: hit"), "{t}");
    for k in [
        "nodes",
        "edges",
        "files",
        "classes",
        "functions",
        "fingerprint",
    ] {
        assert_eq!(first[k], second[k], "{k}");
    }
    let r = init(&client, repo.path(), true).await;
    assert_eq!(structured(&r)["cache"], "forced");

    // Damage the cache file: it is detected and rebuilt, then trusted again.
    let files = graph_files(cache.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let mut bytes = std::fs::read(&files[0]).expect("read cache");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&files[0], &bytes).expect("corrupt");
    let r = init(&client, repo.path(), false).await;
    assert_eq!(structured(&r)["cache"], "corrupt", "{}", text(&r));
    std::fs::write(&files[0], b"garbage").expect("truncate");
    let r = init(&client, repo.path(), false).await;
    assert_eq!(structured(&r)["cache"], "corrupt");
    let r = init(&client, repo.path(), false).await;
    assert_eq!(structured(&r)["cache"], "hit");
    // The graph still answers after a rebuild.
    let r = call(&client, "get_code", json!({"entities": ["setup.py"]})).await;
    assert!(ok(&r).contains("1 | def setup_all():"));

    // Editing the tree changes the fingerprint: a miss, not a stale hit.
    write(repo.path(), "pkg/extra.py", "def extra():\n    pass\n");
    let r = init(&client, repo.path(), false).await;
    let s = structured(&r);
    assert_eq!(s["cache"], "miss");
    assert_ne!(s["fingerprint"], second["fingerprint"]);
    assert_eq!(s["files"], 8);
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_python_project_graph_leaves_its_javascript_out_unless_told_otherwise() {
    // A Python project with one JavaScript asset (1 of its 11 non-test source
    // files, under 10%): the default graph is LocAgent's, `.py` files only; `--languages all`
    // takes the asset too, and caches that graph under another key.
    let repo = fixture();
    for i in 0..4 {
        write(repo.path(), &format!("pkg/extra{i}.py"), "X = 1\n");
    }
    write(
        repo.path(),
        "pkg/static/widget.js",
        "function toggle(el) {\n  el.hidden = !el.hidden;\n}\n",
    );
    let cache = tempfile::tempdir().expect("cache");
    let client = start_allowing(cache.path(), None, &[repo.path()]).await;
    let auto = structured(&init(&client, repo.path(), false).await);
    assert_eq!(auto["languages"], json!(["python"]), "{auto}");
    assert_eq!(auto["files"], 11, "{auto}");
    client.cancel().await.expect("close");

    let all_args: Vec<std::ffi::OsString> = vec![
        "--allow-root".into(),
        repo.path().into(),
        "--languages".into(),
        "all".into(),
    ];
    let client = start_with(cache.path(), &all_args).await;
    let r = init(&client, repo.path(), false).await;
    let all = structured(&r);
    assert_eq!(all["languages"], json!(["python", "ecma"]), "{all}");
    assert_eq!(all["cache"], "miss", "another key: {all}");
    assert!(
        all["fingerprint"]
            .as_str()
            .is_some_and(|f| f.ends_with(";languages=all"))
    );
    assert!(ok(&r).contains("languages: python, ecma"));
    let r = call(&client, "search_code", json!({"query": ["toggle"]})).await;
    assert!(
        ok(&r).contains("pkg/static/widget.js:toggle"),
        "{}",
        text(&r)
    );
    client.cancel().await.expect("close");

    // A misspelt language is refused at start-up, naming the accepted values.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navbench-codegraph"))
        .args(["--languages", "pyton"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`pyton`") && err.contains("auto"), "{err}");
}

#[tokio::test]
async fn root_flag_initializes_at_start_up() {
    let repo = fixture();
    let cache = tempfile::tempdir().expect("cache");
    let client = start(cache.path(), Some(repo.path())).await;
    let r = call(&client, "explore_tree", json!({"path": "pkg/util.py"})).await;
    let t = ok(&r);
    assert_eq!(
        t,
        "pkg/util.py\n├── contains ── pkg/util.py:helper\n│               └── invokes ── pkg/util.py:stop\n└── contains ── pkg/util.py:stop"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn init_repository_refuses_directories_outside_the_allowed_roots() {
    let (repo, other) = (fixture(), fixture());
    let cache = tempfile::tempdir().expect("cache");
    let client = start_allowing(cache.path(), None, &[repo.path()]).await;
    let outside = other.path().display().to_string();
    let r = init(&client, other.path(), false).await;
    assert_tool_error(&r, "init_repository refused");
    assert_tool_error(&r, &format!("--allow-root {outside}"));
    assert_tool_error(&r, &repo.path().display().to_string());
    // `..` and a symbolic link out of the root lead outside too.
    let dotdot = repo
        .path()
        .join("pkg/../..")
        .join(other.path().file_name().expect("name"));
    assert_tool_error(&init(&client, &dotdot, false).await, "--allow-root");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(other.path(), repo.path().join("elsewhere")).expect("symlink");
        let r = init(&client, &repo.path().join("elsewhere"), false).await;
        assert_tool_error(&r, "--allow-root");
    }
    // Refused before anything was read: nothing cached, no repository initialized.
    assert!(graph_files(cache.path()).is_empty());
    let r = call(&client, "explore_tree", json!({})).await;
    assert_tool_error(&r, "Call init_repository first");
    // The allowed root and a directory under it are fine.
    ok(&init(&client, &repo.path().join("pkg"), false).await);
    ok(&init(&client, repo.path(), false).await);
    client.cancel().await.expect("close");

    // --root is allowed, nothing else; with no flag at all, nothing is.
    let client = start(cache.path(), Some(repo.path())).await;
    assert_tool_error(&init(&client, other.path(), false).await, "--allow-root");
    ok(&init(&client, repo.path(), false).await);
    client.cancel().await.expect("close");
    let client = start(cache.path(), None).await;
    let r = init(&client, repo.path(), false).await;
    assert_tool_error(&r, "(none)");
    client.cancel().await.expect("close");
}
