//! Repository checkouts with git2: one bare mirror per repository under the cache,
//! fetched once and reused, and per-instance work dirs holding the plain file tree of
//! the base commit (as `git archive` would write it: no `.git` inside, submodules as
//! empty directories).
//!
//! Layout under the cache dir:
//! - `mirrors/<owner>+<name>.git`: bare mirror of the repository;
//! - `worktrees/<instance_id>/`: the tree at `base_commit`;
//! - `worktrees/<instance_id>.manifest.json`: what was written there, from which commit
//!   ([`Manifest`]): a second run reuses the tree after re-hashing it, a changed commit
//!   or a tampered tree rewrites it.
//!
//! [`RepoCache::checkout`] gives one instance's tree. [`RepoCache::checkout_tree`] can
//! also start from the tree of an earlier instance of the same repository, moving it
//! and writing only what the two commits' trees differ in ([`tree::apply_diff`]), and
//! reports how the tree was made and the files a partial mirror could not provide.

pub mod commit;
mod manifest;
mod template;
mod tree;

pub use manifest::{Entry, Manifest};
pub use template::check_template;
pub use tree::{SERVER_READ_EXTENSIONS, server_reads};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Default `--repo-url`: the repository's public HTTPS URL.
pub const DEFAULT_URL_TEMPLATE: &str = "https://github.com/{owner}/{name}.git";

/// Why a checkout failed (recorded per instance; the run goes on), or why a `--repo-url`
/// template is refused before a run ([`check_template`]).
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("repo '{0}' is not of the form owner/name")]
    BadRepo(String),
    #[error(
        "--repo-url '{template}': {why}. Write a URL or path with {{owner}} and {{name}}, e.g. {DEFAULT_URL_TEMPLATE} (file:// URLs and local paths work)"
    )]
    BadTemplate { template: String, why: String },
    #[error(
        "cannot fetch {repo} from {url}: {message}. Check --repo-url (a template with {{owner}} and {{name}}; file:// URLs and local paths work)"
    )]
    Fetch {
        repo: String,
        url: String,
        message: String,
    },
    #[error(
        "commit {commit} is not in {repo} (fetched from {url}); is base_commit right, and does the mirror have full history?"
    )]
    MissingCommit {
        repo: String,
        commit: String,
        url: String,
    },
    #[error(
        "`{path}` (blob {oid}) of {repo} is not in the mirror {mirror}: the source {url} is a partial clone or lacks the object, and servers read this file. Complete the source (a partial clone fetches one object with `git -C <source> cat-file -p {oid}`, or everything with `git -C <source> fetch --refetch --no-filter origin`, or clone it without --filter), then delete {mirror} so the next run fetches again"
    )]
    MissingBlob {
        repo: String,
        path: String,
        oid: String,
        url: String,
        mirror: PathBuf,
    },
    #[error("git error on {path}: {message}")]
    Git { path: PathBuf, message: String },
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Mirrors and work dirs under one cache directory. Safe to share between threads:
/// fetches of the same repository are serialized.
pub struct RepoCache {
    root: PathBuf,
    template: String,
    overrides: HashMap<String, String>,
    locks: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl RepoCache {
    /// A cache rooted at `root`, with `template` (`{owner}`, `{name}`) giving each
    /// repository's URL.
    pub fn new(root: impl Into<PathBuf>, template: impl Into<String>) -> RepoCache {
        RepoCache {
            root: root.into(),
            template: template.into(),
            overrides: HashMap::new(),
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// The cache directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes `repo` come from `url_or_path` whatever the template says (used for the
    /// embedded dataset's local repository).
    pub fn add_override(&mut self, repo: &str, url_or_path: impl Into<String>) {
        self.overrides.insert(repo.to_string(), url_or_path.into());
    }

    /// The URL or path `repo` is fetched from.
    pub fn url_for(&self, repo: &str) -> Result<String, CheckoutError> {
        if let Some(u) = self.overrides.get(repo) {
            return Ok(u.clone());
        }
        let (owner, name) = split_repo(repo)?;
        Ok(self
            .template
            .replace("{owner}", owner)
            .replace("{name}", name))
    }

    fn lock_for(&self, repo: &str) -> Arc<Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(repo.to_string()).or_default().clone()
    }

    /// Opens the bare mirror of `repo` under the cache, creating an empty one if there is
    /// none (then the flag is true). The caller holds the repository's lock.
    fn open_mirror(&self, repo: &str) -> Result<(git2::Repository, bool), CheckoutError> {
        let (owner, name) = split_repo(repo)?;
        let path = self
            .root
            .join("mirrors")
            .join(format!("{owner}+{name}.git"));
        if let Ok(r) = git2::Repository::open_bare(&path) {
            return Ok((r, false));
        }
        std::fs::create_dir_all(&path).map_err(io_at(&path))?;
        let r = git2::Repository::init_bare(&path).map_err(|e| CheckoutError::Git {
            path: path.clone(),
            message: e.message().to_string(),
        })?;
        Ok((r, true))
    }

    /// Opens the mirror of `repo`, creating and fetching it if needed, and makes sure it
    /// holds `commit` (fetching again once if it does not).
    pub fn mirror(&self, repo: &str, commit: &str) -> Result<git2::Repository, CheckoutError> {
        let url = self.url_for(repo)?;
        let lock = self.lock_for(repo);
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let (mirror, fresh) = self.open_mirror(repo)?;
        let oid = git2::Oid::from_str(commit).map_err(|_| CheckoutError::MissingCommit {
            repo: repo.to_string(),
            commit: commit.to_string(),
            url: url.clone(),
        })?;
        let has = |m: &git2::Repository| m.find_commit(oid).is_ok();
        if fresh || !has(&mirror) {
            tracing::info!(repo, url = %url, "fetching mirror");
            // Branches and tags first, so later instances of the repository find their
            // commits without fetching again; then the commit itself, for commits on no
            // branch and for sources that cannot serve every branch whole (partial clones).
            let all = match local_objects_dir(&url) {
                // A local source lends its object store (as `git clone --shared`):
                // nothing is copied, and partial clones whose other branches miss
                // objects still serve every commit they hold whole.
                Some(objects) => borrow_objects(&mirror, &objects),
                None => fetch_all(&mirror, &url),
            };
            if !has(&mirror) {
                let by_id = fetch_refspecs(
                    &mirror,
                    &url,
                    &[&format!("+{commit}:refs/navbench/{commit}")],
                );
                if !has(&mirror) {
                    return Err(match (all, by_id) {
                        (Err(e), Err(_)) => CheckoutError::Fetch {
                            repo: repo.to_string(),
                            url: url.clone(),
                            message: e.message().to_string(),
                        },
                        _ => CheckoutError::MissingCommit {
                            repo: repo.to_string(),
                            commit: commit.to_string(),
                            url,
                        },
                    });
                }
            }
        }
        Ok(mirror)
    }

    /// Opens the mirror of `repo`, creating it if needed, and fetches every branch and
    /// tag into it (a local source also lends its objects): for reading a
    /// repository's history rather than one commit.
    pub fn mirror_all(&self, repo: &str) -> Result<git2::Repository, CheckoutError> {
        let url = self.url_for(repo)?;
        let lock = self.lock_for(repo);
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let (mirror, _) = self.open_mirror(repo)?;
        if let Some(objects) = local_objects_dir(&url) {
            borrow_objects(&mirror, &objects).map_err(|e| CheckoutError::Git {
                path: mirror.path().to_path_buf(),
                message: e.message().to_string(),
            })?;
        }
        tracing::info!(repo, url = %url, "fetching every branch and tag");
        fetch_all(&mirror, &url).map_err(|e| CheckoutError::Fetch {
            repo: repo.to_string(),
            url: url.clone(),
            message: e.message().to_string(),
        })?;
        Ok(mirror)
    }

    /// The text of `path` at `commit` of `repo` (None if absent or not UTF-8), read from
    /// the mirror without a checkout.
    pub fn read_file_at(
        &self,
        mirror: &git2::Repository,
        commit: &str,
        path: &str,
    ) -> Option<String> {
        let oid = git2::Oid::from_str(commit).ok()?;
        let tree = mirror.find_commit(oid).ok()?.tree().ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = mirror.find_blob(entry.id()).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    }

    /// Writes the tree of `commit` into `worktrees/<instance_id>/` (reused, after
    /// verification, when it is already there for this commit) and returns the
    /// directory. Files a partial mirror lacks and no server reads are left out with a
    /// logged warning; [`RepoCache::checkout_tree`] returns those warnings and can
    /// start from an earlier instance's tree.
    pub fn checkout(
        &self,
        repo: &str,
        commit: &str,
        instance_id: &str,
    ) -> Result<PathBuf, CheckoutError> {
        let done = self.checkout_tree(repo, commit, instance_id, None)?;
        for w in &done.warnings {
            tracing::warn!(instance_id, "{w}");
        }
        Ok(done.dir)
    }

    /// Writes the tree of `commit` into `worktrees/<instance_id>/`, the cheapest
    /// verified way:
    /// 1. the instance's own tree, when it holds `commit` and re-hashes as written;
    /// 2. else the tree of `reuse_from` (an earlier instance of the same repository,
    ///    which the caller is done with: it is moved, not copied), when it verifies,
    ///    updated by the diff between its commit and `commit`;
    /// 3. else a full write.
    ///
    /// A tree that fails verification is never used: it is deleted and written again.
    pub fn checkout_tree(
        &self,
        repo: &str,
        commit: &str,
        instance_id: &str,
        reuse_from: Option<&str>,
    ) -> Result<Checkout, CheckoutError> {
        let mirror = self.mirror(repo, commit)?;
        let url = self.url_for(repo)?;
        let src = tree::Source {
            repo,
            url: &url,
            mirror: mirror.path(),
        };
        let oid = git2::Oid::from_str(commit).map_err(|e| CheckoutError::Git {
            path: mirror.path().to_path_buf(),
            message: format!("'{commit}' is not a commit id: {}", e.message()),
        })?;
        let (dir, manifest_path) = self.worktree_paths(instance_id);
        if let Some(m) = usable(&manifest_path, &dir, repo, Some(commit)) {
            let warnings = m.warnings();
            return Ok(Checkout {
                dir,
                warnings,
                how: Materialization::Kept,
            });
        }
        // From here on `dir` has no manifest until it is complete: a crash midway leaves
        // a tree that the next run rewrites.
        remove_if_exists(&manifest_path)?;
        remove_if_exists(&dir)?;
        let reusable = reuse_from
            .filter(|prev| *prev != instance_id)
            .and_then(|prev| {
                let (pdir, pmanifest) = self.worktree_paths(prev);
                let m = usable(&pmanifest, &pdir, repo, None)?;
                std::fs::remove_file(&pmanifest).ok()?;
                std::fs::rename(&pdir, &dir).ok()?;
                Some((m, prev.to_string()))
            });
        let (manifest, how) = match reusable {
            Some((old, from_instance)) => {
                let from_commit = old.commit.clone();
                let (m, changed) = tree::apply_diff(&mirror, old, oid, &dir, &src)?;
                let how = Materialization::Diffed {
                    from_instance,
                    from_commit,
                    changed,
                };
                (m, how)
            }
            None => {
                remove_if_exists(&dir)?;
                std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
                (
                    tree::write_fresh(&mirror, oid, &dir, &src)?,
                    Materialization::Fresh,
                )
            }
        };
        manifest
            .save(&manifest_path)
            .map_err(io_at(&manifest_path))?;
        Ok(Checkout {
            dir,
            warnings: manifest.warnings(),
            how,
        })
    }

    /// The work dir of an instance and its manifest file.
    fn worktree_paths(&self, instance_id: &str) -> (PathBuf, PathBuf) {
        let safe_id: String = instance_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let base = self.root.join("worktrees");
        let manifest = base.join(format!("{safe_id}.manifest.json"));
        (base.join(safe_id), manifest)
    }
}

/// One instance's tree, and how it was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// The work dir holding the tree.
    pub dir: PathBuf,
    /// Files left out because the mirror lacks their blobs (none a server reads): one
    /// message each, for the instance's row.
    pub warnings: Vec<String>,
    /// How the tree was made.
    pub how: Materialization,
}

/// How [`RepoCache::checkout_tree`] obtained a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Materialization {
    /// The instance's own tree was already there and verified.
    Kept,
    /// An earlier instance's verified tree, updated by the diff of the two commits.
    Diffed {
        from_instance: String,
        from_commit: String,
        /// Paths added, deleted or modified.
        changed: usize,
    },
    /// Written in full.
    Fresh,
}

/// The manifest at `manifest_path` when `dir` holds exactly what it lists, for `repo`
/// (and `commit`, if given); a tree that fails is logged and not used.
fn usable(manifest_path: &Path, dir: &Path, repo: &str, commit: Option<&str>) -> Option<Manifest> {
    let m = Manifest::load(manifest_path)?;
    if m.repo != repo || commit.is_some_and(|c| c != m.commit) || !dir.is_dir() {
        return None;
    }
    match m.verify(dir) {
        Ok(()) => Some(m),
        Err(why) => {
            tracing::warn!(dir = %dir.display(), "tree changed since it was written ({why}); rewriting it");
            None
        }
    }
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> CheckoutError + '_ {
    move |source| CheckoutError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Removes a file or a directory tree; absent is fine.
fn remove_if_exists(path: &Path) -> Result<(), CheckoutError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).map_err(io_at(path)),
        Ok(_) => std::fs::remove_file(path).map_err(io_at(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_at(path)(e)),
    }
}

fn split_repo(repo: &str) -> Result<(&str, &str), CheckoutError> {
    match repo.split_once('/') {
        Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => Ok((o, n)),
        _ => Err(CheckoutError::BadRepo(repo.to_string())),
    }
}

/// The object directory of `url` when it names a git repository on this machine (a
/// path, or a `file://` URL).
fn local_objects_dir(url: &str) -> Option<PathBuf> {
    let path = match url.strip_prefix("file://") {
        Some(p) => PathBuf::from(p),
        None if !url.contains("://") && !url.contains('@') => PathBuf::from(url),
        None => return None,
    };
    let repo = git2::Repository::open(&path).ok()?;
    let objects = repo.path().join("objects");
    objects
        .is_dir()
        .then(|| objects.canonicalize().unwrap_or(objects))
}

/// Makes `mirror` read objects from `objects` too (git's `objects/info/alternates`).
fn borrow_objects(mirror: &git2::Repository, objects: &Path) -> Result<(), git2::Error> {
    let info = mirror.path().join("objects").join("info");
    let alternates = info.join("alternates");
    let line = objects.to_string_lossy().into_owned();
    let existing = std::fs::read_to_string(&alternates).unwrap_or_default();
    if !existing.lines().any(|l| l == line) {
        std::fs::create_dir_all(&info)
            .and_then(|_| std::fs::write(&alternates, format!("{existing}{line}\n")))
            .map_err(|e| {
                git2::Error::from_str(&format!("cannot write {}: {e}", alternates.display()))
            })?;
    }
    // Alternates are read when the object database is opened: open it again.
    mirror.odb()?.add_disk_alternate(&line)
}

fn fetch_all(mirror: &git2::Repository, url: &str) -> Result<(), git2::Error> {
    fetch_refspecs(
        mirror,
        url,
        &["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
    )
}

fn fetch_refspecs(mirror: &git2::Repository, url: &str, specs: &[&str]) -> Result<(), git2::Error> {
    let mut remote = mirror.remote_anonymous(url)?;
    let mut fo = git2::FetchOptions::new();
    fo.download_tags(git2::AutotagOption::None);
    remote.fetch(specs, Some(&mut fo), None)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Creates a non-bare repository with the given files committed; returns its
    /// TempDir and the commit id.
    pub(crate) fn make_repo(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let files: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        let c = commit::commit_files(&repo, &[], &files, &sig, "init", Some("HEAD")).unwrap();
        (dir, c.to_string())
    }

    #[test]
    fn checks_out_from_local_path_and_file_url() {
        let (src, commit) = make_repo(&[("pkg/a.py", "x = 1\n"), ("README.md", "hi\n")]);
        let cache = tempfile::tempdir().unwrap();
        for template in [
            src.path().to_string_lossy().into_owned(),
            format!("file://{}", src.path().display()),
        ] {
            let cache_dir = cache.path().join(template.len().to_string());
            let rc = RepoCache::new(&cache_dir, template);
            let wd = rc.checkout("o/r", &commit, "o__r-1").unwrap();
            assert_eq!(
                std::fs::read_to_string(wd.join("pkg/a.py")).unwrap(),
                "x = 1\n"
            );
            assert!(!wd.join(".git").exists());
            // Reuse: a second checkout returns the same dir without refetching.
            let again = rc.checkout("o/r", &commit, "o__r-1").unwrap();
            assert_eq!(wd, again);
            let m = rc.mirror("o/r", &commit).unwrap();
            assert_eq!(
                rc.read_file_at(&m, &commit, "README.md").as_deref(),
                Some("hi\n")
            );
            assert_eq!(rc.read_file_at(&m, &commit, "nope.py"), None);
        }
    }

    #[test]
    fn missing_commit_and_unreachable_repo_are_errors() {
        let (src, _) = make_repo(&[("a.py", "")]);
        let cache = tempfile::tempdir().unwrap();
        let rc = RepoCache::new(cache.path(), src.path().to_string_lossy());
        let err = rc
            .checkout("o/r", "0123456789012345678901234567890123456789", "i")
            .unwrap_err();
        assert!(matches!(err, CheckoutError::MissingCommit { .. }), "{err}");
        assert!(err.to_string().contains("base_commit"));

        let rc = RepoCache::new(cache.path().join("x"), "/nonexistent/{owner}/{name}");
        let err = rc
            .checkout("o/r", "0123456789012345678901234567890123456789", "i")
            .unwrap_err();
        assert!(matches!(err, CheckoutError::Fetch { .. }), "{err}");
        assert!(err.to_string().contains("--repo-url"));
    }

    #[test]
    fn template_expansion() {
        let rc = RepoCache::new("/c", "file:///m/{owner}+{name}/repo");
        assert_eq!(
            rc.url_for("psf/requests").unwrap(),
            "file:///m/psf+requests/repo"
        );
        assert!(rc.url_for("bad").is_err());
    }
}

#[cfg(test)]
mod tree_tests;
