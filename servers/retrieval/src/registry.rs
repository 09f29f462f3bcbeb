//! The registry of indexed repositories: one JSON file under the data directory.
//!
//! Each [`RepoRecord`] says where a repository came from (a local path or a git URL),
//! where its files are on disk, which globs select them, and its [`RepoStatus`]:
//! `indexing`, `ready` or `error` (with a message). The file is rewritten atomically
//! (temporary file, `fsync`, rename) on every change, so a crash leaves either the
//! old or the new registry, never a torn one.
//!
//! A repository is never silently half-ready: [`Registry::open`] turns every record
//! left `indexing` by a crash into `error`, with a message telling the agent to call
//! `update_repository` or `index_repository` again. A registry file that does not
//! parse is moved aside (`registry.json.corrupt-<time>`) rather than overwritten.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Name of the registry file inside the data directory.
pub const REGISTRY_FILE: &str = "registry.json";

/// Message given to records whose indexing was cut short by a stop or crash.
pub const INTERRUPTED: &str = "indexing was interrupted (the server stopped while indexing); \
call update_repository or index_repository to index it again";

/// Where a repository is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepoStatus {
    /// Being cloned, indexed or updated; not searchable yet.
    Indexing,
    /// Indexed and searchable.
    Ready,
    /// The last indexing failed or was interrupted; see the record's `error`.
    Error,
}

impl RepoStatus {
    /// The lowercase name used in JSON and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            RepoStatus::Indexing => "indexing",
            RepoStatus::Ready => "ready",
            RepoStatus::Error => "error",
        }
    }
}

/// What kind of source a repository was indexed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A directory on this machine, indexed in place.
    Local,
    /// A git URL cloned into the data directory.
    Git,
}

/// One registered repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoRecord {
    /// Stable id: hex hash of the kind, the canonical source and the branch.
    pub id: String,
    /// Short display name (`owner/repo` for URLs, the directory name for paths).
    pub name: String,
    /// The canonical local path or the normalized URL.
    pub source: String,
    /// Local directory or git clone.
    pub kind: SourceKind,
    /// The branch asked for (git sources), if any.
    pub branch: Option<String>,
    /// The directory whose files are indexed.
    pub local_path: PathBuf,
    /// Include globs (empty = every indexable file).
    pub include: Vec<String>,
    /// Exclude globs.
    pub exclude: Vec<String>,
    /// Life-cycle state.
    pub status: RepoStatus,
    /// Why the last indexing failed, when `status` is `error`.
    pub error: Option<String>,
    /// The commit the index reflects (git sources and local git checkouts).
    pub last_indexed_commit: Option<String>,
    /// When the index was last completed (RFC 3339, UTC).
    pub last_indexed_at: Option<String>,
    /// Files in the index.
    pub files: usize,
    /// Chunks in the index.
    pub chunks: usize,
    /// Whether this is the `--workspace` directory served by `codebase_retrieval`.
    #[serde(default)]
    pub workspace: bool,
}

impl RepoRecord {
    /// A fresh record in the `indexing` state.
    pub fn new(
        kind: SourceKind,
        source: String,
        branch: Option<String>,
        local_path: PathBuf,
        name: String,
    ) -> RepoRecord {
        RepoRecord {
            id: repo_id(kind, &source, branch.as_deref()),
            name,
            source,
            kind,
            branch,
            local_path,
            include: Vec::new(),
            exclude: Vec::new(),
            status: RepoStatus::Indexing,
            error: None,
            last_indexed_commit: None,
            last_indexed_at: None,
            files: 0,
            chunks: 0,
            workspace: false,
        }
    }
}

/// Why the registry could not be read, written or queried.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Reading or writing the registry file failed.
    #[error("registry file {path}: {source}; check that the data directory is writable")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// No repository has this id or id prefix.
    #[error("no repository with id '{given}'. {known}")]
    NotFound {
        /// The id as given.
        given: String,
        /// The known repositories, or how to add one.
        known: String,
    },
    /// The prefix matches several repositories.
    #[error(
        "repository id prefix '{given}' is ambiguous: it matches {candidates}; pass more characters of the id"
    )]
    Ambiguous {
        /// The prefix as given.
        given: String,
        /// The matching ids with names.
        candidates: String,
    },
}

/// The stable id of a repository: 16 hex digits of xxh3 over kind, source and branch.
pub fn repo_id(kind: SourceKind, source: &str, branch: Option<&str>) -> String {
    let kind = match kind {
        SourceKind::Local => "local",
        SourceKind::Git => "git",
    };
    let key = format!("{kind}\n{source}\n{}", branch.unwrap_or(""));
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
}

/// The directory holding one repository's index, manifest and clone.
pub fn repo_dir(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join("repos").join(id)
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The persisted set of repositories (see the [module docs](self)).
#[derive(Debug)]
pub struct Registry {
    path: PathBuf,
    records: BTreeMap<String, RepoRecord>,
}

impl Registry {
    /// Loads `<data_dir>/registry.json` (an empty registry if there is none), turning
    /// records left `indexing` into `error`; persists the result.
    pub fn open(data_dir: &Path) -> Result<Registry, RegistryError> {
        std::fs::create_dir_all(data_dir).map_err(|source| RegistryError::Io {
            path: data_dir.to_path_buf(),
            source,
        })?;
        let path = data_dir.join(REGISTRY_FILE);
        let records = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<Vec<RepoRecord>>(&bytes) {
                Ok(list) => list.into_iter().map(|r| (r.id.clone(), r)).collect(),
                Err(e) => {
                    let aside = data_dir.join(format!(
                        "{REGISTRY_FILE}.corrupt-{}",
                        chrono::Utc::now().format("%Y%m%dT%H%M%S")
                    ));
                    tracing::warn!(
                        file = %path.display(), aside = %aside.display(), error = %e,
                        "the registry does not parse; moved aside, starting empty"
                    );
                    std::fs::rename(&path, &aside).map_err(|source| RegistryError::Io {
                        path: aside,
                        source,
                    })?;
                    BTreeMap::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(RegistryError::Io { path, source }),
        };
        let mut registry = Registry { path, records };
        let mut recovered = 0;
        for record in registry.records.values_mut() {
            if record.status == RepoStatus::Indexing {
                record.status = RepoStatus::Error;
                record.error = Some(INTERRUPTED.to_string());
                recovered += 1;
            }
        }
        if recovered > 0 {
            tracing::warn!(
                recovered,
                "repositories left 'indexing' by an earlier run are now 'error'"
            );
            registry.save()?;
        }
        Ok(registry)
    }

    /// All records, by id.
    pub fn list(&self) -> Vec<&RepoRecord> {
        self.records.values().collect()
    }

    /// The record with exactly this id.
    pub fn get(&self, id: &str) -> Option<&RepoRecord> {
        self.records.get(id)
    }

    /// The record whose id is `given` or starts with it (a unique prefix).
    pub fn resolve(&self, given: &str) -> Result<&RepoRecord, RegistryError> {
        let given = given.trim();
        if let Some(record) = self.records.get(given) {
            return Ok(record);
        }
        let lower = given.to_ascii_lowercase();
        let matches: Vec<&RepoRecord> = if lower.is_empty() {
            Vec::new()
        } else {
            self.records
                .values()
                .filter(|r| r.id.starts_with(&lower))
                .collect()
        };
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(RegistryError::NotFound {
                given: given.to_string(),
                known: self.known_summary(),
            }),
            many => Err(RegistryError::Ambiguous {
                given: given.to_string(),
                candidates: many
                    .iter()
                    .map(|r| format!("{} ({})", r.id, r.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// "Known repositories: id (name), ..." or how to add one.
    pub fn known_summary(&self) -> String {
        if self.records.is_empty() {
            "No repository is registered yet; call index_repository with a local path or git URL first."
                .to_string()
        } else {
            let listed: Vec<String> = self
                .records
                .values()
                .take(20)
                .map(|r| format!("{} ({}, {})", r.id, r.name, r.status.as_str()))
                .collect();
            format!(
                "Known repositories: {}. Call list_repositories for details.",
                listed.join(", ")
            )
        }
    }

    /// Inserts or replaces a record and persists.
    pub fn upsert(&mut self, record: RepoRecord) -> Result<(), RegistryError> {
        self.records.insert(record.id.clone(), record);
        self.save()
    }

    /// Changes the record `id` (if present) with `f` and persists; returns the result.
    pub fn update(
        &mut self,
        id: &str,
        f: impl FnOnce(&mut RepoRecord),
    ) -> Result<Option<RepoRecord>, RegistryError> {
        let Some(record) = self.records.get_mut(id) else {
            return Ok(None);
        };
        f(record);
        let updated = record.clone();
        self.save()?;
        Ok(Some(updated))
    }

    /// Removes the record `id` and persists; returns it.
    pub fn remove(&mut self, id: &str) -> Result<Option<RepoRecord>, RegistryError> {
        let removed = self.records.remove(id);
        if removed.is_some() {
            self.save()?;
        }
        Ok(removed)
    }

    /// Writes the registry atomically: a temporary file in the same directory,
    /// flushed to disk, renamed over the old one.
    fn save(&self) -> Result<(), RegistryError> {
        let io = |source| RegistryError::Io {
            path: self.path.clone(),
            source,
        };
        let list: Vec<&RepoRecord> = self.records.values().collect();
        let json = serde_json::to_vec_pretty(&list).map_err(|e| io(std::io::Error::other(e)))?;
        let tmp = self
            .path
            .with_extension(format!("json.tmp-{}", std::process::id()));
        {
            let mut file = std::fs::File::create(&tmp).map_err(io)?;
            file.write_all(&json).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(io)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(source: &str) -> RepoRecord {
        RepoRecord::new(
            SourceKind::Local,
            source.to_string(),
            None,
            PathBuf::from(source),
            "demo".to_string(),
        )
    }

    #[test]
    fn ids_are_stable_and_distinguish_branches() {
        let a = repo_id(SourceKind::Git, "https://example.org/a/b", None);
        assert_eq!(a, repo_id(SourceKind::Git, "https://example.org/a/b", None));
        assert_eq!(a.len(), 16);
        assert_ne!(
            a,
            repo_id(SourceKind::Git, "https://example.org/a/b", Some("dev"))
        );
        assert_ne!(
            a,
            repo_id(SourceKind::Local, "https://example.org/a/b", None)
        );
    }

    #[test]
    fn survives_restart_and_recovers_interrupted_indexing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut reg = Registry::open(dir.path()).expect("open");
        let mut ready = record("/r/ready");
        ready.status = RepoStatus::Ready;
        ready.chunks = 7;
        let crashed = record("/r/crashed");
        let (ready_id, crashed_id) = (ready.id.clone(), crashed.id.clone());
        reg.upsert(ready).expect("save");
        reg.upsert(crashed).expect("save");
        drop(reg); // as if the process died mid-indexing

        let reg = Registry::open(dir.path()).expect("reopen");
        let ready = reg.get(&ready_id).expect("ready kept");
        assert_eq!((ready.status, ready.chunks), (RepoStatus::Ready, 7));
        let crashed = reg.get(&crashed_id).expect("crashed kept");
        assert_eq!(crashed.status, RepoStatus::Error);
        assert!(
            crashed
                .error
                .as_deref()
                .is_some_and(|e| e.contains("update_repository"))
        );
        // The recovery itself was persisted.
        let again = Registry::open(dir.path()).expect("reopen");
        assert_eq!(
            again.get(&crashed_id).map(|r| r.status),
            Some(RepoStatus::Error)
        );
        // No temporary files are left behind.
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn corrupt_file_is_moved_aside() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(REGISTRY_FILE), b"{not json").expect("write");
        let reg = Registry::open(dir.path()).expect("open");
        assert!(reg.list().is_empty());
        let aside = std::fs::read_dir(dir.path())
            .expect("ls")
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().contains("corrupt"));
        assert!(aside);
    }

    #[test]
    fn resolves_prefixes_and_reports_ambiguity() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut reg = Registry::open(dir.path()).expect("open");
        let err = reg.resolve("abc").expect_err("empty");
        assert!(err.to_string().contains("index_repository"), "{err}");
        // Find two sources whose ids share a first hex digit.
        let mut by_first: BTreeMap<char, Vec<RepoRecord>> = BTreeMap::new();
        for i in 0..40 {
            let r = record(&format!("/r/{i}"));
            let first = r.id.chars().next().unwrap_or('0');
            by_first.entry(first).or_default().push(r);
        }
        let pair = by_first
            .into_values()
            .find(|v| v.len() >= 2)
            .expect("pigeonhole");
        let (a, b) = (pair[0].clone(), pair[1].clone());
        reg.upsert(a.clone()).expect("save");
        reg.upsert(b.clone()).expect("save");
        assert_eq!(
            reg.resolve(&a.id).map(|r| r.id.clone()).ok(),
            Some(a.id.clone())
        );
        assert_eq!(
            reg.resolve(&a.id[..12].to_uppercase())
                .map(|r| r.id.clone())
                .ok(),
            Some(a.id.clone())
        );
        let err = reg.resolve(&a.id[..1]).expect_err("ambiguous");
        let msg = err.to_string();
        assert!(msg.contains(&a.id) && msg.contains(&b.id), "{msg}");
        let err = reg.resolve("zzzz").expect_err("unknown");
        assert!(err.to_string().contains(&a.id), "{err}");
        assert!(err.to_string().contains("list_repositories"), "{err}");
        reg.remove(&a.id).expect("remove");
        assert!(reg.get(&a.id).is_none());
    }
}
