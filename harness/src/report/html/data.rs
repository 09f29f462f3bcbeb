//! The data blocks of `index.html`, streamed from the run directories straight into
//! the page: `instances.csv` and `calls.csv` record by record (every column the file
//! has, so columns a newer navbench adds show up in the drill-down), and each agent
//! transcript line by line. Nothing is held but the current record and the list of
//! transcripts found, so memory stays bounded however large the run.
//!
//! Each block is a `<script type="application/json">`; the page's script parses the
//! rows at once and the calls and a transcript only when a drill-down opens.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::policy::Trial;
use crate::policy::agent::transcript;
use crate::record::output::TRIAL_COLUMN;
use crate::report::RunDescription;

/// Longest text kept from one CSV field or one transcript string; longer ones are cut,
/// saying how much was left out and where the whole text is.
pub const MAX_FIELD_CHARS: usize = 20_000;
/// Longest `args` / `error` kept from one call of `calls.csv`.
pub const MAX_CALL_FIELD_CHARS: usize = 4_000;

/// A writer that makes JSON safe inside `<script>`: every `<` becomes `\u003c` (a `<`
/// can only stand inside a JSON string, where the escape means the same), so no
/// `</script>` or `<!--` in the data can end the block.
pub struct ScriptSafe<W: Write>(pub W);

impl<W: Write> Write for ScriptSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut start = 0;
        for (i, b) in buf.iter().enumerate() {
            if *b == b'<' {
                self.0.write_all(&buf[start..i])?;
                self.0.write_all(b"\\u003c")?;
                start = i + 1;
            }
        }
        self.0.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// `s`, cut to `max` characters with a note naming `source` when longer.
fn cap(s: &str, max: usize, source: &str) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!(
            "{}\n… [{} more characters: see {source}]",
            &s[..at],
            s[at..].chars().count()
        ),
    }
}

/// A transcript found for a row: which file, and the row's key in the page.
pub struct TranscriptRef {
    pub path: PathBuf,
    pub instance: String,
    pub label: String,
    pub trial: Trial,
}

fn csv_error(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("cannot read {}: {e}", path.display())
}

/// Streams `file` (`instances.csv` or `calls.csv`) of every run as the block `id`:
/// a JSON array with, per run, `{"cols": header, "rows": [[field, …], …]}`, the
/// `variant` field replaced by the report's label for it. `on_row` sees each
/// record's instance, original variant and trial (to find transcripts). A run without the
/// file contributes no rows.
pub fn csv_block<W: Write>(
    w: &mut W,
    id: &str,
    runs: &[RunDescription],
    file: &str,
    field_cap: impl Fn(&str) -> usize,
    mut on_row: impl FnMut(usize, &str, &str, Trial),
) -> anyhow::Result<()> {
    write!(w, "<script type=\"application/json\" id=\"{id}\">[")?;
    for (ri, run) in runs.iter().enumerate() {
        let path = run.dir.join(file);
        if ri > 0 {
            w.write_all(b",")?;
        }
        if !path.exists() {
            w.write_all(b"{\"cols\":[],\"rows\":[]}")?;
            continue;
        }
        let mut rdr = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&path)
            .map_err(|e| csv_error(&path, e))?;
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| csv_error(&path, e))?
            .iter()
            .map(String::from)
            .collect();
        let caps: Vec<usize> = header.iter().map(|h| field_cap(h)).collect();
        let col = |name: &str| header.iter().position(|h| h == name);
        let (inst, var, trial) = (col("instance_id"), col("variant"), col(TRIAL_COLUMN));
        w.write_all(b"{\"cols\":")?;
        serde_json::to_writer(ScriptSafe(&mut *w), &header)?;
        w.write_all(b",\"rows\":[")?;
        let source = path.display().to_string();
        let mut record = csv::StringRecord::new();
        let mut first = true;
        while rdr
            .read_record(&mut record)
            .map_err(|e| csv_error(&path, e))?
        {
            let field = |i: Option<usize>| i.and_then(|i| record.get(i)).unwrap_or("");
            let (instance, variant) = (field(inst), field(var));
            let t = Trial::parse_cell(field(trial)).unwrap_or_default();
            on_row(ri, instance, variant, t);
            let label = run.labels.get(variant).map_or(variant, String::as_str);
            let fields: Vec<String> = record
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    if Some(i) == var {
                        label.to_string()
                    } else {
                        cap(f, caps.get(i).copied().unwrap_or(MAX_FIELD_CHARS), &source)
                    }
                })
                .collect();
            if !first {
                w.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(ScriptSafe(&mut *w), &fields)?;
        }
        w.write_all(b"]}")?;
    }
    w.write_all(b"]</script>\n")?;
    Ok(())
}

/// The transcript of a trial of `instance` × `variant` in run `run`, if the run
/// wrote one.
pub fn find_transcript(
    run: &RunDescription,
    instance: &str,
    variant: &str,
    trial: Trial,
) -> Option<TranscriptRef> {
    let path = run
        .dir
        .join("transcripts")
        .join(transcript::file_name(instance, variant, trial));
    path.is_file().then(|| TranscriptRef {
        path,
        instance: instance.to_string(),
        trial,
        label: run
            .labels
            .get(variant)
            .cloned()
            .unwrap_or_else(|| variant.to_string()),
    })
}

/// Cuts every string in `v` longer than [`MAX_FIELD_CHARS`].
fn cap_strings(v: &mut Value, source: &str) {
    match v {
        Value::String(s) if s.len() > MAX_FIELD_CHARS => *s = cap(s, MAX_FIELD_CHARS, source),
        Value::Array(a) => a.iter_mut().for_each(|x| cap_strings(x, source)),
        Value::Object(o) => o.values_mut().for_each(|x| cap_strings(x, source)),
        _ => {}
    }
}

/// Streams one transcript as the block `tr-<n>`: a JSON array of its lines (a line
/// that is not JSON is kept as `{"role": "unreadable", "text": …}`).
pub fn transcript_block<W: Write>(w: &mut W, n: usize, t: &TranscriptRef) -> anyhow::Result<()> {
    let file = std::fs::File::open(&t.path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", t.path.display()))?;
    let source = t.path.display().to_string();
    write!(w, "<script type=\"application/json\" id=\"tr-{n}\">[")?;
    let mut first = true;
    for line in io::BufReader::new(file).lines() {
        let line = line.map_err(|e| anyhow::anyhow!("cannot read {}: {e}", t.path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let mut v: Value = serde_json::from_str(&line).unwrap_or_else(
            |_| serde_json::json!({"role": "unreadable", "text": cap(&line, MAX_FIELD_CHARS, &source)}),
        );
        cap_strings(&mut v, &source);
        if !first {
            w.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(ScriptSafe(&mut *w), &v)?;
    }
    w.write_all(b"]</script>\n")?;
    Ok(())
}

/// The page's `#nb-meta` block.
pub fn meta_block<W: Write>(w: &mut W, meta: &Value) -> anyhow::Result<()> {
    w.write_all(b"<script type=\"application/json\" id=\"nb-meta\">")?;
    serde_json::to_writer(ScriptSafe(&mut *w), meta)?;
    w.write_all(b"</script>\n")?;
    Ok(())
}

/// The transcript ids of the page: row key (`instance \u{1} label`, and `\u{1} N`
/// for a trial N after the first, as `app.js` keys rows) → block number.
pub fn transcript_ids(found: &[TranscriptRef]) -> BTreeMap<String, usize> {
    found
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let trial = if t.trial.is_first() {
                String::new()
            } else {
                format!("\u{1}{}", t.trial)
            };
            (format!("{}\u{1}{}{trial}", t.instance, t.label), i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_safe_json_and_caps() {
        let mut out = Vec::new();
        serde_json::to_writer(
            ScriptSafe(&mut out),
            &serde_json::json!(["</script><!-- x"]),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#"["\u003c/script>\u003c!-- x"]"#);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0], "</script><!-- x");
        assert_eq!(cap("abcdé", 10, "f"), "abcdé");
        let c = cap("abcdéfgh", 5, "f.csv");
        assert!(
            c.starts_with("abcdé\n…") && c.contains("3 more characters: see f.csv"),
            "{c}"
        );
    }
}
