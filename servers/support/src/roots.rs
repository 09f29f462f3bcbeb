//! [`AllowedRoots`]: the local directories a server's tools may open as a repository
//! (`--allow-root DIR`), so an agent cannot point a server at `/etc` or the user's home.
//! `navbench-retrieval` confines `index_repository` / `delete_repository` with it,
//! `navbench-codegraph` its `init_repository`.
//!
//! A path is inside a root when its canonical form (symbolic links resolved) starts
//! with the root's canonical form, component by component, so `..` and links cannot
//! leave it, and `/srv/rootx` is not inside `/srv/root`. [`AllowedRoots::any`] is for
//! embedding a server's library in a trusted process; the binaries always confine.
//!
//! ```
//! # let tmp = tempfile::tempdir().unwrap();
//! use navbench_server_support::roots::AllowedRoots;
//! let roots = AllowedRoots::only([tmp.path().to_path_buf()]);
//! assert!(roots.check("init_repository", tmp.path()).is_ok());
//! let refused = roots.check("init_repository", std::path::Path::new("/etc")).unwrap_err();
//! assert!(refused.to_string().contains("--allow-root /etc"));
//! ```

use std::path::{Path, PathBuf};

/// Where local repositories may live.
#[derive(Debug, Clone, Default)]
pub struct AllowedRoots {
    /// `None`: anywhere.
    roots: Option<Vec<PathBuf>>,
}

/// A path outside every allowed root; the message names the roots and the flag that
/// would allow the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{tool} refused: '{path}' is outside the directories this server may use ({listed}); pass a repository under one of them, or restart the server with --allow-root {path} to allow it",
    path = path.display()
)]
pub struct OutsideRoots {
    /// The tool that was refused.
    pub tool: String,
    /// The path as given.
    pub path: PathBuf,
    /// The allowed roots, quoted and comma-separated (`none` when there are none).
    pub listed: String,
}

impl AllowedRoots {
    /// No restriction.
    pub fn any() -> AllowedRoots {
        AllowedRoots { roots: None }
    }

    /// Only under `roots` (made absolute now; canonicalized at each check, since a
    /// root such as a data directory may not exist yet).
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
            let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            return roots.iter().any(|r| path.starts_with(r));
        };
        roots
            .iter()
            .any(|r| path.starts_with(r.canonicalize().as_deref().unwrap_or(r)))
    }

    /// `Ok` when `path` may be used by `tool`, else an error naming the roots and the
    /// flag that would allow it.
    pub fn check(&self, tool: &str, path: &Path) -> Result<(), OutsideRoots> {
        if self.allows(path) {
            return Ok(());
        }
        let listed: Vec<String> = self
            .roots
            .iter()
            .flatten()
            .map(|r| format!("'{}'", r.display()))
            .collect();
        Err(OutsideRoots {
            tool: tool.to_string(),
            path: path.to_path_buf(),
            listed: if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            },
        })
    }
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
        let none = AllowedRoots::only([]).check("t", &outside).unwrap_err();
        assert_eq!(none.listed, "none");
    }
}
