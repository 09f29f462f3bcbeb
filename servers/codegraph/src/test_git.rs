//! Test helpers: git repositories made in a test, one commit at a time, and fresh
//! checkouts of their commits (one directory per commit, as a benchmark run makes
//! them), for the tests that compare warm (incremental) builds with cold ones.

use std::fs;
use std::path::Path;

/// Makes the work tree of `repo` hold exactly `files` and commits it; returns the commit.
pub(crate) fn commit(repo: &git2::Repository, files: &[(&str, &str)], message: &str) -> git2::Oid {
    let root = repo.workdir().expect("work tree");
    for entry in fs::read_dir(root).expect("list") {
        let p = entry.expect("entry").path();
        if p.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if p.is_dir() {
            fs::remove_dir_all(&p).expect("rm dir");
        } else {
            fs::remove_file(&p).expect("rm file");
        }
    }
    for (rel, text) in files {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, text).expect("write");
    }
    let mut index = repo.index().expect("index");
    index.clear().expect("clear");
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("write index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("find");
    let sig = git2::Signature::now("t", "t@example.com").expect("signature");
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .expect("commit")
}

/// A fresh checkout of `oid` from `origin` in `dest` (detached HEAD).
pub(crate) fn checkout(origin: &Path, oid: git2::Oid, dest: &Path) -> String {
    let url = format!("file://{}", origin.display());
    let repo = git2::Repository::clone(&url, dest).expect("clone");
    repo.set_head_detached(oid).expect("detach");
    repo.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .expect("checkout");
    dest.canonicalize()
        .expect("canonical")
        .to_string_lossy()
        .into_owned()
}
