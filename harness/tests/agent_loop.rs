//! The agent loop's edge cases, end to end: the real `navbench` binary and the real
//! `navbench-text` server, with a scripted Chat Completions endpoint standing in for
//! the model (and only for the model): malformed tool-call JSON, an unknown tool, a
//! tool error, HTTP 429 with Retry-After and 5xx, a context overflow, a timeout, an
//! endpoint that is down, a model that never answers or answers without a location,
//! a response without `usage`, and replay from `--llm-cache`.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use std::time::Duration;

use serde_json::Value;

mod common;

use common::endpoint::{self, Reply, run_agent, turns_so_far};
use common::repo::{Setup, read_csv, setup};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn transcript(s: &Setup, out: &str) -> Vec<Value> {
    let p = s
        .work
        .path()
        .join(out)
        .join("transcripts/acme__shop-1__text.jsonl");
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every robustness path of one conversation: retried 429 (Retry-After) and 500, then
/// malformed arguments and an unknown tool (both answered as tool errors the model can
/// correct), a tool error from the server, a good call, and the answer.
#[test]
fn a_conversation_survives_bad_calls_and_a_flaky_endpoint() {
    let s = setup();
    let ep = endpoint::start(|n, body| match (n, turns_so_far(body)) {
        (0, _) => Reply::Http(
            429,
            vec![("Retry-After".into(), "0".into())],
            "slow down".into(),
        ),
        (1, _) => Reply::Http(503, Vec::new(), "overloaded".into()),
        (_, 0) => Reply::calls(&[("grep", r#"{"pattern": "#), ("nosuch", "{}")]),
        (_, 1) => Reply::calls(&[
            ("read_file", r#"{"path": "shop/missing.py"}"#),
            ("grep", r#"{"pattern": "total_price"}"#),
        ]),
        _ => Reply::answer(
            "The fix goes here:\n1. `shop/store.py:Store.total_price`\n- shop/report.py:report\n",
        ),
    });
    let (o, rows) = run_agent(&s, "out", &ep.base_url, "", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["status"], "ok", "{r:?}");
    assert_eq!(r["stop_reason"], "answered");
    assert_eq!(r["llm_turns"], "3");
    // Usage as the endpoint gave it: 3 turns of 100 + 10.
    assert_eq!(
        (r["prompt_tokens"].as_str(), r["completion_tokens"].as_str()),
        ("300", "30")
    );
    assert_eq!(r["tokens_estimated"], "false");
    // The built-in loop's account is the endpoint's (an agent CLI's says `cli`).
    assert_eq!(r["usage_source"], "endpoint");
    assert_eq!(r["file_acc_1"], "1.0000", "{r:?}");
    assert_eq!(r["function_acc_5"], "1.0000", "{r:?}");
    assert_eq!(
        r["pred_functions"],
        "shop/store.py:Store.total_price;shop/report.py:report"
    );

    // Every call the model asked for is in calls.csv, the refused ones as errors.
    let calls = read_csv(&s.work.path().join("out/calls.csv"));
    let seen: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c["tool"].as_str(), c["is_error"].as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("grep", "true"),
            ("nosuch", "true"),
            ("read_file", "true"),
            ("grep", "false")
        ]
    );
    assert!(
        calls[0]["error"].contains("not a JSON object"),
        "{:?}",
        calls[0]
    );
    assert!(
        calls[1]["error"].contains("unknown tool 'nosuch'"),
        "{:?}",
        calls[1]
    );
    assert_eq!(r["n_calls"], "4");

    // The model was told what went wrong, and could correct it.
    let reqs = ep.requests.lock().unwrap();
    assert_eq!(reqs.len(), 5, "429 and 503 retried, then three turns");
    let second_turn = reqs[3]["messages"].as_array().unwrap();
    let tool_msgs: Vec<&str> = second_turn
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        tool_msgs[0].contains("call it again with a JSON object"),
        "{tool_msgs:?}"
    );
    assert!(tool_msgs[1].contains("call one of"), "{tool_msgs:?}");
    // The text server's tools are offered verbatim.
    let names: Vec<&str> = reqs[2]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["grep", "list_files", "read_file"]);
    assert_eq!(reqs[2]["stream"], false);

    let t = transcript(&s, "out");
    // Each retry is in the transcript, with why and how long it waited.
    let retries: Vec<&Value> = t.iter().filter(|l| l.get("retry").is_some()).collect();
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(retries[0]["why"].as_str().unwrap().contains("HTTP 429"));
    assert_eq!(retries[0]["wait_ms"], 0.0, "Retry-After: 0 honoured");
    assert_eq!(t.iter().filter(|l| l["role"] == "assistant").count(), 3);
    assert_eq!(t.iter().filter(|l| l["role"] == "tool").count(), 4);
    assert!(t.last().unwrap()["stop_reason"] == "answered");
}

#[test]
fn overflow_no_answer_and_an_answer_without_locations_are_finished_rows() {
    let s = setup();
    let overflow = endpoint::start(|_, _| {
        Reply::Http(
            400,
            Vec::new(),
            r#"{"error":{"message":"Requested tokens (9000) exceed context window of 8192"}}"#
                .into(),
        )
    });
    let cache = s.work.path().join("overflow-cache");
    let cache_arg = cache.to_string_lossy().into_owned();
    let (o, rows) = run_agent(
        &s,
        "overflow",
        &overflow.base_url,
        "",
        &["--llm-cache", &cache_arg],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(rows[0]["stop_reason"], "context_overflow");
    assert_eq!(rows[0]["file_acc_5"], "0.0000");
    // The overflow was recorded: a replay without the endpoint ends the same way.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (o, rows) = run_agent(
        &s,
        "overflow-replay",
        &format!("http://127.0.0.1:{port}/v1"),
        "",
        &["--llm-cache", &cache_arg],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows[0]["stop_reason"], "context_overflow");

    // A model that keeps calling tools: after max_turns, one "answer now" turn with
    // tool_choice none gives the row its answer.
    let answer_now = |body: &Value, usage: (u64, u64)| {
        if body["tool_choice"] == "none" {
            Reply::message(
                serde_json::json!({"role": "assistant", "content": "shop/store.py:Store.total_price"}),
                Some(usage),
            )
        } else {
            Reply::message(
                serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c0", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]}),
                Some(usage),
            )
        }
    };
    let chatty = endpoint::start(move |_, body| answer_now(body, (100, 10)));
    let (o, rows) = run_agent(&s, "chatty", &chatty.base_url, "max_turns = 3", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows[0]["status"], "ok", "{:?}", rows[0]);
    assert_eq!(rows[0]["stop_reason"], "max_turns");
    assert_eq!(
        rows[0]["llm_turns"], "4",
        "three tool turns and the answer-now turn"
    );
    assert_eq!(rows[0]["n_calls"], "3");
    assert_eq!(rows[0]["file_acc_1"], "1.0000");
    let last = chatty.requests.lock().unwrap().last().unwrap().clone();
    assert_eq!(last["tool_choice"], "none");
    assert!(
        last["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("Answer now")
    );

    // 3010 tokens a turn: two tool turns fit 10000 with a whole completion (2000) on
    // top, a third does not; the answer-now turn's prompt still fits, its completion
    // cut to what is left, so the budget is never passed.
    let budget = endpoint::start(move |_, body| answer_now(body, (3000, 10)));
    let (o, rows) = run_agent(
        &s,
        "budget",
        &budget.base_url,
        "token_budget = 10000\nmax_completion_tokens = 2000",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows[0]["stop_reason"], "token_budget", "{:?}", rows[0]);
    assert_eq!(rows[0]["llm_turns"], "3");
    assert_eq!(rows[0]["status"], "ok");
    let spent: u64 = rows[0]["prompt_tokens"].parse::<u64>().unwrap()
        + rows[0]["completion_tokens"].parse::<u64>().unwrap();
    assert!(spent <= 10_000, "{spent}");
    let last = budget.requests.lock().unwrap().last().unwrap().clone();
    let room = last["max_tokens"].as_u64().unwrap();
    assert!(room > 0 && room < 2000, "{room}");

    let vague = endpoint::start(|_, _| {
        Reply::message(
            serde_json::json!({"role": "assistant", "content": "It is somewhere in the store module, I think."}),
            None,
        )
    });
    let (o, rows) = run_agent(&s, "vague", &vague.base_url, "", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows[0]["status"], "answer_unparsed");
    // One reminder turn first, then the answer as it was.
    assert_eq!(rows[0]["llm_turns"], "2");
    let reqs = vague.requests.lock().unwrap();
    let reminder = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(reminder["role"], "user");
    assert!(
        reminder["content"]
            .as_str()
            .unwrap()
            .contains("named no location")
    );
    assert_eq!(rows[0]["file_acc_5"], "0.0000");
    // No usage in the response: estimated with the tokenizer, and marked so.
    assert_eq!(rows[0]["tokens_estimated"], "true");
    assert!(rows[0]["prompt_tokens"].parse::<u64>().unwrap() > 100);
    let t = transcript(&s, "vague");
    assert!(t.iter().any(|l| {
        l["answer"]
            .as_str()
            .is_some_and(|a| a.contains("store module"))
    }));
}

#[test]
fn a_timeout_is_an_error_row_and_a_down_endpoint_fails_before_the_run() {
    let s = setup();
    let slow = endpoint::start(|_, _| Reply::Hang(Duration::from_secs(5)));
    let (o, rows) = run_agent(&s, "slow", &slow.base_url, "request_timeout_secs = 1", &[]);
    assert!(o.status.success(), "the run goes on: {}", stderr(&o));
    assert_eq!(rows[0]["status"], "error");
    assert_eq!(rows[0]["stop_reason"], "llm_timeout");
    assert!(
        rows[0]["error"].contains("did not answer within"),
        "{:?}",
        rows[0]
    );

    // Nothing listens there: refused before any instance runs, naming the URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = format!("http://127.0.0.1:{port}/v1");
    let (o, rows) = run_agent(&s, "down", &down, "", &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(&down), "{}", stderr(&o));
    assert!(rows.is_empty());
}

/// The columns that are the run's results, not its timing.
const STABLE: [&str; 12] = [
    "instance_id",
    "variant",
    "status",
    "file_acc_1",
    "function_acc_10",
    "n_calls",
    "pred_functions",
    "llm_turns",
    "prompt_tokens",
    "completion_tokens",
    "llm_ms",
    "stop_reason",
];

#[test]
fn a_recorded_run_replays_from_the_cache_without_the_endpoint() {
    let s = setup();
    let ep = endpoint::start(|_, body| match turns_so_far(body) {
        0 => Reply::calls(&[("grep", r#"{"pattern": "total_price"}"#)]),
        _ => Reply::answer("shop/store.py:Store.total_price"),
    });
    let cache = s.work.path().join("llm-cache");
    let cache_arg = cache.to_string_lossy().into_owned();
    let (o, first) = run_agent(&s, "rec", &ep.base_url, "", &["--llm-cache", &cache_arg]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(ep.requests.lock().unwrap().len(), 2);

    // The endpoint is gone: every request is answered from the cache.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (o, again) = run_agent(
        &s,
        "replay",
        &format!("http://127.0.0.1:{port}/v1"),
        "",
        &["--llm-cache", &cache_arg],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("replaying from the --llm-cache only"),
        "{}",
        stderr(&o)
    );
    for col in STABLE {
        assert_eq!(first[0][col], again[0][col], "{col}");
    }
    let calls = |d: &str| {
        read_csv(&s.work.path().join(d).join("calls.csv"))
            .into_iter()
            .map(|c| (c["tool"].clone(), c["args"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(calls("rec"), calls("replay"));
    let t = transcript(&s, "replay");
    assert!(
        t.iter()
            .filter(|l| l["role"] == "assistant")
            .all(|l| l["cached"] == true)
    );
}
