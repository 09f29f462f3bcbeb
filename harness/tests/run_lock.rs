//! One `navbench run` per `--out` at a time, through the real binary: while a run is
//! busy (its stand-in server hangs in a call), a second run on the same directory is
//! refused at once, naming the first run's pid; once the first is SIGKILLed, the lock
//! is gone with it and a third run on the directory goes ahead.
//!
//! The stand-in `navbench-text` runs `tests/fixtures/misbehaving_server.py`, so no
//! server binary needs to be built.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Kills the first run when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A directory holding a `navbench-text` that runs the fixture in `mode`.
fn stand_in(work: &Path, mode: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehaving_server.py");
    let bin = work.join(format!("bin-{mode}"));
    std::fs::create_dir_all(&bin).expect("mkdir");
    let exe = bin.join("navbench-text");
    std::fs::write(
        &exe,
        format!("#!/bin/sh\nexec python3 '{}' {mode}\n", fixture.display()),
    )
    .expect("write");
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

fn run(work: &Path, out: &Path, mode: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_navbench"));
    cmd.args([
        "run",
        "--dataset",
        "mini",
        "--limit",
        "1",
        "--variants",
        "text",
    ])
    .args(["--timeout", "300", "--cache"])
    .arg(work.join("cache"))
    .arg("--out")
    .arg(out)
    .arg("--server-dir")
    .arg(stand_in(work, mode));
    cmd
}

fn finish(mut cmd: Command) -> (Output, Duration) {
    let started = Instant::now();
    let out = cmd.output().expect("run navbench");
    (out, started.elapsed())
}

#[test]
fn a_second_run_on_the_same_out_is_refused_and_a_killed_run_leaves_no_lock() {
    let work = tempfile::tempdir().expect("tempdir");
    let out = work.path().join("run");
    let lock = out.join("run.lock");
    let mut first = run(work.path(), &out, "hang");
    let first = Running(
        first
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the first run"),
    );
    let pid = first.0.id();
    // The first run holds the lock once its pid is in the file, and is busy once its
    // server has started (the call then hangs for --timeout).
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&lock)
        .map(|t| t.trim().to_string())
        .ok()
        != Some(pid.to_string())
    {
        assert!(
            Instant::now() < deadline,
            "the first run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let (second, took) = finish(run(work.path(), &out, "ok"));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        !second.status.success(),
        "the second run was not refused: {stderr}"
    );
    assert!(stderr.contains(&format!("process {pid}")), "{stderr}");
    assert!(stderr.contains("another navbench run"), "{stderr}");
    // Refused at once: the first run's hanging call alone lasts minutes.
    assert!(
        took < Duration::from_secs(60),
        "refused only after {took:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&lock)
            .map(|t| t.trim().to_string())
            .ok(),
        Some(pid.to_string()),
        "the refused run must not touch the holder's lock file"
    );

    // SIGKILL: no chance to clean up; the lock file stays, the lock does not.
    drop(first);
    assert!(lock.exists(), "a SIGKILLed run cannot remove its lock file");
    let (third, _) = finish(run(work.path(), &out, "exit-mid-call"));
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(third.status.success(), "{stderr}");
    assert!(!stderr.contains("another navbench run"), "{stderr}");
    assert!(!lock.exists(), "a run that finishes removes its lock file");
    let rows = std::fs::read_to_string(out.join("instances.csv")).expect("instances.csv");
    // One row (its quoted error may span lines), the third run's: the killed run wrote none.
    let records = rows.lines().filter(|l| l.starts_with("mini__")).count();
    assert_eq!(records, 1, "one header and one row: {rows}");
}
