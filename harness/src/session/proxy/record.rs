//! `calls.csv` written as the calls happen, for the standalone `navbench proxy`: the
//! run's format ([`CALL_HEADER`]: instance_id, variant, step, tool, args, latency_ms,
//! response_bytes, response_tokens, is_error, error), one row per call, each flushed
//! and synced when written, so an agent session killed at any moment leaves every
//! finished call on disk. `navbench report` and a spreadsheet read it like a run's.
//!
//! A file that exists is appended to (a header is written only to a new or empty
//! file); one whose header is not [`CALL_HEADER`] is refused rather than mixed with,
//! except a file written before the `trial` column, which takes rows without it. The
//! proxy plays no trials: its rows are trial 1.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::policy::CallRecord;
use crate::record::output::CALL_HEADER;

/// `DIR/calls.csv`, open for appending.
#[derive(Debug)]
pub struct CallsFile {
    path: PathBuf,
    file: Mutex<File>,
    instance_id: String,
    variant: String,
    /// The file's header has the `trial` column (the file is not older than it).
    with_trial: bool,
}

impl CallsFile {
    /// Opens (creating) `dir/calls.csv`; rows carry `instance_id` and `variant`.
    pub fn open(dir: &Path, instance_id: &str, variant: &str) -> anyhow::Result<CallsFile> {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create {}: {e}; pass a writable --record directory",
                dir.display()
            )
        })?;
        let path = dir.join("calls.csv");
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| anyhow::anyhow!("cannot open {} for appending: {e}", path.display()))?;
        let mut first = String::new();
        file.read_to_string(&mut first)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let header = CALL_HEADER.join(",");
        let before_trials = CALL_HEADER[..CALL_HEADER.len() - 1].join(",");
        let mut with_trial = true;
        match first.lines().next() {
            Some(h) if h == before_trials => with_trial = false,
            None => {
                file.write_all(format!("{header}\n").as_bytes())
                    .and_then(|()| file.sync_data())
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            }
            Some(h) if h == header => {}
            Some(h) => anyhow::bail!(
                "{} starts with '{h}', not a navbench calls.csv header ({header}); pass another --record directory",
                path.display()
            ),
        }
        Ok(CallsFile {
            path,
            file: Mutex::new(file),
            instance_id: instance_id.to_string(),
            variant: variant.to_string(),
            with_trial,
        })
    }

    /// Where the rows go.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one call's row, flushed and synced.
    pub fn append(&self, c: &CallRecord) -> anyhow::Result<()> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut row = crate::record::output::call_cells(&self.instance_id, &self.variant, c);
        if self.with_trial {
            row.push(crate::policy::Trial::FIRST.to_string());
        }
        w.write_record(&row)?;
        let bytes = w
            .into_inner()
            .map_err(|e| anyhow::anyhow!("cannot encode a calls.csv row: {e}"))?;
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(&bytes)
            .and_then(|()| f.sync_data())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(step: usize, tool: &str) -> CallRecord {
        CallRecord {
            step,
            tool: tool.into(),
            args: r#"{"pattern":"a,b"}"#.into(),
            latency_ms: 1.5,
            response_bytes: 10,
            response_tokens: 3,
            is_error: false,
            error: String::new(),
        }
    }

    #[test]
    fn rows_are_appended_under_one_header_and_foreign_files_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = CallsFile::open(dir.path(), "s1", "text").unwrap();
        f.append(&record(1, "grep")).unwrap();
        drop(f);
        let f = CallsFile::open(dir.path(), "s2", "text").unwrap();
        f.append(&record(1, "read_file")).unwrap();
        let rows: Vec<csv::StringRecord> = csv::Reader::from_path(f.path())
            .unwrap()
            .records()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(&rows[0][0], "s1");
        assert_eq!(&rows[0][4], r#"{"pattern":"a,b"}"#);
        assert_eq!(&rows[1][3], "read_file");

        assert_eq!(&rows[1][10], "1");
        // A file written before the trial column takes rows without it.
        let old = tempfile::tempdir().unwrap();
        let old_header = CALL_HEADER[..10].join(",");
        std::fs::write(old.path().join("calls.csv"), format!("{old_header}\n")).unwrap();
        let f = CallsFile::open(old.path(), "s3", "text").unwrap();
        f.append(&record(1, "grep")).unwrap();
        let text = std::fs::read_to_string(f.path()).unwrap();
        assert_eq!(text.lines().nth(1).unwrap().rsplit(',').next(), Some(""));

        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("calls.csv"), "a,b\n1,2\n").unwrap();
        let err = CallsFile::open(other.path(), "s", "text").unwrap_err();
        assert!(
            err.to_string().contains("not a navbench calls.csv header"),
            "{err}"
        );
    }
}
