//! Property test: every tool of the real `navbench-codegraph` binary, over MCP stdio,
//! with generated arguments (see the driver in `servers/support/tests/mcp_fuzz`): no
//! crash, no hang, every failure explained, nothing outside the root read. The case
//! count is `NAVBENCH_FUZZ_CASES` (default sized for 2-core CI).
//!
//! `init_repository` chooses the root, so its `repo_path` comes from a pool of its own
//! (the root, a subdirectory, a file, missing and malformed paths): pointing it at
//! another directory is what the tool is for, not an escape.

#[path = "../../support/tests/mcp_fuzz/mod.rs"]
mod mcp_fuzz;

use std::time::Duration;

use mcp_fuzz::{Target, cases, playground, spawn, words};

#[test]
fn every_tool_survives_generated_arguments() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pg = playground();
    let cache = pg.tmp.path().join("cache");
    let client = rt.block_on(spawn(
        env!("CARGO_BIN_EXE_navbench-codegraph"),
        &[
            "--cache".as_ref(),
            cache.as_os_str(),
            "--root".as_ref(),
            pg.root.as_os_str(),
        ],
        &[],
    ));
    let mut pool = pg.paths();
    pool.extend(words());
    let root = pg.root.to_string_lossy().into_owned();
    let roots = vec![
        root.clone(),
        root.clone(),
        format!("{root}/"),
        format!("{root}/pkg"),
        format!("{root}/pkg/core.py"),
        format!("{root}/loop_a"),
        format!("{root}/missing"),
        format!("{root}\0"),
        String::new(),
        "relative/dir".to_string(),
        "x".repeat(5000),
    ];
    let n = cases(200);
    let report = mcp_fuzz::run(
        &rt,
        &Target {
            client: &client,
            pool,
            per_call: Duration::from_secs(60),
            pools: vec![("init_repository", roots)],
        },
        n,
    );
    eprintln!(
        "navbench-codegraph fuzz: {n} cases, {} calls, {} tool errors, {} protocol errors, slowest {:?}, per tool {:?}",
        report.calls, report.tool_errors, report.protocol_errors, report.slowest, report.per_tool
    );
    if std::env::var_os("NAVBENCH_FUZZ_SHOW_ERRORS").is_some() {
        for (tool, text) in &report.errors {
            eprintln!("{tool}: {text}");
        }
    }
    assert!(
        report.per_tool.len() >= 8,
        "every tool was called: {report:?}"
    );
    rt.block_on(client.cancel()).expect("close");
}

/// Found by the property test: names that are only dots were skipped, and `get_code`
/// answered `isError` with no text at all.
#[test]
fn dot_only_entity_names_are_explained() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pg = playground();
    let cache = pg.tmp.path().join("cache");
    let client = rt.block_on(spawn(
        env!("CARGO_BIN_EXE_navbench-codegraph"),
        &[
            "--cache".as_ref(),
            cache.as_os_str(),
            "--root".as_ref(),
            pg.root.as_os_str(),
        ],
        &[],
    ));
    let args = serde_json::json!({"entities": ["..", "."]});
    let params = rmcp::model::CallToolRequestParams::new("get_code")
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let r = rt.block_on(client.call_tool(params)).expect("tools/call");
    assert_eq!(r.is_error, Some(true));
    let text: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        text.contains("name no entity") && text.contains("file_path:QualifiedName"),
        "{text:?}"
    );
    rt.block_on(client.cancel()).expect("close");
}
