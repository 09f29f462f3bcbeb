//! [`AllowedRoots`]: the local directories `index_repository` and `delete_repository`
//! may act on (`--allow-root`), so an agent cannot index `/etc` or the user's home.
//!
//! The binary always confines the tools (default: the `--workspace` and the data
//! directory); [`AllowedRoots::any`] is for embedding the library in a trusted process.
//! A path is inside a root when its canonical form (symbolic links resolved) starts
//! with the root's canonical form, component by component, so `..` and links cannot
//! leave it.

use std::path::{Path, PathBuf};

use super::{RetrievalTools, ToolError};
use crate::registry::{RepoRecord, SourceKind};
use crate::source::SourceSpec;

/// Where local repositories may live.
#[derive(Debug, Clone, Default)]
pub struct AllowedRoots {
    /// `None`: anywhere.
    roots: Option<Vec<PathBuf>>,
}

impl AllowedRoots {
    /// No restriction.
    pub fn any() -> AllowedRoots {
        AllowedRoots { roots: None }
    }

    /// Only under `roots` (made absolute now; canonicalized at each check, since a
    /// root such as the data directory may not exist yet).
    pub fn only(roots: impl IntoIterator<Item = PathBuf>) -> AllowedRoots {
        let roots = roots
            .into_iter()
            .map(|r| std::path::absolute(&r).unwrap_or(r))
            .collect();
        AllowedRoots { roots: Some(roots) }
    }

    /// The configured roots (`None` when unrestricted).
    pub fn roots(&self) -> Option<&[PathBuf]> {
        self.roots.as_deref()
    }

    /// Whether `path` lies under one of the roots.
    pub fn allows(&self, path: &Path) -> bool {
        let Some(roots) = &self.roots else {
            return true;
        };
        let Ok(path) = path.canonicalize() else {
            // Nothing there to read; the caller's own "not found" answer applies.
            return roots.iter().any(|r| path.starts_with(r));
        };
        roots
            .iter()
            .any(|r| path.starts_with(r.canonicalize().as_deref().unwrap_or(r)))
    }

    /// `Ok` when `path` may be used by `tool`, else an error naming the roots and the
    /// flag that would allow it.
    pub fn check(&self, tool: &str, path: &Path) -> Result<(), ToolError> {
        if self.allows(path) {
            return Ok(());
        }
        let listed: Vec<String> = self
            .roots
            .iter()
            .flatten()
            .map(|r| format!("'{}'", r.display()))
            .collect();
        Err(ToolError::Invalid(format!(
            "{tool} refused: '{}' is outside the directories this server may use ({}); \
pass a repository under one of them, or restart the server with --allow-root {} to allow it",
            path.display(),
            if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            },
            path.display()
        )))
    }
}

impl RetrievalTools {
    /// `index_repository` may read `spec`: a local directory, or a `file://` URL's
    /// directory, under the allowed roots (remote URLs are cloned into the data
    /// directory, which is always allowed).
    pub(super) fn check_source_allowed(&self, spec: &SourceSpec) -> Result<(), ToolError> {
        let roots = &self.shared.settings.allowed_roots;
        match spec {
            SourceSpec::Local(path) => roots.check("index_repository", path),
            SourceSpec::Git(url) => match file_url_path(url) {
                Some(path) => roots.check("index_repository", &path),
                None => Ok(()),
            },
        }
    }

    /// `delete_repository` may act on `record`: a local repository under the allowed
    /// roots (a clone lives in the data directory).
    pub(super) fn check_record_allowed(&self, record: &RepoRecord) -> Result<(), ToolError> {
        match record.kind {
            SourceKind::Local => self
                .shared
                .settings
                .allowed_roots
                .check("delete_repository", &record.local_path),
            SourceKind::Git => Ok(()),
        }
    }
}

/// The local directory a `file://` URL names (`None` for other URLs).
pub fn file_url_path(url: &str) -> Option<PathBuf> {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("file://").then(|| {
        // `file:///abs/path` or `file://localhost/abs/path`.
        let rest = &url["file://".len()..];
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        PathBuf::from(rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_outside_dotdot_and_symlinks() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("repo")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        let roots = AllowedRoots::only([root.clone()]);
        assert!(roots.allows(&root.join("repo")));
        assert!(roots.allows(&root));
        assert!(!roots.allows(&outside));
        assert!(!roots.allows(&root.join("repo/../../outside")));
        // A sibling whose name extends the root's is not inside it.
        std::fs::create_dir_all(tmp.path().join("rootx")).expect("mkdir");
        assert!(!roots.allows(&tmp.path().join("rootx")));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, root.join("link")).expect("symlink");
            assert!(!roots.allows(&root.join("link")));
        }
        let err = roots
            .check("index_repository", &outside)
            .expect_err("outside is refused")
            .to_string();
        assert!(err.contains("--allow-root"), "{err}");
        assert!(err.contains(&root.display().to_string()), "{err}");
        assert!(AllowedRoots::any().allows(&outside));
    }

    #[test]
    fn file_urls_name_their_directory() {
        assert_eq!(
            file_url_path("file:///srv/repo.git"),
            Some(PathBuf::from("/srv/repo.git"))
        );
        assert_eq!(
            file_url_path("FILE://localhost/srv/r"),
            Some(PathBuf::from("/srv/r"))
        );
        assert_eq!(file_url_path("https://github.com/a/b"), None);
    }
}
