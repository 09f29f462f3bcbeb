//! What a checkout wrote, so a tree on disk is only reused after it is re-checked.
//!
//! A [`Manifest`] lists every entry written (path, git mode, blob id) and the blobs
//! left out because a partial mirror lacked them. [`Manifest::verify`] walks the
//! directory and re-hashes every file as a git blob: a file edited, added, removed,
//! re-moded or replaced by a symlink since it was written makes the tree "tampered",
//! and the caller rewrites it in full.
//!
//! Cost: verification reads and SHA-1-hashes every byte of the tree (in parallel with
//! rayon) — about as much I/O as writing it, but no zlib inflation and no delta
//! resolution from the pack, which is where a fresh write spends its time. A stat-only
//! check (size and mtime, as git's index does) would be cheaper still but trusts
//! timestamps, which a server or a user editing the tree in the same second defeats.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Git's mode of a regular file.
pub(crate) const MODE_FILE: u32 = 0o100644;
/// Git's mode of an executable file.
pub(crate) const MODE_EXEC: u32 = 0o100755;
/// Git's mode of a symbolic link (the blob is the link's target).
pub(crate) const MODE_LINK: u32 = 0o120000;
/// Git's mode of a submodule (gitlink): written as an empty directory.
pub(crate) const MODE_GITLINK: u32 = 0o160000;

/// One entry of a written tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Git file mode ([`MODE_FILE`], [`MODE_EXEC`], [`MODE_LINK`], [`MODE_GITLINK`]).
    pub mode: u32,
    /// Blob id (for a gitlink, the submodule's commit, which is not written).
    pub oid: String,
}

/// What was written into one work dir, from which commit of which repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `owner/name`.
    pub repo: String,
    /// The commit the tree was written from.
    pub commit: String,
    /// Written entries by repo-relative path (`/`-separated).
    pub entries: BTreeMap<String, Entry>,
    /// Blobs the mirror lacked, left out of the tree (path → entry): each gives the
    /// instance a warning.
    #[serde(default)]
    pub missing: BTreeMap<String, Entry>,
}

impl Manifest {
    /// Reads a manifest file; `None` when absent or unreadable (the tree is then
    /// rewritten, never trusted).
    pub fn load(path: &Path) -> Option<Manifest> {
        let text = std::fs::read(path).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Writes the manifest to `path`.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text)
    }

    /// One warning per blob left out of the tree.
    pub fn warnings(&self) -> Vec<String> {
        self.missing
            .iter()
            .map(|(path, e)| {
                format!(
                    "`{path}` left out: blob {} is not in the mirror (partial clone?)",
                    e.oid
                )
            })
            .collect()
    }

    /// Checks that `dir` holds exactly the manifest's entries, byte for byte; `Err`
    /// names the first difference found.
    pub fn verify(&self, dir: &Path) -> Result<(), String> {
        let mut found = Vec::new();
        collect(dir, dir, self, &mut found)?;
        let expected = self
            .entries
            .values()
            .filter(|e| e.mode != MODE_GITLINK)
            .count();
        if found.len() != expected {
            let on_disk: std::collections::HashSet<&str> =
                found.iter().map(|(p, _)| p.as_str()).collect();
            let gone = self
                .entries
                .iter()
                .find(|(p, e)| e.mode != MODE_GITLINK && !on_disk.contains(p.as_str()))
                .map(|(p, _)| p.as_str())
                .unwrap_or("?");
            return Err(format!("`{gone}` is missing"));
        }
        found.par_iter().try_for_each(|(rel, full)| {
            let entry = &self.entries[rel];
            check_file(full, entry).map_err(|why| format!("`{rel}` {why}"))
        })
    }
}

/// Walks `dir`, collecting every file and symlink (relative path, full path); errors on
/// anything the manifest does not list, and checks gitlink directories are empty.
fn collect(
    root: &Path,
    dir: &Path,
    manifest: &Manifest,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for item in rd {
        let item = item.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let full = item.path();
        let rel = relative(root, &full);
        let ft = item
            .file_type()
            .map_err(|e| format!("cannot stat {}: {e}", full.display()))?;
        let entry = manifest.entries.get(&rel);
        if ft.is_dir() {
            match entry {
                Some(e) if e.mode == MODE_GITLINK => {
                    let empty = std::fs::read_dir(&full)
                        .map(|mut d| d.next().is_none())
                        .unwrap_or(false);
                    if !empty {
                        return Err(format!("submodule directory `{rel}` is not empty"));
                    }
                }
                Some(_) => return Err(format!("`{rel}` is a directory, expected a file")),
                None => collect(root, &full, manifest, out)?,
            }
        } else if entry.is_some_and(|e| e.mode != MODE_GITLINK) {
            out.push((rel, full));
        } else {
            return Err(format!("`{rel}` was not written by the checkout"));
        }
    }
    Ok(())
}

fn relative(root: &Path, full: &Path) -> String {
    let rel = full.strip_prefix(root).unwrap_or(full);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Checks one file or symlink against its entry: kind, executable bit, content hash.
fn check_file(full: &Path, entry: &Entry) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(full).map_err(|e| format!("cannot stat: {e}"))?;
    let bytes = if entry.mode == MODE_LINK {
        link_bytes(full, &meta)?
    } else {
        if !meta.file_type().is_file() {
            return Err("is not a regular file".into());
        }
        if exec_differs(&meta, entry.mode == MODE_EXEC) {
            return Err("has a changed executable bit".into());
        }
        std::fs::read(full).map_err(|e| format!("cannot read: {e}"))?
    };
    let oid = git2::Oid::hash_object(git2::ObjectType::Blob, &bytes)
        .map_err(|e| format!("cannot hash: {}", e.message()))?;
    if oid.to_string() != entry.oid {
        return Err(format!("has changed (blob {oid}, written {})", entry.oid));
    }
    Ok(())
}

#[cfg(unix)]
fn link_bytes(full: &Path, meta: &std::fs::Metadata) -> Result<Vec<u8>, String> {
    use std::os::unix::ffi::OsStrExt;
    if !meta.file_type().is_symlink() {
        return Err("is not a symbolic link".into());
    }
    let target = std::fs::read_link(full).map_err(|e| format!("cannot read link: {e}"))?;
    Ok(target.as_os_str().as_bytes().to_vec())
}

/// Without symlinks, a link is written as a file holding its target (git's
/// `core.symlinks=false`).
#[cfg(not(unix))]
fn link_bytes(full: &Path, _meta: &std::fs::Metadata) -> Result<Vec<u8>, String> {
    std::fs::read(full).map_err(|e| format!("cannot read: {e}"))
}

#[cfg(unix)]
fn exec_differs(meta: &std::fs::Metadata, executable: bool) -> bool {
    use std::os::unix::fs::PermissionsExt;
    (meta.permissions().mode() & 0o111 != 0) != executable
}

/// Without Unix permissions there is no executable bit to compare.
#[cfg(not(unix))]
fn exec_differs(_meta: &std::fs::Metadata, _executable: bool) -> bool {
    false
}
