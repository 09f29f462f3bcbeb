//! Confining caller-supplied paths to one root directory.
//!
//! Servers receive paths from an agent; every one of them goes through
//! [`Sandbox::resolve`] before the file system is touched. A path may be written
//! relative to the root (`src/app.py`, `./src/app.py`) or as an absolute path that lies
//! inside the root. Anything that would leave the root — `..` escapes, absolute paths
//! elsewhere, symbolic links whose target lies outside — is refused with a
//! [`SandboxError`] whose message says what was wrong and what to pass instead.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # std::fs::create_dir(dir.path().join("src"))?;
//! # std::fs::write(dir.path().join("src/app.py"), "x = 1\n")?;
//! use navbench_server_support::sandbox::Sandbox;
//!
//! let sandbox = Sandbox::new(dir.path())?;
//! let file = sandbox.resolve("./src/app.py")?;
//! assert_eq!(sandbox.relative(&file), "src/app.py");
//! assert!(sandbox.resolve("../etc/passwd").is_err());
//! # Ok(())
//! # }
//! ```

use std::io;
use std::path::{Component, Path, PathBuf};

/// What the caller should do after a refused path, appended to most messages.
const HINT: &str =
    "pass a path relative to the root such as 'src/app.py' (use list_files to see them)";

/// Why a root could not be opened or a path could not be resolved.
///
/// Every message names the offending path and tells the caller what to pass instead,
/// so a server can forward it to an agent verbatim.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The root directory does not exist or cannot be read.
    #[error("repository root '{path}' cannot be opened ({source}); pass an existing directory")]
    RootUnavailable {
        /// The root as given.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// The root exists but is not a directory.
    #[error("repository root '{0}' is not a directory; pass the directory of the checkout")]
    RootNotDirectory(PathBuf),
    /// The path was empty (or only whitespace).
    #[error("the path is empty; {HINT}")]
    Empty,
    /// The path contains a NUL byte, which no file name can hold.
    #[error("path '{0}' contains a NUL byte; {HINT}")]
    Nul(String),
    /// `..` components lead above the root.
    #[error("path '{0}' leaves the repository root; {HINT}")]
    Escapes(String),
    /// An absolute path that does not lie inside the root.
    #[error(
        "absolute path '{path}' is outside the repository root '{root}'; {HINT}",
        root = root.display()
    )]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// The root it had to lie in.
        root: PathBuf,
    },
    /// The path exists but a symbolic link on it points outside the root.
    #[error(
        "path '{0}' is a symbolic link (or goes through one) that points outside the repository root, so it cannot be used; {HINT}"
    )]
    SymlinkEscape(String),
    /// Nothing exists at the path.
    #[error(
        "path '{0}' does not exist in the repository; check the spelling, or call list_files (optionally with a glob such as '**/name*') to find the right path"
    )]
    NotFound(String),
    /// Any other I/O error while resolving.
    #[error("path '{path}' cannot be accessed ({source})")]
    Io {
        /// The path as given.
        path: String,
        /// What the operating system reported.
        source: io::Error,
    },
}

/// A root directory that caller-supplied paths are confined to.
///
/// The root is canonicalized once at construction; [`Sandbox::resolve`] returns
/// canonical paths that are guaranteed (at the time of the call) to lie inside it.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// Canonical root.
    root: PathBuf,
    /// The root as given (made absolute but not canonical), so that absolute paths
    /// spelled through a symlinked parent (e.g. `/tmp` → `/private/tmp`) are accepted.
    given_root: PathBuf,
}

impl Sandbox {
    /// Opens `root`, which must exist and be a directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Sandbox, SandboxError> {
        let given = root.as_ref();
        let canonical = given
            .canonicalize()
            .map_err(|source| SandboxError::RootUnavailable {
                path: given.to_path_buf(),
                source,
            })?;
        if !canonical.is_dir() {
            return Err(SandboxError::RootNotDirectory(given.to_path_buf()));
        }
        let given_root = if given.is_absolute() {
            lexical_normalize(given).unwrap_or_else(|| canonical.clone())
        } else {
            std::env::current_dir()
                .ok()
                .and_then(|cwd| lexical_normalize(&cwd.join(given)))
                .unwrap_or_else(|| canonical.clone())
        };
        Ok(Sandbox {
            root: canonical,
            given_root,
        })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a caller-supplied path to an existing, canonical path inside the root.
    ///
    /// Accepts `src/app.py`, `./src/app.py`, `.` (the root itself) and absolute paths
    /// inside the root. Surrounding whitespace is ignored. `..` components are allowed
    /// as long as they stay inside the root. The path must exist
    /// ([`SandboxError::NotFound`] otherwise); symbolic links are followed and their
    /// final target must lie inside the root ([`SandboxError::SymlinkEscape`]).
    pub fn resolve(&self, user_path: &str) -> Result<PathBuf, SandboxError> {
        let trimmed = user_path.trim();
        if trimmed.is_empty() {
            return Err(SandboxError::Empty);
        }
        if trimmed.contains('\0') {
            return Err(SandboxError::Nul(trimmed.replace('\0', "\\0")));
        }
        let path = Path::new(trimmed);
        let relative: PathBuf = if path.is_absolute() {
            let normalized = lexical_normalize(path)
                .ok_or_else(|| SandboxError::Escapes(trimmed.to_string()))?;
            let inside = normalized
                .strip_prefix(&self.root)
                .or_else(|_| normalized.strip_prefix(&self.given_root))
                .map_err(|_| SandboxError::OutsideRoot {
                    path: trimmed.to_string(),
                    root: self.root.clone(),
                })?;
            inside.to_path_buf()
        } else {
            relative_normalize(path).ok_or_else(|| SandboxError::Escapes(trimmed.to_string()))?
        };
        let joined = self.root.join(&relative);
        match joined.canonicalize() {
            Ok(canonical) if canonical.starts_with(&self.root) => Ok(canonical),
            Ok(_) => Err(SandboxError::SymlinkEscape(trimmed.to_string())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink also lands here; say so if its target is outside.
                if joined.symlink_metadata().is_ok() {
                    Err(SandboxError::SymlinkEscape(trimmed.to_string()))
                } else {
                    Err(SandboxError::NotFound(trimmed.to_string()))
                }
            }
            Err(source) => Err(SandboxError::Io {
                path: trimmed.to_string(),
                source,
            }),
        }
    }

    /// The path of `abs` relative to the root, with `/` separators (`.` for the root).
    ///
    /// Paths outside the root are returned as they are (with `/` separators), which
    /// never happens for paths produced by [`Sandbox::resolve`].
    pub fn relative(&self, abs: &Path) -> String {
        let rel = abs
            .strip_prefix(&self.root)
            .or_else(|_| abs.strip_prefix(&self.given_root))
            .unwrap_or(abs);
        let joined = to_slash(rel);
        if joined.is_empty() {
            ".".to_string()
        } else {
            joined
        }
    }
}

/// Joins a path's components with `/`, whatever the platform's separator.
pub(crate) fn to_slash(path: &Path) -> String {
    let mut out = String::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(&part.to_string_lossy());
            }
            Component::RootDir => out.push('/'),
            Component::Prefix(prefix) => out.push_str(&prefix.as_os_str().to_string_lossy()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.is_empty() && !out.ends_with('/') {
                    out.push('/');
                }
                out.push_str("..");
            }
        }
    }
    out
}

/// Normalizes a relative path lexically; `None` if `..` climbs above its start.
fn relative_normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Normalizes an absolute path lexically; `None` if `..` climbs above the file-system root.
fn lexical_normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::Normal(part) => {
                out.push(part);
                depth += 1;
            }
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                out.pop();
                depth -= 1;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn repo() -> (tempfile::TempDir, Sandbox) {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("src/pkg")).expect("mkdir");
        fs::write(dir.path().join("src/app.py"), "print('hi')\n").expect("write");
        fs::write(dir.path().join("src/pkg/mod.py"), "x = 1\n").expect("write");
        let sandbox = Sandbox::new(dir.path()).expect("sandbox");
        (dir, sandbox)
    }

    #[test]
    fn resolves_relative_dot_and_absolute_inside() {
        let (dir, sb) = repo();
        let expected = sb.root().join("src/app.py");
        assert_eq!(sb.resolve("src/app.py").expect("rel"), expected);
        assert_eq!(sb.resolve("./src/app.py").expect("dot"), expected);
        assert_eq!(sb.resolve("  src/app.py \n").expect("trimmed"), expected);
        assert_eq!(sb.resolve("src/pkg/../app.py").expect("inner .."), expected);
        let abs = dir.path().join("src/app.py");
        assert_eq!(sb.resolve(&abs.to_string_lossy()).expect("abs"), expected);
        let canon_abs = sb.root().join("src/app.py");
        assert_eq!(
            sb.resolve(&canon_abs.to_string_lossy()).expect("canon"),
            expected
        );
        assert_eq!(sb.resolve(".").expect("root"), sb.root());
    }

    #[test]
    fn relative_uses_slashes_and_dot_for_root() {
        let (_dir, sb) = repo();
        let file = sb.resolve("src/pkg/mod.py").expect("resolve");
        assert_eq!(sb.relative(&file), "src/pkg/mod.py");
        assert_eq!(sb.relative(sb.root()), ".");
    }

    #[test]
    fn refuses_parent_escape_with_actionable_message() {
        let (_dir, sb) = repo();
        for bad in ["../etc/passwd", "src/../../x", ".."] {
            let err = sb.resolve(bad).expect_err("must refuse");
            assert!(matches!(err, SandboxError::Escapes(_)), "{bad}: {err:?}");
            let msg = err.to_string();
            assert!(msg.contains(bad), "{msg}");
            assert!(msg.contains("leaves the repository root"), "{msg}");
            assert!(msg.contains("list_files"), "{msg}");
        }
    }

    #[test]
    fn refuses_absolute_outside() {
        let (_dir, sb) = repo();
        let err = sb.resolve("/etc/passwd").expect_err("must refuse");
        assert!(matches!(err, SandboxError::OutsideRoot { .. }), "{err:?}");
        assert!(err.to_string().contains("outside the repository root"));
        // An absolute path that climbs out of the root with `..`.
        let sneaky = format!("{}/../x", sb.root().display());
        assert!(matches!(
            sb.resolve(&sneaky),
            Err(SandboxError::OutsideRoot { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlink_escaping_root() {
        let (dir, sb) = repo();
        let outside = tempfile::tempdir().expect("outside");
        fs::write(outside.path().join("secret.txt"), "secret").expect("write");
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("link"))
            .expect("symlink");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linkdir")).expect("symlink");
        let err = sb.resolve("link").expect_err("file link");
        assert!(matches!(err, SandboxError::SymlinkEscape(_)), "{err:?}");
        assert!(err.to_string().contains("symbolic link"));
        let err = sb.resolve("linkdir/secret.txt").expect_err("dir link");
        assert!(matches!(err, SandboxError::SymlinkEscape(_)), "{err:?}");
        // Dangling link.
        std::os::unix::fs::symlink("/nonexistent/nowhere", dir.path().join("dangling"))
            .expect("symlink");
        assert!(matches!(
            sb.resolve("dangling"),
            Err(SandboxError::SymlinkEscape(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn accepts_symlink_inside_root() {
        let (dir, sb) = repo();
        std::os::unix::fs::symlink(dir.path().join("src/app.py"), dir.path().join("alias.py"))
            .expect("symlink");
        let resolved = sb.resolve("alias.py").expect("inside link");
        assert_eq!(sb.relative(&resolved), "src/app.py");
    }

    #[test]
    fn missing_and_empty_paths() {
        let (_dir, sb) = repo();
        let err = sb.resolve("src/nope.py").expect_err("missing");
        assert!(matches!(err, SandboxError::NotFound(_)));
        assert!(err.to_string().contains("does not exist"));
        assert!(matches!(sb.resolve("   "), Err(SandboxError::Empty)));
        assert!(matches!(sb.resolve("a\0b"), Err(SandboxError::Nul(_))));
    }

    #[test]
    fn root_must_exist_and_be_dir() {
        let (dir, _sb) = repo();
        let err = Sandbox::new(dir.path().join("missing")).expect_err("missing root");
        assert!(matches!(err, SandboxError::RootUnavailable { .. }));
        let err = Sandbox::new(dir.path().join("src/app.py")).expect_err("file root");
        assert!(matches!(err, SandboxError::RootNotDirectory(_)));
        assert!(err.to_string().contains("not a directory"));
    }
}
