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
//! code, module-level code or class bodies), or when no gold can be derived. Three
//! quality filters come after those, so that their counts are the instances they
//! removed: a patch editing more Python files than `--max-files` (a refactor, not one
//! bug), a problem statement of fewer than `--min-words` words ("typo", "lint"), and a
//! patch whose changed lines repeat those of an instance already kept (a backport or
//! cherry-pick of the same fix onto another branch).
//!
//! Which commits: those reachable from `HEAD` (or `--until REF`) and not from `--since
//! REF`; `--since` and `--until` also take a date `YYYY-MM-DD`, compared with each
//! commit's committer date in UTC, both days included. A date window is how a set is
//! kept apart from benchmarks collected before or after it.
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
    /// The source patch edits more Python files than [`Quality::max_files`].
    TooManyFiles,
    /// The problem statement has fewer words than [`Quality::min_words`].
    ShortStatement,
    /// The patch changes the same lines of the same files as an instance kept before
    /// ([`Quality::skip_duplicates`]).
    Duplicate,
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
            Skip::TooManyFiles => "edits more Python files than --max-files",
            Skip::ShortStatement => "problem statement shorter than --min-words",
            Skip::Duplicate => {
                "repeats the changes of a commit kept before (a backport or cherry-pick)"
            }
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
    /// Commits walked but outside the `--since`/`--until` dates, not examined.
    pub outside_dates: usize,
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
        if self.outside_dates > 0 {
            writeln!(
                f,
                "  {} commits outside the --since/--until dates not examined",
                self.outside_dates
            )?;
        }
        for (reason, n) in &self.skipped {
            writeln!(f, "  skipped {n}: {}", reason.describe())?;
        }
        if self.repo.starts_with("local/") {
            writeln!(
                f,
                "  note: the instances carry repo {}; pass --name owner/name for `run --repo-url` to find them",
                self.repo
            )?;
        }
        Ok(())
    }
}

/// Which commits to examine.
#[derive(Debug, Clone, Default)]
pub struct FromGitOptions {
    /// Only commits after this one (a revision: sha, tag, branch), or committed on or
    /// after this day (`YYYY-MM-DD`, committer date, UTC).
    pub since: Option<String>,
    /// Walk from this revision instead of `HEAD`, or only commits committed on or
    /// before this day (`YYYY-MM-DD`, committer date, UTC).
    pub until: Option<String>,
    /// Stop after this many instances.
    pub max: Option<usize>,
    /// The quality filters (none by default).
    pub quality: Quality,
    /// `owner/name` for the instances instead of the one read from the source (a local
    /// repository without an `origin` remote is otherwise `local/<directory>`).
    pub name: Option<String>,
}

/// Filters that keep a commit out although it edits a function: it is not one
/// localizable bug, or not a new one. All are off by default (the library's callers
/// get every commit); the CLI turns them on, with [`DEFAULT_MAX_FILES`] and
/// [`DEFAULT_MIN_WORDS`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quality {
    /// Skip a commit whose source patch edits more Python files than this.
    pub max_files: Option<usize>,
    /// Skip a commit whose problem statement has fewer words than this ([`word_count`]).
    pub min_words: usize,
    /// Skip a commit whose patch repeats the changes of one kept before it (newer
    /// first): a fix backported to a maintenance branch that is merged back, or a
    /// cherry-pick, is one task with two base commits, and would count twice.
    pub skip_duplicates: bool,
}

/// What two patches share when they make the same change: each file's `diff --git`
/// line and its added and removed lines, without line numbers, context or blob ids
/// (as `git patch-id` without the context).
fn change_key(patch: &str) -> String {
    let mut key = String::new();
    for line in patch.lines() {
        let header = line.starts_with("+++ ") || line.starts_with("--- ");
        if line.starts_with("diff --git ") || (line.starts_with(['+', '-']) && !header) {
            key.push_str(line);
            key.push('\n');
        }
    }
    key
}

/// `--max-files` default. A localization task is one bug: SWE-bench Lite keeps only
/// single-file patches, and fixes that touch a function and a few of its callers or
/// siblings stay under five files, while renames, API sweeps, lint and formatting
/// passes edit tens. Only `.py` files count: a changelog entry or a docs page
/// accompanies most fixes in these projects and says nothing about the bug's size.
pub const DEFAULT_MAX_FILES: usize = 5;

/// `--min-words` default. Below four words a message is a chore label ("typo",
/// "lint", "bump version", "Update docs") or a bare name, with nothing to localize
/// from; four is the shortest that usually makes a clause with an object and a
/// place ("Fix crash in decode_header").
pub const DEFAULT_MIN_WORDS: usize = 4;

/// Words in `text`: whitespace-separated tokens holding a letter (issue numbers such
/// as `(#1234)`, bullets and punctuation do not count).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count()
}

/// Opens `source` (a local repository path, bare or not, or a URL fetched into the
/// cache's mirror of the repository) and turns its history from `HEAD` into instances.
pub fn from_git(
    source: &str,
    cache_dir: &Path,
    opts: &FromGitOptions,
) -> anyhow::Result<(Vec<Instance>, FromGitReport)> {
    if let Some(name) = &opts.name {
        check_repo_name(name)?;
    }
    let local = Path::new(source);
    let (repo, name) = if !source.contains("://") && local.exists() {
        let repo = git2::Repository::open(local).with_context(|| {
            format!("{source} is not a git repository (pass a repository directory or a URL)")
        })?;
        let name = opts
            .name
            .clone()
            .unwrap_or_else(|| repo_name_of_local(&repo, local));
        (repo, name)
    } else {
        let name = match &opts.name {
            Some(n) => n.clone(),
            None => repo_name_of_url(source).with_context(|| {
                format!("cannot tell owner/name from '{source}': pass a URL ending in /owner/name(.git), a local path, or --name owner/name")
            })?,
        };
        let mut cache = RepoCache::new(cache_dir, source);
        cache.add_override(&name, source);
        (cache.mirror_all(&name)?, name)
    };
    from_repository(&repo, &name, opts)
}

/// `name` is `owner/name`, as `run --repo-url` fills `{owner}` and `{name}`.
fn check_repo_name(name: &str) -> anyhow::Result<()> {
    let ok = name.split_once('/').is_some_and(|(o, n)| {
        !o.is_empty() && !n.is_empty() && !n.contains('/') && !name.chars().any(char::is_whitespace)
    });
    anyhow::ensure!(
        ok,
        "--name {name}: expected owner/name (e.g. psf/requests), the form `run --repo-url` fills {{owner}} and {{name}} from"
    );
    Ok(())
}

/// One end of the walk, as `--since` or `--until` gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// A commit: `--since` hides it and its ancestors, `--until` walks from it.
    Commit(git2::Oid),
    /// A day, as the Unix time of its first second (UTC).
    Day(i64),
}

/// `value` of option `flag` as a date `YYYY-MM-DD` when it has that shape, else as a
/// revision of `repo`.
fn bound(repo: &git2::Repository, flag: &str, value: &str) -> anyhow::Result<Bound> {
    if let Some(day) = parse_day(flag, value)? {
        return Ok(Bound::Day(day));
    }
    let obj = repo.revparse_single(value).with_context(|| {
        format!(
            "{flag} {value}: no such revision in the repository; pass a sha, tag or branch it has (`git log --oneline`, `git tag`), or a date YYYY-MM-DD"
        )
    })?;
    let commit = obj.peel_to_commit().with_context(|| {
        format!("{flag} {value} does not name a commit; pass a commit's sha, tag or branch")
    })?;
    Ok(Bound::Commit(commit.id()))
}

/// `Some(unix time of the day's first second, UTC)` for a `YYYY-MM-DD` value, `None`
/// for anything else (a revision), an error for a date-shaped value naming no day.
fn parse_day(flag: &str, value: &str) -> anyhow::Result<Option<i64>> {
    let b = value.as_bytes();
    let shaped = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !shaped {
        return Ok(None);
    }
    let (y, m, d) = (&value[..4], &value[5..7], &value[8..]);
    let day = chrono::NaiveDate::from_ymd_opt(
        y.parse().unwrap_or(0),
        m.parse().unwrap_or(0),
        d.parse().unwrap_or(0),
    )
    .with_context(|| {
        format!("{flag} {value}: no such day; dates are YYYY-MM-DD with a real month and day (committer date, UTC)")
    })?;
    let start = day.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp());
    Ok(start)
}

/// Seconds in a day: `--until DAY` takes commits before the next day's start.
const DAY_SECONDS: i64 = 24 * 60 * 60;

/// Turns the history of `repo` from `HEAD` or `opts.until` (newest first, back to
/// `opts.since`) into instances of repository `name` (`owner/name`).
pub fn from_repository(
    repo: &git2::Repository,
    name: &str,
    opts: &FromGitOptions,
) -> anyhow::Result<(Vec<Instance>, FromGitReport)> {
    let since = opts
        .since
        .as_deref()
        .map(|v| bound(repo, "--since", v))
        .transpose()?;
    let until = opts
        .until
        .as_deref()
        .map(|v| bound(repo, "--until", v))
        .transpose()?;
    // Committer times in [from, to).
    let from = match since {
        Some(Bound::Day(t)) => Some(t),
        _ => None,
    };
    let to = match until {
        Some(Bound::Day(t)) => Some(t + DAY_SECONDS),
        _ => None,
    };
    if let (Some(f), Some(t)) = (from, to) {
        anyhow::ensure!(
            f < t,
            "--since {} is after --until {}: no day is in the window; swap them",
            opts.since.as_deref().unwrap_or(""),
            opts.until.as_deref().unwrap_or("")
        );
    }
    let start = match until {
        Some(Bound::Commit(id)) => id,
        _ => head_commit(repo)?,
    };
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    walk.push(start)?;
    if let Some(Bound::Commit(id)) = since {
        walk.hide(id)?;
    }
    let mut report = FromGitReport {
        repo: name.to_string(),
        ..FromGitReport::default()
    };
    let mut instances = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for oid in walk {
        if opts.max.is_some_and(|m| instances.len() >= m) {
            break;
        }
        let commit = repo.find_commit(oid?)?;
        let time = commit.time().seconds();
        if from.is_some_and(|f| time < f) || to.is_some_and(|t| time >= t) {
            report.outside_dates += 1;
            continue;
        }
        report.scanned += 1;
        match instance_from_commit(repo, &commit, name, &opts.quality) {
            Ok(inst) if opts.quality.skip_duplicates && !seen.insert(change_key(&inst.patch)) => {
                *report.skipped.entry(Skip::Duplicate).or_default() += 1;
            }
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

/// One commit as an instance, or why not (the quality filters last).
pub fn instance_from_commit(
    repo: &git2::Repository,
    commit: &git2::Commit,
    name: &str,
    quality: &Quality,
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
    let python_files = kept
        .iter()
        .filter(|&&i| diff.get_delta(i).is_some_and(|d| is_python(&d)))
        .count();
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
    if quality.max_files.is_some_and(|m| python_files > m) {
        return Err(Skip::TooManyFiles);
    }
    let statement = problem_statement(commit.message().unwrap_or(""));
    if word_count(&statement) < quality.min_words {
        return Err(Skip::ShortStatement);
    }
    let sha = commit.id().to_string();
    Ok(Instance {
        instance_id: format!("{}-{}", name.replace('/', "__"), &sha[..12]),
        repo: name.to_string(),
        base_commit: parent.id().to_string(),
        problem_statement: statement,
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
    if !kept.iter().any(|&i| is_python(&deltas[i])) {
        return Err(Skip::NoPythonSource);
    }
    Ok(kept)
}

/// True when the change's old or new path is a `.py` file.
fn is_python(d: &git2::DiffDelta) -> bool {
    [d.old_file().path(), d.new_file().path()]
        .into_iter()
        .flatten()
        .any(|p| p.extension().is_some_and(|e| e == "py"))
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
        let now = chrono::Utc::now().timestamp();
        commit_at(repo, parents, files, message, git2::Time::new(now, 0))
    }

    /// A commit whose author and committer time is `time`.
    fn commit_at(
        repo: &git2::Repository,
        parents: &[git2::Oid],
        files: &[(&str, &str)],
        message: &str,
        time: git2::Time,
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
        let sig = git2::Signature::new("t", "t@t", &time).unwrap();
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
            ..FromGitOptions::default()
        };
        let (insts, report) = from_repository(&h.repo, "o/r", &since).unwrap();
        assert_eq!((insts.len(), report.scanned), (2, 4));
        let max = FromGitOptions {
            max: Some(1),
            ..FromGitOptions::default()
        };
        let (insts, report) = from_repository(&h.repo, "o/r", &max).unwrap();
        assert_eq!((insts.len(), report.scanned), (1, 1));
        let bad = FromGitOptions {
            since: Some("no-such-ref".into()),
            ..FromGitOptions::default()
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

    /// Unix time of `YYYY-MM-DD hh:mm:ss` UTC.
    fn utc(date: &str, h: u32, m: u32, sec: u32) -> i64 {
        let d = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
        d.and_hms_opt(h, m, sec).unwrap().and_utc().timestamp()
    }

    /// A chain of four commits editing `f`, at the edges of the window
    /// [2023-11-01, 2024-09-30]; their ids oldest first.
    fn dated() -> (tempfile::TempDir, git2::Repository, Vec<git2::Oid>) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(dir.path()).unwrap();
        let body = |n: u32| format!("def f():\n    return {n}\n");
        let times = [
            git2::Time::new(utc("2023-10-31", 23, 59, 59), 0),
            git2::Time::new(utc("2023-11-01", 0, 0, 0), 0),
            // 2024-10-01 01:59 at +02:00: still 2024-09-30 in UTC, so inside.
            git2::Time::new(utc("2024-09-30", 23, 59, 59), 120),
            git2::Time::new(utc("2024-10-01", 0, 0, 0), 0),
        ];
        let mut ids: Vec<git2::Oid> = Vec::new();
        for (n, t) in times.into_iter().enumerate() {
            let text = body(n as u32);
            let parents: Vec<git2::Oid> = ids.last().copied().into_iter().collect();
            let msg = format!("Make f return {n} instead");
            ids.push(commit_at(&repo, &parents, &[("pkg/m.py", &text)], &msg, t));
        }
        repo.reference("refs/heads/main", ids[3], true, "t")
            .unwrap();
        repo.set_head("refs/heads/main").unwrap();
        (dir, repo, ids)
    }

    #[test]
    fn dates_and_until_bound_the_walk() {
        let (_dir, repo, ids) = dated();
        let window = FromGitOptions {
            since: Some("2023-11-01".into()),
            until: Some("2024-09-30".into()),
            ..FromGitOptions::default()
        };
        let (insts, report) = from_repository(&repo, "o/r", &window).unwrap();
        let bases: Vec<String> = insts.iter().map(|i| i.base_commit.clone()).collect();
        assert_eq!(bases, vec![ids[1].to_string(), ids[0].to_string()]);
        assert_eq!((report.scanned, report.outside_dates), (2, 2));
        assert!(report.to_string().contains("2 commits outside"), "{report}");

        // --until REF walks from that commit; a date --since still applies.
        let until_ref = FromGitOptions {
            until: Some(ids[1].to_string()),
            ..FromGitOptions::default()
        };
        let (insts, report) = from_repository(&repo, "o/r", &until_ref).unwrap();
        assert_eq!(insts.len(), 1);
        assert_eq!((report.scanned, report.skipped[&Skip::Root]), (2, 1));
        let mixed = FromGitOptions {
            since: Some("2023-11-01".into()),
            until: Some("main~1".into()),
            ..FromGitOptions::default()
        };
        let (insts, report) = from_repository(&repo, "o/r", &mixed).unwrap();
        assert_eq!((insts.len(), report.outside_dates), (2, 1));
    }

    #[test]
    fn bad_bounds_say_what_to_pass() {
        let (_dir, repo, _) = dated();
        let err = |since: Option<&str>, until: Option<&str>| {
            let opts = FromGitOptions {
                since: since.map(String::from),
                until: until.map(String::from),
                ..FromGitOptions::default()
            };
            from_repository(&repo, "o/r", &opts)
                .unwrap_err()
                .to_string()
        };
        let e = err(None, Some("no-such-branch"));
        assert!(
            e.contains("--until no-such-branch: no such revision") && e.contains("YYYY-MM-DD"),
            "{e}"
        );
        let e = err(Some("2023-02-30"), None);
        assert!(e.contains("--since 2023-02-30: no such day"), "{e}");
        let e = err(None, Some("2023-13-01"));
        assert!(e.contains("--until 2023-13-01: no such day"), "{e}");
        let e = err(Some("2024-10-01"), Some("2024-09-30"));
        assert!(e.contains("swap them"), "{e}");
        // The same day on both ends is a one-day window, not an error.
        let day = FromGitOptions {
            since: Some("2023-11-01".into()),
            until: Some("2023-11-01".into()),
            ..FromGitOptions::default()
        };
        let (insts, _) = from_repository(&repo, "o/r", &day).unwrap();
        assert_eq!(insts.len(), 1);
    }

    #[test]
    fn quality_filters_count_what_they_remove() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(dir.path()).unwrap();
        let v = |n: u32| format!("def f():\n    return {n}\n");
        let (v1, v2, v3) = (v(1), v(2), v(3));
        let files = |a: &str, b: &str, c: &str| {
            vec![
                ("pkg/a.py".to_string(), a.to_string()),
                ("pkg/b.py".to_string(), b.to_string()),
                ("pkg/c.py".to_string(), c.to_string()),
                ("CHANGES.rst".to_string(), format!("{a}{b}{c}")),
                ("docs/a.rst".to_string(), a.to_string()),
            ]
        };
        let mk = |parents: &[git2::Oid], fs: Vec<(String, String)>, msg: &str| {
            let refs: Vec<(&str, &str)> =
                fs.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
            commit(&repo, parents, &refs, msg)
        };
        let root = mk(&[], files(&v1, &v1, &v1), "init");
        let wide = mk(
            &[root],
            files(&v2, &v2, &v2),
            "Make f return 2 in every module",
        );
        let short = mk(&[wide], files(&v3, &v2, &v2), "typo (#12)");
        // One Python file plus a changelog and a docs page: one file for --max-files.
        let one = mk(&[short], files(&v1, &v2, &v2), "Fix #12: make f return 1");
        repo.reference("refs/heads/main", one, true, "t").unwrap();
        repo.set_head("refs/heads/main").unwrap();

        let off = FromGitOptions::default();
        let (insts, _) = from_repository(&repo, "o/r", &off).unwrap();
        assert_eq!(insts.len(), 3);
        let on = FromGitOptions {
            quality: Quality {
                max_files: Some(2),
                min_words: DEFAULT_MIN_WORDS,
                skip_duplicates: true,
            },
            ..FromGitOptions::default()
        };
        let (insts, report) = from_repository(&repo, "o/r", &on).unwrap();
        assert_eq!(insts.len(), 1);
        assert_eq!(insts[0].base_commit, short.to_string());
        let expected: BTreeMap<Skip, usize> = [
            (Skip::Root, 1),
            (Skip::TooManyFiles, 1),
            (Skip::ShortStatement, 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(report.skipped, expected);
        assert!(
            report
                .to_string()
                .contains("skipped 1: edits more Python files than --max-files"),
            "{report}"
        );

        // The filters come after the structural reasons: on the mixed history the
        // CLI's defaults keep the same instances and count the same skips.
        let h = history();
        let defaults = FromGitOptions {
            quality: Quality {
                max_files: Some(DEFAULT_MAX_FILES),
                min_words: DEFAULT_MIN_WORDS,
                skip_duplicates: true,
            },
            ..FromGitOptions::default()
        };
        let plain = from_repository(&h.repo, "o/r", &FromGitOptions::default()).unwrap();
        let filtered = from_repository(&h.repo, "o/r", &defaults).unwrap();
        assert_eq!(plain, filtered);
    }

    #[test]
    fn a_backport_of_a_kept_fix_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(dir.path()).unwrap();
        let v = |n: u32, pad: &str| format!("{pad}def f():\n    return {n}\n");
        let m = "pkg/m.py";
        let root = commit(&repo, &[], &[(m, &v(1, ""))], "init");
        let fix = commit(&repo, &[root], &[(m, &v(2, ""))], "Make f return 2 (#1)");
        let revert = commit(&repo, &[fix], &[(m, &v(1, ""))], "Revert the change to f");
        // The same change at other line numbers, as a backport lands it.
        let moved = commit(
            &repo,
            &[revert],
            &[(m, &v(1, "X = 0\n\n\n"))],
            "Add a constant X",
        );
        let backport = commit(
            &repo,
            &[moved],
            &[(m, &v(2, "X = 0\n\n\n"))],
            "[Backport maintenance/1.x] Make f return 2 (#1) (#2)",
        );
        repo.reference("refs/heads/main", backport, true, "t")
            .unwrap();
        repo.set_head("refs/heads/main").unwrap();
        let run = |skip_duplicates| {
            let opts = FromGitOptions {
                quality: Quality {
                    skip_duplicates,
                    ..Quality::default()
                },
                ..FromGitOptions::default()
            };
            from_repository(&repo, "o/r", &opts).unwrap()
        };
        let (all, _) = run(false);
        assert_eq!(all.len(), 3);
        let (insts, report) = run(true);
        let bases: Vec<String> = insts.iter().map(|i| i.base_commit.clone()).collect();
        // Newest first: the backport is kept, the original fix is the duplicate.
        assert_eq!(bases, vec![moved.to_string(), fix.to_string()]);
        assert_eq!(report.skipped.get(&Skip::Duplicate), Some(&1));
        assert!(report.to_string().contains("backport"), "{report}");
    }

    #[test]
    fn name_overrides_the_local_name() {
        let h = history();
        let cache = tempfile::tempdir().unwrap();
        let src = h.repo.path().to_string_lossy().into_owned();
        let named = FromGitOptions {
            name: Some("psf/requests".into()),
            max: Some(1),
            ..FromGitOptions::default()
        };
        let (insts, report) = from_git(&src, cache.path(), &named).unwrap();
        assert_eq!(report.repo, "psf/requests");
        assert_eq!(insts[0].repo, "psf/requests");
        assert!(insts[0].instance_id.starts_with("psf__requests-"));
        assert!(!report.to_string().contains("--name"), "{report}");
        let (_, local) = from_git(&src, cache.path(), &FromGitOptions::default()).unwrap();
        assert!(
            local.to_string().contains("pass --name owner/name"),
            "{local}"
        );
        for bad in ["requests", "a/b/c", "/x", "a b/c"] {
            let opts = FromGitOptions {
                name: Some(bad.into()),
                ..FromGitOptions::default()
            };
            let e = from_git(&src, cache.path(), &opts).unwrap_err().to_string();
            assert!(e.contains("expected owner/name"), "{bad}: {e}");
        }
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
        assert_eq!(word_count("typo"), 1);
        assert_eq!(word_count("Fix #12: f and K.m (#3456)\n\n* bump"), 5);
        assert_eq!(word_count(" - 1.2.3 -- "), 0);
    }
}
