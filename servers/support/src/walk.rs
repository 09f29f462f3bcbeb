//! A deterministic, `.gitignore`-aware walk of a repository's files.
//!
//! [`walk_files`] lists the regular files under a root (built on
//! [`ignore::WalkBuilder`]), honouring `.gitignore`, `.ignore` and `.git/info/exclude`
//! even when the root is not a git repository, never descending into `.git`, and
//! skipping hidden files unless [`WalkOptions::include_hidden`] is set. The user's
//! global gitignore and ignore files above the root are *not* read, so the same
//! checkout gives the same list on every machine. Results are sorted by their
//! repo-relative, `/`-separated path (byte order).
//!
//! A glob ([`WalkOptions::glob`]) filters the list the way ripgrep's `-g` does: a
//! pattern without `/` matches the file name at any depth (`*.py`), a pattern with `/`
//! matches the whole relative path (`src/**/*.py`, where `*` stays inside one
//! directory and `**` crosses directories), a trailing `/` means "everything below"
//! (`tests/`), and a leading `!` excludes what it matches.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # std::fs::create_dir(dir.path().join("src"))?;
//! # std::fs::write(dir.path().join("src/app.py"), "")?;
//! # std::fs::write(dir.path().join("README.md"), "")?;
//! use navbench_server_support::walk::{walk_files, WalkOptions};
//!
//! let opts = WalkOptions { glob: Some("*.py".into()), ..WalkOptions::default() };
//! let files = walk_files(dir.path(), &opts)?;
//! let names: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
//! assert_eq!(names, ["src/app.py"]);
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use crate::sandbox::to_slash;

/// How [`walk_files`] selects files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkOptions {
    /// Keep only files matching this glob (see the [module docs](self) for the syntax).
    pub glob: Option<String>,
    /// Also list hidden files and directories (names starting with `.`); `.git` is
    /// skipped regardless.
    pub include_hidden: bool,
    /// Return at most this many files (the first ones in sorted order).
    pub max_files: Option<usize>,
}

/// One file found by [`walk_files`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WalkedFile {
    /// Path relative to the root, `/`-separated (e.g. `src/pkg/mod.py`).
    pub rel: String,
    /// Absolute path (the root as given joined with `rel`).
    pub abs: PathBuf,
}

/// Why a walk could not run.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// The glob does not parse.
    #[error(
        "invalid glob '{pattern}': {reason}; use patterns such as '*.py', 'src/**/*.py', 'tests/' or '!*_test.py'"
    )]
    InvalidGlob {
        /// The pattern as given.
        pattern: String,
        /// What the glob parser reported.
        reason: String,
    },
    /// The root is missing or not a directory.
    #[error("cannot walk '{0}': it is not an existing directory; pass the repository root")]
    RootUnavailable(PathBuf),
}

/// A compiled [`WalkOptions::glob`].
#[derive(Debug, Clone)]
pub struct FileGlob {
    matcher: GlobMatcher,
    /// Match against the file name only (pattern had no `/`).
    name_only: bool,
    /// Pattern started with `!`: keep files that do *not* match.
    negated: bool,
}

impl FileGlob {
    /// Compiles a glob with the semantics described in the [module docs](self).
    pub fn new(pattern: &str) -> Result<FileGlob, WalkError> {
        let invalid = |reason: String| WalkError::InvalidGlob {
            pattern: pattern.to_string(),
            reason,
        };
        let mut pat = pattern.trim();
        let negated = pat.starts_with('!');
        if negated {
            pat = &pat[1..];
        }
        while let Some(rest) = pat.strip_prefix("./") {
            pat = rest;
        }
        pat = pat.trim_start_matches('/');
        if pat.is_empty() {
            return Err(invalid("the pattern is empty".to_string()));
        }
        let owned;
        let pat = if pat.ends_with('/') {
            owned = format!("{pat}**");
            owned.as_str()
        } else {
            pat
        };
        let name_only = !pat.contains('/');
        let glob = GlobBuilder::new(pat)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| invalid(e.kind().to_string()))?;
        Ok(FileGlob {
            matcher: glob.compile_matcher(),
            name_only,
            negated,
        })
    }

    /// Whether the file at `rel` (repo-relative, `/`-separated) is selected.
    pub fn is_match(&self, rel: &str) -> bool {
        let subject = if self.name_only {
            rel.rsplit('/').next().unwrap_or(rel)
        } else {
            rel
        };
        self.matcher.is_match(subject) != self.negated
    }
}

/// Lists the files under `root`, sorted by relative path; see the [module docs](self).
///
/// Symbolic links are not followed into directories; a symlink to a file is listed
/// when its target is a regular file inside the root. Unreadable entries are skipped.
pub fn walk_files(root: &Path, opts: &WalkOptions) -> Result<Vec<WalkedFile>, WalkError> {
    let glob = opts.glob.as_deref().map(FileGlob::new).transpose()?;
    let canonical_root = root
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| WalkError::RootUnavailable(root.to_path_buf()))?;

    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(!opts.include_hidden)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git");

    let mut files = Vec::new();
    for entry in builder.build() {
        let Ok(entry) = entry else { continue };
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let keep = if file_type.is_file() {
            true
        } else if file_type.is_symlink() {
            entry
                .path()
                .canonicalize()
                .is_ok_and(|target| target.starts_with(&canonical_root) && target.is_file())
        } else {
            false
        };
        if !keep {
            continue;
        }
        let Ok(rel_path) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = to_slash(rel_path);
        if glob.as_ref().is_some_and(|g| !g.is_match(&rel)) {
            continue;
        }
        files.push(WalkedFile {
            rel,
            abs: entry.into_path(),
        });
    }
    files.sort();
    if let Some(max) = opts.max_files {
        files.truncate(max);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, body: &str) {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(path, body).expect("write");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = dir.path();
        write(r, "a.py", "");
        write(r, "a/b.py", "");
        write(r, "src/app.py", "");
        write(r, "src/pkg/mod.py", "");
        write(r, "src/pkg/data.json", "");
        write(r, "README.md", "");
        write(r, "build/out.py", "");
        write(r, "src/gen.log", "");
        write(r, ".gitignore", "build/\n*.log\n");
        write(r, ".hidden/secret.py", "");
        write(r, ".env", "");
        write(r, ".git/config", "");
        write(r, "docs/.ignore", "draft.md\n");
        write(r, "docs/draft.md", "");
        write(r, "docs/final.md", "");
        dir
    }

    fn rels(root: &Path, opts: &WalkOptions) -> Vec<String> {
        walk_files(root, opts)
            .expect("walk")
            .into_iter()
            .map(|f| f.rel)
            .collect()
    }

    #[test]
    fn sorted_and_respects_ignore_files() {
        let dir = repo();
        let got = rels(dir.path(), &WalkOptions::default());
        assert_eq!(
            got,
            [
                "README.md",
                "a.py",
                "a/b.py",
                "docs/final.md",
                "src/app.py",
                "src/pkg/data.json",
                "src/pkg/mod.py",
            ]
        );
    }

    #[test]
    fn hidden_files_optional_but_git_never() {
        let dir = repo();
        let opts = WalkOptions {
            include_hidden: true,
            ..WalkOptions::default()
        };
        let got = rels(dir.path(), &opts);
        assert!(got.contains(&".env".to_string()));
        assert!(got.contains(&".hidden/secret.py".to_string()));
        assert!(got.contains(&".gitignore".to_string()));
        assert!(!got.iter().any(|p| p.starts_with(".git/")), "{got:?}");
    }

    #[test]
    fn glob_without_slash_matches_name_at_any_depth() {
        let dir = repo();
        let opts = WalkOptions {
            glob: Some("*.py".into()),
            ..WalkOptions::default()
        };
        assert_eq!(
            rels(dir.path(), &opts),
            ["a.py", "a/b.py", "src/app.py", "src/pkg/mod.py"]
        );
    }

    #[test]
    fn glob_with_slash_matches_path() {
        let dir = repo();
        let check = |glob: &str, want: &[&str]| {
            let opts = WalkOptions {
                glob: Some(glob.into()),
                ..WalkOptions::default()
            };
            assert_eq!(rels(dir.path(), &opts), want, "glob {glob}");
        };
        check("src/*.py", &["src/app.py"]);
        check("src/**/*.py", &["src/app.py", "src/pkg/mod.py"]);
        check("**/*.json", &["src/pkg/data.json"]);
        check("src/pkg/", &["src/pkg/data.json", "src/pkg/mod.py"]);
        check("./src/*.py", &["src/app.py"]);
        check(
            "*.{md,json}",
            &["README.md", "docs/final.md", "src/pkg/data.json"],
        );
        check(
            "!*.py",
            &["README.md", "docs/final.md", "src/pkg/data.json"],
        );
    }

    #[test]
    fn max_files_keeps_first_sorted() {
        let dir = repo();
        let opts = WalkOptions {
            max_files: Some(2),
            ..WalkOptions::default()
        };
        assert_eq!(rels(dir.path(), &opts), ["README.md", "a.py"]);
    }

    #[test]
    fn invalid_glob_is_clear_error() {
        let dir = repo();
        for bad in ["src/[a", "", "!"] {
            let opts = WalkOptions {
                glob: Some(bad.into()),
                ..WalkOptions::default()
            };
            let err = walk_files(dir.path(), &opts).expect_err("invalid");
            let msg = err.to_string();
            assert!(msg.contains("invalid glob"), "{msg}");
            assert!(msg.contains("*.py"), "{msg}");
        }
    }

    #[test]
    fn missing_root_is_error() {
        let dir = repo();
        let err = walk_files(&dir.path().join("nope"), &WalkOptions::default())
            .expect_err("missing root");
        assert!(matches!(err, WalkError::RootUnavailable(_)));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_inside_listed_outside_skipped() {
        let dir = repo();
        let outside = tempfile::tempdir().expect("outside");
        write(outside.path(), "x.py", "");
        std::os::unix::fs::symlink(outside.path().join("x.py"), dir.path().join("out.py"))
            .expect("symlink");
        std::os::unix::fs::symlink(dir.path().join("a.py"), dir.path().join("alias.py"))
            .expect("symlink");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("outdir")).expect("symlink");
        let got = rels(dir.path(), &WalkOptions::default());
        assert!(got.contains(&"alias.py".to_string()), "{got:?}");
        assert!(!got.contains(&"out.py".to_string()), "{got:?}");
        assert!(!got.iter().any(|p| p.starts_with("outdir")), "{got:?}");
    }
}
