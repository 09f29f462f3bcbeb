//! Answers in the tools' own forms, and the virtual root, end to end: the real
//! `navbench` binary and the real `navbench-text` server, with a scripted Chat
//! Completions endpoint standing in for the model (and only for the model).
//!
//! Checked: the model is told the repository is at `/repo` and never sees the
//! checkout's path (prompt, tool results); a call naming `/repo/...` reaches the file;
//! `calls.csv` records the arguments as the model wrote them; an answer mixing grep's
//! `path:LINE`, codegraph's `path:START-END`, `::` paths, bold, a bare call and a path
//! leaving the tree is scored from every readable line, with `answer_lines` and
//! `answer_dropped` counted and the dropped line in the transcript; a resume with
//! another model is refused naming both.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use serde_json::Value;

mod common;

use common::endpoint::{self, Reply, agent_file, run_agent, turns_so_far};
use common::repo::{Setup, instance, read_csv, setup};

const ANSWER: &str = "Found it:\n\n1. **shop/store.py:17**\n- `/repo/shop/report.py::report`\n- format_price()\n- ../outside.py\n- [shop/store.py:9-12]\nshop/store.py:17:            total += item['price']\n";

/// The scripted model of these tests: it reads a file and greps, both through
/// `/repo`, then answers with [`ANSWER`].
fn reads_then_answers() -> endpoint::Endpoint {
    endpoint::start(|_, body| match turns_so_far(body) {
        0 => Reply::calls(&[
            (
                "read_file",
                r#"{"path": "/repo/shop/store.py", "end_line": 3}"#,
            ),
            ("grep", r#"{"pattern": "total_price"}"#),
        ]),
        _ => Reply::answer(ANSWER),
    })
}

#[test]
fn the_model_sees_repo_and_every_answer_form_is_read() {
    let s = setup();
    let ep = reads_then_answers();
    let (o, rows) = run_agent(&s, "out", &ep.base_url, "", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let r = &rows[0];
    assert_eq!(r["status"], "ok", "{r:?}");
    // Five location lines (the grep line repeats line 17), one dropped.
    assert_eq!(
        (r["answer_lines"].as_str(), r["answer_dropped"].as_str()),
        ("5", "1")
    );
    assert_eq!(r["pred_files"], "shop/store.py;shop/report.py");
    assert_eq!(
        r["pred_functions"],
        "shop/store.py:Store.total_price;shop/report.py:report;shop/store.py:format_price;shop/store.py:Store.load"
    );
    assert_eq!(r["function_acc_5"], "1.0000", "{r:?}");

    // The model never saw where the tree is, and its /repo path reached the file.
    let workdir = s.work.path().join("cache").to_string_lossy().into_owned();
    let requests = ep.requests.lock().unwrap().clone();
    let last = requests.last().unwrap().to_string();
    assert!(!last.contains(&workdir), "{last}");
    assert!(last.contains("checked out at `/repo`"), "{last}");
    let tool_texts: Vec<String> = requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(tool_texts[0].contains("import json"), "{tool_texts:?}");
    assert!(tool_texts[1].contains("shop/store.py"), "{tool_texts:?}");

    // calls.csv has the arguments as the model wrote them.
    let calls = read_csv(&s.work.path().join("out/calls.csv"));
    assert_eq!(calls[0]["tool"], "read_file");
    assert!(
        calls[0]["args"].contains("/repo/shop/store.py"),
        "{:?}",
        calls[0]
    );
    assert_eq!(calls[0]["is_error"], "false", "{:?}", calls[0]);
    assert!(calls.iter().all(|c| !c["args"].contains(&workdir)));

    // The transcript lists what was read and what was dropped.
    let t = std::fs::read_to_string(
        s.work
            .path()
            .join("out/transcripts/acme__shop-1__text.jsonl"),
    )
    .unwrap();
    let end: Value = t
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l.get("parsed").is_some())
        .unwrap();
    assert_eq!(end["dropped"], serde_json::json!(["- ../outside.py"]));
    assert_eq!(end["answer_lines"], 5);

    // The report shows the drops per variant.
    let report = s.work.path().join("report");
    let o = common::navbench()
        .arg("report")
        .arg(s.work.path().join("out"))
        .arg("--out")
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("| **text** | 1 | 5 | 1 | 1 | 0 |"), "{md}");
}

#[test]
fn a_resume_with_another_model_is_refused_naming_both() {
    let s = setup();
    let ep = endpoint::start(|_, _| Reply::Http(500, Vec::new(), "down".into()));
    let (o, rows) = run_agent(&s, "out", &ep.base_url, "", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(rows[0]["status"], "error");
    let (o, _) = run_agent(&s, "out", &ep.base_url, "temperature = 0.5", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("\"temperature\":null") && err.contains("\"temperature\":0.5"),
        "{err}"
    );
}

/// `navbench run` of the scripted agent on `text` and `codegraph` with its trees
/// under `cache` and its output in `out`.
fn run_in(s: &Setup, out: &str, cache: &str, base_url: &str) -> std::process::Output {
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit)]);
    let agent = agent_file(s.work.path(), base_url, "");
    common::navbench()
        .args(["run", "--dataset"])
        .arg(ds)
        .arg("--repo-url")
        .arg(&s.repo_path)
        .arg("--cache")
        .arg(s.work.path().join(cache))
        .arg("--out")
        .arg(s.work.path().join(out))
        .args(["--variants", "text,codegraph", "--agent"])
        .arg(agent)
        .output()
        .unwrap()
}

/// The replay check with the test's own model: a run recorded into its default
/// `<out>/llm-cache`, then played again from a copy of that cache in another `--out`,
/// with the trees under another `--cache` and the endpoint gone, gives the same CSVs
/// but for the timing columns (`common::replay`), and the model saw the same text.
#[test]
fn a_recorded_run_replays_under_another_cache_directory() {
    let s = setup();
    let ep = reads_then_answers();
    let o = run_in(&s, "rec", "cache", &ep.base_url);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let asked = ep.requests.lock().unwrap().len();
    assert!(asked >= 4, "{asked} requests");
    let rec = s.work.path().join("rec");
    let rep = s.work.path().join("rep");
    common::replay::copy_dir(&rec.join("llm-cache"), &rep.join("llm-cache"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run_in(
        &s,
        "rep",
        "a-longer-cache-directory",
        &format!("http://127.0.0.1:{port}/v1"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ep.requests.lock().unwrap().len(), asked);
    common::replay::assert_same_run(&rec, &rep);
    let calls = read_csv(&rep.join("calls.csv"));
    let init = calls
        .iter()
        .find(|c| c["tool"] == "init_repository")
        .unwrap();
    assert!(init["args"].contains("/repo"), "{init:?}");
}
