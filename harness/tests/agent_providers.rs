//! The shipped agent files against endpoints that enforce each provider's documented
//! rules (`common/providers.rs`): the real `navbench` binary on the embedded `mini`
//! dataset, each file as shipped but for its `base_url`, which points at the test's
//! endpoint. Also: a wrong key stopping the run before any row, the same refusal three
//! times in a row stopping it, the cost cap, replies cut or filtered, and tool names
//! the endpoints refuse mapped both ways.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod common;

use common::endpoint::{self, Reply, is_probe};
use common::providers::{self, GOOD_KEY};
use common::repo::{instance, read_csv, setup};

/// The shipped agent files, by name.
const SHIPPED: [&str; 8] = [
    "openai",
    "anthropic",
    "gemini",
    "openrouter",
    "azure",
    "vllm",
    "ollama",
    "local-llama",
];

fn agents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents")
}

/// `key = "value"` of the shipped file's text, if present (not commented out).
fn value_of(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
    })
}

/// The shipped file `name` with its `base_url` replaced by `base_url` (and `extra`
/// lines added before its first table), written under `dir`.
fn copy_with_base_url(name: &str, base_url: &str, extra: &str, dir: &Path) -> (PathBuf, String) {
    let text = std::fs::read_to_string(agents_dir().join(format!("{name}.toml"))).unwrap();
    let mut out = String::new();
    let mut added = false;
    for line in text.lines() {
        if line.trim_start().starts_with('[') && !added {
            out.push_str(extra);
            out.push('\n');
            added = true;
        }
        if line.starts_with("base_url") {
            out.push_str(&format!("base_url = \"{base_url}\"\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !added {
        out.push_str(extra);
        out.push('\n');
    }
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, &out).unwrap();
    (p, text)
}

/// `navbench run` on `limit` instances of `mini`, text variant, with `agent`.
fn run_mini(
    work: &Path,
    out: &str,
    agent: &Path,
    env: &[(String, String)],
    extra: &[&str],
) -> Output {
    let mut cmd = common::navbench();
    cmd.args([
        "run",
        "--dataset",
        "mini",
        "--limit",
        "2",
        "--variants",
        "text",
        "--jobs",
        "1",
    ])
    .arg("--cache")
    .arg(work.join("cache"))
    .arg("--out")
    .arg(work.join(out))
    .arg("--agent")
    .arg(agent)
    .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn rows(work: &Path, out: &str) -> Vec<HashMap<String, String>> {
    let p = work.join(out).join("instances.csv");
    if p.exists() { read_csv(&p) } else { Vec::new() }
}

/// The top-level keys of a request body, sorted.
fn keys(b: &Value) -> Vec<String> {
    let mut k: Vec<String> = b.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn each_shipped_agent_file_completes_a_two_instance_run_on_mini() {
    let work = tempfile::tempdir().unwrap();
    for name in SHIPPED {
        let provider = match name {
            "local-llama" => "llamacpp",
            n => n,
        };
        let ep = providers::start(provider);
        let (agent, shipped) = copy_with_base_url(name, &ep.base_url, "", work.path());
        assert_eq!(
            value_of(&shipped, "provider").as_deref(),
            Some(provider),
            "{name}"
        );
        let env: Vec<(String, String)> = value_of(&shipped, "api_key_env")
            .map(|var| vec![(var, GOOD_KEY.to_string())])
            .unwrap_or_default();
        let out = format!("run-{name}");
        let o = run_mini(work.path(), &out, &agent, &env, &[]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let rows = rows(work.path(), &out);
        assert_eq!(rows.len(), 2, "{name}");
        for r in &rows {
            assert_eq!(r["status"], "ok", "{name}: {r:?}");
            assert_eq!(r["stop_reason"], "answered", "{name}: {r:?}");
            assert_eq!(r["llm_turns"], "2", "{name}: {r:?}");
            assert_eq!(r["prompt_tokens"], "1000", "{name}: {r:?}");
        }
        let reqs = ep.requests.lock().unwrap();
        assert_eq!(
            reqs.iter().filter(|b| is_probe(b)).count(),
            1,
            "{name}: one pre-flight"
        );
        assert_eq!(
            reqs.len(),
            5,
            "{name}: the pre-flight, then two turns per instance"
        );
        for b in reqs.iter() {
            let lengths = ["max_tokens", "max_completion_tokens"]
                .iter()
                .filter(|k| b.get(**k).is_some())
                .count();
            assert_eq!(lengths, 1, "{name}: exactly one length key: {:?}", keys(b));
            assert_eq!(
                b.get("temperature").is_some(),
                value_of(&shipped, "temperature").is_some(),
                "{name}"
            );
            assert_eq!(
                b.get("seed").is_some(),
                value_of(&shipped, "seed").is_some(),
                "{name}"
            );
        }
        println!("{name}: request keys {:?}", keys(&reqs[1]));
        // The second turn sent the first turn's assistant message back as received.
        let echo = reqs[2]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "assistant")
            .unwrap()
            .clone();
        match provider {
            "gemini" => assert_eq!(
                echo["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
                "sig-c0"
            ),
            "openrouter" => assert_eq!(echo["reasoning_details"][0]["data"], "opaque"),
            "vllm" | "llamacpp" => assert_eq!(echo["reasoning_content"], "Listing first."),
            _ => {}
        }
        assert_eq!(
            echo["content"], "",
            "{name}: a null content goes back as \"\""
        );
        match provider {
            "openai" | "azure" => {
                assert_eq!(rows[0]["cached_tokens"], "64", "{name}");
                assert_eq!(rows[0]["reasoning_tokens"], "16", "{name}");
            }
            "anthropic" => assert_eq!(rows[0]["cached_tokens"], "32", "{name}"),
            _ => {}
        }
    }
}

#[test]
fn a_wrong_key_stops_the_run_before_any_row() {
    let work = tempfile::tempdir().unwrap();
    let ep = providers::start("openai");
    let (agent, _) = copy_with_base_url("openai", &ep.base_url, "", work.path());
    let env = [("OPENAI_API_KEY".to_string(), "sk-wrong".to_string())];
    let o = run_mini(work.path(), "wrong-key", &agent, &env, &[]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("HTTP 401") && e.contains("Incorrect API key provided"),
        "{e}"
    );
    assert!(
        e.contains("fix api_key_env") && e.contains("openai.toml"),
        "{e}"
    );
    assert!(rows(work.path(), "wrong-key").is_empty());
    assert_eq!(ep.requests.lock().unwrap().len(), 1, "the pre-flight only");

    // Gemini answers a wrong key with 400 in its own words: the same stop.
    let gemini = providers::start("gemini");
    let (agent, _) = copy_with_base_url("gemini", &gemini.base_url, "", work.path());
    let env = [("GEMINI_API_KEY".to_string(), "wrong".to_string())];
    let o = run_mini(work.path(), "gemini-wrong-key", &agent, &env, &[]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("HTTP 400") && e.contains("API key not valid"),
        "{e}"
    );
    assert!(e.contains("fix api_key_env"), "{e}");
    assert!(rows(work.path(), "gemini-wrong-key").is_empty());

    // A file that would send a temperature to a reasoning model is refused when read.
    let (agent, _) = copy_with_base_url("openai", &ep.base_url, "temperature = 0", work.path());
    let env = [("OPENAI_API_KEY".to_string(), GOOD_KEY.to_string())];
    let o = run_mini(work.path(), "hot", &agent, &env, &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("reasoning model"), "{}", stderr(&o));
    assert_eq!(
        ep.requests.lock().unwrap().len(),
        1,
        "refused before any request"
    );

    // vLLM started without tool calling: the pre-flight names the provider's needs.
    let vllm = providers::start("vllm");
    let (agent, _) = copy_with_base_url(
        "vllm",
        &vllm.base_url,
        "[headers]\nx-test-vllm-flags = \"none\"",
        work.path(),
    );
    let o = run_mini(work.path(), "vllm-no-tools", &agent, &[], &[]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("HTTP 400") && e.contains("--enable-auto-tool-choice"),
        "{e}"
    );
    assert!(rows(work.path(), "vllm-no-tools").is_empty());
}

#[test]
fn the_same_refusal_three_times_in_a_row_stops_the_run() {
    let s = setup();
    let ids: Vec<String> = (1..=4).map(|i| format!("acme__shop-{i}")).collect();
    let ds = s.write_dataset(
        &ids.iter()
            .map(|i| instance(i, &s.commit))
            .collect::<Vec<_>>(),
    );
    // Answers the pre-flight, then refuses every turn the same way.
    let ep = endpoint::start(|_, _| {
        Reply::Http(
            400,
            Vec::new(),
            r#"{"error":{"message":"Invalid value for 'tool_choice'."}}"#.into(),
        )
    });
    let agent = endpoint::agent_file(s.work.path(), &ep.base_url, "");
    let o = s.run(
        &ds,
        "streak",
        &[
            "--variants",
            "text",
            "--jobs",
            "1",
            "--agent",
            agent.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("3 times in a row") && e.contains("Invalid value for 'tool_choice'"),
        "{e}"
    );
    let rows = read_csv(&s.work.path().join("streak/instances.csv"));
    assert_eq!(rows.len(), 3, "the fourth pair was not started");
    assert!(rows.iter().all(|r| r["status"] == "error"));
}

#[test]
fn the_cost_cap_starts_no_new_pair_once_reached() {
    let s = setup();
    let ds = s.write_dataset(&[
        instance("acme__shop-1", &s.commit),
        instance("acme__shop-2", &s.commit),
    ]);
    let ep = endpoint::start(|_, body| match endpoint::turns_so_far(body) {
        0 => Reply::calls(&[("list_files", "{}")]),
        _ => Reply::answer("shop/store.py:Store.total_price"),
    });
    let prices = "[prices]\ninput = 1.0\noutput = 1.0";
    let agent = endpoint::agent_file(s.work.path(), &ep.base_url, prices);
    let agent = agent.to_str().unwrap();
    // Without prices the cap cannot be priced: refused at once.
    let bare_dir = s.work.path().join("bare");
    std::fs::create_dir_all(&bare_dir).unwrap();
    let bare = endpoint::agent_file(&bare_dir, &ep.base_url, "");
    let o = s.run(
        &ds,
        "no-prices",
        &[
            "--variants",
            "text",
            "--agent",
            bare.to_str().unwrap(),
            "--max-cost-usd",
            "1",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--max-cost-usd needs prices"),
        "{}",
        stderr(&o)
    );
    // Each pair costs 220 tokens at $1 per million: $0.00022 > the cap of $0.0001.
    let o = s.run(
        &ds,
        "capped",
        &[
            "--variants",
            "text",
            "--jobs",
            "1",
            "--agent",
            agent,
            "--max-cost-usd",
            "0.0001",
        ],
    );
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let rows = read_csv(&s.work.path().join("capped/instances.csv"));
    assert_eq!(rows.len(), 1, "the second pair was not started: {e}");
    assert_eq!(rows[0]["cost_usd"], "0.000220");
    assert!(e.contains("--max-cost-usd 0.0001 reached"), "{e}");
    assert!(e.contains("run cost $0.0002 of $0.0001"), "{e}");
}

#[test]
fn replies_cut_at_the_length_limit_or_filtered_are_not_scored() {
    let s = setup();
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit)]);
    let ending = |finish: &'static str, content: &'static str| {
        move |_: usize, _: &Value| {
            let body = serde_json::json!({"choices": [{"index": 0, "finish_reason": finish,
                "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10}});
            Reply::Http(200, Vec::new(), body.to_string())
        }
    };
    let cases = [
        (
            "cut",
            endpoint::start(ending(
                "length",
                "shop/store.py:Store.total_price\nshop/rep",
            )),
            "truncated",
            "1",
        ),
        (
            "filtered",
            endpoint::start(ending("content_filter", "shop/store.py")),
            "content_filter",
            "1",
        ),
        // A reasoning model that spent its completion thinking: one reminder, then cut.
        (
            "thinking",
            endpoint::start(ending("length", "")),
            "truncated",
            "2",
        ),
    ];
    for (out, ep, stop, turns) in cases {
        let agent = endpoint::agent_file(s.work.path(), &ep.base_url, "");
        let o = s.run(
            &ds,
            out,
            &["--variants", "text", "--agent", agent.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = read_csv(&s.work.path().join(out).join("instances.csv"));
        assert_eq!(rows[0]["stop_reason"], stop, "{out}");
        assert_eq!(rows[0]["llm_turns"], turns, "{out}");
        assert_eq!(rows[0]["status"], "ok", "{out}");
        assert_eq!(rows[0]["pred_files"], "", "{out}: not scored as an answer");
    }
}

/// A declared server's tool names outside `^[A-Za-z0-9_-]{1,64}$` are offered under
/// safe names (OpenAI's endpoint refuses the request otherwise) and mapped back when
/// the model calls them.
#[test]
fn tool_names_endpoints_refuse_are_mapped_both_ways() {
    let s = setup();
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit)]);
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dotted_tools_server.py");
    let decl = s.work.path().join("dotted.toml");
    std::fs::write(
        &decl,
        format!(
            "name = \"dotted\"\nabout = \"tool names with dots and slashes\"\n\n[server]\ncommand = \"python3\"\nargs = [\"{}\"]\n\n[[step]]\ntool = \"code.search\"\nargs = {{ q = \"x\" }}\nextract = {{ items = \"/matches/*\", path = \"/path\", line = \"/line\" }}\n",
            server.display()
        ),
    )
    .unwrap();
    // OpenAI's rules, and a model that calls whatever the first tool offered is.
    let ep = endpoint::start_req(|r| {
        if let Some(refusal) = providers::enforce("generic", r) {
            return refusal;
        }
        if is_probe(&r.body) || endpoint::turns_so_far(&r.body) > 0 {
            return Reply::answer("shop/store.py:Store.total_price");
        }
        let first = r.body["tools"][0]["function"]["name"]
            .as_str()
            .unwrap()
            .to_string();
        Reply::calls(&[(first.as_str(), r#"{"q": "total"}"#)])
    });
    let agent = endpoint::agent_file(s.work.path(), &ep.base_url, "");
    let o = s.run(
        &ds,
        "dotted",
        &[
            "--variants",
            decl.to_str().unwrap(),
            "--agent",
            agent.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = read_csv(&s.work.path().join("dotted/instances.csv"));
    assert_eq!(rows[0]["status"], "ok", "{:?}", rows[0]);
    let reqs = ep.requests.lock().unwrap();
    let turn = reqs.iter().find(|b| !is_probe(b)).unwrap();
    let offered: Vec<&str> = turn["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["code_search", "files_read"]);
    // The model called code_search; the server was asked for code.search.
    let calls = read_csv(&s.work.path().join("dotted/calls.csv"));
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["tool"], "code.search");
    let result = reqs.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.contains("\"tool\": \"code.search\""), "{result}");
}
