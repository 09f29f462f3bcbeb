//! `navbench tune --features` then `--fit`: the real binary plays the text policy
//! once per instance on the real `navbench-text` server, over two repositories this
//! test creates, writes every candidate's features, and fits a ranker from them
//! leave-one-repository-out, writing the model as data that loads back. Also: fitting
//! from a directory with no feature table says what to run first.
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

fn tune(work: &Path, args: &[&str]) -> std::process::Output {
    navbench()
        .arg("tune")
        .arg("--cache")
        .arg(work.join("cache"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn extracts_features_once_and_fits_a_ranker_leave_one_repository_out() {
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
    let feats = work.path().join("features");
    let url = format!("{}/{{owner}}+{{name}}", repos.display());
    let out = tune(
        work.path(),
        &[
            "--features",
            "--variants",
            "text",
            "--dataset",
            ds.to_str().unwrap(),
            "--repo-url",
            &url,
            "--out",
            feats.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let played = read_csv(&feats.join("feature_instances.csv"));
    assert_eq!(played.len(), 2, "{played:?}");
    assert!(
        played
            .iter()
            .all(|r| r["status"] == "ok" && r["gold_functions"] == "1")
    );
    let rows = read_csv(&feats.join("features.csv"));
    // The gold function is a candidate of both instances, labelled, in the
    // hand-weighted answer, and named by the issue.
    let gold: Vec<_> = rows
        .iter()
        .filter(|r| r["level"] == "function" && r["label"] == "1")
        .collect();
    assert_eq!(gold.len(), 2, "{rows:?}");
    assert!(
        gold.iter()
            .all(|r| !r["hand_rank"].is_empty() && r["name_named"] == "1.000000")
    );
    assert!(rows.iter().any(|r| r["label"] == "0"));

    let fitted = work.path().join("fit");
    let out = tune(
        work.path(),
        &[
            "--fit",
            feats.to_str().unwrap(),
            "--out",
            fitted.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let md = std::fs::read_to_string(fitted.join("fit.md")).unwrap();
    assert!(md.contains("| text | ds | 2 | hand | "), "{md}");
    assert!(md.contains("| text | ds | 2 | fitted, LOO | "), "{md}");
    let model = navbench::policy::fitted::Model::load(&fitted.join("fitted/text.json")).unwrap();
    assert_eq!(model.variant, "text");
    assert_eq!(
        (model.provenance.instances, model.provenance.repositories),
        (2, 2)
    );
    assert!(model.provenance.command.contains("--fit"));
    // The committed provenance names no path of the machine that fitted.
    let tmp = work.path().to_string_lossy().into_owned();
    assert!(
        !model.provenance.command.contains(&tmp),
        "{:?}",
        model.provenance
    );
    assert!(
        model
            .provenance
            .data
            .iter()
            .all(|d| !d.contains(&tmp) && d.ends_with("/features.csv")),
        "{:?}",
        model.provenance
    );
}

#[test]
fn fitting_without_features_says_what_to_run_first() {
    let work = tempfile::tempdir().unwrap();
    let none = work.path().join("none");
    let out = tune(
        work.path(),
        &[
            "--fit",
            none.to_str().unwrap(),
            "--out",
            work.path().join("o").to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("navbench tune --features"), "{stderr}");
    assert!(!work.path().join("o").exists());
}
