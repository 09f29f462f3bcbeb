//! End to end: the real `navbench` binary runs the real `navbench-text` server over MCP
//! on a git repository created here, and writes the CSVs. Also the failure paths a
//! user hits: bad arguments, bad datasets, missing commits, servers that die or hang.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use std::path::Path;

mod common;

use common::repo::{instance, read_csv, setup};

#[test]
fn runs_text_variant_end_to_end_and_resumes() {
    let s = setup();
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit), "{not json".to_string()]);
    let out = s.run(&ds, "out", &["--variants", "text"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    // The malformed line is reported with its number and skipped.
    assert!(stderr.contains("record 2"), "{stderr}");
    // stderr is a pipe here, so progress comes as plain lines, one per finished pair.
    assert!(
        stderr.contains("navbench: [1/1] acme__shop-1 × text: ok in "),
        "{stderr}"
    );
    let dir = s.work.path().join("out");
    let rows = read_csv(&dir.join("instances.csv"));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["status"], "ok", "{r:?}");
    assert_eq!(r["gold_functions"], "shop/store.py:Store.total_price");
    // The issue names the culprit: the text policy finds it first.
    assert_eq!(r["file_acc_1"], "1.0000", "{r:?}");
    assert_eq!(r["function_acc_5"], "1.0000", "{r:?}");
    assert!(
        r["pred_functions"].starts_with("shop/store.py:Store.total_price"),
        "{r:?}"
    );
    assert!(r["schema_tokens"].parse::<usize>().unwrap() > 50);
    assert!(r["response_tokens"].parse::<usize>().unwrap() > 0);
    let calls = read_csv(&dir.join("calls.csv"));
    assert_eq!(calls.len().to_string(), r["n_calls"]);
    assert!(calls.iter().any(|c| c["tool"] == "grep"));
    assert!(calls.iter().all(|c| c["is_error"] == "false"), "{calls:?}");
    let summary = read_csv(&dir.join("summary.csv"));
    assert_eq!(summary[0]["variant"], "text");
    assert_eq!(summary[0]["file_acc_1"], "1.0000");
    assert!(String::from_utf8_lossy(&out.stdout).contains("text"));
    assert!(dir.join("skipped.csv").exists());

    // Same --out again: the finished pair is skipped, nothing is appended.
    let again = s.run(&ds, "out", &["--variants", "text"]);
    assert!(again.status.success());
    assert_eq!(read_csv(&dir.join("instances.csv")).len(), 1);
    assert_eq!(read_csv(&dir.join("calls.csv")).len(), calls.len());
}

#[test]
fn the_next_instance_of_a_repository_takes_over_the_finished_tree() {
    let s = setup();
    let ds = s.write_dataset(&[
        instance("acme__shop-1", &s.commit),
        instance("acme__shop-2", &s.commit),
    ]);
    let out = s.run(&ds, "out", &["--variants", "text"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = read_csv(&s.work.path().join("out/instances.csv"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        assert_eq!(r["file_acc_1"], "1.0000", "{r:?}");
    }
    // The first tree was moved to the second instance, verified, and updated.
    let trees = s.work.path().join("cache/worktrees");
    assert!(!trees.join("acme__shop-1").exists());
    assert!(trees.join("acme__shop-2/shop/store.py").is_file());
    assert!(trees.join("acme__shop-2.manifest.json").is_file());
}

#[test]
fn missing_commit_is_recorded_and_the_run_goes_on() {
    let s = setup();
    let ds = s.write_dataset(&[
        instance("acme__shop-bad", "0123456789abcdef0123456789abcdef01234567"),
        instance("acme__shop-1", &s.commit),
    ]);
    let out = s.run(&ds, "out", &["--variants", "text"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = read_csv(&s.work.path().join("out/instances.csv"));
    let bad = rows
        .iter()
        .find(|r| r["instance_id"] == "acme__shop-bad")
        .unwrap();
    assert_eq!(bad["status"], "error");
    assert!(bad["error"].contains("0123456789abcdef"), "{bad:?}");
    let good = rows
        .iter()
        .find(|r| r["instance_id"] == "acme__shop-1")
        .unwrap();
    assert_eq!(good["status"], "ok");
}

#[test]
fn bad_arguments_get_clear_errors() {
    let s = setup();
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit)]);
    let out = s.run(&ds, "out", &["--variants", "nosuch"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown variant 'nosuch'") && err.contains("text"),
        "{err}"
    );

    let out = s.run(Path::new("/nonexistent/ds.jsonl"), "out2", &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not found") && err.contains("--dataset"),
        "{err}"
    );

    let out = s.run(&ds, "out3", &["--instances", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown instance id"));
}

/// Writes an executable `navbench-text` stand-in running `body` (a shell script).
fn fake_server(dir: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("navbench-text");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn servers_that_exit_or_hang_are_recorded() {
    let s = setup();
    let ds = s.write_dataset(&[instance("acme__shop-1", &s.commit)]);
    for (name, body) in [
        ("exits", "echo boom >&2; exit 3"),
        ("hangs", "exec sleep 600"),
    ] {
        let bin = s.work.path().join(format!("bin-{name}"));
        fake_server(&bin, body);
        let out = s.run(
            &ds,
            name,
            &[
                "--variants",
                "text",
                "--timeout",
                "2",
                "--server-dir",
                bin.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = read_csv(&s.work.path().join(name).join("instances.csv"));
        assert_eq!(rows[0]["status"], "error", "{name}: {:?}", rows[0]);
        assert!(
            rows[0]["error"].contains("did not start"),
            "{name}: {:?}",
            rows[0]
        );
    }
}
