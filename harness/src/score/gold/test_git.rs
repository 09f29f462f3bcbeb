//! The `git` command line for the gold tests: fixtures are real repositories and
//! real `git diff` output, so the gold rules are checked on what git writes.

use std::path::Path;
use std::process::Command;

/// Runs `git args` in `dir` (with a test identity) and returns its stdout; panics
/// with git's stderr when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes `text` to `dir/path`, creating directories.
pub fn write(dir: &Path, path: &str, text: &str) {
    let file = dir.join(path);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
    std::fs::write(file, text).expect("write");
}

/// `path` at revision `rev` (`git show rev:path`), `None` when it does not exist.
pub fn show(dir: &Path, rev: &str, path: &str) -> Option<String> {
    let out = Command::new("git")
        .args(["show", &format!("{rev}:{path}")])
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
