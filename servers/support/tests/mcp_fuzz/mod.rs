//! The property-test driver every server's `tests/fuzz_tools.rs` includes (with
//! `#[path]`; this directory is no test target of its own): it starts the real binary
//! over MCP stdio, plants path tricks and a secret outside the root, then calls every
//! tool the server lists with generated arguments — wrong types, huge and negative
//! numbers, empty and 100 kB strings, unicode, NUL, `..`, absolute paths, symlinks,
//! symlink loops, non-UTF-8 file names — and checks each answer:
//!
//! - it comes within [`Target::per_call`] (no hang) and the server stays up (no crash);
//! - a failure is an `isError` result (or a JSON-RPC error) whose text says what was
//!   wrong and what to pass instead (non-empty, no panic message);
//! - the secret's content never appears (no path outside the root was read).
//!
//! Cases: [`cases`] (`NAVBENCH_FUZZ_CASES`, else a count sized for 2-core CI).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;

/// A running stdio client.
pub type Client = RunningService<RoleClient, ()>;

/// The secret planted outside the root; its value must never reach an answer.
pub const SECRET_VALUE: &str = "navbench-fuzz-secret-value-4242";

/// Cases per server: `NAVBENCH_FUZZ_CASES`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("NAVBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Starts `bin` with `args` over stdio (stderr inherited, `RUST_LOG=error`).
pub async fn spawn(bin: &str, args: &[&std::ffi::OsStr], envs: &[(&str, &str)]) -> Client {
    let transport =
        TokioChildProcess::builder(tokio::process::Command::new(bin).configure(|cmd| {
            cmd.args(args);
            cmd.env("RUST_LOG", "error");
            for (k, v) in envs {
                cmd.env(k, v);
            }
        }))
        .stderr(Stdio::inherit())
        .spawn()
        .map(|(transport, _stderr)| transport)
        .expect("spawn the server");
    ().serve(transport).await.expect("MCP handshake")
}

/// A scratch directory with `root/` (a small Python repository plus tricks) and
/// `outside/` (the secret), and the trick paths an agent might pass.
pub struct Playground {
    /// Keeps the directories alive.
    pub tmp: tempfile::TempDir,
    /// The repository root the server is given.
    pub root: PathBuf,
    /// A directory next to the root holding `secret.py` and `secret.txt`.
    pub outside: PathBuf,
}

/// Writes `body` at `root/rel`, creating directories.
pub fn write(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, body).expect("write");
}

/// Builds the playground: ordinary files, symlinks to the secret (file and directory),
/// a symlink loop, a dangling link, a non-UTF-8 file name, CRLF and BOM files.
pub fn playground() -> Playground {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    let secret =
        format!("SECRET = \"{SECRET_VALUE}\"\n\ndef secret_function():\n    return SECRET\n");
    write(&outside, "secret.py", secret.as_bytes());
    write(&outside, "secret.txt", secret.as_bytes());
    write(
        &root,
        "pkg/core.py",
        b"import os\n\nclass Parser:\n    \"\"\"Parses text.\"\"\"\n    def parse(self, text):\n        return text.split(',')\n\n\ndef helper(x):\n    return Parser().parse(x)\n",
    );
    write(&root, "pkg/__init__.py", b"from .core import Parser\n");
    write(&root, "pkg/crlf.py", b"def crlf():\r\n    return 1\r\n");
    write(
        &root,
        "pkg/bom.py",
        b"\xef\xbb\xbfdef bom():\n    return 2\n",
    );
    write(&root, "README.md", b"# demo\n");
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        use std::os::unix::fs::symlink;
        symlink(outside.join("secret.py"), root.join("pkg/leak.py")).expect("symlink");
        symlink(outside.join("secret.txt"), root.join("leak.txt")).expect("symlink");
        symlink(&outside, root.join("outdir")).expect("symlink");
        symlink(root.join("loop_b"), root.join("loop_a")).expect("symlink");
        symlink(root.join("loop_a"), root.join("loop_b")).expect("symlink");
        symlink(&root, root.join("pkg/self")).expect("symlink");
        symlink(root.join("missing.py"), root.join("dangling.py")).expect("symlink");
        let name = std::ffi::OsStr::from_bytes(b"pkg/bad\xff\xfename.py");
        std::fs::write(root.join(name), b"def odd_name():\n    pass\n").expect("non-UTF-8 name");
    }
    Playground { tmp, root, outside }
}

impl Playground {
    /// Path-like strings: inside, `..` escapes, absolute paths in and out, the links.
    pub fn paths(&self) -> Vec<String> {
        let abs = |p: &Path| p.to_string_lossy().into_owned();
        vec![
            "pkg/core.py".into(),
            "./pkg/core.py".into(),
            "pkg".into(),
            "/".into(),
            ".".into(),
            "pkg/crlf.py".into(),
            "pkg/bom.py".into(),
            "pkg/leak.py".into(),
            "leak.txt".into(),
            "outdir".into(),
            "outdir/secret.py".into(),
            "loop_a".into(),
            "loop_a/x.py".into(),
            "pkg/self/pkg/self/pkg/core.py".into(),
            "dangling.py".into(),
            "pkg/bad\u{fffd}\u{fffd}name.py".into(),
            "..".into(),
            "../outside/secret.py".into(),
            "pkg/../../outside/secret.txt".into(),
            "../../../../../../etc/passwd".into(),
            "/etc/passwd".into(),
            abs(&self.root.join("pkg/core.py")),
            abs(&self.outside.join("secret.py")),
            abs(&self.outside),
            format!("{}/../outside/secret.py", abs(&self.root)),
            "pkg/core.py:Parser.parse".into(),
            "pkg/core.py:helper".into(),
            "pkg/leak.py:secret_function".into(),
            "outdir/secret.py:secret_function".into(),
            "~/.ssh/id_rsa".into(),
            "C:\\Windows\\win.ini".into(),
            "file:///etc/passwd".into(),
        ]
    }
}

/// Strings that are not paths: patterns, names, odd text.
pub fn words() -> Vec<String> {
    vec![
        "parse".into(),
        "Parser".into(),
        "secret".into(),
        "SECRET".into(),
        "fuzz".into(),
        ".*".into(),
        "(".into(),
        "[".into(),
        "*".into(),
        "**/*.py".into(),
        "a\0b".into(),
        "\0".into(),
        "   ".into(),
        "\u{202e}txt.py".into(),
        "日本語 🦀 ß".into(),
        "downstream".into(),
        "upstream".into(),
        "both".into(),
        "function".into(),
        "class".into(),
        "semantic".into(),
        "logical".into(),
    ]
}

/// A generated JSON value for one argument: mostly plausible strings and numbers,
/// often of the wrong type or size.
fn value(pool: Vec<String>) -> BoxedStrategy<Value> {
    let pool = proptest::sample::select(pool);
    let text = prop_oneof![
        6 => pool.clone().prop_map(Value::from),
        2 => "\\PC{0,40}".prop_map(Value::from),
        1 => Just(Value::from("")),
        1 => (1usize..4).prop_map(|n| Value::from("x".repeat(n * 34_000))),
        1 => pool.clone().prop_map(|p| Value::from(format!("{p}\0tail"))),
    ];
    let number = prop_oneof![
        3 => (-3i64..60).prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(Value::from(u64::MAX)),
        1 => Just(serde_json::json!(1e300)),
        1 => Just(serde_json::json!(-0.5)),
        1 => Just(serde_json::json!(2.5)),
    ];
    prop_oneof![
        8 => text.clone(),
        3 => number,
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(Value::Null),
        2 => proptest::collection::vec(text, 0..4).prop_map(Value::from),
        1 => Just(serde_json::json!({"nested": {"path": "../outside"}})),
    ]
    .boxed()
}

/// A value of the JSON type a schema property declares (`None`: untyped), drawn from
/// `pool` for strings, so that many calls get past argument checking.
fn typed(kind: Option<String>, pool: Vec<String>) -> BoxedStrategy<Value> {
    let strings = proptest::sample::select(pool.clone());
    match kind.as_deref() {
        Some("string") => strings.prop_map(Value::from).boxed(),
        Some("integer") | Some("number") => (-2i64..40).prop_map(Value::from).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("array") => proptest::collection::vec(strings, 0..3)
            .prop_map(Value::from)
            .boxed(),
        _ => value(pool),
    }
}

/// One tool call to make: the tool's name and its argument object.
#[derive(Debug, Clone)]
struct Case {
    tool: String,
    args: JsonObject,
}

/// A tool as the server lists it: its name, and its arguments' names and JSON types.
#[derive(Debug, Clone)]
struct ToolShape {
    name: String,
    params: Vec<(String, Option<String>)>,
}

/// Generated calls: any listed tool; each argument present or not, sometimes an
/// unknown extra key.
fn case(
    tools: Vec<ToolShape>,
    pool: Vec<String>,
    pools: Vec<(&'static str, Vec<String>)>,
) -> BoxedStrategy<Case> {
    let n = tools.len();
    (0..n)
        .prop_flat_map(move |i| {
            let shape = tools[i].clone();
            let pool = pools
                .iter()
                .find(|(tool, _)| *tool == shape.name)
                .map_or_else(|| pool.clone(), |(_, p)| p.clone());
            let args: Vec<_> = shape
                .params
                .iter()
                .map(|(_, kind)| {
                    let arg = prop_oneof![
                        2 => typed(kind.clone(), pool.clone()),
                        1 => value(pool.clone()),
                    ];
                    proptest::option::weighted(0.75, arg)
                })
                .collect();
            (
                Just(shape),
                args,
                proptest::option::weighted(0.1, value(pool.clone())),
            )
        })
        .prop_map(|(shape, values, extra)| {
            let mut args = JsonObject::new();
            for ((name, _), v) in shape.params.iter().zip(values) {
                if let Some(v) = v {
                    args.insert(name.clone(), v);
                }
            }
            if let Some(v) = extra {
                args.insert("unexpected_argument".into(), v);
            }
            Case {
                tool: shape.name,
                args,
            }
        })
        .boxed()
}

/// What a run did.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Calls made (including shrinking, if any).
    pub calls: usize,
    /// Calls answered with `isError: true`.
    pub tool_errors: usize,
    /// Calls answered with a JSON-RPC error.
    pub protocol_errors: usize,
    /// Slowest call.
    pub slowest: Duration,
    /// Calls per tool.
    pub per_tool: std::collections::BTreeMap<String, usize>,
    /// Distinct error texts (tool, first 160 characters), at most 500, to review.
    pub errors: std::collections::BTreeSet<(String, String)>,
}

/// Checks one answer; `Err` says what was wrong.
fn check(
    case: &Case,
    answer: &Result<rmcp::model::CallToolResult, rmcp::ServiceError>,
) -> Result<bool, String> {
    match answer {
        Ok(result) => {
            let json = serde_json::to_string(result).unwrap_or_default();
            if json.contains(SECRET_VALUE) {
                return Err(format!(
                    "{} leaked the secret outside the root: {json:.400}",
                    case.tool
                ));
            }
            let text: String = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n");
            if text.contains("panicked") {
                return Err(format!("{} reported a panic: {text:.400}", case.tool));
            }
            let is_error = result.is_error == Some(true);
            if is_error && text.trim().len() < 15 {
                return Err(format!("{} failed without saying why: {text:?}", case.tool));
            }
            Ok(is_error)
        }
        Err(rmcp::ServiceError::McpError(e)) => {
            if e.message.trim().len() < 15 || e.message.contains(SECRET_VALUE) {
                return Err(format!("{} gave a bare protocol error: {e:?}", case.tool));
            }
            Ok(true)
        }
        Err(e) => Err(format!("{}: the server stopped answering ({e})", case.tool)),
    }
}

/// A server under test.
pub struct Target<'a> {
    /// The running client.
    pub client: &'a Client,
    /// Strings arguments are drawn from.
    pub pool: Vec<String>,
    /// Longest a call may take before it counts as a hang.
    pub per_call: Duration,
    /// Tools whose arguments come from a pool of their own (e.g. the one that sets
    /// the root: an agent choosing another root is by design, not an escape).
    pub pools: Vec<(&'static str, Vec<String>)>,
}

/// Runs `cases` generated calls against `target` on `rt`; panics (with the shrunk
/// case) on the first bad answer, and returns what it did.
pub fn run(rt: &tokio::runtime::Runtime, target: &Target<'_>, cases: u32) -> Report {
    let listed = rt
        .block_on(target.client.list_all_tools())
        .expect("tools/list");
    let tools: Vec<ToolShape> = listed
        .iter()
        .map(|t| ToolShape {
            name: t.name.to_string(),
            params: t
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| {
                    p.iter()
                        .map(|(name, schema)| (name.clone(), json_type(schema)))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    assert!(!tools.is_empty(), "the server lists no tools");
    let report = std::cell::RefCell::new(Report::default());
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    });
    let outcome = runner.run(
        &case(tools, target.pool.clone(), target.pools.clone()),
        |case| {
            let params =
                CallToolRequestParams::new(case.tool.clone()).with_arguments(case.args.clone());
            let started = Instant::now();
            let answer = rt.block_on(async {
                tokio::time::timeout(target.per_call, target.client.call_tool(params)).await
            });
            let elapsed = started.elapsed();
            let mut r = report.borrow_mut();
            r.calls += 1;
            r.slowest = r.slowest.max(elapsed);
            *r.per_tool.entry(case.tool.clone()).or_default() += 1;
            let Ok(answer) = answer else {
                return Err(TestCaseError::fail(format!(
                    "{} did not answer within {:?} (hang)",
                    case.tool, target.per_call
                )));
            };
            if r.errors.len() < 500 {
                let text = match &answer {
                    Ok(result) => result
                        .content
                        .iter()
                        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                        .collect::<String>(),
                    Err(e) => e.to_string(),
                };
                if answer.as_ref().map_or(true, |a| a.is_error == Some(true)) {
                    r.errors
                        .insert((case.tool.clone(), text.chars().take(160).collect()));
                }
            }
            match check(&case, &answer) {
                Ok(true) if answer.is_err() => r.protocol_errors += 1,
                Ok(true) => r.tool_errors += 1,
                Ok(false) => {}
                Err(why) => return Err(TestCaseError::fail(why)),
            }
            Ok(())
        },
    );
    if let Err(e) = outcome {
        panic!("fuzzing failed: {e}");
    }
    // Still alive and answering after every case.
    rt.block_on(target.client.list_all_tools())
        .expect("the server still answers tools/list after the fuzzing");
    report.into_inner()
}

/// The JSON type a property schema declares: `"type": "x"`, the first non-null of
/// `"type": [..]`, or the first typed `anyOf` / `oneOf` branch.
fn json_type(schema: &Value) -> Option<String> {
    match schema.get("type") {
        Some(Value::String(t)) => return Some(t.clone()),
        Some(Value::Array(ts)) => {
            return ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .map(str::to_string);
        }
        _ => {}
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(json_type)
}
