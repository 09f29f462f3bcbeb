//! The repository walk (SPEC.md §1.2): an `os.walk`-style top-down traversal with
//! entries sorted by name (the original uses the OS listing order, which is not
//! deterministic), the `.git`/`.github` substring skip, and the stack-based pruning
//! of directories without `.py` files, string-prefix quirk included.
//!
//! Beyond the original, the walk also yields the files of the other languages
//! `navbench-lang` has a front end for (TS/JS, Java, Go, Rust: see
//! `crate::builder::polyglot`) when the build's [`Selection`] takes their family,
//! and they count as `.py` files do for pruning. The default, `auto`, takes the
//! repository's languages (`navbench_lang::family::Families::of` over every source
//! file the walk sees): a Python project with a few JavaScript assets (Django's
//! admin) walks exactly as the original, `.py` files only.
//!
//! Pruning is decided here, before any node exists, so the graph never has to
//! remove nodes; the surviving directories keep their relative walk order.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use navbench_lang::family::{Families, Selection, family_of};
use tracing::warn;

/// Substrings that make the original skip a directory (`SKIP_DIRS`).
const SKIP_DIRS: [&str; 2] = [".github", ".git"];

/// One step of the walk, in the order the original adds nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WalkItem {
    /// A directory node (never `/`, which always exists) and its parent's id.
    Dir {
        /// Repo-relative path, `/`-separated.
        id: String,
        /// The parent directory's id (`/` for top-level directories).
        parent: String,
    },
    /// A source file (`.py`, or of another language with a front end) that is not a
    /// symlink; it becomes a node if it can be read.
    File {
        /// Repo-relative path, `/`-separated.
        id: String,
        /// The containing directory's id.
        dir: String,
        /// Absolute path to read.
        path: PathBuf,
    },
}

/// Walks `root` and returns the directory and file items in node-insertion order,
/// pruned directories already removed, with the families `selection` chose (only
/// their files are items and count for pruning).
pub(crate) fn walk(root: &Path, selection: &Selection) -> io::Result<(Vec<WalkItem>, Families)> {
    let mut visited: Vec<Visited> = Vec::new();
    walk_dir(root, root, &mut visited)?;
    let families = selection.resolve(
        visited
            .iter()
            .flat_map(|v| v.sources.iter().filter(|s| s.path.is_some()))
            .map(|s| s.id.as_str()),
    );
    for v in &mut visited {
        v.sources.retain(|s| families.contains(&s.id));
    }

    let mut removed: HashSet<String> = HashSet::new();
    let mut stack: Vec<(String, bool)> = Vec::new();
    let mut pop_until = |dirname: Option<&str>, stack: &mut Vec<(String, bool)>| {
        while let Some((top, keep)) = stack.last() {
            if dirname.is_some_and(|d| d.starts_with(top.as_str())) {
                break;
            }
            if !keep {
                removed.insert(top.clone());
            }
            stack.pop();
        }
    };
    for v in &visited {
        pop_until(Some(&v.dirname), &mut stack);
        if v.dirname != "/" {
            stack.push((v.dirname.clone(), false));
        }
        if !v.sources.is_empty() {
            for entry in stack.iter_mut() {
                entry.1 = true;
            }
        }
    }
    pop_until(None, &mut stack);

    let mut items = Vec::new();
    for Visited { dirname, sources } in visited {
        if dirname != "/" {
            if removed.contains(&dirname) {
                continue;
            }
            let parent = match dirname.rfind('/') {
                Some(i) => dirname[..i].to_string(),
                None => "/".to_string(),
            };
            items.push(WalkItem::Dir {
                id: dirname.clone(),
                parent,
            });
        }
        items.extend(sources.into_iter().filter_map(|s| {
            let path = s.path?;
            Some(WalkItem::File {
                id: s.id,
                dir: dirname.clone(),
                path,
            })
        }));
    }
    Ok((items, families))
}

/// True if the original skips this repo-relative directory (`'.git' in dirname`).
pub(crate) fn is_skip_dir(dirname: &str) -> bool {
    SKIP_DIRS.iter().any(|s| dirname.contains(s))
}

/// A directory the walk visited (and did not skip).
struct Visited {
    /// Its id (`/` for the root).
    dirname: String,
    /// The source files directly inside (`.py` or another family's, symlinks
    /// included), sorted by name. `dir_has_py` is "one of the chosen families is
    /// among them".
    sources: Vec<SourceName>,
}

/// A source file as the walk lists it.
struct SourceName {
    /// Repo-relative path, `/`-separated.
    id: String,
    /// Absolute path to read; `None` for a symlink (no node, but it counts for
    /// pruning as in the original).
    path: Option<PathBuf>,
}

/// Visits `dir` and (top-down, sorted) its subdirectories, recording each one not
/// skipped.
fn walk_dir(root: &Path, dir: &Path, out: &mut Vec<Visited>) -> io::Result<()> {
    let dirname = match dir.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => "/".to_string(),
        Ok(rel) => match rel.to_str() {
            Some(s) => s.replace(std::path::MAIN_SEPARATOR, "/"),
            None => {
                warn!(path = %dir.display(), "skipping a directory whose name is not UTF-8");
                return Ok(());
            }
        },
        Err(_) => return Ok(()),
    };
    // All descendants of a skipped directory contain the same substring.
    if dirname != "/" && is_skip_dir(&dirname) {
        return Ok(());
    }
    let entries = match fs::read_dir(dir) {
        Ok(rd) => rd,
        // os.walk ignores directories it cannot list (onerror=None).
        Err(e) if dir != root => {
            warn!(path = %dir.display(), error = %e, "cannot list directory, skipping it");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let mut names: Vec<(std::ffi::OsString, fs::FileType)> = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                warn!(path = %dir.display(), error = %e, "cannot read a directory entry");
                continue;
            }
        };
        match entry.file_type() {
            Ok(ft) => names.push((entry.file_name(), ft)),
            Err(e) => warn!(path = %entry.path().display(), error = %e, "cannot stat entry"),
        }
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));

    let mut subdirs = Vec::new();
    let mut sources = Vec::new();
    for (name, ft) in names {
        let path = dir.join(&name);
        // `DirEntry.is_dir()` follows symlinks: a symlink to a directory is listed
        // among the directories (and not descended into), never among the files.
        let is_dir = ft.is_dir() || (ft.is_symlink() && path.is_dir());
        if is_dir {
            if !ft.is_symlink() {
                subdirs.push(path);
            }
            continue;
        }
        let Some(name) = name.to_str() else {
            warn!(path = %path.display(), "skipping a file whose name is not UTF-8");
            continue;
        };
        if family_of(name).is_none() {
            continue;
        }
        let id = if dirname == "/" {
            name.to_string()
        } else {
            format!("{dirname}/{name}")
        };
        let path = (!ft.is_symlink()).then_some(path);
        sources.push(SourceName { id, path });
    }
    out.push(Visited { dirname, sources });
    for sub in subdirs {
        walk_dir(root, &sub, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(items: &[WalkItem]) -> Vec<String> {
        items
            .iter()
            .map(|i| match i {
                WalkItem::Dir { id, .. } => format!("D {id}"),
                WalkItem::File { id, .. } => format!("F {id}"),
            })
            .collect()
    }

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(p, "").expect("write");
    }

    #[test]
    fn prunes_dirs_without_python_with_the_prefix_quirk() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let r = tmp.path();
        touch(r, "setup.py");
        touch(r, "docs/readme.txt"); // pruned: no .py beneath
        touch(r, "foo/data.txt"); // kept: `foobar` starts with `foo`
        touch(r, "foobar/x.py");
        touch(r, "pkg/sub/deep/m.py"); // pkg and pkg/sub kept as ancestors
        touch(r, "pkg/empty/a.txt"); // pruned
        touch(r, ".github/wf.py"); // skipped (substring)
        touch(r, "a.gitlab/x.py"); // skipped (substring `.git`)
        touch(r, ".tox/t.py"); // kept: other hidden dirs are walked
        let (items, _) = walk(r, &Selection::Auto).expect("walk");
        assert_eq!(
            ids(&items),
            vec![
                "F setup.py",
                "D .tox",
                "F .tox/t.py",
                "D foo",
                "D foobar",
                "F foobar/x.py",
                "D pkg",
                "D pkg/sub",
                "D pkg/sub/deep",
                "F pkg/sub/deep/m.py",
            ]
        );
    }

    #[test]
    fn other_languages_are_walked_and_keep_their_directories() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let r = tmp.path();
        touch(r, "a.py");
        touch(r, "web/src/app.tsx");
        touch(r, "web/README.md");
        touch(r, "cmd/main.go");
        touch(r, "docs/x.txt"); // pruned: no source file beneath
        touch(r, "src/lib.rs");
        let (items, _) = walk(r, &Selection::Auto).expect("walk");
        assert_eq!(
            ids(&items),
            vec![
                "F a.py",
                "D cmd",
                "F cmd/main.go",
                "D src",
                "F src/lib.rs",
                "D web",
                "D web/src",
                "F web/src/app.tsx",
            ]
        );
    }

    #[test]
    fn a_python_project_walks_as_the_original_unless_told_otherwise() {
        // Django's shape: Python, and a few JavaScript assets under static/ (8% of
        // the source files). `auto` leaves them out, as LocAgent's `.py`-only walk
        // does (static/ is pruned); `all` and an explicit list take them.
        let tmp = tempfile::tempdir().expect("tempdir");
        let r = tmp.path();
        for i in 0..11 {
            touch(r, &format!("pkg/m{i}.py"));
        }
        touch(r, "pkg/static/admin.js");
        let (auto, families) = walk(r, &Selection::Auto).expect("walk");
        assert_eq!(families.names(), ["python"]);
        assert!(!ids(&auto).iter().any(|i| i.contains("static")), "{auto:?}");
        let (all, families) = walk(r, &Selection::All).expect("walk");
        assert_eq!(families, Families::all());
        let with_js = ids(&all);
        assert!(with_js.contains(&"D pkg/static".to_string()), "{with_js:?}");
        assert!(with_js.contains(&"F pkg/static/admin.js".to_string()));
        let ecma: Selection = "javascript".parse().expect("parses");
        let (only_js, _) = walk(r, &ecma).expect("walk");
        assert_eq!(
            ids(&only_js),
            ["D pkg", "D pkg/static", "F pkg/static/admin.js"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_py_counts_for_pruning_but_is_no_node() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let r = tmp.path();
        touch(r, "real/a.py");
        fs::create_dir_all(r.join("links")).expect("mkdir");
        std::os::unix::fs::symlink(r.join("real/a.py"), r.join("links/l.py")).expect("symlink");
        std::os::unix::fs::symlink(r.join("real"), r.join("linkdir")).expect("symlink");
        let (items, _) = walk(r, &Selection::Auto).expect("walk");
        assert_eq!(ids(&items), vec!["D links", "D real", "F real/a.py"]);
    }
}
