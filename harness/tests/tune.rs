//! `navbench tune`: the real binary plays the text policy under every setting of its
//! constants, on the real `navbench-text` server, over two repositories this test
//! creates, and writes the leave-one-repository-out table. Also: a grid naming no
//! knob is refused before any work; a run killed part-way and run again into the same
//! output ends with the same `scores.csv` as one never stopped, a finished one is not
//! played again, and a rerun asking for another grid is refused.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use std::path::Path;

mod common;

use common::navbench;
use common::repo::{make_repo, read_csv};

/// An instance of the shop application under the repository name `acme/{name}`.
fn instance(id: &str, name: &str, commit: &str) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&common::repo::instance(id, commit)).unwrap();
    v["repo"] = serde_json::Value::String(format!("acme/{name}"));
    v.to_string()
}

fn tune(work: &Path, repos: &Path, ds: &Path, extra: &[&str]) -> std::process::Output {
    tune_command(work, repos, ds, extra).output().unwrap()
}

fn tune_command(work: &Path, repos: &Path, ds: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = navbench();
    cmd.args(["tune", "--dataset"])
        .arg(ds)
        .arg("--repo-url")
        .arg(format!("{}/{{owner}}+{{name}}", repos.display()))
        .arg("--cache")
        .arg(work.join("cache"))
        .arg("--out")
        .arg(work.join("tune"))
        .args(extra);
    cmd
}

/// Two repositories (`acme/shop`, `acme/mall`) of the shop application, and a dataset
/// of `per_repo` instances of each.
fn two_repositories(work: &Path, per_repo: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let (src, commit) = make_repo();
    let repos = work.join("repos");
    let mut lines = Vec::new();
    for name in ["shop", "mall"] {
        let dst = repos.join(format!("acme+{name}"));
        git2::Repository::clone(&src.path().to_string_lossy(), &dst).unwrap();
        for i in 1..=per_repo {
            lines.push(instance(&format!("acme__{name}-{i}"), name, &commit));
        }
    }
    let ds = work.join("ds.jsonl");
    std::fs::write(&ds, lines.join("\n") + "\n").unwrap();
    (repos, ds)
}

#[test]
fn tunes_the_text_policy_and_holds_one_repository_out_at_a_time() {
    let (src, commit) = make_repo();
    let work = tempfile::tempdir().unwrap();
    let repos = work.path().join("repos");
    for name in ["shop", "mall"] {
        let dst = repos.join(format!("acme+{name}"));
        git2::Repository::clone(&src.path().to_string_lossy(), &dst).unwrap();
    }
    let ds = work.path().join("ds.jsonl");
    let lines = [
        instance("acme__shop-1", "shop", &commit),
        instance("acme__mall-1", "mall", &commit),
    ];
    std::fs::write(&ds, lines.join("\n") + "\n").unwrap();

    let out = tune(work.path(), &repos, &ds, &["--variants", "text"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let dir = work.path().join("tune");
    let settings = read_csv(&dir.join("settings.csv"));
    // The defaults, then max_terms and files_to_read halved and doubled, the test
    // file factor off, halved and doubled, and the fitted ranker on.
    let labels: Vec<&str> = settings.iter().map(|r| r["setting"].as_str()).collect();
    assert_eq!(
        labels,
        [
            "default",
            "max_terms=6",
            "max_terms=24",
            "files_to_read=2",
            "files_to_read=10",
            "test_file_factor=0",
            "test_file_factor=0.125",
            "test_file_factor=0.5",
            "fitted=1"
        ]
    );
    // The issue names the culprit: every setting finds it first.
    assert!(
        settings.iter().all(|r| r["file@1"] == "100.0"),
        "{settings:?}"
    );
    let scores = read_csv(&dir.join("scores.csv"));
    assert_eq!(scores.len(), 2 * settings.len());
    let loo = read_csv(&dir.join("loo.csv"));
    let figures: Vec<(&str, &str)> = loo
        .iter()
        .map(|r| (r["figure"].as_str(), r["repo"].as_str()))
        .collect();
    assert_eq!(
        figures,
        [
            ("in-sample-default", "*"),
            ("in-sample-best", "*"),
            ("held-out", "*"),
            // Repositories in the order instances ran: equal groups by name.
            ("fold-default", "acme/mall"),
            ("fold-held-out", "acme/mall"),
            ("fold-default", "acme/shop"),
            ("fold-held-out", "acme/shop"),
        ]
    );
    // Every setting ties, so each fold keeps the defaults.
    assert!(
        loo.iter()
            .all(|r| r["figure"] != "fold-held-out" || r["setting"] == "default")
    );
    let md = std::fs::read_to_string(dir.join("tune.md")).unwrap();
    assert!(
        md.contains("## text (2 instances, 2 repositories, 9 settings)"),
        "{md}"
    );
    assert!(
        md.contains("| leave-one-repository-out | chosen per fold | 100.0 |"),
        "{md}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        md.lines().next()
    );
}

#[test]
fn a_grid_naming_no_knob_is_refused_before_any_work() {
    let work = tempfile::tempdir().unwrap();
    let ds = work.path().join("none.jsonl");
    let out = tune(
        work.path(),
        work.path(),
        &ds,
        &["--variants", "text,bm25", "--grid", "frame=1,2"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("'frame'") && stderr.contains("text: max_terms, files_to_read"),
        "{stderr}"
    );
    assert!(stderr.contains("bm25: none"), "{stderr}");
    assert!(!work.path().join("tune").exists());
    assert!(!work.path().join("cache").exists());
}

#[test]
fn a_run_killed_part_way_resumes_to_the_same_scores() {
    let work = tempfile::tempdir().unwrap();
    let (repos, ds) = two_repositories(work.path(), 3);
    let args = ["--variants", "text,bm25"];
    let dir = work.path().join("tune");

    // The reference: one run, never stopped.
    let out = tune(work.path(), &repos, &ds, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole = std::fs::read_to_string(dir.join("scores.csv")).unwrap();
    let loo = std::fs::read_to_string(dir.join("loo.csv")).unwrap();
    // 6 instances × (9 text settings + 1 bm25 setting), and a header.
    assert_eq!(whole.lines().count(), 1 + 6 * 10, "{whole}");

    // Run again: everything is recorded, nothing is played.
    let out = tune(work.path(), &repos, &ds, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("recorded earlier").count(), 6, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("scores.csv")).unwrap(),
        whole
    );
    assert_eq!(std::fs::read_to_string(dir.join("loo.csv")).unwrap(), loo);

    // What a kill leaves: some whole rows, part of a pair, and a torn last row.
    let cut = whole
        .lines()
        .take(1 + 10 + 3)
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    std::fs::write(
        dir.join("scores.csv"),
        format!("{cut}text,acme__shop-2,acme/sh"),
    )
    .unwrap();
    let out = tune(work.path(), &repos, &ds, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("removed a row cut off"), "{stderr}");
    assert_eq!(stderr.matches("recorded earlier").count(), 1, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("scores.csv")).unwrap(),
        whole
    );
    assert_eq!(std::fs::read_to_string(dir.join("loo.csv")).unwrap(), loo);

    // A real kill (SIGKILL) once the first rows are on disk, then a rerun.
    std::fs::remove_dir_all(&dir).unwrap();
    let mut child = tune_command(work.path(), &repos, &ds, &args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let scores = dir.join("scores.csv");
    loop {
        let rows = std::fs::read_to_string(&scores).map_or(0, |t| t.lines().count());
        if rows > 3 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().unwrap();
    let out = tune(work.path(), &repos, &ds, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&scores).unwrap(), whole);

    // Another grid into the same output is refused, naming the difference.
    let out = tune(
        work.path(),
        &repos,
        &ds,
        &["--variants", "text,bm25", "--grid", "max_terms=3"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("text's grid differs") && stderr.contains("only in this one: max_terms=3"),
        "{stderr}"
    );
    // And so is another selection of the dataset.
    let out = tune(
        work.path(),
        &repos,
        &ds,
        &["--variants", "text,bm25", "--limit", "2"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("the dataset differs"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&scores).unwrap(), whole);
}
