//! A real model in the loop: `navbench run --agent` on two `mini` instances with the
//! `text` and `codegraph` variants, against llama.cpp's OpenAI-compatible server
//! serving SmolLM2-135M-Instruct (`agents/local-llama.sh`; `.ci/run` installs and
//! starts it and sets `NAVBENCH_TEST_LLM_URL`).
//!
//! Checked: the transcripts hold the model's real turns; every tool call the model
//! made is in `calls.csv`; `prompt_tokens` is the sum of the server's `usage`; the score
//! is computed from the parsed answer; and a second run with `--llm-cache`, with the
//! endpoint gone, makes no request and gives identical results. Quality is not the
//! point at 135M parameters: cost and robustness are.
//!
//! Without `NAVBENCH_TEST_LLM_URL` the test says how to start the server and passes,
//! except under CI (`CI` set), where a missing server is a failure.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

mod common;

use common::navbench;
use common::repo::read_csv;

const INSTANCES: &str = "mini__shopkeep-1,mini__shopkeep-2";

fn llm_url() -> Option<String> {
    match std::env::var("NAVBENCH_TEST_LLM_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must provide a model: .ci/run starts agents/local-llama.sh serve and sets NAVBENCH_TEST_LLM_URL"
            );
            eprintln!(
                "agent_llm: skipped; start a model with `agents/local-llama.sh install && agents/local-llama.sh serve 8080 &` and set NAVBENCH_TEST_LLM_URL=http://127.0.0.1:8080/v1"
            );
            None
        }
    }
}

fn run(work: &Path, out: &str, base_url: &str) -> std::process::Output {
    let agent = work.join(format!("{out}.toml"));
    std::fs::write(
        &agent,
        format!(
            "name = \"smollm2\"\nbase_url = \"{base_url}\"\nmodel = \"SmolLM2-135M-Instruct\"\ntemperature = 0.0\nseed = 0\nmax_turns = 3\nmax_completion_tokens = 160\nmax_tool_result_tokens = 600\nrequest_timeout_secs = 600\nmax_concurrency = 1\n"
        ),
    )
    .unwrap();
    navbench()
        .args(["run", "--dataset", "mini", "--variants", "text,codegraph"])
        .args(["--instances", INSTANCES])
        .arg("--cache")
        .arg(work.join("cache"))
        .arg("--out")
        .arg(work.join(out))
        .arg("--agent")
        .arg(&agent)
        .arg("--llm-cache")
        .arg(work.join("llm-cache"))
        .output()
        .unwrap()
}

fn transcript(dir: &Path, id: &str, variant: &str) -> Vec<Value> {
    let p = dir.join(format!("transcripts/{id}__{variant}.jsonl"));
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `calls.csv` rows of one pair, as (tool, args) in order.
fn calls_of(dir: &Path, id: &str, variant: &str) -> Vec<(String, String)> {
    read_csv(&dir.join("calls.csv"))
        .into_iter()
        .filter(|c| c["instance_id"] == id && c["variant"] == variant)
        .map(|c| (c["tool"].clone(), c["args"].clone()))
        .collect()
}

fn check_pair(dir: &Path, row: &HashMap<String, String>) {
    let (id, variant) = (row["instance_id"].as_str(), row["variant"].as_str());
    assert_ne!(row["status"], "error", "{row:?}");
    let t = transcript(dir, id, variant);
    let turns: Vec<&Value> = t.iter().filter(|l| l["role"] == "assistant").collect();
    assert!(!turns.is_empty(), "{id} × {variant}: no model turn");
    assert_eq!(turns.len().to_string(), row["llm_turns"]);
    // Real turns: answered by the endpoint, in measurable time.
    assert!(
        turns
            .iter()
            .all(|l| l["cached"] == false && l["llm_ms"].as_f64().unwrap() > 0.0)
    );
    // prompt_tokens is the sum of the server's own usage.
    assert_eq!(row["tokens_estimated"], "false", "{row:?}");
    let prompt: u64 = turns
        .iter()
        .map(|l| l["usage"]["prompt_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(prompt.to_string(), row["prompt_tokens"]);
    // Every tool call the model made is in calls.csv, after the variant's setup calls.
    let asked: Vec<String> = turns
        .iter()
        .flat_map(|l| {
            l["message"]["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|c| c["function"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    let recorded = calls_of(dir, id, variant);
    let setup = usize::from(variant == "codegraph");
    assert_eq!(
        recorded.len(),
        setup + asked.len(),
        "{id} × {variant}: {recorded:?} vs {asked:?}"
    );
    let recorded_tools: Vec<&str> = recorded[setup..].iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(recorded_tools, asked);
    // The score is the parsed answer's: its files are the predicted files.
    if row["stop_reason"] == "answered" {
        let parsed = t
            .iter()
            .find_map(|l| l["parsed"].as_array().cloned())
            .unwrap_or_default();
        let mut files: Vec<String> = Vec::new();
        for p in parsed.iter().filter_map(Value::as_str) {
            let f = p.split(':').next().unwrap().to_string();
            if !files.contains(&f) {
                files.push(f);
            }
        }
        assert_eq!(files.join(";"), row["pred_files"], "{row:?}");
        let expect = if files.is_empty() {
            "answer_unparsed"
        } else {
            "ok"
        };
        assert_eq!(row["status"], expect);
    }
}

#[test]
fn a_real_model_plays_the_agent_and_replays_from_the_cache() {
    let Some(url) = llm_url() else { return };
    let work = tempfile::tempdir().unwrap();
    let first = run(work.path(), "live", &url);
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{err}");
    let live = work.path().join("live");
    let rows = read_csv(&live.join("instances.csv"));
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in &rows {
        check_pair(&live, r);
    }

    // No endpoint now: a request would fail, so identical rows prove none was made.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let again = run(
        work.path(),
        "replay",
        &format!("http://127.0.0.1:{port}/v1"),
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{err}");
    assert!(err.contains("replaying from the --llm-cache only"), "{err}");
    let replay = work.path().join("replay");
    let rows2 = read_csv(&replay.join("instances.csv"));
    let stable = [
        "instance_id",
        "variant",
        "status",
        "pred_files",
        "pred_modules",
        "pred_functions",
        "file_acc_5",
        "function_acc_10",
        "n_calls",
        "llm_turns",
        "prompt_tokens",
        "completion_tokens",
        "llm_ms",
        "stop_reason",
    ];
    let key = |r: &HashMap<String, String>| (r["instance_id"].clone(), r["variant"].clone());
    let mut a: Vec<_> = rows
        .iter()
        .map(|r| (key(r), stable.map(|c| r[c].clone())))
        .collect();
    let mut b: Vec<_> = rows2
        .iter()
        .map(|r| (key(r), stable.map(|c| r[c].clone())))
        .collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    for r in &rows {
        assert_eq!(
            calls_of(&live, &r["instance_id"], &r["variant"]),
            calls_of(&replay, &r["instance_id"], &r["variant"])
        );
    }
}
