//! The embedded default dataset, `mini`: a small Python project and localization tasks
//! written for navbench (`datasets/mini/`), compiled into the binary so that
//! `navbench run` works offline on a fresh machine.
//!
//! [`materialize`] turns the embedded tree into a bare git repository with one commit
//! made deterministically (sorted paths, fixed author, committer and time), so the
//! commit id — the tasks' `base_commit` — is the same on every machine.

use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

use crate::dataset::{Dataset, Instance};

static MINI: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../datasets/mini");

/// The `repo` value of every `mini` task.
pub const MINI_REPO: &str = "navbench/mini";

/// Fixed commit metadata: changing any of it changes every `base_commit`.
const AUTHOR: &str = "navbench";
const EMAIL: &str = "navbench@example.invalid";
const TIME: i64 = 1_700_000_000;
const MESSAGE: &str = "mini: base tree of the embedded navbench dataset\n";

/// Why the embedded dataset could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum MiniError {
    #[error(
        "the embedded mini dataset has no {0}: the binary was built from an incomplete checkout"
    )]
    Missing(&'static str),
    #[error("cannot build the mini repository at {path}: {source}")]
    Git { path: PathBuf, source: git2::Error },
}

/// Files of the project tree (`datasets/mini/repo/`), as (repo-relative path, bytes),
/// sorted by path.
pub fn tree_files() -> Result<Vec<(String, &'static [u8])>, MiniError> {
    let repo = MINI
        .get_dir("repo")
        .ok_or(MiniError::Missing("repo/ directory"))?;
    let mut files = Vec::new();
    collect(repo, &mut files);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(String, &'static [u8])>) {
    for f in dir.files() {
        // Paths inside the embedded dir start with `repo/`.
        let p = f.path().to_string_lossy().replace('\\', "/");
        // Byte-code a local `py_compile` may have left is not part of the project.
        if p.contains("__pycache__/") || p.ends_with(".pyc") {
            continue;
        }
        let rel = p.strip_prefix("repo/").unwrap_or(&p).to_string();
        out.push((rel, f.contents()));
    }
    for d in dir.dirs() {
        if d.path().file_name().is_some_and(|n| n == "__pycache__") {
            continue;
        }
        collect(d, out);
    }
}

/// Creates (or reuses) the bare repository of the mini project under `dir` and returns
/// its path and the base commit id.
pub fn materialize(dir: &Path) -> Result<(PathBuf, String), MiniError> {
    let path = dir.join("navbench+mini.git");
    let git = |source| MiniError::Git {
        path: path.clone(),
        source,
    };
    let repo = match git2::Repository::open_bare(&path) {
        Ok(r) => r,
        Err(_) => {
            std::fs::create_dir_all(&path)
                .map_err(|e| git(git2::Error::from_str(&e.to_string())))?;
            git2::Repository::init_bare(&path).map_err(git)?
        }
    };
    let mut index = git2::Index::new().map_err(git)?;
    for (rel, bytes) in tree_files()? {
        let oid = repo.blob(bytes).map_err(git)?;
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            file_size: bytes.len() as u32,
            id: oid,
            flags: 0,
            flags_extended: 0,
            path: rel.into_bytes(),
        };
        index.add(&entry).map_err(git)?;
    }
    let tree_id = index.write_tree_to(&repo).map_err(git)?;
    let tree = repo.find_tree(tree_id).map_err(git)?;
    let sig = git2::Signature::new(AUTHOR, EMAIL, &git2::Time::new(TIME, 0)).map_err(git)?;
    let commit = repo
        .commit(None, &sig, &sig, MESSAGE, &tree, &[])
        .map_err(git)?;
    repo.reference("refs/heads/main", commit, true, "navbench mini")
        .map_err(git)?;
    repo.set_head("refs/heads/main").map_err(git)?;
    Ok((path, commit.to_string()))
}

/// The mini tasks with `base_commit` filled in from [`materialize`].
pub fn dataset(base_commit: &str) -> Result<Dataset, MiniError> {
    let tasks = MINI
        .get_file("tasks.jsonl")
        .and_then(|f| f.contents_utf8())
        .ok_or(MiniError::Missing("tasks.jsonl"))?;
    let mut ds = Dataset::from_jsonl("mini", &fill_commit(tasks, base_commit));
    ds.name = "mini".into();
    Ok(ds)
}

/// The base commit [`dataset_unbuilt`] gives every task: no commit id, so a stand-in
/// can never be mistaken for the real one.
const UNBUILT_COMMIT: &str = "unbuilt";

/// The mini tasks as [`dataset`] gives them, read without building their repository,
/// each base commit a stand-in: what `navbench run` checks `--instances`, `--limit`
/// and `--shard` against before it writes anything. Read [`dataset`] with the commit
/// [`materialize`] returns before checking anything out.
pub fn dataset_unbuilt() -> Result<Dataset, MiniError> {
    dataset(UNBUILT_COMMIT)
}

/// Adds `base_commit` to each task line that lacks one, so the records validate.
fn fill_commit(tasks: &str, base_commit: &str) -> String {
    let mut out = String::with_capacity(tasks.len() + 64 * 32);
    for line in tasks.lines() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(mut obj)) => {
                obj.entry("base_commit")
                    .or_insert_with(|| serde_json::Value::String(base_commit.to_string()));
                out.push_str(&serde_json::Value::Object(obj).to_string());
            }
            // Left as is: the JSONL reader reports it with its line number.
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// True when `inst` belongs to the embedded dataset.
pub fn is_mini(inst: &Instance) -> bool {
    inst.repo == MINI_REPO
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_is_deterministic_across_directories() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let (_, ca) = materialize(a.path()).unwrap();
        let (_, cb) = materialize(b.path()).unwrap();
        assert_eq!(ca, cb);
        // Reusing an existing repository gives the same commit.
        let (_, again) = materialize(a.path()).unwrap();
        assert_eq!(ca, again);
    }

    #[test]
    fn unbuilt_tasks_are_the_built_ones_but_for_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (_, commit) = materialize(dir.path()).unwrap();
        let (built, unbuilt) = (dataset(&commit).unwrap(), dataset_unbuilt().unwrap());
        assert!(unbuilt.problems.is_empty(), "{:?}", unbuilt.problems);
        let ids = |ds: &Dataset| -> Vec<String> {
            ds.instances.iter().map(|i| i.instance_id.clone()).collect()
        };
        assert_eq!(ids(&built), ids(&unbuilt));
        assert!(unbuilt.instances.iter().all(|i| i.base_commit != commit));
    }

    #[test]
    fn tasks_load_with_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (repo_path, commit) = materialize(dir.path()).unwrap();
        let ds = dataset(&commit).unwrap();
        assert!(ds.problems.is_empty(), "{:?}", ds.problems);
        assert!(
            ds.instances.len() >= 20,
            "only {} tasks",
            ds.instances.len()
        );
        let repo = git2::Repository::open_bare(repo_path).unwrap();
        let tree = repo
            .find_commit(git2::Oid::from_str(&commit).unwrap())
            .unwrap()
            .tree()
            .unwrap();
        assert!(!tree.is_empty());
        assert!(
            ds.instances
                .iter()
                .all(|i| i.base_commit == commit && is_mini(i))
        );
    }
}
