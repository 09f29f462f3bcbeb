//! A recorded run replays without its model: `fixtures/agent-replay/` holds what the
//! local model (SmolLM2-135M-Instruct behind llama.cpp, `agents/local-llama.sh`) said
//! on two `mini` instances with the `text` variant — its `--llm-cache`
//! entries and the run's `instances.csv` and `calls.csv` — recorded by the fixture's
//! `record.sh` under another `--cache` directory. Here the run is played again with
//! the endpoint on a closed port (any request would fail its row), the cache copied
//! into `<out>/llm-cache` (the default `--llm-cache`), and a fresh `--cache`:
//! every model turn comes from the cache, no entry is added, and both CSVs are the
//! recorded ones but for the timing columns (`common::replay`).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::navbench;
use common::replay::assert_same_run;

/// The recorded run.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-replay")
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                entries(&e.path())
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn a_recorded_run_replays_under_another_cache_with_no_request() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    common::replay::copy_dir(&fixture().join("llm-cache"), &out.join("llm-cache"));
    let recorded = entries(&fixture().join("llm-cache"));
    assert!(recorded > 0, "the fixture holds no cache entry");
    // The agent file the fixture was recorded with, at an address nothing serves.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let toml = std::fs::read_to_string(fixture().join("agent.toml")).unwrap();
    let agent = work.path().join("agent.toml");
    std::fs::write(
        &agent,
        toml.replace(
            "http://127.0.0.1:8080/v1",
            &format!("http://127.0.0.1:{port}/v1"),
        ),
    )
    .unwrap();
    let o = navbench()
        .args(["run", "--dataset", "mini", "--variants", "text"])
        .args(["--instances", "mini__shopkeep-1,mini__shopkeep-2"])
        .arg("--cache")
        .arg(work.path().join("another-cache"))
        .arg("--out")
        .arg(&out)
        .arg("--agent")
        .arg(&agent)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // Every model turn was answered by the cache, and nothing new was recorded.
    let mut turns = 0;
    for t in std::fs::read_dir(out.join("transcripts")).unwrap() {
        let p = t.unwrap().path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["role"] == "assistant" {
                turns += 1;
                assert_eq!(v["cached"], true, "{}: {line}", p.display());
            }
        }
    }
    assert!(turns > 0, "no model turn replayed");
    assert_eq!(entries(&out.join("llm-cache")), recorded);
    assert_same_run(&fixture(), &out);
}
