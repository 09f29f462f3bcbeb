//! `navbench-retrieval fetch-model --check`: what the harness runs to learn whether the
//! embedding model is installed, without re-implementing the model's file list.

use std::path::Path;
use std::process::{Command, Output};

use navbench_retrieval::model::{default_model_dir, write_tiny_model};

fn check(args: &[&std::ffi::OsStr], model_dir_env: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_navbench-retrieval"));
    cmd.args(["fetch-model", "--check"]).args(args);
    cmd.env_remove("NAVBENCH_MODEL_DIR").env("RUST_LOG", "off");
    if let Some(dir) = model_dir_env {
        cmd.env("NAVBENCH_MODEL_DIR", dir);
    }
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

#[test]
fn check_passes_and_prints_the_directory_of_a_usable_model() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    let model = default_model_dir(&cache);
    write_tiny_model(&model, 5).expect("tiny model");
    // The tiny model embeds into 32 dimensions.
    let out = check(
        &[
            "--cache-dir".as_ref(),
            cache.as_os_str(),
            "--dim".as_ref(),
            "32".as_ref(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), model.display().to_string());

    // NAVBENCH_MODEL_DIR is honoured, as by the server.
    let elsewhere = tmp.path().join("elsewhere");
    write_tiny_model(&elsewhere, 6).expect("tiny model");
    let out = check(&["--dim".as_ref(), "32".as_ref()], Some(&elsewhere));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), elsewhere.display().to_string());
}

#[test]
fn check_fails_with_what_is_missing_and_what_to_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = check(&["--cache-dir".as_ref(), tmp.path().as_os_str()], None);
    assert!(!out.status.success());
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    let dir = default_model_dir(tmp.path());
    assert!(err.contains(&dir.display().to_string()), "{err}");
    assert!(
        err.contains("missing config.json, tokenizer.json, model.safetensors"),
        "{err}"
    );
    assert!(err.contains("navbench-retrieval fetch-model"), "{err}");

    // Present but of the wrong dimension (the tiny model is not MiniLM's 384).
    write_tiny_model(&dir, 5).expect("tiny model");
    let out = check(&["--cache-dir".as_ref(), tmp.path().as_os_str()], None);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("32-dimensional vectors, not the expected 384"),
        "{err}"
    );
}
