//! Property test: every tool of the real `navbench-text` binary, over MCP stdio, with
//! generated arguments (see the driver in `servers/support/tests/mcp_fuzz`): no crash,
//! no hang, every failure explained, nothing outside the root read. The case count
//! is `NAVBENCH_FUZZ_CASES` (default sized for 2-core CI).

#[path = "../../support/tests/mcp_fuzz/mod.rs"]
mod mcp_fuzz;

use std::time::Duration;

use mcp_fuzz::{Target, cases, playground, spawn, words};

#[test]
fn every_tool_survives_generated_arguments() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pg = playground();
    let client = rt.block_on(spawn(
        env!("CARGO_BIN_EXE_navbench-text"),
        &["--root".as_ref(), pg.root.as_os_str()],
        &[],
    ));
    let mut pool = pg.paths();
    pool.extend(words());
    let n = cases(400);
    let report = mcp_fuzz::run(
        &rt,
        &Target {
            client: &client,
            pool,
            per_call: Duration::from_secs(30),
            pools: vec![],
        },
        n,
    );
    eprintln!(
        "navbench-text fuzz: {n} cases, {} calls, {} tool errors, {} protocol errors, slowest {:?}, per tool {:?}",
        report.calls, report.tool_errors, report.protocol_errors, report.slowest, report.per_tool
    );
    if std::env::var_os("NAVBENCH_FUZZ_SHOW_ERRORS").is_some() {
        for (tool, text) in &report.errors {
            eprintln!("{tool}: {text}");
        }
    }
    assert!(
        report.per_tool.len() >= 3,
        "every tool was called: {report:?}"
    );
    rt.block_on(client.cancel()).expect("close");
}
