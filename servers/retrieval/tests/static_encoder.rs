//! The static encoder end to end through the real binary: `distill` (and its
//! `--check`) on the tiny model, then `--encoder static` serving `codebase_retrieval`
//! on a tiny workspace, beside a MiniLM server on the same data directory whose
//! stores it never touches.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use navbench_retrieval::encoder::default_static_dir;
use serde_json::json;

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_navbench-retrieval"));
    cmd.args(args)
        .env_remove("NAVBENCH_MODEL_DIR")
        .env("RUST_LOG", "off");
    match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("running navbench-retrieval: {e}"),
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// `distill --model-dir SRC --out OUT --dims 16`, asserting success.
fn distill_tiny(source: &Path, out: &Path) {
    let res = run(&[
        "distill".as_ref(),
        "--model-dir".as_ref(),
        source.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--dims".as_ref(),
        "16".as_ref(),
    ]);
    assert!(res.status.success(), "{}", stderr(&res));
    assert_eq!(stdout(&res), out.display().to_string());
    assert!(stderr(&res).contains("distilled"), "{}", stderr(&res));
}

#[test]
fn distill_and_its_check_say_what_to_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let cache_args = ["--cache-dir".as_ref(), cache.as_os_str()];

    // No static model yet: --check fails, naming the directory and the command.
    let res = run(&[&["distill".as_ref(), "--check".as_ref()], &cache_args[..]].concat());
    assert!(!res.status.success());
    assert!(stdout(&res).is_empty(), "{}", stdout(&res));
    let err = stderr(&res);
    assert!(err.contains("navbench-retrieval distill"), "{err}");
    assert!(
        err.contains(&default_static_dir(&cache).display().to_string()),
        "{err}"
    );

    // No MiniLM to distil from: says to run fetch-model.
    let res = run(&[&["distill".as_ref()], &cache_args[..]].concat());
    assert!(!res.status.success());
    let err = stderr(&res);
    assert!(err.contains("navbench-retrieval fetch-model"), "{err}");

    // From the MiniLM in the cache into the default directory, then --check passes.
    let minilm = navbench_retrieval::model::default_model_dir(&cache);
    navbench_retrieval::model::write_tiny_model(&minilm, 3).expect("tiny model");
    let res = run(&[
        &["distill".as_ref(), "--dims".as_ref(), "8".as_ref()],
        &cache_args[..],
    ]
    .concat());
    assert!(res.status.success(), "{}", stderr(&res));
    let out = default_static_dir(&cache);
    assert_eq!(stdout(&res), out.display().to_string());
    let res = run(&[&["distill".as_ref(), "--check".as_ref()], &cache_args[..]].concat());
    assert!(res.status.success(), "{}", stderr(&res));
    assert_eq!(stdout(&res), out.display().to_string());
}

/// The directories named `name` anywhere under `dir`.
fn dirs_named(dir: &Path, name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| usize::from(e.file_name() == name) + dirs_named(&e.path(), name))
        .sum()
}

#[tokio::test]
async fn static_server_retrieves_and_keeps_its_own_stores() {
    let fx = fixture();
    let static_dir = fx.tmp.path().join("static");
    distill_tiny(&fx.model, &static_dir);

    let static_args = [
        "--encoder".as_ref(),
        "static".as_ref(),
        "--model-dir".as_ref(),
        static_dir.as_os_str(),
        "--data-dir".as_ref(),
        fx.data.as_os_str(),
        "--workspace".as_ref(),
        fx.workspace.as_os_str(),
    ];
    let client = start(&static_args, &[]).await;
    let r = poll(
        &client,
        "codebase_retrieval",
        json!({"query": "login password"}),
        |r| r.is_error == Some(false),
    )
    .await;
    let v = ok(&r);
    assert!(
        result_files(&v, "file").contains(&"pkg/auth.py".to_string()),
        "{v}"
    );
    client.cancel().await.expect("close");
    assert_eq!(dirs_named(&fx.data, "index-static"), 1);
    assert_eq!(dirs_named(&fx.data, "index"), 0);

    // MiniLM on the same data directory builds its own index beside it.
    let client = start_with(&fx, true, &[]).await;
    let r = poll(
        &client,
        "codebase_retrieval",
        json!({"query": "login password"}),
        |r| r.is_error == Some(false),
    )
    .await;
    ok(&r);
    client.cancel().await.expect("close");
    assert_eq!(dirs_named(&fx.data, "index"), 1);
    assert_eq!(dirs_named(&fx.data, "index-static"), 1);

    // And the static server comes back to its own store.
    let client = start(&static_args, &[]).await;
    let r = poll(
        &client,
        "codebase_retrieval",
        json!({"query": "hash_password"}),
        |r| r.is_error == Some(false),
    )
    .await;
    let v = ok(&r);
    assert!(
        result_files(&v, "file").contains(&"pkg/util.py".to_string()),
        "{v}"
    );
    client.cancel().await.expect("close");
}

#[test]
fn static_server_without_a_model_says_to_distill() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("nothing-here");
    let res = run(&[
        "--encoder".as_ref(),
        "static".as_ref(),
        "--model-dir".as_ref(),
        missing.as_os_str(),
        "--data-dir".as_ref(),
        tmp.path().join("data").as_os_str(),
    ]);
    assert!(!res.status.success());
    let err = stderr(&res);
    assert!(err.contains("navbench-retrieval distill"), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
}
