//! `navbench run --repeats K` end to end: the real `navbench` binary and the real
//! `navbench-text` server on two `mini` instances, with a scripted Chat Completions
//! endpoint standing in for the model (and only for the model) at temperature 0.7. The
//! model answers each trial of a pair differently, as a sampled model would; since
//! the trials of a pair send the same requests, only the trial in the `--llm-cache`
//! key keeps their answers apart.
//!
//! Checked: the `trial` column of both CSVs, the transcripts' names, one cache entry
//! per trial and turn; a replay of the run from its cache with the endpoint down gives
//! the same CSVs; `report` gives the means over trials with their t intervals and the
//! shares found in any / all trials; a resume with a smaller K plays nothing, one with
//! a larger K only the missing trials; `--repeats 0` is refused; a scripted run with
//! repeats says its trials are alike.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

mod common;

use common::endpoint::{self, Reply, agent_file, turns_so_far};
use common::navbench;
use common::repo::read_csv;

const INSTANCES: &str = "mini__shopkeep-1,mini__shopkeep-2";
const FOUND_1: &str = "The bug:\n- shopkeep/models/money.py::Money.allocate\n";
const FOUND_2: &str = "The bug:\n- shopkeep/pricing/tax.py::TaxTable.tax_for_amount\n";
const WRONG: &str = "The bug:\n- shopkeep/cli.py\n";

/// The scripted model: a grep, then an answer that depends on the trial, counted per
/// task (the conversation's first request of a task starts its next trial). Instance
/// 1 is found in every trial, instance 2 from trial 3 on.
fn sampled_model() -> endpoint::Endpoint {
    let starts: Mutex<HashMap<String, usize>> = Mutex::new(HashMap::new());
    endpoint::start(move |_, body| {
        let task = body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let first = task.contains("Money.allocate");
        let mut starts = starts.lock().unwrap();
        let n = starts.entry(task).or_default();
        if turns_so_far(body) == 0 {
            *n += 1;
            return Reply::calls(&[("grep", r#"{"pattern": "def "}"#)]);
        }
        let trial = *n;
        Reply::answer(match (first, trial) {
            (true, _) => FOUND_1,
            (false, 1 | 2) => WRONG,
            (false, _) => FOUND_2,
        })
    })
}

fn run(work: &Path, out: &str, agent: Option<&Path>, extra: &[&str]) -> std::process::Output {
    run_on(INSTANCES, work, out, agent, extra)
}

fn run_on(
    instances: &str,
    work: &Path,
    out: &str,
    agent: Option<&Path>,
    extra: &[&str],
) -> std::process::Output {
    let mut cmd = navbench();
    cmd.args(["run", "--dataset", "mini", "--variants", "text"])
        .args(["--instances", instances])
        .arg("--cache")
        .arg(work.join("cache"))
        .arg("--out")
        .arg(work.join(out))
        .args(extra);
    if let Some(a) = agent {
        cmd.arg("--agent").arg(a);
    }
    cmd.output().unwrap()
}

fn ok(o: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err
}

/// The cache entries under `dir`: file name → the entry's JSON.
fn cache_entries(dir: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for shard in std::fs::read_dir(dir).unwrap() {
        for e in std::fs::read_dir(shard.unwrap().path()).unwrap() {
            let p = e.unwrap().path();
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            out.insert(p.file_name().unwrap().to_string_lossy().into_owned(), v);
        }
    }
    out
}

/// (instance, trial) → file_acc_5 of a run's rows.
fn hits(rows: &[HashMap<String, String>]) -> BTreeMap<(String, String), String> {
    rows.iter()
        .map(|r| {
            (
                (r["instance_id"].clone(), r["trial"].clone()),
                r["file_acc_5"].clone(),
            )
        })
        .collect()
}

#[test]
fn trials_are_sampled_recorded_replayed_and_reported() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let ep = sampled_model();
    let agent = agent_file(w, &ep.base_url, "temperature = 0.7");
    let err = ok(&run(w, "rec", Some(&agent), &["--repeats", "3"]));
    assert!(!err.contains("deterministic"), "{err}");
    let rec = w.join("rec");

    // Rows: each instance × trial once, answered as the model sampled it.
    let rows = read_csv(&rec.join("instances.csv"));
    assert_eq!(rows.len(), 6, "{rows:?}");
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{rows:?}");
    let found: Vec<((String, String), String)> = hits(&rows).into_iter().collect();
    let expect = |i: &str, t: &str, v: &str| {
        (
            (format!("mini__shopkeep-{i}"), t.to_string()),
            v.to_string(),
        )
    };
    assert_eq!(
        found,
        [
            expect("1", "1", "1.0000"),
            expect("1", "2", "1.0000"),
            expect("1", "3", "1.0000"),
            expect("2", "1", "0.0000"),
            expect("2", "2", "0.0000"),
            expect("2", "3", "1.0000"),
        ]
    );
    let calls = read_csv(&rec.join("calls.csv"));
    let mut call_trials: Vec<&str> = calls.iter().map(|c| c["trial"].as_str()).collect();
    call_trials.sort();
    call_trials.dedup();
    assert_eq!(call_trials, ["1", "2", "3"]);

    // Transcripts: trial 1 keeps the name a run without repeats gives it.
    for id in ["mini__shopkeep-1", "mini__shopkeep-2"] {
        for name in [
            format!("{id}__text.jsonl"),
            format!("{id}__text__trial2.jsonl"),
            format!("{id}__text__trial3.jsonl"),
        ] {
            assert!(rec.join("transcripts").join(&name).is_file(), "{name}");
        }
    }

    // The cache: an entry per instance × trial × turn (besides the pre-flight's), the
    // later trials' marked, and trial 1's as a run without repeats writes it.
    let asked = ep.requests.lock().unwrap().len();
    assert_eq!(asked, 12);
    let mut entries = cache_entries(&rec.join("llm-cache"));
    entries.retain(|_, v| !endpoint::is_probe(&v["request"]));
    assert_eq!(entries.len(), 12);
    let mut by_trial: BTreeMap<Option<u64>, usize> = BTreeMap::new();
    for v in entries.values() {
        *by_trial.entry(v["trial"].as_u64()).or_default() += 1;
        assert!(v["request"].get("seed").is_none());
    }
    assert_eq!(
        by_trial,
        BTreeMap::from([(None, 4), (Some(2), 4), (Some(3), 4)])
    );

    // A replay from a copy of the cache, the endpoint gone: no request, same CSVs.
    let rep = w.join("rep");
    common::replay::copy_dir(&rec.join("llm-cache"), &rep.join("llm-cache"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = w.join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let gone_agent = agent_file(
        &gone,
        &format!("http://127.0.0.1:{port}/v1"),
        "temperature = 0.7",
    );
    ok(&run(w, "rep", Some(&gone_agent), &["--repeats", "3"]));
    assert_eq!(ep.requests.lock().unwrap().len(), asked);
    common::replay::assert_same_run(&rec, &rep);

    // The report: trial accuracies 0.5, 0.5, 1 on file Acc@5 — mean 2/3, sd 1/√12,
    // so ± t(2, 0.975) · (1/√12) / √3 = ± 0.7171 —; both instances found in some
    // trial, one in every trial.
    let report = w.join("report");
    let o = navbench()
        .arg("report")
        .arg(&rec)
        .arg("--out")
        .arg(&report)
        .args(["--resamples", "100"])
        .output()
        .unwrap();
    ok(&o);
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("## Trials"), "{md}");
    assert!(
        md.contains("| **text** | 3 | 2 | 66.7 [-5.0, 138.4] | 100.0 | 50.0 |"),
        "{md}"
    );
    let csv = read_csv(&report.join("report.csv"));
    let trial_row = |metric: &str| {
        csv.iter()
            .find(|r| r["section"] == "trials" && r["metric"] == metric)
            .unwrap_or_else(|| panic!("no trials row {metric}"))
            .clone()
    };
    let mean = trial_row("file_acc_5");
    assert_eq!(
        (mean["n"].as_str(), mean["value"].as_str()),
        ("3", "0.666667")
    );
    assert_eq!(trial_row("file_acc_5_any")["value"], "1.000000");
    assert_eq!(trial_row("file_acc_5_all")["value"], "0.500000");
    // The accuracy table reads each instance once, as the mean over its trials (1
    // and 1/3).
    let acc = csv
        .iter()
        .find(|r| r["section"] == "variant" && r["metric"] == "file_acc_5")
        .unwrap();
    assert_eq!(acc["n"], "2", "{acc:?}");
    let value: f64 = acc["value"].parse().unwrap();
    assert!((value - 2.0 / 3.0).abs() < 1e-3, "{acc:?}");

    // Resumes: a smaller K plays nothing and keeps every trial; a larger K plays only
    // the missing trial.
    let err = ok(&run(w, "rec", Some(&agent), &["--repeats", "2"]));
    assert!(err.contains("holds up to 3 trial(s)"), "{err}");
    assert_eq!(ep.requests.lock().unwrap().len(), asked);
    assert_eq!(read_csv(&rec.join("instances.csv")).len(), 6);
    ok(&run(w, "rec", Some(&agent), &["--repeats", "4"]));
    assert_eq!(ep.requests.lock().unwrap().len(), asked + 4);
    let rows = read_csv(&rec.join("instances.csv"));
    assert_eq!(rows.len(), 8);
    assert_eq!(rows.iter().filter(|r| r["trial"] == "4").count(), 2);
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["repeats"], 4);
}

#[test]
fn zero_repeats_are_refused_and_scripted_trials_are_alike() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let o = run(w, "zero", None, &["--repeats", "0"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--repeats must be at least 1"), "{err}");
    assert!(!w.join("zero").exists(), "a refused run wrote its --out");

    let err = ok(&run_on(
        "mini__shopkeep-1",
        w,
        "scripted",
        None,
        &["--repeats", "2"],
    ));
    assert!(err.contains("deterministic"), "{err}");
    let rows = read_csv(&w.join("scripted").join("instances.csv"));
    assert_eq!(rows.len(), 2);
    let same = |c: &str| rows[0][c] == rows[1][c];
    assert!(
        ["pred_files", "pred_functions", "n_calls", "file_acc_5"]
            .iter()
            .all(|c| same(c)),
        "{rows:?}"
    );
    assert_eq!(
        (rows[0]["trial"].as_str(), rows[1]["trial"].as_str()),
        ("1", "2")
    );
}
