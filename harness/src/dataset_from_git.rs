//! Localization instances from any repository's history (`navbench dataset from-git`).
//!
//! Every commit that edits an existing Python function becomes one instance, as a
//! SWE-bench task would be: the repository at the commit's parent (`base_commit`), the
//! commit message as the problem statement, the commit's diff without its test files
//! as the patch, and gold derived from that patch by [`crate::gold::derive_gold`]
//! (stored in the instance's `gold`, which `navbench run` checks against its own
//! derivation). Users benchmark their own codebase with it; it also gives timing sets
//! of any size.
//!
//! A commit is skipped, and counted under its [`Skip`] reason, when it is a merge or a
//! root commit, changes nothing, only renames files, only touches tests, changes no
//! Python source outside tests, or edits no function that existed before (only new
//! code, module-level code or class bodies), or when no gold can be derived.
//!
//! The problem statement is the whole message minus trailers (`Signed-off-by:` …):
//! a message that quotes the issue it fixes carries that text with it. Issue trackers
//! are not queried; the tool works offline on the repository alone.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

use crate::checkout::RepoCache;
use crate::dataset::Instance;
use crate::gold;

/// Why a commit did not become an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Skip {
    /// More than one parent.
    Merge,
    /// No parent: nothing to localize against.
    Root,
    /// The diff is empty.
    Empty,
    /// Every change renames a file without changing it.
    RenameOnly,
    /// Every changed file is a test file ([`is_test_path`]).
    TestOnly,
    /// No `.py` file outside the tests changes.
    NoPythonSource,
    /// The source patch edits no function that existed at the parent.
    NoFunctionEdited,
    /// The gold derivation failed (a hunk that does not apply, a non-UTF-8 patch).
    GoldFailed,
}

impl Skip {
    /// A short description for the report.
    pub fn describe(self) -> &'static str {
        match self {
            Skip::Merge => "merge commit",
            Skip::Root => "root commit",
            Skip::Empty => "empty diff",
            Skip::RenameOnly => "only renames files",
            Skip::TestOnly => "only changes tests",
            Skip::NoPythonSource => "changes no Python source outside tests",
            Skip::NoFunctionEdited => {
                "edits no existing function (new code, module-level or class-body code only)"
            }
            Skip::GoldFailed => "no gold could be derived",
        }
    }
}

/// What `from-git` looked at and why commits were not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FromGitReport {
    /// `owner/name` the instances carry.
    pub repo: String,
    /// Commits examined (newest first, stopping at `--max` kept).
    pub scanned: usize,
    /// Instances produced.
    pub kept: usize,
    /// Commits skipped, by reason.
    pub skipped: BTreeMap<Skip, usize>,
}

impl std::fmt::Display for FromGitReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{}: {} commits examined, {} instances kept",
            self.repo, self.scanned, self.kept
        )?;
        for (reason, n) in &self.skipped {
            writeln!(f, "  skipped {n}: {}", reason.describe())?;
        }
        Ok(())
    }
}

/// Which commits to examine.
#[derive(Debug, Clone, Default)]
pub struct FromGitOptions {
    /// Only commits after this one (a revision: sha, tag, branch).
    pub since: Option<String>,
    /// Stop after this many instances.
    pub max: Option<usize>,
}

/// Opens `source` (a local repository path, bare or not, or a URL fetched into the
/// cache's mirror of the repository) and turns its history from `HEAD` into instances.
pub fn from_git(
    source: &str,
    cache_dir: &Path,
    opts: &FromGitOptions,
) -> anyhow::Result<(Vec<Instance>, FromGitReport)> {
    let local = Path::new(source);
    let (repo, name) = if !source.contains("://") && local.exists() {
        let repo = git2::Repository::open(local).with_context(|| {
            format!("{source} is not a git repository (pass a repository directory or a URL)")
        })?;
        let name = repo_name_of_local(&repo, local);
        (repo, name)
    } else {
        let name = repo_name_of_url(source).with_context(|| {
            format!("cannot tell owner/name from '{source}': pass a URL ending in /owner/name(.git) or a local path")
        })?;
        let mut cache = RepoCache::new(cache_dir, source);
        cache.add_override(&name, source);
        (cache.mirror_all(&name)?, name)
    };
    from_repository(&repo, &name, opts)
}

/// Turns the history of `repo` from `HEAD` (newest first, back to `opts.since`) into
/// instances of repository `name` (`owner/name`).
pub fn from_repository(
    repo: &git2::Repository,
    name: &str,
    opts: &FromGitOptions,
) -> anyhow::Result<(Vec<Instance>, FromGitReport)> {
    let head = head_commit(repo)?;
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    walk.push(head)?;
    if let Some(since) = &opts.since {
        let obj = repo
            .revparse_single(since)
            .with_context(|| format!("--since {since}: no such revision in the repository"))?;
        let commit = obj
            .peel_to_commit()
            .with_context(|| format!("--since {since} does not name a commit"))?;
        walk.hide(commit.id())?;
    }
    let mut report = FromGitReport {
        repo: name.to_string(),
        ..FromGitReport::default()
    };
    let mut instances = Vec::new();
    for oid in walk {
        if opts.max.is_some_and(|m| instances.len() >= m) {
            break;
        }
        let commit = repo.find_commit(oid?)?;
        report.scanned += 1;
        match instance_from_commit(repo, &commit, name) {
            Ok(inst) => instances.push(inst),
            Err(reason) => *report.skipped.entry(reason).or_default() += 1,
        }
    }
    report.kept = instances.len();
    Ok((instances, report))
}

/// The commit `HEAD` names, else the newest branch tip (a fresh bare mirror's `HEAD`
/// may name a branch the source does not have).
fn head_commit(repo: &git2::Repository) -> anyhow::Result<git2::Oid> {
    if let Ok(c) = repo.head().and_then(|h| h.peel_to_commit()) {
        return Ok(c.id());
    }
    let mut best: Option<(i64, git2::Oid)> = None;
    for b in repo.branches(None)? {
        let Ok(c) = b?.0.get().peel_to_commit() else {
            continue;
        };
        if best.is_none_or(|(t, _)| c.time().seconds() > t) {
            best = Some((c.time().seconds(), c.id()));
        }
    }
    best.map(|(_, id)| id)
        .context("the repository has no HEAD commit and no branch")
}

/// One commit as an instance, or why not.
pub fn instance_from_commit(
    repo: &git2::Repository,
    commit: &git2::Commit,
    name: &str,
) -> Result<Instance, Skip> {
    let parent = match commit.parent_count() {
        0 => return Err(Skip::Root),
        1 => commit.parent(0).map_err(|_| Skip::Root)?,
        _ => return Err(Skip::Merge),
    };
    let (old, new) = match (parent.tree(), commit.tree()) {
        (Ok(o), Ok(n)) => (o, n),
        _ => return Err(Skip::GoldFailed),
    };
    let mut diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .map_err(|_| Skip::GoldFailed)?;
    let mut find = git2::DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))
        .map_err(|_| Skip::GoldFailed)?;
    let kept = source_deltas(&diff)?;
    let mut patch = String::new();
    for idx in kept {
        let mut p = git2::Patch::from_diff(&diff, idx)
            .ok()
            .flatten()
            .ok_or(Skip::GoldFailed)?;
        let buf = p.to_buf().map_err(|_| Skip::GoldFailed)?;
        patch.push_str(buf.as_str().ok().ok_or(Skip::GoldFailed)?);
    }
    let read_base = |path: &str| -> Option<String> {
        let entry = old.get_path(Path::new(path)).ok()?;
        let blob = repo.find_blob(entry.id()).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    };
    let derived = gold::derive_gold(&patch, &read_base).map_err(|_| Skip::GoldFailed)?;
    if derived.locations.functions.is_empty() {
        return Err(Skip::NoFunctionEdited);
    }
    let sha = commit.id().to_string();
    Ok(Instance {
        instance_id: format!("{}-{}", name.replace('/', "__"), &sha[..12]),
        repo: name.to_string(),
        base_commit: parent.id().to_string(),
        problem_statement: problem_statement(commit.message().unwrap_or("")),
        patch,
        gold: Some(derived.locations),
        edit_functions: None,
        locagent_claude35: None,
    })
}

/// The indexes of the deltas that make the instance's patch (every change outside the
/// tests), or why the commit has none worth keeping.
fn source_deltas(diff: &git2::Diff) -> Result<Vec<usize>, Skip> {
    let deltas: Vec<git2::DiffDelta> = diff.deltas().collect();
    if deltas.is_empty() {
        return Err(Skip::Empty);
    }
    let pure_rename = |d: &git2::DiffDelta| {
        d.status() == git2::Delta::Renamed && d.old_file().id() == d.new_file().id()
    };
    if deltas.iter().all(pure_rename) {
        return Err(Skip::RenameOnly);
    }
    let path_of = |d: &git2::DiffDelta| {
        d.new_file()
            .path()
            .or(d.old_file().path())
            .and_then(|p| p.to_str())
            .unwrap_or("")
            .to_string()
    };
    let kept: Vec<usize> = (0..deltas.len())
        .filter(|&i| !is_test_path(&path_of(&deltas[i])))
        .collect();
    if kept.is_empty() {
        return Err(Skip::TestOnly);
    }
    let python = kept.iter().any(|&i| {
        let d = &deltas[i];
        [d.old_file().path(), d.new_file().path()]
            .into_iter()
            .flatten()
            .any(|p| p.extension().is_some_and(|e| e == "py"))
    });
    if !python {
        return Err(Skip::NoPythonSource);
    }
    Ok(kept)
}

/// True for test files, which SWE-bench keeps out of the gold patch: anything under a
/// `test`, `tests` or `testing` directory, `test_*.py`, `*_test.py`, `tests.py` and
/// `conftest.py`.
pub fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let file = parts.pop().unwrap_or("");
    parts
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "testing"))
        || (file.starts_with("test_") && file.ends_with(".py"))
        || file.ends_with("_test.py")
        || file == "tests.py"
        || file == "conftest.py"
}

/// The commit message without its trailer block (`Signed-off-by:`, `Co-authored-by:`…).
pub fn problem_statement(message: &str) -> String {
    let text = message.trim_end();
    let (body, last) = match text.rsplit_once("\n\n") {
        Some((b, l)) => (b, l),
        None => return text.to_string(),
    };
    let trailer = |l: &str| {
        l.split_once(": ").is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    };
    if last.lines().all(trailer) {
        body.trim_end().to_string()
    } else {
        text.to_string()
    }
}

/// `owner/name` from a URL (`https://host/owner/name(.git)`, `git@host:owner/name.git`,
/// `file:///x/owner/name`).
pub fn repo_name_of_url(url: &str) -> Option<String> {
    let trimmed = url.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    let mut parts = trimmed.rsplit(['/', ':']);
    let name = parts.next().filter(|s| !s.is_empty())?;
    let owner = parts.next().filter(|s| !s.is_empty())?;
    Some(format!("{owner}/{name}"))
}

/// `owner/name` of a local repository: from its `origin` remote when that is a URL,
/// else `local/<directory name>`.
fn repo_name_of_local(repo: &git2::Repository, path: &Path) -> String {
    let from_origin = repo
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().and_then(repo_name_of_url));
    from_origin.unwrap_or_else(|| {
        let dir = path
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "repo".into());
        let dir = dir.strip_suffix(".git").unwrap_or(&dir).to_string();
        format!("local/{dir}")
    })
}

/// `navbench dataset from-git`: builds the instances of `source` and writes them as
/// JSONL to `out` (stdout when `None`); returns the report.
pub fn command(
    source: &str,
    cache_dir: &Path,
    opts: &FromGitOptions,
    out: Option<&Path>,
) -> anyhow::Result<FromGitReport> {
    let (instances, report) = from_git(source, cache_dir, opts)?;
    match out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = std::io::BufWriter::new(file);
            write_jsonl(&instances, &mut w)?;
            std::io::Write::flush(&mut w)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        None => write_jsonl(&instances, &mut std::io::stdout().lock())?,
    }
    Ok(report)
}

/// Writes instances as JSONL, the format `navbench run --dataset FILE` reads.
pub fn write_jsonl(instances: &[Instance], out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    for inst in instances {
        serde_json::to_writer(&mut *out, inst)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose history holds one commit of every kind `from-git` sorts.
    struct History {
        _dir: tempfile::TempDir,
        repo: git2::Repository,
        /// Commit ids by label.
        ids: BTreeMap<&'static str, git2::Oid>,
    }

    const MOD_V1: &str =
        "def f():\n    return 1\n\n\nclass K:\n    def m(self):\n        return 1\n";
    const MOD_V2: &str =
        "def f():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n";
    const MOD_V3: &str = "def f():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n\n\ndef g():\n    return 3\n";
    const MOD_SIDE: &str = "def f():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 5\n\n\ndef g():\n    return 3\n";
    const MOD_LAST: &str = "def f():\n    return 7\n\n\nclass K:\n    def m(self):\n        return 8\n\n\ndef g():\n    return 3\n";
    const TEST_V1: &str = "def test_f():\n    assert True\n";
    const TEST_V2: &str = "def test_f():\n    assert 1\n";

    fn commit(
        repo: &git2::Repository,
        parents: &[git2::Oid],
        files: &[(&str, &str)],
        message: &str,
    ) -> git2::Oid {
        let mut tb = git2::Index::new().unwrap();
        for (path, text) in files {
            let id = repo.blob(text.as_bytes()).unwrap();
            let entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: 0,
                id,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            tb.add(&entry).unwrap();
        }
        let tree = repo.find_tree(tb.write_tree_to(repo).unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        let ps: Vec<git2::Commit> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit> = ps.iter().collect();
        repo.commit(None, &sig, &sig, message, &tree, &refs)
            .unwrap()
    }

    fn history() -> History {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(dir.path()).unwrap();
        let mut ids = BTreeMap::new();
        let m = "pkg/mod.py";
        let t = "tests/test_mod.py";
        let root = commit(
            &repo,
            &[],
            &[(m, MOD_V1), (t, TEST_V1), ("README.md", "a\n")],
            "init",
        );
        let fix = commit(
            &repo,
            &[root],
            &[(m, MOD_V2), (t, TEST_V2), ("README.md", "a\n")],
            "Fix f returning the wrong value\n\nf() must return 2.\n\nSigned-off-by: A <a@b>\n",
        );
        let tests = commit(
            &repo,
            &[fix],
            &[(m, MOD_V2), (t, TEST_V1), ("README.md", "a\n")],
            "tests only",
        );
        let docs = commit(
            &repo,
            &[tests],
            &[(m, MOD_V2), (t, TEST_V1), ("README.md", "b\n")],
            "docs",
        );
        let added = commit(
            &repo,
            &[docs],
            &[(m, MOD_V3), (t, TEST_V1), ("README.md", "b\n")],
            "add g",
        );
        let c = "pkg/core.py";
        let renamed = commit(
            &repo,
            &[added],
            &[(c, MOD_V3), (t, TEST_V1), ("README.md", "b\n")],
            "rename",
        );
        let side = commit(
            &repo,
            &[renamed],
            &[(c, MOD_SIDE), (t, TEST_V1), ("README.md", "b\n")],
            "K.m on a branch",
        );
        let merge = commit(
            &repo,
            &[renamed, side],
            &[(c, MOD_SIDE), (t, TEST_V1), ("README.md", "b\n")],
            "Merge branch",
        );
        let last = commit(
            &repo,
            &[merge],
            &[(c, MOD_LAST), (t, TEST_V2), ("README.md", "b\n")],
            "Fix #12: f and K.m",
        );
        repo.reference("refs/heads/main", last, true, "t").unwrap();
        repo.set_head("refs/heads/main").unwrap();
        for (k, v) in [
            ("root", root),
            ("fix", fix),
            ("tests", tests),
            ("docs", docs),
            ("added", added),
            ("renamed", renamed),
            ("side", side),
            ("merge", merge),
            ("last", last),
        ] {
            ids.insert(k, v);
        }
        History {
            _dir: dir,
            repo,
            ids,
        }
    }

    #[test]
    fn keeps_function_edits_and_counts_the_rest() {
        let h = history();
        let (insts, report) = from_repository(&h.repo, "o/r", &FromGitOptions::default()).unwrap();
        let by_base: Vec<(&str, Vec<&str>)> = insts
            .iter()
            .map(|i| {
                let g = i.gold.as_ref().unwrap();
                (
                    i.base_commit.as_str(),
                    g.functions.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        let id = |k: &str| h.ids[k].to_string();
        let (merge, side, renamed, root) = (id("merge"), id("side"), id("renamed"), id("root"));
        assert_eq!(
            by_base,
            vec![
                (merge.as_str(), vec!["pkg/core.py:f", "pkg/core.py:K.m"]),
                (renamed.as_str(), vec!["pkg/core.py:K.m"]),
                (root.as_str(), vec!["pkg/mod.py:f"]),
            ]
        );
        assert_eq!(insts[1].instance_id, format!("o__r-{}", &side[..12]));
        assert_eq!((report.scanned, report.kept), (9, 3));
        let expected: BTreeMap<Skip, usize> = [
            (Skip::Merge, 1),
            (Skip::RenameOnly, 1),
            (Skip::NoFunctionEdited, 1),
            (Skip::NoPythonSource, 1),
            (Skip::TestOnly, 1),
            (Skip::Root, 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(report.skipped, expected);

        let fix = &insts[2];
        assert_eq!(fix.instance_id, format!("o__r-{}", &id("fix")[..12]));
        assert_eq!(
            fix.problem_statement,
            "Fix f returning the wrong value\n\nf() must return 2."
        );
        assert!(
            fix.patch.contains("pkg/mod.py") && !fix.patch.contains("test_mod.py"),
            "{}",
            fix.patch
        );
        let gold = fix.gold.as_ref().unwrap();
        assert_eq!(
            (gold.files.as_slice(), gold.modules.as_slice()),
            (
                &["pkg/mod.py".to_string()][..],
                &["pkg/mod.py:f".to_string()][..]
            )
        );
    }

    #[test]
    fn since_and_max_limit_the_walk() {
        let h = history();
        let since = FromGitOptions {
            since: Some(h.ids["added"].to_string()),
            max: None,
        };
        let (insts, report) = from_repository(&h.repo, "o/r", &since).unwrap();
        assert_eq!((insts.len(), report.scanned), (2, 4));
        let max = FromGitOptions {
            since: None,
            max: Some(1),
        };
        let (insts, report) = from_repository(&h.repo, "o/r", &max).unwrap();
        assert_eq!((insts.len(), report.scanned), (1, 1));
        let bad = FromGitOptions {
            since: Some("no-such-ref".into()),
            max: None,
        };
        let err = from_repository(&h.repo, "o/r", &bad).unwrap_err();
        assert!(err.to_string().contains("--since no-such-ref"), "{err}");
    }

    #[test]
    fn output_reads_back_as_a_dataset_through_a_local_path() {
        let h = history();
        let cache = tempfile::tempdir().unwrap();
        let src = h.repo.path().to_string_lossy().into_owned();
        let (insts, report) = from_git(&src, cache.path(), &FromGitOptions::default()).unwrap();
        assert!(report.repo.starts_with("local/"), "{}", report.repo);
        let mut buf = Vec::new();
        write_jsonl(&insts, &mut buf).unwrap();
        let ds = crate::dataset::Dataset::from_jsonl("g", std::str::from_utf8(&buf).unwrap());
        assert!(ds.problems.is_empty(), "{:?}", ds.problems);
        assert_eq!(ds.instances, insts);
        // A file:// URL goes through the cache's mirror and gives the same instances.
        let url = format!("file://{src}");
        let (via_url, _) = from_git(&url, cache.path(), &FromGitOptions::default()).unwrap();
        let bases: Vec<_> = via_url.iter().map(|i| &i.base_commit).collect();
        assert_eq!(
            bases,
            insts.iter().map(|i| &i.base_commit).collect::<Vec<_>>()
        );
    }

    #[test]
    fn helpers() {
        for p in [
            "tests/a.py",
            "pkg/tests/x.py",
            "test_a.py",
            "pkg/a_test.py",
            "conftest.py",
            "app/tests.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "pkg/a.py",
            "pkg/testing_utils.py",
            "pkg/contest.py",
            "pytest.ini",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
        assert_eq!(
            repo_name_of_url("https://github.com/django/django.git").as_deref(),
            Some("django/django")
        );
        assert_eq!(
            repo_name_of_url("git@github.com:psf/requests.git").as_deref(),
            Some("psf/requests")
        );
        assert_eq!(repo_name_of_url("name"), None);
        assert_eq!(
            problem_statement("Subject\n\nBody.\n\nCo-authored-by: X <x@y>\n"),
            "Subject\n\nBody."
        );
        let prose = "Subject\n\nThis fixes it. See: the docs";
        assert_eq!(problem_statement(prose), prose);
    }
}
