//! `transcripts/<instance>__<variant>.jsonl`: every message of one agent's
//! conversation, one JSON object a line, in order — the tools offered, the system and
//! task prompts, each model turn (with its usage, time and whether the cache answered
//! it), each tool result as the model read it, and how the conversation ended.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The lines of one conversation, written whole when it ends.
#[derive(Debug, Default)]
pub struct Transcript {
    lines: Vec<Value>,
}

impl Transcript {
    /// Adds one line.
    pub fn push(&mut self, line: Value) {
        self.lines.push(line);
    }

    /// The lines so far.
    pub fn lines(&self) -> &[Value] {
        &self.lines
    }

    /// Writes the transcript of `instance_id` × `variant` under `run_dir`, replacing
    /// an earlier attempt's; returns its path.
    pub fn write(
        &self,
        run_dir: &Path,
        instance_id: &str,
        variant: &str,
    ) -> anyhow::Result<PathBuf> {
        let dir = run_dir.join("transcripts");
        std::fs::create_dir_all(&dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(file_name(instance_id, variant));
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

/// `<instance>__<variant>.jsonl`, with path separators made safe.
pub fn file_name(instance_id: &str, variant: &str) -> String {
    let safe = |s: &str| s.replace(['/', '\\'], "_");
    format!("{}__{}.jsonl", safe(instance_id), safe(variant))
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
        let p = t.write(dir.path(), "o/r-1", "text").unwrap();
        assert_eq!(p.file_name().unwrap(), "o_r-1__text.jsonl");
        let mut again = Transcript::default();
        again.push(json!({"role": "system", "n": 2}));
        again.write(dir.path(), "o/r-1", "text").unwrap();
        let text = std::fs::read_to_string(p).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("\"n\":2"), "{text}");
    }
}
