//! The embedded default dataset, `mini`: small projects and localization tasks
//! written for navbench (`datasets/mini/`), compiled into the binary so that
//! `navbench run` works offline on a fresh machine. Two projects, one repository
//! each ([`PROJECTS`]): `shopkeep` (Python, `navbench/mini`) and `relay`
//! (TypeScript, JavaScript, Java, Go and Rust, `navbench/polyglot`), so the README's
//! first command measures every language navbench reads.
//!
//! [`materialize`] turns each embedded tree into a bare git repository with one commit
//! made deterministically (sorted paths, fixed author, committer and time), so the
//! commit ids — the tasks' `base_commit`s — are the same on every machine.

use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

use crate::checkout::commit::commit_files;
use crate::data::dataset::{Dataset, Instance};

static MINI: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../datasets/mini");

/// The `repo` value of the Python tasks (`shopkeep`).
pub const MINI_REPO: &str = "navbench/mini";
/// The `repo` value of the other languages' tasks (`relay`).
pub const POLYGLOT_REPO: &str = "navbench/polyglot";

/// One embedded project: its tasks' `repo` and its directory under `datasets/mini/`.
#[derive(Debug, Clone, Copy)]
pub struct Project {
    pub repo: &'static str,
    pub dir: &'static str,
}

/// Every embedded project. Adding one: a directory under `datasets/mini/`, one line
/// here, and its tasks (with this `repo`) in `tasks.jsonl`.
pub const PROJECTS: &[Project] = &[
    Project {
        repo: MINI_REPO,
        dir: "repo",
    },
    Project {
        repo: POLYGLOT_REPO,
        dir: "polyglot",
    },
];

/// Fixed commit metadata: changing any of it changes every `base_commit`.
const AUTHOR: &str = "navbench";
const EMAIL: &str = "navbench@example.invalid";
const TIME: i64 = 1_700_000_000;
const MESSAGE: &str = "mini: base tree of the embedded navbench dataset\n";

/// A project built as a bare repository by [`materialize`].
#[derive(Debug, Clone)]
pub struct Built {
    pub repo: &'static str,
    pub path: PathBuf,
    pub commit: String,
}

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

/// Files of a project's tree (`datasets/mini/<dir>/`), as (project-relative path,
/// bytes), sorted by path.
pub fn tree_files(project: &Project) -> Result<Vec<(String, &'static [u8])>, MiniError> {
    let root = MINI
        .get_dir(project.dir)
        .ok_or(MiniError::Missing("project directory"))?;
    let mut files = Vec::new();
    collect(root, project.dir, &mut files);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

fn collect(dir: &'static Dir<'static>, root: &str, out: &mut Vec<(String, &'static [u8])>) {
    for f in dir.files() {
        // Paths inside the embedded dir start with the project's directory.
        let p = f.path().to_string_lossy().replace('\\', "/");
        // Byte-code a local `py_compile` may have left is not part of the project.
        if p.contains("__pycache__/") || p.ends_with(".pyc") {
            continue;
        }
        let rel = p
            .strip_prefix(root)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(&p)
            .to_string();
        out.push((rel, f.contents()));
    }
    for d in dir.dirs() {
        if d.path().file_name().is_some_and(|n| n == "__pycache__") {
            continue;
        }
        collect(d, root, out);
    }
}

/// Creates (or reuses) the bare repository of every embedded project under `dir`.
pub fn materialize(dir: &Path) -> Result<Vec<Built>, MiniError> {
    PROJECTS.iter().map(|p| materialize_one(dir, p)).collect()
}

/// The bare repository of one project: `<dir>/<owner>+<name>.git`.
fn materialize_one(dir: &Path, project: &Project) -> Result<Built, MiniError> {
    let path = dir.join(format!("{}.git", project.repo.replace('/', "+")));
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
    let files = tree_files(project)?;
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), *b)).collect();
    let sig = git2::Signature::new(AUTHOR, EMAIL, &git2::Time::new(TIME, 0)).map_err(git)?;
    let commit = commit_files(&repo, &[], &files, &sig, MESSAGE, None).map_err(git)?;
    repo.reference("refs/heads/main", commit, true, "navbench mini")
        .map_err(git)?;
    repo.set_head("refs/heads/main").map_err(git)?;
    Ok(Built {
        repo: project.repo,
        path,
        commit: commit.to_string(),
    })
}

/// The mini tasks with each `base_commit` filled in from its project's commit
/// (`commit_of(repo)`, the commits [`materialize`] returns).
pub fn dataset(commit_of: &dyn Fn(&str) -> String) -> Result<Dataset, MiniError> {
    let tasks = MINI
        .get_file("tasks.jsonl")
        .and_then(|f| f.contents_utf8())
        .ok_or(MiniError::Missing("tasks.jsonl"))?;
    let mut ds = Dataset::from_jsonl("mini", &fill_commit(tasks, commit_of));
    ds.name = "mini".into();
    Ok(ds)
}

/// The tasks of the projects [`materialize`] built.
pub fn dataset_of(built: &[Built]) -> Result<Dataset, MiniError> {
    dataset(&|repo| {
        (built.iter())
            .find(|b| b.repo == repo)
            .map_or_else(|| UNBUILT_COMMIT.to_string(), |b| b.commit.clone())
    })
}

/// The base commit [`dataset_unbuilt`] gives every task: no commit id, so a stand-in
/// can never be mistaken for the real one.
const UNBUILT_COMMIT: &str = "unbuilt";

/// The mini tasks as [`dataset`] gives them, read without building their repository,
/// each base commit a stand-in: what `navbench run` checks `--instances`, `--limit`
/// and `--shard` against before it writes anything. Read [`dataset`] with the commit
/// [`materialize`] returns before checking anything out.
pub fn dataset_unbuilt() -> Result<Dataset, MiniError> {
    dataset(&|_| UNBUILT_COMMIT.to_string())
}

/// Adds `base_commit` (its `repo`'s commit) to each task line that lacks one, so the
/// records validate.
fn fill_commit(tasks: &str, commit_of: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(tasks.len() + 64 * 32);
    for line in tasks.lines() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(mut obj)) => {
                let repo = obj.get("repo").and_then(|r| r.as_str()).unwrap_or("");
                let commit = commit_of(repo);
                obj.entry("base_commit")
                    .or_insert_with(|| serde_json::Value::String(commit));
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
    PROJECTS.iter().any(|p| p.repo == inst.repo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commits(built: &[Built]) -> Vec<(&'static str, String)> {
        built.iter().map(|b| (b.repo, b.commit.clone())).collect()
    }

    #[test]
    fn commit_is_deterministic_across_directories() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let ca = commits(&materialize(a.path()).unwrap());
        let cb = commits(&materialize(b.path()).unwrap());
        assert_eq!(ca, cb);
        assert_eq!(ca.len(), PROJECTS.len());
        // Reusing an existing repository gives the same commit.
        let again = commits(&materialize(a.path()).unwrap());
        assert_eq!(ca, again);
    }

    #[test]
    fn unbuilt_tasks_are_the_built_ones_but_for_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let built = materialize(dir.path()).unwrap();
        let (ds, unbuilt) = (dataset_of(&built).unwrap(), dataset_unbuilt().unwrap());
        assert!(unbuilt.problems.is_empty(), "{:?}", unbuilt.problems);
        let ids = |ds: &Dataset| -> Vec<String> {
            ds.instances.iter().map(|i| i.instance_id.clone()).collect()
        };
        assert_eq!(ids(&ds), ids(&unbuilt));
        assert!(
            unbuilt
                .instances
                .iter()
                .all(|i| built.iter().all(|b| i.base_commit != b.commit))
        );
    }

    #[test]
    fn tasks_load_with_their_projects_commits() {
        let dir = tempfile::tempdir().unwrap();
        let built = materialize(dir.path()).unwrap();
        let ds = dataset_of(&built).unwrap();
        assert!(ds.problems.is_empty(), "{:?}", ds.problems);
        for b in &built {
            let tasks: Vec<&Instance> = ds.instances.iter().filter(|i| i.repo == b.repo).collect();
            assert!(
                tasks.len() >= 10,
                "only {} tasks for {}",
                tasks.len(),
                b.repo
            );
            assert!(
                tasks
                    .iter()
                    .all(|i| i.base_commit == b.commit && is_mini(i))
            );
            let repo = git2::Repository::open_bare(&b.path).unwrap();
            let tree = repo
                .find_commit(git2::Oid::from_str(&b.commit).unwrap())
                .unwrap()
                .tree()
                .unwrap();
            assert!(!tree.is_empty());
        }
        assert_eq!(
            ds.instances.len(),
            ds.instances.iter().filter(|i| is_mini(i)).count()
        );
    }

    /// Every language with a front end has a task in the polyglot project, so the
    /// README's first command measures each of them.
    #[test]
    fn the_polyglot_project_covers_every_language() {
        let ds = dataset_unbuilt().unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for inst in ds.instances.iter().filter(|i| i.repo == POLYGLOT_REPO) {
            for f in &inst.gold.clone().unwrap_or_default().files {
                if let Some(l) = navbench_lang::language_for_path(f) {
                    seen.insert(l.name());
                }
            }
        }
        let want = ["go", "java", "javascript", "rust", "typescript"];
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), want);
    }
}
