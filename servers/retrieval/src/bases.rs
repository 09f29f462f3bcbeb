//! Indexes of earlier trees (`--index-bases DIR`), so that a server indexing a new
//! tree of a repository starts from its predecessor's index and applies the
//! difference instead of building whole.
//!
//! A benchmark serves each tree with its own server and its own data directory, which
//! is removed once the tree is done; consecutive trees of one repository are a few
//! files apart. After indexing its workspace, a server publishes the index and its
//! file manifest as a *base* ([`Bases::publish`]); the next server, finding no index
//! in its data directory, seeds it from the base whose files overlap its tree most
//! ([`Bases::seed`], at least [`MIN_OVERLAP`] of the larger file list: the same
//! repository), then catches up with the disk by the manifest (files added, removed,
//! or changed by content hash; see [`crate::index::RepoIndex::update_files`]).
//!
//! Files are hard-linked, not copied (a copy where linking fails): every file of an
//! index is replaced by rename when it changes, never written in place (tantivy's
//! segments are immutable, its `meta.json` and our stores are written to a temporary
//! file and renamed), so a base and the data directories seeded from it never see
//! each other's writes. A base is complete once renamed into place
//! (`<DIR>/<nanos>-<pid>/`), and publishing replaces the base it was seeded from; a
//! seed that fails midway (a base removed under it) leaves nothing, and the server
//! builds cold. The directory keeps at most [`MAX_BASES`] bases, the newest.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::source::Manifest;

/// Share of the larger file list that a base and a tree must have in common for the
/// tree to be seeded from it (by path): below it the two are taken for different
/// repositories, and a cold build is cheaper than applying a large difference.
pub const MIN_OVERLAP: f64 = 0.5;
/// Bases kept (the most recently published); a benchmark runs one repository at a
/// time per lane, so a few cover concurrent lanes and the repositories of a rerun.
pub const MAX_BASES: usize = 6;
/// The index directory inside a base.
const INDEX: &str = "index";
/// The manifest inside a base.
const MANIFEST: &str = "manifest.json";

/// The base directory (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct Bases {
    dir: PathBuf,
}

/// Files of an index directory that are never part of a base: tantivy's lock files
/// and half-written temporary files.
fn skipped(name: &str) -> bool {
    name.ends_with(".lock") || name.ends_with(".tmp")
}

/// Hard-links (or copies) every file under `from` into `to`, which must not exist.
fn link_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if skipped(&name.to_string_lossy()) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type()?.is_dir() {
            link_tree(&src, &dst)?;
        } else if fs::hard_link(&src, &dst).is_err() {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

impl Bases {
    /// Bases under `dir` (created when first published to).
    pub fn new(dir: PathBuf) -> Bases {
        Bases { dir }
    }

    /// The published bases, oldest first (names start with the publishing time).
    fn list(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .filter(|p| p.join(MANIFEST).is_file())
            .collect();
        v.sort();
        v
    }

    /// Seeds `index_dir` and `manifest` (neither exists yet) from the base that shares
    /// most files with `files` (the tree's indexable files), if one shares at least
    /// [`MIN_OVERLAP`]. Returns the base's name; `None` leaves nothing behind.
    pub fn seed(&self, files: &[String], index_dir: &Path, manifest: &Path) -> Option<String> {
        let current: HashSet<&str> = files.iter().map(String::as_str).collect();
        let mut best: Option<(f64, PathBuf)> = None;
        for base in self.list() {
            let Some(m) = Manifest::load(&base.join(MANIFEST)) else {
                continue;
            };
            let common = m
                .files
                .keys()
                .filter(|k| current.contains(k.as_str()))
                .count();
            let overlap = common as f64 / m.files.len().max(current.len()).max(1) as f64;
            if overlap >= MIN_OVERLAP && best.as_ref().is_none_or(|(o, _)| overlap > *o) {
                best = Some((overlap, base));
            }
        }
        let (_, base) = best?;
        let seeded = link_tree(&base.join(INDEX), index_dir).and_then(|()| {
            if let Some(parent) = manifest.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::copy(base.join(MANIFEST), manifest).map(|_| ())
        });
        match seeded {
            Ok(()) => Some(base.file_name()?.to_string_lossy().into_owned()),
            Err(e) => {
                tracing::warn!(base = %base.display(), error = %e, "cannot seed the index from a base; building it whole");
                let _ = fs::remove_dir_all(index_dir);
                let _ = fs::remove_file(manifest);
                None
            }
        }
    }

    /// Publishes the index in `index_dir` with its `manifest` as a new base, replacing
    /// `replaces` (the base it was seeded from), and drops the oldest bases beyond
    /// [`MAX_BASES`]. The caller holds the index still while this links its files.
    pub fn publish(
        &self,
        replaces: Option<&str>,
        index_dir: &Path,
        manifest: &Path,
    ) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!("{nanos:032}-{}", std::process::id());
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let staged = link_tree(index_dir, &tmp.join(INDEX))
            .and_then(|()| fs::copy(manifest, tmp.join(MANIFEST)).map(|_| ()))
            .and_then(|()| fs::rename(&tmp, self.dir.join(&name)));
        if let Err(e) = staged {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
        if let Some(old) = replaces.filter(|o| *o != name) {
            let _ = fs::remove_dir_all(self.dir.join(old));
        }
        let bases = self.list();
        for old in bases.iter().take(bases.len().saturating_sub(MAX_BASES)) {
            let _ = fs::remove_dir_all(old);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_at(dir: &Path, files: &[&str]) -> (PathBuf, PathBuf) {
        let index = dir.join("index");
        fs::create_dir_all(index.join("tantivy")).unwrap();
        fs::write(index.join("chunks.json"), "{}").unwrap();
        fs::write(index.join("tantivy/meta.json"), "{}").unwrap();
        fs::write(index.join("tantivy/.tantivy-writer.lock"), "").unwrap();
        let manifest = dir.join("manifest.json");
        let m = Manifest {
            files: files
                .iter()
                .map(|f| {
                    (
                        f.to_string(),
                        crate::source::FileStamp {
                            size: 0,
                            mtime_ns: 0,
                            hash: 0,
                        },
                    )
                })
                .collect(),
        };
        m.save(&manifest).unwrap();
        (index, manifest)
    }

    #[test]
    fn a_tree_is_seeded_from_the_base_of_its_repository_and_publishing_replaces_it() {
        let tmp = tempfile::tempdir().unwrap();
        let bases = Bases::new(tmp.path().join("bases"));
        let (a_index, a_manifest) = index_at(&tmp.path().join("a"), &["a.py", "b.py", "c.py"]);
        let (x_index, x_manifest) = index_at(&tmp.path().join("x"), &["x.go", "y.go"]);
        bases.publish(None, &a_index, &a_manifest).unwrap();
        bases.publish(None, &x_index, &x_manifest).unwrap();
        assert_eq!(bases.list().len(), 2);

        // A tree of the first repository, one file added: seeded from its base.
        let files: Vec<String> = ["a.py", "b.py", "c.py", "d.py"].map(String::from).to_vec();
        let (index, manifest) = (tmp.path().join("t/index"), tmp.path().join("t/m.json"));
        let key = bases.seed(&files, &index, &manifest).expect("seeded");
        assert!(index.join("tantivy/meta.json").is_file());
        assert!(
            !index.join("tantivy/.tantivy-writer.lock").exists(),
            "no lock"
        );
        assert_eq!(Manifest::load(&manifest).unwrap().files.len(), 3);

        // Publishing replaces that base; the other repository's stays.
        bases.publish(Some(&key), &index, &manifest).unwrap();
        let listed = bases.list();
        assert_eq!(listed.len(), 2);
        assert!(!listed.iter().any(|p| p.ends_with(&key)));

        // A tree of neither repository is not seeded, and nothing is left behind.
        let other: Vec<String> = ["q.rs", "r.rs"].map(String::from).to_vec();
        let (index2, manifest2) = (tmp.path().join("u/index"), tmp.path().join("u/m.json"));
        assert_eq!(bases.seed(&other, &index2, &manifest2), None);
        assert!(!index2.exists() && !manifest2.exists());
    }

    #[test]
    fn only_the_newest_bases_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let bases = Bases::new(tmp.path().join("bases"));
        let (index, manifest) = index_at(&tmp.path().join("a"), &["a.py"]);
        for _ in 0..MAX_BASES + 2 {
            bases.publish(None, &index, &manifest).unwrap();
        }
        assert_eq!(bases.list().len(), MAX_BASES);
    }
}
