//! Property test: every tool of the real `navbench-retrieval` binary (tiny model,
//! `--workspace` = the root), over MCP stdio, with generated arguments (see the driver
//! in `servers/support/tests/mcp_fuzz`): no crash, no hang, every failure explained,
//! nothing outside the root read. The case count is `NAVBENCH_FUZZ_CASES` (default
//! sized for 2-core CI).
//!
//! `index_repository` takes sources of its own: the root, directories outside the
//! allowed roots (refused), `file://` URLs, and a loopback URL where nothing listens,
//! so no case reaches the network.

#[path = "../../support/tests/mcp_fuzz/mod.rs"]
mod mcp_fuzz;

use std::time::Duration;

use mcp_fuzz::{Target, cases, playground, spawn, words};

#[test]
fn every_tool_survives_generated_arguments() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pg = playground();
    let model = pg.tmp.path().join("model");
    navbench_retrieval::model::write_tiny_model(&model, 7).expect("tiny model");
    let data = pg.tmp.path().join("data");
    let client = rt.block_on(spawn(
        env!("CARGO_BIN_EXE_navbench-retrieval"),
        &[
            "--model-dir".as_ref(),
            model.as_os_str(),
            "--data-dir".as_ref(),
            data.as_os_str(),
            "--workspace".as_ref(),
            pg.root.as_os_str(),
        ],
        &[
            ("NAVBENCH_LLM_BASE_URL", ""),
            ("NAVBENCH_LLM_MODEL", ""),
            ("NAVBENCH_LLM_API_KEY", ""),
        ],
    ));
    let mut pool = pg.paths();
    pool.extend(words());
    // Repository ids: the workspace's is found by prefix, others are unknown.
    pool.extend(["0", "a", "ffffffffffff", "../..", "*"].map(String::from));
    let abs = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let sources = vec![
        abs(&pg.root),
        abs(&pg.root),
        abs(&pg.root.join("pkg")),
        abs(&pg.root.join("outdir")),
        abs(&pg.outside),
        abs(&pg.outside.join("secret.py")),
        format!("{}/../outside", abs(&pg.root)),
        format!("file://{}", abs(&pg.outside)),
        "file:///etc".to_string(),
        "/etc".to_string(),
        "~".to_string(),
        "http://127.0.0.1:9/nothing.git".to_string(),
        String::new(),
        "\0".to_string(),
        "x".repeat(3000),
    ];
    let n = cases(300);
    let report = mcp_fuzz::run(
        &rt,
        &Target {
            client: &client,
            pool,
            per_call: Duration::from_secs(60),
            pools: vec![("index_repository", sources)],
        },
        n,
    );
    eprintln!(
        "navbench-retrieval fuzz: {n} cases, {} calls, {} tool errors, {} protocol errors, slowest {:?}, per tool {:?}",
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
