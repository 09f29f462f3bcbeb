//! Which files make up the content corpus (llama-index `SimpleDirectoryReader` as LocAgent
//! configures it) and how they are read.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// A corpus file: repo-relative `/`-separated path plus absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusFile {
    /// Repo-relative path with `/` separators (the chunk's `file_path`).
    pub rel_path: String,
    /// Path on disk.
    pub abs_path: PathBuf,
}

/// Error while listing the corpus files.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// A directory could not be read.
    #[error("cannot read directory {path}: {source}")]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

fn fnmatch_simple(name: &str, prefix: &str, suffix: &str) -> bool {
    name.len() >= prefix.len() + suffix.len() && name.starts_with(prefix) && name.ends_with(suffix)
}

/// Lists the `.py` files of the corpus, sorted as the original sorts them, and the
/// files of the other languages with a front end (TS/JS, Java, Go, Rust). Which
/// languages an index reads is decided over this list by its caller (`per_corpus_file`:
/// by default the repository's own).
///
/// Rules (SPEC.md §3.1; those for `.py` files apply to the others, whose own test
/// files are left out too: Go `*_test.go`, TS/JS `*.test.*` and `*.spec.*`, Java
/// `*Test.java` and `*Tests.java`):
/// - only files whose name ends in `.py`; no component of the repo-relative path may start
///   with `.` (the original checks the ABSOLUTE path, so a repo under a dot-directory yields
///   nothing there; checking the relative path only is a deliberate fix);
/// - files named `test_*.py` or `*_test.py` are excluded;
/// - directories named `test` or `tests` are excluded, and so is every file whose parent
///   directory path merely STARTS WITH such a directory's path (`tests_util/`, `testing/`
///   next to a `test/` directory), as the original's string-prefix test does;
/// - order: by path components (Python's `sorted()` of `Path`s).
pub fn list_corpus_files(root: &Path) -> Result<Vec<CorpusFile>, FilesError> {
    let mut files: Vec<(Vec<String>, PathBuf)> = Vec::new();
    let mut rejected_dirs: Vec<String> = Vec::new();
    walk(root, &mut Vec::new(), &mut files, &mut rejected_dirs)?;
    let mut kept: Vec<(Vec<String>, PathBuf)> = files
        .into_iter()
        .filter(|(parts, _)| {
            let name = parts.last().map(String::as_str).unwrap_or("");
            if fnmatch_simple(name, "test_", ".py")
                || fnmatch_simple(name, "", "_test.py")
                || is_other_test(name)
            {
                return false;
            }
            let parent = parts[..parts.len().saturating_sub(1)].join("/");
            let parent_abs = format!("/{parent}");
            !rejected_dirs
                .iter()
                .any(|d| parent_abs.starts_with(&format!("/{d}")))
        })
        .collect();
    kept.sort_by(|a, b| cmp_parts(&a.0, &b.0));
    Ok(kept
        .into_iter()
        .map(|(parts, abs_path)| CorpusFile {
            rel_path: parts.join("/"),
            abs_path,
        })
        .collect())
}

/// Whether `name` is a source file of another language than Python.
fn is_other_source(name: &str) -> bool {
    !name.ends_with(".py") && navbench_lang::language_for_path(name).is_some()
}

/// Whether `name` is a test file of another language than Python, by its
/// ecosystem's naming convention.
fn is_other_test(name: &str) -> bool {
    if !is_other_source(name) {
        return false;
    }
    name.ends_with("_test.go")
        || name.ends_with("Test.java")
        || name.ends_with("Tests.java")
        || (navbench_lang::family::family_of(name) == Some("ecma")
            && (name.contains(".test.") || name.contains(".spec.")))
}

fn cmp_parts(a: &[String], b: &[String]) -> Ordering {
    a.cmp(b)
}

fn walk(
    dir: &Path,
    rel: &mut Vec<String>,
    files: &mut Vec<(Vec<String>, PathBuf)>,
    rejected_dirs: &mut Vec<String>,
) -> Result<(), FilesError> {
    let entries = std::fs::read_dir(dir).map_err(|source| FilesError::ReadDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut list: Vec<(String, PathBuf, bool)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| FilesError::ReadDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let path = entry.path();
        // Follow symlinks as the original's glob does, but do not descend into symlinked
        // directories (avoids cycles).
        let Ok(ft) = entry.file_type() else { continue };
        let is_dir = ft.is_dir();
        let is_file = ft.is_file() || (ft.is_symlink() && path.is_file());
        if is_dir && name.starts_with('.') {
            // Hidden directories hold no corpus files (and may be large, e.g. `.git`).
            continue;
        }
        if is_dir || is_file {
            list.push((name, path, is_dir));
        }
    }
    list.sort();
    for (name, path, is_dir) in list {
        rel.push(name.clone());
        if is_dir {
            let rel_str = rel.join("/");
            // A dir matched by `**/test/**` or `**/tests/**`, and everything below it.
            if name == "test"
                || name == "tests"
                || rejected_dirs
                    .iter()
                    .any(|d| rel_str.starts_with(d.as_str()) && rel_str[d.len()..].starts_with('/'))
            {
                rejected_dirs.push(rel_str);
            }
            walk(&path, rel, files, rejected_dirs)?;
        } else if (name.ends_with(".py") || is_other_source(&name))
            && !rel.iter().any(|p| p.starts_with('.'))
        {
            files.push((rel.clone(), path));
        }
        rel.pop();
    }
    Ok(())
}

/// Reads a file as the original does: raw bytes decoded as UTF-8 with invalid sequences
/// dropped (`errors="ignore"`), no newline translation.
pub fn read_lossy(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(decode_utf8_ignore(&bytes))
}

/// UTF-8 decoding that drops invalid sequences (Python's `errors="ignore"`).
pub fn decode_utf8_ignore(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                // `good` is valid UTF-8 by construction.
                out.push_str(std::str::from_utf8(good).unwrap_or(""));
                match e.error_len() {
                    Some(n) => bytes = &rest[n..],
                    None => return out,
                }
            }
        }
    }
}
