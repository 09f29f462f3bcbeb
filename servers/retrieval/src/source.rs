//! Where a repository's files come from, and what changed since it was indexed.
//!
//! - [`parse_source`] tells a local directory from a git URL (`https://…`, `ssh://…`,
//!   `git@host:owner/repo`, `file://…`, or the `owner/repo` shorthand for GitHub).
//! - [`clone_or_fetch`] clones a URL into the data directory with git2 (checking out a
//!   branch if asked), or fetches and hard-resets an existing clone to the branch tip;
//!   [`diff_commits`] lists the files changed between two commits, which is how
//!   `update_repository` re-indexes a clone incrementally.
//! - [`Manifest`] records size, modification time and content hash of every indexed
//!   file, so a local directory (git checkout or not) is updated from what changed on
//!   disk: a file whose size and mtime are unchanged is not read again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A repository source as given to `index_repository`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// An existing local directory (canonical path), indexed in place.
    Local(PathBuf),
    /// A git URL to clone.
    Git(String),
}

/// Why a source could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Neither a directory nor a URL.
    #[error(
        "'{0}' is neither an existing directory nor a git URL; pass an absolute path to a local checkout, \
a URL such as https://github.com/owner/repo (or file:///path/to/repo), or the shorthand owner/repo"
    )]
    Unrecognized(String),
    /// A git operation failed.
    #[error("git: {what} failed for {target}: {message}")]
    Git {
        /// What was attempted (clone, fetch, checkout, diff…).
        what: &'static str,
        /// The URL or directory involved.
        target: String,
        /// libgit2's message.
        message: String,
    },
    /// The branch does not exist on the remote.
    #[error(
        "branch '{branch}' not found in {url}; leave branch empty for the default branch, or pass one of: {available}"
    )]
    NoSuchBranch {
        /// The URL.
        url: String,
        /// The branch asked for.
        branch: String,
        /// The branches the remote has.
        available: String,
    },
    /// A file could not be read while scanning.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
}

fn git_err(
    what: &'static str,
    target: impl Into<String>,
) -> impl FnOnce(git2::Error) -> SourceError {
    let target = target.into();
    move |e| SourceError::Git {
        what,
        target,
        message: e.message().to_string(),
    }
}

/// Classifies `input`: a URL (see the [module docs](self)) or an existing directory.
pub fn parse_source(input: &str) -> Result<SourceSpec, SourceError> {
    let trimmed = input.trim();
    let lower = trimmed.to_ascii_lowercase();
    let is_url = ["http://", "https://", "git://", "ssh://", "file://"]
        .iter()
        .any(|p| lower.starts_with(p))
        || is_scp_like(trimmed);
    if is_url {
        return Ok(SourceSpec::Git(normalize_url(trimmed)));
    }
    let path = Path::new(trimmed);
    if !trimmed.is_empty() && path.is_dir() {
        let canonical = path.canonicalize().map_err(|source| SourceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        return Ok(SourceSpec::Local(canonical));
    }
    if is_github_shorthand(trimmed) {
        return Ok(SourceSpec::Git(format!("https://github.com/{trimmed}")));
    }
    Err(SourceError::Unrecognized(trimmed.to_string()))
}

/// `git@host:owner/repo(.git)`.
fn is_scp_like(s: &str) -> bool {
    match (s.find('@'), s.find(':')) {
        (Some(at), Some(colon)) => at < colon && !s.contains("://") && !s[..at].contains('/'),
        _ => false,
    }
}

/// `owner/repo` with GitHub's allowed characters.
fn is_github_shorthand(s: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match s.split_once('/') {
        Some((owner, repo)) => ok(owner) && ok(repo),
        None => false,
    }
}

/// Trims whitespace and trailing slashes.
fn normalize_url(url: &str) -> String {
    url.trim().trim_end_matches('/').to_string()
}

/// A display name: `owner/repo` for URLs, the directory name for paths.
pub fn display_name(spec: &SourceSpec) -> String {
    match spec {
        SourceSpec::Local(path) => path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.to_string_lossy().into_owned()),
        SourceSpec::Git(url) => {
            let tail = url
                .rsplit_once(':')
                .filter(|_| is_scp_like(url))
                .map(|(_, t)| t)
                .unwrap_or(url);
            let parts: Vec<&str> = tail
                .split('/')
                .filter(|p| !p.is_empty() && !p.contains(':'))
                .collect();
            let n = parts.len();
            let local = url.to_ascii_lowercase().starts_with("file://");
            let joined = match n {
                0 => url.clone(),
                1 => parts[0].to_string(),
                // A file:// URL names a directory: its last component is the name.
                _ if local => parts[n - 1].to_string(),
                _ => format!("{}/{}", parts[n - 2], parts[n - 1]),
            };
            joined.trim_end_matches(".git").to_string()
        }
    }
}

/// The commit checked out at `dir` if `dir` itself is the root of a git work tree.
pub fn head_commit(dir: &Path) -> Option<String> {
    let repo = git2::Repository::open(dir).ok()?;
    let commit = repo.head().ok()?.peel_to_commit().ok()?;
    Some(commit.id().to_string())
}

/// Clones `url` into `dest`, or (when `dest` already holds a clone) fetches and
/// hard-resets it to the tip of `branch` (default: the remote's default branch, or
/// the branch already checked out). Returns the commit now checked out.
pub fn clone_or_fetch(url: &str, branch: Option<&str>, dest: &Path) -> Result<String, SourceError> {
    let repo = match git2::Repository::open(dest) {
        Ok(repo) => {
            fetch(&repo, url)?;
            repo
        }
        Err(_) => {
            if dest.exists() {
                std::fs::remove_dir_all(dest).map_err(|source| SourceError::Io {
                    path: dest.to_path_buf(),
                    source,
                })?;
            }
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|source| SourceError::Io {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            tracing::info!(url, dest = %dest.display(), "cloning");
            git2::build::RepoBuilder::new()
                .clone(url, dest)
                .map_err(git_err("clone", url))?
        }
    };
    checkout_branch(&repo, url, branch)
}

fn fetch(repo: &git2::Repository, url: &str) -> Result<(), SourceError> {
    tracing::info!(url, "fetching");
    let mut remote = repo.find_remote("origin").map_err(git_err("fetch", url))?;
    remote
        .fetch(
            &["+refs/heads/*:refs/remotes/origin/*"],
            Some(git2::FetchOptions::new().prune(git2::FetchPrune::On)),
            None,
        )
        .map_err(git_err("fetch", url))?;
    Ok(())
}

/// Points the work tree at `origin/<branch>` (forced checkout) and returns its commit.
fn checkout_branch(
    repo: &git2::Repository,
    url: &str,
    branch: Option<&str>,
) -> Result<String, SourceError> {
    let branch = match branch.map(str::trim).filter(|b| !b.is_empty()) {
        Some(b) => b.to_string(),
        None => default_branch(repo).ok_or_else(|| SourceError::Git {
            what: "checkout",
            target: url.to_string(),
            message: "the clone has no branch checked out and the remote names no default branch"
                .to_string(),
        })?,
    };
    let remote_ref = format!("refs/remotes/origin/{branch}");
    let commit = match repo.find_reference(&remote_ref) {
        Ok(r) => r.peel_to_commit().map_err(git_err("checkout", url))?,
        Err(_) => {
            return Err(SourceError::NoSuchBranch {
                url: url.to_string(),
                branch,
                available: remote_branches(repo).join(", "),
            });
        }
    };
    // A local branch of the same name, at the remote tip, checked out by force (HEAD
    // is detached first: libgit2 refuses to move the branch HEAD is on).
    repo.set_head_detached(commit.id())
        .map_err(git_err("checkout", url))?;
    repo.branch(&branch, &commit, true)
        .map_err(git_err("checkout", url))?;
    repo.set_head(&format!("refs/heads/{branch}"))
        .map_err(git_err("checkout", url))?;
    repo.reset(commit.as_object(), git2::ResetType::Hard, None)
        .map_err(git_err("checkout", url))?;
    Ok(commit.id().to_string())
}

/// The branch checked out, else the one `origin/HEAD` points at.
fn default_branch(repo: &git2::Repository) -> Option<String> {
    if let Ok(head) = repo.head()
        && head.is_branch()
        && let Ok(name) = head.shorthand()
    {
        return Some(name.to_string());
    }
    let origin_head = repo.find_reference("refs/remotes/origin/HEAD").ok()?;
    let target = origin_head.symbolic_target().ok().flatten()?;
    target
        .strip_prefix("refs/remotes/origin/")
        .map(str::to_string)
}

fn remote_branches(repo: &git2::Repository) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(branches) = repo.branches(Some(git2::BranchType::Remote)) {
        for (branch, _) in branches.flatten() {
            if let Ok(Some(name)) = branch.name()
                && let Some(short) = name.strip_prefix("origin/")
                && short != "HEAD"
            {
                out.push(short.to_string());
            }
        }
    }
    out.sort();
    out
}

/// Files added, modified and deleted between two states of a repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// New files.
    pub added: BTreeSet<String>,
    /// Files whose content changed.
    pub modified: BTreeSet<String>,
    /// Files that are gone.
    pub deleted: BTreeSet<String>,
}

impl Changes {
    /// Every path touched, sorted.
    pub fn all(&self) -> Vec<String> {
        let mut all: BTreeSet<&String> = self.added.iter().collect();
        all.extend(self.modified.iter());
        all.extend(self.deleted.iter());
        all.into_iter().cloned().collect()
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }
}

/// The files changed between commits `old` and `new` of the repository at `dir`
/// (a rename counts as a deletion plus an addition).
pub fn diff_commits(dir: &Path, old: &str, new: &str) -> Result<Changes, SourceError> {
    let target = dir.display().to_string();
    let repo = git2::Repository::open(dir).map_err(git_err("diff", target.clone()))?;
    let tree_of = |id: &str| -> Result<git2::Tree<'_>, SourceError> {
        let oid = git2::Oid::from_str(id).map_err(git_err("diff", target.clone()))?;
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(git_err("diff", target.clone()))
    };
    let (old_tree, new_tree) = (tree_of(old)?, tree_of(new)?);
    let diff = repo
        .diff_tree_to_tree(Some(&old_tree), Some(&new_tree), None)
        .map_err(git_err("diff", target.clone()))?;
    let mut changes = Changes::default();
    let path_of = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().replace('\\', "/"));
    for delta in diff.deltas() {
        let (old_path, new_path) = (path_of(delta.old_file()), path_of(delta.new_file()));
        match delta.status() {
            git2::Delta::Added | git2::Delta::Copied => changes.added.extend(new_path),
            git2::Delta::Deleted => changes.deleted.extend(old_path),
            git2::Delta::Renamed => {
                changes.deleted.extend(old_path);
                changes.added.extend(new_path);
            }
            _ => changes.modified.extend(new_path.or(old_path)),
        }
    }
    Ok(changes)
}

/// Size, modification time and content hash of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u64,
    /// xxh3 of the content.
    pub hash: u64,
}

/// The [`FileStamp`] of every indexed file, by repo-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Stamps by repo-relative `/`-separated path.
    pub files: BTreeMap<String, FileStamp>,
}

fn stat(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    Ok((meta.len(), mtime))
}

fn stamp(path: &Path) -> std::io::Result<FileStamp> {
    let (size, mtime_ns) = stat(path)?;
    let bytes = std::fs::read(path)?;
    Ok(FileStamp {
        size,
        mtime_ns,
        hash: xxhash_rust::xxh3::xxh3_64(&bytes),
    })
}

impl Manifest {
    /// Stamps `files` (relative to `root`); unreadable files are left out.
    pub fn scan(root: &Path, files: &[&str]) -> Manifest {
        let files = files
            .iter()
            .filter_map(|rel| stamp(&root.join(rel)).ok().map(|s| ((*rel).to_string(), s)))
            .collect();
        Manifest { files }
    }

    /// Loads a manifest written by [`Manifest::save`]; `None` if missing or unreadable.
    pub fn load(path: &Path) -> Option<Manifest> {
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes the manifest atomically.
    pub fn save(&self, path: &Path) -> Result<(), SourceError> {
        let io = |source| SourceError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let json = serde_json::to_vec(self).map_err(|e| io(std::io::Error::other(e)))?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, json).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// What changed on disk: `current` lists the files that should be indexed now.
    /// Files with unchanged size and mtime are assumed unchanged; others are hashed.
    pub fn changes(&self, root: &Path, current: &[&str]) -> Changes {
        self.refresh(root, current).0
    }

    /// [`Manifest::changes`], with the manifest of `current` as it is on disk now: the
    /// stamps of files whose size and mtime are unchanged are kept, the others are
    /// stamped again (read and hashed, in parallel), so that saving it needs no second
    /// pass over the files. A file that cannot be read counts as modified and is left
    /// out of the manifest.
    pub fn refresh(&self, root: &Path, current: &[&str]) -> (Changes, Manifest) {
        use rayon::prelude::*;
        let now: BTreeSet<&str> = current.iter().copied().collect();
        let looked: Vec<(&str, Option<FileStamp>, bool)> = now
            .par_iter()
            .map(|rel| {
                let path = root.join(rel);
                let Some(old) = self.files.get(*rel) else {
                    return (*rel, stamp(&path).ok(), false);
                };
                match stat(&path) {
                    Ok((size, mtime)) if size == old.size && mtime == old.mtime_ns => {
                        (*rel, Some(*old), true)
                    }
                    Ok(_) => {
                        let fresh = stamp(&path).ok();
                        let same = fresh.is_some_and(|s| s.hash == old.hash);
                        (*rel, fresh, same)
                    }
                    Err(_) => (*rel, None, false),
                }
            })
            .collect();
        let mut changes = Changes::default();
        let mut files = BTreeMap::new();
        for (rel, fresh, same) in looked {
            if !self.files.contains_key(rel) {
                changes.added.insert(rel.to_string());
            } else if !same {
                changes.modified.insert(rel.to_string());
            }
            if let Some(s) = fresh {
                files.insert(rel.to_string(), s);
            }
        }
        for rel in self.files.keys() {
            if !now.contains(rel.as_str()) {
                changes.deleted.insert(rel.clone());
            }
        }
        (changes, Manifest { files })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_all(repo: &git2::Repository, message: &str) -> String {
        let mut index = repo.index().expect("index");
        index
            .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
            .expect("add");
        index
            .update_all(["*"].iter(), None)
            .expect("update removed files");
        index.write().expect("write index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("find tree");
        let sig = git2::Signature::now("t", "t@example.org").expect("sig");
        let parents: Vec<git2::Commit<'_>> = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let parent_refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parent_refs)
            .expect("commit")
            .to_string()
    }

    #[test]
    fn classifies_sources() {
        let dir = tempfile::tempdir().expect("tempdir");
        let canonical = dir.path().canonicalize().expect("canon");
        assert_eq!(
            parse_source(&dir.path().to_string_lossy()).ok(),
            Some(SourceSpec::Local(canonical))
        );
        assert_eq!(
            parse_source("https://github.com/psf/requests/").ok(),
            Some(SourceSpec::Git("https://github.com/psf/requests".into()))
        );
        assert_eq!(
            parse_source("pallets/flask").ok(),
            Some(SourceSpec::Git("https://github.com/pallets/flask".into()))
        );
        assert!(matches!(
            parse_source("git@github.com:psf/requests.git"),
            Ok(SourceSpec::Git(_))
        ));
        let err = parse_source("/definitely/not/here").expect_err("missing dir");
        assert!(err.to_string().contains("owner/repo"), "{err}");
        assert_eq!(
            display_name(&SourceSpec::Git(
                "https://github.com/psf/requests.git".into()
            )),
            "psf/requests"
        );
        assert_eq!(
            display_name(&SourceSpec::Git("git@github.com:psf/requests.git".into())),
            "psf/requests"
        );
        assert_eq!(
            display_name(&SourceSpec::Git("file:///srv/git/tool.git".into())),
            "tool"
        );
        assert_eq!(
            display_name(&SourceSpec::Local(PathBuf::from("/x/proj"))),
            "proj"
        );
    }

    #[test]
    fn clones_fetches_and_diffs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let upstream_dir = tmp.path().join("upstream");
        std::fs::create_dir_all(&upstream_dir).expect("mkdir");
        let upstream = git2::Repository::init(&upstream_dir).expect("init");
        std::fs::write(upstream_dir.join("a.py"), "def a():\n    pass\n").expect("write");
        std::fs::write(upstream_dir.join("b.py"), "def b():\n    pass\n").expect("write");
        let first = commit_all(&upstream, "first");
        let url = format!("file://{}", upstream_dir.display());
        let dest = tmp.path().join("clone");

        let head = clone_or_fetch(&url, None, &dest).expect("clone");
        assert_eq!(head, first);
        assert!(dest.join("a.py").is_file());
        assert_eq!(head_commit(&dest).as_deref(), Some(first.as_str()));

        std::fs::write(upstream_dir.join("a.py"), "def a():\n    return 1\n").expect("write");
        std::fs::remove_file(upstream_dir.join("b.py")).expect("rm");
        std::fs::write(upstream_dir.join("c.py"), "def c():\n    pass\n").expect("write");
        let second = commit_all(&upstream, "second");
        let head = clone_or_fetch(&url, None, &dest).expect("fetch");
        assert_eq!(head, second);
        assert!(!dest.join("b.py").exists());

        let changes = diff_commits(&dest, &first, &second).expect("diff");
        assert_eq!(changes.modified.iter().collect::<Vec<_>>(), ["a.py"]);
        assert_eq!(changes.deleted.iter().collect::<Vec<_>>(), ["b.py"]);
        assert_eq!(changes.added.iter().collect::<Vec<_>>(), ["c.py"]);
        assert_eq!(changes.all(), ["a.py", "b.py", "c.py"]);

        let err = clone_or_fetch(&url, Some("nope"), &dest).expect_err("no branch");
        assert!(err.to_string().contains("not found"), "{err}");
    }

    #[test]
    fn manifest_detects_disk_changes() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        std::fs::write(root.join("a.py"), "x = 1\n").expect("write");
        std::fs::write(root.join("b.py"), "y = 1\n").expect("write");
        let manifest = Manifest::scan(root, &["a.py", "b.py"]);
        assert!(manifest.changes(root, &["a.py", "b.py"]).is_empty());
        let path = root.join("state/manifest.json");
        manifest.save(&path).expect("save");
        assert_eq!(Manifest::load(&path).as_ref(), Some(&manifest));

        std::fs::write(root.join("a.py"), "x = 22\n").expect("write");
        std::fs::write(root.join("c.py"), "z = 1\n").expect("write");
        let changes = manifest.changes(root, &["a.py", "c.py"]);
        assert_eq!(changes.modified.iter().collect::<Vec<_>>(), ["a.py"]);
        assert_eq!(changes.added.iter().collect::<Vec<_>>(), ["c.py"]);
        assert_eq!(changes.deleted.iter().collect::<Vec<_>>(), ["b.py"]);
    }
}
