//! The workspace's index and `--index-bases` ([`crate::bases`]): a workspace with no
//! index of its own starts from the base of its repository, and its index, once
//! built or brought up to date, becomes that repository's base.

use super::{RetrievalTools, index_dir, lock, manifest_path, read};
use crate::bases::Bases;

impl RetrievalTools {
    /// Seeds the workspace `id`'s index directory and manifest from the base sharing
    /// most files with `files` (the workspace's indexable files), when bases are kept
    /// and the workspace has no index yet. Returns the base's name (to replace when
    /// publishing).
    pub(super) fn seed_workspace(&self, id: &str, files: &[String]) -> Option<String> {
        let settings = &self.shared.settings;
        let bases = Bases::new(settings.index_bases.clone()?);
        let dir = index_dir(&settings.data_dir, id, self.kind());
        if dir.exists() {
            return None;
        }
        let manifest = manifest_path(&settings.data_dir, id, self.kind());
        let seeded = bases.seed(files, &dir, &manifest);
        if let Some(base) = &seeded {
            tracing::info!(base, "workspace index seeded from an earlier tree's");
        }
        seeded
    }

    /// Publishes the workspace `id`'s installed index as its repository's base,
    /// replacing `replaces`; a failure costs the next tree a whole build (logged).
    pub(super) fn publish_workspace(&self, id: &str, replaces: Option<&str>) {
        let settings = &self.shared.settings;
        let Some(dir) = settings.index_bases.clone() else {
            return;
        };
        let Some(index) = lock(&self.shared.indexes).get(id).cloned() else {
            return;
        };
        // Held for reading: no update rewrites the index while its files are linked.
        let guard = read(&index);
        let manifest = manifest_path(&settings.data_dir, id, self.kind());
        if let Err(e) = Bases::new(dir).publish(replaces, guard.dir(), &manifest) {
            tracing::warn!(error = %e, "cannot publish the workspace index as a base");
        }
    }
}
