//! `transcripts/<instance>__<variant>.jsonl` (later trials of `--repeats`:
//! `<instance>__<variant>__trial<N>.jsonl`): every message of one agent's
//! conversation, one JSON object a line, in order — the tools offered, the system and
//! task prompts, each model turn (with its usage, time and whether the cache answered
//! it), each tool call with its result as the model read it and its latency, and how
//! the conversation ended.
//!
//! Durable: a transcript opened on a run directory ([`Transcript::create`]) appends
//! each line as it happens and syncs it to disk, so a pair killed mid-conversation
//! (SIGKILL, a lost machine) keeps every turn and call it spent, tokens and times
//! included. A retried pair's earlier transcript is kept, not overwritten, under
//! `transcripts/attempts/<instance>__<variant>.<n>.jsonl`.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::policy::Trial;

/// The lines of one conversation, kept in memory and, when opened on a run
/// directory, appended to its file as they come.
#[derive(Debug, Default)]
pub struct Transcript {
    lines: Vec<Value>,
    /// The file each line is appended to, and its path.
    file: Option<(File, PathBuf)>,
}

impl Transcript {
    /// A transcript of `instance_id` × `variant` appended to its file under
    /// `transcripts_dir` (see the module doc). An earlier attempt's file is moved to
    /// `attempts/` first.
    pub fn create(
        transcripts_dir: &Path,
        instance_id: &str,
        variant: &str,
        trial: Trial,
    ) -> anyhow::Result<Transcript> {
        let name = file_name(instance_id, variant, trial);
        let path = transcripts_dir.join(&name);
        std::fs::create_dir_all(transcripts_dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", transcripts_dir.display()))?;
        if path.exists() {
            keep_attempt(transcripts_dir, &name, &path)?;
        }
        let file = File::create(&path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        Ok(Transcript {
            lines: Vec::new(),
            file: Some((file, path)),
        })
    }

    /// Adds one line (appended and synced when the transcript has a file; a failed
    /// write is logged once and the file dropped, the conversation goes on).
    pub fn push(&mut self, line: Value) {
        if let Some((file, path)) = &mut self.file {
            let written = serde_json::to_string(&line)
                .map_err(std::io::Error::other)
                .and_then(|mut text| {
                    text.push('\n');
                    file.write_all(text.as_bytes())?;
                    file.sync_data()
                });
            if let Err(e) = written {
                tracing::warn!("cannot append to the transcript {}: {e}", path.display());
                self.file = None;
            }
        }
        self.lines.push(line);
    }

    /// The lines so far.
    pub fn lines(&self) -> &[Value] {
        &self.lines
    }

    /// Writes the transcript of `instance_id` × `variant` under `run_dir`, replacing
    /// an earlier attempt's; returns its path. A transcript made by
    /// [`Transcript::create`] is already on disk, line by line: its path is returned.
    pub fn write(
        &self,
        run_dir: &Path,
        instance_id: &str,
        variant: &str,
        trial: Trial,
    ) -> anyhow::Result<PathBuf> {
        if let Some((_, path)) = &self.file {
            return Ok(path.clone());
        }
        let dir = run_dir.join("transcripts");
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(file_name(instance_id, variant, trial));
        let mut text = String::new();
        for l in &self.lines {
            text.push_str(&serde_json::to_string(l)?);
            text.push('\n');
        }
        let tmp = path.with_extension("jsonl.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }
}

/// Moves an earlier attempt's transcript to `attempts/<stem>.<n>.jsonl`, `n` the
/// first number free.
fn keep_attempt(dir: &Path, name: &str, path: &Path) -> anyhow::Result<()> {
    let attempts = dir.join("attempts");
    std::fs::create_dir_all(&attempts)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", attempts.display()))?;
    let stem = name.trim_end_matches(".jsonl");
    let to = (1..)
        .map(|n| attempts.join(format!("{stem}.{n}.jsonl")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| attempts.join(name));
    std::fs::rename(path, &to).map_err(|e| {
        anyhow::anyhow!(
            "cannot move the earlier transcript {} to {}: {e}",
            path.display(),
            to.display()
        )
    })
}

/// `<instance>__<variant>.jsonl` (trial 1) or `<instance>__<variant>__trial<N>.jsonl`,
/// with path separators made safe.
pub fn file_name(instance_id: &str, variant: &str, trial: Trial) -> String {
    let safe = |s: &str| s.replace(['/', '\\'], "_");
    format!(
        "{}__{}{}.jsonl",
        safe(instance_id),
        safe(variant),
        trial.name_suffix()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_are_written_in_order_and_replace_an_earlier_attempt() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Transcript::default();
        t.push(json!({"role": "system"}));
        t.push(json!({"role": "user"}));
        let p = t.write(dir.path(), "o/r-1", "text", Trial::FIRST).unwrap();
        assert_eq!(p.file_name().unwrap(), "o_r-1__text.jsonl");
        let mut again = Transcript::default();
        again.push(json!({"role": "system", "n": 2}));
        again
            .write(dir.path(), "o/r-1", "text", Trial::FIRST)
            .unwrap();
        let text = std::fs::read_to_string(p).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("\"n\":2"), "{text}");
    }

    #[test]
    fn each_line_is_on_disk_as_it_is_pushed_and_attempts_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tdir = dir.path().join("transcripts");
        let mut t = Transcript::create(&tdir, "o/r-1", "text", Trial::FIRST).unwrap();
        t.push(json!({"role": "system"}));
        t.push(json!({"role": "assistant", "turn": 1}));
        let path = tdir.join("o_r-1__text.jsonl");
        // Read before the transcript ends, as after a kill.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(
            t.write(dir.path(), "o/r-1", "text", Trial::FIRST).unwrap(),
            path
        );
        drop(t);
        // The retry keeps the killed attempt's lines.
        let mut retry = Transcript::create(&tdir, "o/r-1", "text", Trial::FIRST).unwrap();
        retry.push(json!({"role": "system", "retry": true}));
        let kept = std::fs::read_to_string(tdir.join("attempts/o_r-1__text.1.jsonl")).unwrap();
        assert_eq!(kept, text);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
        Transcript::create(&tdir, "o/r-1", "text", Trial::FIRST).unwrap();
        assert!(tdir.join("attempts/o_r-1__text.2.jsonl").exists());
        // A later trial is a file of its own, leaving the first trial's alone.
        let second = Trial::new(2).unwrap();
        Transcript::create(&tdir, "o/r-1", "text", second).unwrap();
        assert!(tdir.join("o_r-1__text__trial2.jsonl").exists());
        assert!(!tdir.join("attempts/o_r-1__text.3.jsonl").exists());
    }
}
