//! Localization instances from any repository's history (`navbench dataset from-git`).
//!
//! Every commit that edits an existing function or method becomes one instance, as a
//! SWE-bench task would be: the repository at the commit's parent (`base_commit`), the
//! commit message as the problem statement, the commit's diff without its test files
//! as the patch, and gold derived from that patch by [`crate::score::gold::derive_gold`]
//! (stored in the instance's `gold`, which `navbench run` checks against its own
//! derivation). Users benchmark their own codebase with it; it also gives timing sets
//! of any size.
//!
//! A commit is skipped, and counted under its [`Skip`] reason, when it is a merge or a
//! root commit, changes nothing, only renames files, only touches tests, changes no
//! source file outside tests, or edits no function that existed before (only new
//! code, module-level code or class bodies), or when no gold can be derived. Three
//! quality filters come after those, so that their counts are the instances they
//! removed: a patch editing more source files than `--max-files` (a refactor, not one
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
use crate::data::dataset::Instance;
use crate::score::gold;

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
    /// No source file ([`is_source`]) outside the tests changes.
    NoSource,
    /// The source patch edits no function that existed at the parent.
    NoFunctionEdited,
    /// The gold derivation failed (a hunk that does not apply, a non-UTF-8 patch).
    GoldFailed,
    /// The source patch edits more source files than [`Quality::max_files`].
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
            Skip::NoSource => {
                "changes no source file (Python, TS/JS, Java, Go, Rust) outside tests"
            }
            Skip::NoFunctionEdited => {
                "edits no existing function (new code, module-level or class-body code only)"
            }
            Skip::GoldFailed => "no gold could be derived",
            Skip::TooManyFiles => "edits more source files than --max-files",
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
    /// Skip a commit whose source patch edits more source files than this.
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
    let source_files = kept
        .iter()
        .filter(|&&i| diff.get_delta(i).is_some_and(|d| is_source(&d)))
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
    if quality.max_files.is_some_and(|m| source_files > m) {
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
    if !kept.iter().any(|&i| is_source(&deltas[i])) {
        return Err(Skip::NoSource);
    }
    Ok(kept)
}

/// True when the change's old or new path is a source file of a language the gold
/// rules read: Python or a `navbench-lang` front end's (TS/JS, Java, Go, Rust).
fn is_source(d: &git2::DiffDelta) -> bool {
    [d.old_file().path(), d.new_file().path()]
        .into_iter()
        .flatten()
        .filter_map(|p| p.to_str())
        .any(|p| crate::policy::languages::family_of(p).is_some())
}

/// True for test files, which SWE-bench keeps out of the gold patch: the policies'
/// rule for every language ([`crate::policy::is_test_file`]) and Django's `tests.py`.
pub fn is_test_path(path: &str) -> bool {
    crate::policy::is_test_file(path) || path.rsplit('/').next() == Some("tests.py")
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
mod tests;
