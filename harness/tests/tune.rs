//! `navbench tune`: the real binary plays the text policy under every setting of its
//! constants, on the real `navbench-text` server, over two repositories this test
//! creates, and writes the leave-one-repository-out table. Also: a grid naming no
//! knob is refused before any work.
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
    navbench()
        .args(["tune", "--dataset"])
        .arg(ds)
        .arg("--repo-url")
        .arg(format!("{}/{{owner}}+{{name}}", repos.display()))
        .arg("--cache")
        .arg(work.join("cache"))
        .arg("--out")
        .arg(work.join("tune"))
        .args(extra)
        .output()
        .unwrap()
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
