//! `navbench merge RUN_DIR... --out DIR`: combines the shards of one run (made with
//! `navbench run --shard I/N`) into a single run directory that `report` and `compare`
//! treat like an unsharded run.
//!
//! Refuses, naming what differs: runs without `run.json`; runs of different datasets
//! (name or content fingerprint), variants, tokenizers, timeouts, instance selections,
//! shard counts or navbench versions; runs played by different agents (or some by an
//! agent, some by the scripted policies); a shard given twice; an instance × variant
//! present in more than one run; missing shards (unless `allow_partial`); an `--out`
//! that already holds files. Rows are copied verbatim (the agent columns with them),
//! an agent's transcripts too; `summary.csv` is recomputed; `run.json` keeps the agent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::record::output::{
    self, CALL_HEADER, RunInfo, instance_header, read_info, read_instance_rows,
};

/// Why shards were not merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct MergeRefusal(pub String);

fn refuse<T>(msg: String) -> Result<T, MergeRefusal> {
    Err(MergeRefusal(msg))
}

/// What a merge produced.
#[derive(Debug, Clone)]
pub struct Merged {
    pub info: RunInfo,
    pub instance_rows: usize,
    pub call_rows: usize,
    pub summaries: Vec<output::VariantSummary>,
}

/// The settings that must agree across shards, as (name, value) for messages.
fn settings(info: &RunInfo) -> Vec<(&'static str, String)> {
    vec![
        ("dataset", info.dataset.clone()),
        ("dataset fingerprint", info.dataset_fingerprint.clone()),
        ("variants", info.variants.join(",")),
        ("tokenizer", info.tokenizer.clone()),
        (
            "timeout",
            info.timeout_secs
                .map(|t| format!("{t}s"))
                .unwrap_or_default(),
        ),
        ("--instances", info.instance_filter.join(",")),
        (
            "--limit",
            info.limit.map(|l| l.to_string()).unwrap_or_default(),
        ),
        (
            "shard count",
            info.shard.map(|s| s.count.to_string()).unwrap_or_default(),
        ),
        ("navbench version", info.navbench_version.clone()),
        ("--repeats", info.repeats().to_string()),
    ]
}

/// Who played a shard, with the agent's settings (two agents of one name may differ).
fn describe_agent(info: &RunInfo) -> String {
    match &info.agent {
        Some(a) => format!(
            "{} (temperature {}, seed {:?}, max_turns {}, token_budget {}, max_completion_tokens {}, max_tool_result_tokens {})",
            crate::report::agent::describe(Some(a)),
            a.temperature
                .map_or("the endpoint's default".to_string(), |t| t.to_string()),
            a.seed,
            a.max_turns,
            a.token_budget,
            a.max_completion_tokens,
            a.max_tool_result_tokens
        ),
        None => crate::report::agent::describe(None),
    }
}

/// Copies every shard's `transcripts/` (an agent's conversations; the pairs are
/// disjoint, so are the file names) into `out/transcripts/`.
fn copy_transcripts(dirs: &[PathBuf], out: &Path) -> Result<(), MergeRefusal> {
    for d in dirs {
        let from = d.join("transcripts");
        if !from.is_dir() {
            continue;
        }
        let to = out.join("transcripts");
        let io = |e: std::io::Error, p: &Path| {
            MergeRefusal(format!(
                "cannot copy the transcripts of {}: {}: {e}",
                d.display(),
                p.display()
            ))
        };
        std::fs::create_dir_all(&to).map_err(|e| io(e, &to))?;
        for entry in std::fs::read_dir(&from).map_err(|e| io(e, &from))? {
            let entry = entry.map_err(|e| io(e, &from))?;
            let path = entry.path();
            if path.extension().is_some_and(|x| x == "jsonl") {
                std::fs::copy(&path, to.join(entry.file_name())).map_err(|e| io(e, &path))?;
            }
        }
    }
    Ok(())
}

/// Reads a CSV as (header, records), keeping every field as written.
fn read_raw(path: &Path) -> Result<(Vec<String>, Vec<csv::StringRecord>), MergeRefusal> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| MergeRefusal(format!("cannot read {}: {e}", path.display())))?;
    let header = rdr
        .headers()
        .map_err(|e| MergeRefusal(format!("cannot read {}: {e}", path.display())))?
        .iter()
        .map(String::from)
        .collect();
    let mut records = Vec::new();
    for (i, r) in rdr.records().enumerate() {
        records.push(
            r.map_err(|e| MergeRefusal(format!("{} record {}: {e}", path.display(), i + 1)))?,
        );
    }
    Ok((header, records))
}

/// Merges `dirs` into `out`.
pub fn merge(dirs: &[PathBuf], out: &Path, allow_partial: bool) -> Result<Merged, MergeRefusal> {
    if dirs.len() < 2 {
        return refuse("merge needs two or more run directories (the shards of one run)".into());
    }
    if out.exists()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return refuse(format!(
            "--out {} already exists and is not empty: merge into a new directory",
            out.display()
        ));
    }
    let infos = read_shard_infos(dirs, allow_partial)?;
    let rows = collect_rows(dirs)?;
    write_merged(out, dirs, &infos, &rows)
}

/// Reads every shard's `run.json` and checks they are the shards of one run: same
/// settings, each shard index once, all present unless `allow_partial`.
fn read_shard_infos(dirs: &[PathBuf], allow_partial: bool) -> Result<Vec<RunInfo>, MergeRefusal> {
    let mut infos = Vec::new();
    for d in dirs {
        let info = read_info(d)
            .map_err(|e| MergeRefusal(format!("{e:#}")))?
            .ok_or_else(|| {
                MergeRefusal(format!(
                    "{} has no run.json: cannot check its settings (is it a navbench run directory?)",
                    d.display()
                ))
            })?;
        infos.push(info);
    }
    let first = &infos[0];
    for (d, info) in dirs.iter().zip(&infos).skip(1) {
        if info.agent != first.agent {
            return refuse(format!(
                "shards of different agents: {} was played by {}, {} by {}; only shards of one run merge (run every shard with the same --agent file)",
                dirs[0].display(),
                describe_agent(first),
                d.display(),
                describe_agent(info)
            ));
        }
        for ((name, a), (_, b)) in settings(first).into_iter().zip(settings(info)) {
            if a != b {
                return refuse(format!(
                    "mismatched settings: {name} is '{a}' in {} but '{b}' in {}; only shards of one run merge",
                    dirs[0].display(),
                    d.display()
                ));
            }
        }
    }
    // Shards: each index once; all present unless allowed otherwise.
    let mut by_index: BTreeMap<usize, &PathBuf> = BTreeMap::new();
    let mut count = None;
    for (d, info) in dirs.iter().zip(&infos) {
        if let Some(s) = info.shard {
            count = Some(s.count);
            if let Some(prev) = by_index.insert(s.index, d) {
                return refuse(format!(
                    "shard {s} is given twice: {} and {}",
                    prev.display(),
                    d.display()
                ));
            }
        }
    }
    if let Some(n) = count {
        let missing: Vec<String> = (1..=n)
            .filter(|i| !by_index.contains_key(i))
            .map(|i| format!("{i}/{n}"))
            .collect();
        if !missing.is_empty() && !allow_partial {
            return refuse(format!(
                "missing shard(s) {}: merge all {n}, or pass --allow-partial to merge what is there",
                missing.join(", ")
            ));
        }
    }
    Ok(infos)
}

/// The rows of the merged run, copied verbatim.
struct MergedRows {
    instance_header: Vec<String>,
    instances: Vec<csv::StringRecord>,
    calls: Vec<csv::StringRecord>,
}

/// Rows: copied verbatim, last row of a retried pair wins, no pair in two runs.
fn collect_rows(dirs: &[PathBuf]) -> Result<MergedRows, MergeRefusal> {
    let want_header = instance_header();
    let trial_col = want_header.iter().position(|h| h == output::TRIAL_COLUMN);
    let mut owner: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut instance_records: Vec<csv::StringRecord> = Vec::new();
    let mut call_records: Vec<csv::StringRecord> = Vec::new();
    for (k, d) in dirs.iter().enumerate() {
        let inst_path = d.join("instances.csv");
        let (header, records) = read_raw(&inst_path)?;
        if header != want_header {
            return refuse(format!(
                "{} has different columns from this navbench's instances.csv; re-run it with the same navbench",
                inst_path.display()
            ));
        }
        let mut last: BTreeMap<(String, String, String), csv::StringRecord> = BTreeMap::new();
        let mut order: Vec<(String, String, String)> = Vec::new();
        for r in records {
            let key = (
                r.get(0).unwrap_or("").to_string(),
                r.get(2).unwrap_or("").to_string(),
                trial_col.and_then(|c| r.get(c)).unwrap_or("").to_string(),
            );
            if last.insert(key.clone(), r).is_none() {
                order.push(key);
            }
        }
        for key in order {
            if let Some(prev) = owner.insert(key.clone(), k) {
                return refuse(format!(
                    "overlapping runs: instance {} × variant {} (trial {}) is in both {} and {}; shards must be disjoint",
                    key.0,
                    key.1,
                    key.2,
                    dirs[prev].display(),
                    d.display()
                ));
            }
            if let Some(r) = last.remove(&key) {
                instance_records.push(r);
            }
        }
        let calls_path = d.join("calls.csv");
        if calls_path.exists() {
            let (header, records) = read_raw(&calls_path)?;
            if header != CALL_HEADER {
                return refuse(format!(
                    "{} has different columns from this navbench's calls.csv",
                    calls_path.display()
                ));
            }
            call_records.extend(records);
        }
    }
    Ok(MergedRows {
        instance_header: want_header,
        instances: instance_records,
        calls: call_records,
    })
}

/// Writes the merged run: both CSVs, `skipped.csv`, a fresh summary and `run.json`.
fn write_merged(
    out: &Path,
    dirs: &[PathBuf],
    infos: &[RunInfo],
    rows: &MergedRows,
) -> Result<Merged, MergeRefusal> {
    let first = &infos[0];
    let (want_header, instance_records, call_records) =
        (&rows.instance_header, &rows.instances, &rows.calls);
    let io = |e: std::io::Error| MergeRefusal(format!("cannot write to {}: {e}", out.display()));
    let csv_err = |e: csv::Error| MergeRefusal(format!("cannot write to {}: {e}", out.display()));
    std::fs::create_dir_all(out).map_err(io)?;
    let mut w = csv::Writer::from_path(out.join("instances.csv")).map_err(csv_err)?;
    w.write_record(want_header).map_err(csv_err)?;
    for r in instance_records {
        w.write_record(r).map_err(csv_err)?;
    }
    w.flush().map_err(io)?;
    let mut w = csv::Writer::from_path(out.join("calls.csv")).map_err(csv_err)?;
    w.write_record(CALL_HEADER).map_err(csv_err)?;
    for r in call_records {
        w.write_record(r).map_err(csv_err)?;
    }
    w.flush().map_err(io)?;
    if let Some(skipped) = dirs
        .iter()
        .map(|d| d.join("skipped.csv"))
        .find(|p| p.exists())
    {
        std::fs::copy(&skipped, out.join("skipped.csv")).map_err(io)?;
    }
    copy_transcripts(dirs, out)?;
    let rows = read_instance_rows(&out.join("instances.csv"))
        .map_err(|e| MergeRefusal(format!("{e:#}")))?;
    let summaries = output::summarize(&rows, &first.variants);
    output::write_summary(&out.join("summary.csv"), &summaries)
        .map_err(|e| MergeRefusal(format!("{e:#}")))?;
    let started = infos
        .iter()
        .map(|i| i.started.clone())
        .filter(|s| !s.is_empty())
        .min()
        .unwrap_or_default();
    let merged_from = dirs
        .iter()
        .zip(infos)
        .map(|(d, i)| match i.shard {
            Some(s) => format!("{} (shard {s})", d.display()),
            None => d.display().to_string(),
        })
        .collect();
    let info = RunInfo {
        started,
        shard: None,
        merged_from,
        ..first.clone()
    };
    let json = serde_json::to_string_pretty(&info)
        .map_err(|e| MergeRefusal(format!("cannot write run.json: {e}")))?;
    std::fs::write(out.join("run.json"), json).map_err(io)?;
    Ok(Merged {
        info,
        instance_rows: instance_records.len(),
        call_rows: call_records.len(),
        summaries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::output::{InstanceRow, RunOutput, STATUS_OK, metric_columns};
    use crate::run::shard::Shard;

    fn shard_run(dir: &Path, shard: Option<Shard>, ids: &[&str]) {
        let out = RunOutput::open(dir).unwrap();
        out.write_info(&RunInfo {
            dataset: "mini".into(),
            variants: vec!["text".into()],
            tokenizer: "cl100k_base".into(),
            started: "2025-01-02T00:00:00Z".into(),
            navbench_version: "0.1.0".into(),
            dataset_fingerprint: "fnv1a64:abc".into(),
            shard,
            timeout_secs: Some(120.0),
            ..RunInfo::default()
        })
        .unwrap();
        for id in ids {
            out.write_instance(&InstanceRow {
                instance_id: id.to_string(),
                repo: "o/r".into(),
                variant: "text".into(),
                status: STATUS_OK.into(),
                metrics: vec![1.0; metric_columns().len()],
                n_calls: 2,
                ..InstanceRow::default()
            })
            .unwrap();
        }
    }

    fn agent(name: &str) -> crate::policy::agent::config::AgentInfo {
        crate::policy::agent::config::AgentInfo {
            name: name.into(),
            model: "smollm2".into(),
            base_url: "http://127.0.0.1:8080/v1".into(),
            temperature: Some(0.0),
            seed: Some(0),
            max_turns: 20,
            token_budget: 200_000,
            max_completion_tokens: 1024,
            max_tool_result_tokens: 4000,
            provider: String::new(),
            extra_body: Default::default(),
        }
    }

    /// `shard_run` as played by `who`: run.json names it, rows carry model figures and
    /// each pair has a transcript.
    fn agent_shard(dir: &Path, shard: Option<Shard>, ids: &[&str], who: &str) {
        use crate::policy::agent::{AgentStats, StopReason};
        shard_run(dir, shard, &[]);
        let mut info = read_info(dir).unwrap().unwrap();
        info.agent = Some(agent(who));
        let out = RunOutput::open(dir).unwrap();
        out.write_info(&info).unwrap();
        for id in ids {
            out.write_instance(&InstanceRow {
                instance_id: id.to_string(),
                repo: "o/r".into(),
                variant: "text".into(),
                status: STATUS_OK.into(),
                metrics: vec![1.0; metric_columns().len()],
                n_calls: 2,
                agent: Some(AgentStats {
                    llm_turns: 3,
                    prompt_tokens: 1000,
                    completion_tokens: 50,
                    llm_ms: 700.0,
                    stop_reason: StopReason::Answered,
                    ..AgentStats::default()
                }),
                ..InstanceRow::default()
            })
            .unwrap();
            let mut t = crate::policy::agent::transcript::Transcript::default();
            t.push(serde_json::json!({"role": "user", "content": id}));
            t.write(dir, id, "text", crate::policy::Trial::FIRST)
                .unwrap();
        }
    }

    #[test]
    fn keeps_an_agents_columns_run_json_and_transcripts() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        agent_shard(&a, s(1, 2), &["i1"], "llama");
        agent_shard(&b, s(2, 2), &["i2"], "llama");
        let out = t.path().join("m");
        let m = merge(&[a, b], &out, false).unwrap();
        assert_eq!(m.info.agent, Some(agent("llama")));
        assert_eq!(
            read_info(&out).unwrap().unwrap().agent,
            Some(agent("llama"))
        );
        let rows = read_instance_rows(&out.join("instances.csv")).unwrap();
        assert!(
            rows.iter()
                .all(|r| r.agent.as_ref().is_some_and(|a| a.prompt_tokens == 1000))
        );
        assert_eq!(m.summaries[0].mean_llm_turns, 3.0);
        for id in ["i1", "i2"] {
            assert!(
                out.join("transcripts")
                    .join(format!("{id}__text.jsonl"))
                    .is_file()
            );
        }
    }

    #[test]
    fn refuses_shards_of_different_agents() {
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n);
        agent_shard(&p("a"), s(1, 2), &["i1"], "llama");
        agent_shard(&p("b"), s(2, 2), &["i2"], "gpt");
        let e = merge(&[p("a"), p("b")], &p("o1"), false).unwrap_err();
        assert!(
            e.0.contains("shards of different agents")
                && e.0.contains("agent llama (model smollm2")
                && e.0.contains("agent gpt (model smollm2"),
            "{e}"
        );
        shard_run(&p("c"), s(2, 2), &["i2"]);
        let e = merge(&[p("a"), p("c")], &p("o2"), false).unwrap_err();
        assert!(e.0.contains("by scripted policies"), "{e}");
        assert!(!p("o1").exists() && !p("o2").exists());
    }

    fn s(i: usize, n: usize) -> Option<Shard> {
        Some(Shard { index: i, count: n })
    }

    #[test]
    fn merges_shards_into_one_run() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        shard_run(&a, s(1, 2), &["i1", "i3"]);
        shard_run(&b, s(2, 2), &["i2"]);
        let out = t.path().join("m");
        let m = merge(&[a, b], &out, false).unwrap();
        assert_eq!(m.instance_rows, 3);
        assert_eq!(m.summaries[0].n_scored, 3);
        let info = read_info(&out).unwrap().unwrap();
        assert_eq!(info.shard, None);
        assert_eq!(info.dataset_fingerprint, "fnv1a64:abc");
        assert_eq!(info.merged_from.len(), 2);
        assert!(info.merged_from[0].ends_with("(shard 1/2)"));
        let rows = read_instance_rows(&out.join("instances.csv")).unwrap();
        let ids: Vec<&str> = rows.iter().map(|r| r.instance_id.as_str()).collect();
        assert_eq!(ids, ["i1", "i3", "i2"]);
        // Merging into the same (now non-empty) directory again is refused.
        let e = merge(&[t.path().join("a"), t.path().join("b")], &out, false).unwrap_err();
        assert!(e.0.contains("not empty"), "{e}");
    }

    #[test]
    fn refuses_overlaps_duplicates_mismatches_and_gaps() {
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n);
        shard_run(&p("a"), s(1, 3), &["i1"]);
        shard_run(&p("b"), s(2, 3), &["i1", "i2"]);
        shard_run(&p("c"), s(3, 3), &["i3"]);
        let e = merge(&[p("a"), p("b"), p("c")], &p("o1"), false).unwrap_err();
        assert!(e.0.contains("overlapping") && e.0.contains("i1"), "{e}");

        let e = merge(&[p("a"), p("a")], &p("o2"), false).unwrap_err();
        assert!(e.0.contains("shard 1/3 is given twice"), "{e}");

        let e = merge(&[p("a"), p("c")], &p("o3"), false).unwrap_err();
        assert!(
            e.0.contains("missing shard(s) 2/3") && e.0.contains("--allow-partial"),
            "{e}"
        );
        assert!(merge(&[p("a"), p("c")], &p("o4"), true).is_ok());

        shard_run(&p("d"), s(2, 4), &["i9"]);
        let e = merge(&[p("a"), p("d")], &p("o5"), false).unwrap_err();
        assert!(
            e.0.contains("shard count") && e.0.contains("mismatched"),
            "{e}"
        );

        shard_run(&p("e"), s(2, 3), &["i2"]);
        let mut info = read_info(&p("e")).unwrap().unwrap();
        info.tokenizer = "o200k_base".into();
        std::fs::write(
            p("e").join("run.json"),
            serde_json::to_string(&info).unwrap(),
        )
        .unwrap();
        let e = merge(&[p("a"), p("e")], &p("o6"), false).unwrap_err();
        assert!(
            e.0.contains("tokenizer is 'cl100k_base'") && e.0.contains("'o200k_base'"),
            "{e}"
        );

        std::fs::create_dir_all(p("bare")).unwrap();
        let e = merge(&[p("a"), p("bare")], &p("o7"), false).unwrap_err();
        assert!(e.0.contains("no run.json"), "{e}");
        let e = merge(&[p("a")], &p("o8"), false).unwrap_err();
        assert!(e.0.contains("two or more"), "{e}");
    }
}
