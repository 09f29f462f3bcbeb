//! Writing a commit's tree into a plain directory, in full or as a diff from the tree
//! of another commit already on disk.
//!
//! The output is what `git archive` (or a fresh SWE-bench clone) gives, whatever the
//! mirror holds:
//! - a submodule (gitlink entry) becomes an empty directory (libgit2's checkout fails on
//!   it without a working tree);
//! - a blob the mirror lacks (a partial clone leaves large data files out) is left out
//!   with a warning when no server reads such a file, and fails the instance otherwise
//!   ([`CheckoutError::MissingBlob`] says how to complete the mirror), see
//!   [`server_reads`].
//!
//! [`write_fresh`] lists the tree and writes every entry; [`apply_diff`] takes the
//! tree-to-tree diff between the commit a directory holds and the wanted commit and
//! removes, then writes, only the changed paths. Both record what they wrote in a
//! [`Manifest`].

use std::path::Path;

use super::CheckoutError;
use super::manifest::{Entry, MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_LINK, Manifest};

/// Extensions of files a server reads (source, text docs, configuration): a missing
/// blob of such a file fails the instance instead of being left out.
pub const SERVER_READ_EXTENSIONS: &[&str] = &[
    "py", "md", "rst", "txt", "toml", "cfg", "ini", "yaml", "yml",
];

/// True when a server may read the file at `path` (by extension, case-insensitive).
pub fn server_reads(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => SERVER_READ_EXTENSIONS
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext)),
        _ => false,
    }
}

/// Where the objects came from, for error messages that say how to complete a mirror.
pub(crate) struct Source<'a> {
    pub repo: &'a str,
    pub url: &'a str,
    pub mirror: &'a Path,
}

impl Source<'_> {
    fn missing(&self, path: &str, oid: git2::Oid) -> CheckoutError {
        CheckoutError::MissingBlob {
            repo: self.repo.to_string(),
            path: path.to_string(),
            oid: oid.to_string(),
            url: self.url.to_string(),
            mirror: self.mirror.to_path_buf(),
        }
    }

    fn git(&self, what: &str, e: git2::Error) -> CheckoutError {
        CheckoutError::Git {
            path: self.mirror.to_path_buf(),
            message: format!("{what}: {}", e.message()),
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckoutError + '_ {
    move |source| CheckoutError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Git's mode of a tree entry, normalized as git checks out (group-writable files are
/// plain files); `None` for a subtree.
fn normalize(mode: u32) -> Option<u32> {
    match mode & 0o170000 {
        0o040000 => None,
        0o120000 => Some(MODE_LINK),
        0o160000 => Some(MODE_GITLINK),
        _ if mode & 0o111 != 0 => Some(MODE_EXEC),
        _ => Some(MODE_FILE),
    }
}

/// Writes the tree of `commit` into the empty directory `dir`; returns its manifest.
pub(crate) fn write_fresh(
    mirror: &git2::Repository,
    commit: git2::Oid,
    dir: &Path,
    src: &Source,
) -> Result<Manifest, CheckoutError> {
    let tree = mirror
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| src.git(&format!("cannot read the tree of {commit}"), e))?;
    let mut listed: Vec<(String, u32, git2::Oid)> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
        let Ok(name) = entry.name() else {
            return git2::TreeWalkResult::Ok;
        };
        match normalize(entry.filemode() as u32) {
            Some(mode) => listed.push((format!("{root}{name}"), mode, entry.id())),
            None => dirs.push(format!("{root}{name}")),
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| {
        src.git(
            &format!("cannot list the tree of {commit} (partial mirror?)"),
            e,
        )
    })?;
    let mut manifest = Manifest {
        repo: src.repo.to_string(),
        commit: commit.to_string(),
        ..Manifest::default()
    };
    // Pre-order lists parents first: every directory is made once, and the writes
    // below need neither to make parents nor to clear what is at their path.
    for d in &dirs {
        let full = dir.join(d);
        std::fs::create_dir(&full).map_err(io(&full))?;
    }
    for (path, mode, oid) in listed {
        write_entry(
            mirror,
            dir,
            &path,
            mode,
            oid,
            src,
            &mut manifest,
            Target::Empty,
        )?;
    }
    Ok(manifest)
}

/// Turns `dir`, which holds `old` (verified by the caller), into the tree of `commit`
/// by writing and deleting only the paths the two trees differ in; returns the new
/// manifest and how many paths changed.
pub(crate) fn apply_diff(
    mirror: &git2::Repository,
    old: Manifest,
    commit: git2::Oid,
    dir: &Path,
    src: &Source,
) -> Result<(Manifest, usize), CheckoutError> {
    let tree_of = |id: &str| {
        git2::Oid::from_str(id)
            .and_then(|oid| mirror.find_commit(oid))
            .and_then(|c| c.tree())
            .map_err(|e| src.git(&format!("cannot read the tree of {id}"), e))
    };
    let old_tree = tree_of(&old.commit)?;
    let new_tree = tree_of(&commit.to_string())?;
    let mut opts = git2::DiffOptions::new();
    opts.ignore_submodules(false);
    let diff = mirror
        .diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(&mut opts))
        .map_err(|e| src.git(&format!("cannot diff {} to {commit}", old.commit), e))?;
    let mut removals: Vec<String> = Vec::new();
    let mut writes: Vec<(String, u32, git2::Oid)> = Vec::new();
    for delta in diff.deltas() {
        let (o, n) = (delta.old_file(), delta.new_file());
        // A path changed in place is simply overwritten by its write below.
        if o.exists()
            && (!n.exists() || o.path() != n.path())
            && let Some(p) = o.path().and_then(|p| p.to_str())
        {
            removals.push(p.to_string());
        }
        if n.exists() {
            let mode = normalize(u32::from(n.mode()));
            if let (Some(p), Some(mode)) = (n.path().and_then(|p| p.to_str()), mode) {
                writes.push((p.to_string(), mode, n.id()));
            }
        }
    }
    let changed = diff.deltas().len();
    let mut manifest = Manifest {
        commit: commit.to_string(),
        ..old
    };
    // Removals first: a path can turn from a file into a directory or back.
    for path in &removals {
        manifest.entries.remove(path);
        manifest.missing.remove(path);
        remove_path(dir, path)?;
    }
    for (path, mode, oid) in writes {
        write_entry(
            mirror,
            dir,
            &path,
            mode,
            oid,
            src,
            &mut manifest,
            Target::Existing,
        )?;
    }
    Ok((manifest, changed))
}

/// Removes `path` (a file, a link or a submodule's directory) and then every parent
/// directory it leaves empty, as a tree never holds an empty directory of its own.
fn remove_path(dir: &Path, path: &str) -> Result<(), CheckoutError> {
    let full = dir.join(path);
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&full).map_err(io(&full))?,
        Ok(_) => std::fs::remove_file(&full).map_err(io(&full))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&full)(e)),
    }
    let mut parent = full.parent();
    while let Some(p) = parent {
        if p == dir || std::fs::remove_dir(p).is_err() {
            break; // not empty (or already gone): its parents are not empty either
        }
        parent = p.parent();
    }
    Ok(())
}

/// What the directory being written holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Every parent directory exists and nothing is at the entries' paths.
    Empty,
    /// Another tree: parents may be missing, an old file or link may be in the way.
    Existing,
}

/// Writes one entry (replacing whatever is at its path) and records it in `manifest`;
/// a blob the mirror lacks is recorded as missing, or fails when a server reads it.
#[allow(clippy::too_many_arguments)] // one call per entry from two places; a struct would only rename them
fn write_entry(
    mirror: &git2::Repository,
    dir: &Path,
    path: &str,
    mode: u32,
    oid: git2::Oid,
    src: &Source,
    manifest: &mut Manifest,
    target: Target,
) -> Result<(), CheckoutError> {
    let full = dir.join(path);
    let entry = Entry {
        mode,
        oid: oid.to_string(),
    };
    if let (Target::Existing, Some(parent)) = (target, full.parent()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    if mode == MODE_GITLINK {
        std::fs::create_dir_all(&full).map_err(io(&full))?;
        manifest.entries.insert(path.to_string(), entry);
        return Ok(());
    }
    let blob = match mirror.find_blob(oid) {
        Ok(b) => b,
        Err(e) if e.code() == git2::ErrorCode::NotFound => {
            if server_reads(path) {
                return Err(src.missing(path, oid));
            }
            tracing::warn!(repo = src.repo, path, %oid, "blob missing from the mirror; left out");
            manifest.missing.insert(path.to_string(), entry);
            return Ok(());
        }
        Err(e) => return Err(src.git(&format!("cannot read blob {oid} of `{path}`"), e)),
    };
    // Never write through a link left at this path.
    if target == Target::Existing {
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&full).map_err(io(&full))?,
            Ok(_) => std::fs::remove_file(&full).map_err(io(&full))?,
            Err(_) => {}
        }
    }
    if mode == MODE_LINK {
        write_link(&full, blob.content())?;
    } else {
        std::fs::write(&full, blob.content()).map_err(io(&full))?;
        if mode == MODE_EXEC {
            set_executable(&full)?;
        }
    }
    manifest.missing.remove(path);
    manifest.entries.insert(path.to_string(), entry);
    Ok(())
}

#[cfg(unix)]
fn write_link(full: &Path, target: &[u8]) -> Result<(), CheckoutError> {
    use std::os::unix::ffi::OsStrExt;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), full).map_err(io(full))
}

/// Without symlinks, a link is a file holding its target (git's `core.symlinks=false`).
#[cfg(not(unix))]
fn write_link(full: &Path, target: &[u8]) -> Result<(), CheckoutError> {
    std::fs::write(full, target).map_err(io(full))
}

#[cfg(unix)]
fn set_executable(full: &Path) -> Result<(), CheckoutError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(full, std::fs::Permissions::from_mode(0o755)).map_err(io(full))
}

#[cfg(not(unix))]
fn set_executable(_full: &Path) -> Result<(), CheckoutError> {
    Ok(())
}
