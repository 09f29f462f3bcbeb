//! `navbench run` checks what it was given before it prepares anything: a missing
//! dataset, an unknown variant or a bad `--repo-url` template is an error before any
//! model is installed or distilled, any repository built or any server started; and
//! a run prepares only what its variants need (`text` installs no model).
//!
//! Each refused run gets a fresh cache and stand-in server binaries (`--server-dir`)
//! that log every invocation: a run that provisioned anything would have run one
//! (`navbench-retrieval fetch-model`, `distill`), so the tests assert on what was
//! created and run, never on time.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::navbench;

/// Stand-ins for every server binary, each appending its arguments to `calls.log`
/// and failing; returns (their directory, the log).
fn stand_ins(work: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = work.join("bin");
    let log = work.join("calls.log");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for name in ["navbench-text", "navbench-codegraph", "navbench-retrieval"] {
        let exe = bin.join(name);
        let body = format!(
            "#!/bin/sh\necho \"{name} $*\" >> '{}'\nexit 1\n",
            log.display()
        );
        std::fs::write(&exe, body).expect("write");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    (bin, log)
}

/// `navbench run ARGS` with a fresh cache (`work/cache`), `--out work/out` and the
/// stand-in servers.
fn refused_run(work: &Path, args: &[&str]) -> (Output, String) {
    let (bin, _) = stand_ins(work);
    let out = navbench()
        .arg("run")
        .args(args)
        .arg("--cache")
        .arg(work.join("cache"))
        .arg("--out")
        .arg(work.join("out"))
        .arg("--server-dir")
        .arg(&bin)
        .output()
        .expect("run navbench");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "the run was not refused: {stderr}");
    (out, stderr)
}

/// Nothing was prepared, built, started or written.
fn nothing_happened(work: &Path, stderr: &str) {
    let cache = work.join("cache");
    assert!(
        !cache.join("models").exists(),
        "a model dir was made: {stderr}"
    );
    assert!(!cache.exists(), "the cache was written: {stderr}");
    assert!(!work.join("out").exists(), "--out was made: {stderr}");
    let calls = std::fs::read_to_string(work.join("calls.log")).unwrap_or_default();
    assert_eq!(calls, "", "a server binary was run before the refusal");
}

#[test]
fn a_missing_dataset_is_named_before_any_model_is_installed() {
    let work = tempfile::tempdir().expect("tempdir");
    let nope = work.path().join("nope.jsonl");
    // Every variant, retrieval and retrieval-static among them: the run that used to
    // install and distill models before it looked for the file.
    let (_, stderr) = refused_run(work.path(), &["--dataset", nope.to_str().expect("utf-8")]);
    assert!(stderr.contains("nope.jsonl"), "{stderr}");
    assert!(stderr.contains("--dataset"), "{stderr}");
    nothing_happened(work.path(), &stderr);
}

#[test]
fn an_unknown_variant_is_refused_before_the_others_are_prepared() {
    let work = tempfile::tempdir().expect("tempdir");
    let args = ["--dataset", "mini", "--variants", "retrieval,nosuch"];
    let (_, stderr) = refused_run(work.path(), &args);
    assert!(stderr.contains("unknown variant 'nosuch'"), "{stderr}");
    assert!(
        stderr.contains("retrieval-static"),
        "the valid names: {stderr}"
    );
    nothing_happened(work.path(), &stderr);
}

#[test]
fn a_bad_repo_url_template_is_refused_before_anything_is_prepared() {
    let work = tempfile::tempdir().expect("tempdir");
    let args = [
        "--dataset",
        "dev",
        "--variants",
        "retrieval-static",
        "--repo-url",
        "https://github.com/{owner}/{repo}.git",
    ];
    let (_, stderr) = refused_run(work.path(), &args);
    assert!(stderr.contains("--repo-url"), "{stderr}");
    assert!(stderr.contains("unknown placeholder {repo}"), "{stderr}");
    assert!(
        stderr.contains("{owner}/{name}"),
        "how to write one: {stderr}"
    );
    nothing_happened(work.path(), &stderr);
}

#[test]
fn a_limit_of_zero_is_refused_before_anything_is_prepared() {
    let work = tempfile::tempdir().expect("tempdir");
    let args = [
        "--dataset",
        "mini",
        "--variants",
        "retrieval",
        "--limit",
        "0",
    ];
    let (_, stderr) = refused_run(work.path(), &args);
    assert!(stderr.contains("--limit"), "{stderr}");
    nothing_happened(work.path(), &stderr);
}

/// The real `navbench-text` on one `mini` instance, with a fresh cache: the run
/// builds the mini repository and a tree, and no model of any kind.
#[test]
fn a_text_run_installs_no_model() {
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    let out = navbench()
        .args([
            "run",
            "--dataset",
            "mini",
            "--variants",
            "text",
            "--limit",
            "1",
        ])
        .arg("--cache")
        .arg(&cache)
        .arg("--out")
        .arg(work.path().join("out"))
        .output()
        .expect("run navbench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(cache.join("mini").is_dir(), "the run did use this cache");
    for dir in ["models", "retrieval", "static"] {
        assert!(!cache.join(dir).exists(), "{dir}/ was made: {stderr}");
    }
    assert!(!stderr.contains("installing"), "{stderr}");
    assert!(!stderr.contains("distilling"), "{stderr}");
}
