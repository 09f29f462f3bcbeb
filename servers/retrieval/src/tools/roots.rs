//! The local directories `index_repository` and `delete_repository` may act on
//! (`--allow-root`), so an agent cannot index `/etc` or the user's home: the shared
//! [`AllowedRoots`] (`navbench-server-support`, also used by codegraph) applied to
//! this server's sources and records.
//!
//! The binary always confines the tools (default: the `--workspace` and the data
//! directory); [`AllowedRoots::any`] is for embedding the library in a trusted process.

use std::path::PathBuf;

pub use navbench_server_support::roots::AllowedRoots;

use super::{RetrievalTools, ToolError};
use crate::registry::{RepoRecord, SourceKind};
use crate::source::SourceSpec;

impl RetrievalTools {
    /// `index_repository` may read `spec`: a local directory, or a `file://` URL's
    /// directory, under the allowed roots (remote URLs are cloned into the data
    /// directory, which is always allowed).
    pub(super) fn check_source_allowed(&self, spec: &SourceSpec) -> Result<(), ToolError> {
        let roots = &self.shared.settings.allowed_roots;
        match spec {
            SourceSpec::Local(path) => roots.check("index_repository", path).map_err(refused),
            SourceSpec::Git(url) => match file_url_path(url) {
                Some(path) => roots.check("index_repository", &path).map_err(refused),
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
                .check("delete_repository", &record.local_path)
                .map_err(refused),
            SourceKind::Git => Ok(()),
        }
    }
}

/// A refusal, as the agent sees it.
fn refused(e: navbench_server_support::roots::OutsideRoots) -> ToolError {
    ToolError::Invalid(e.to_string())
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
