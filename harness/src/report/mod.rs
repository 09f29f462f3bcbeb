//! `navbench report RUN_DIR... [--out DIR]`: statistics over one or more runs.
//!
//! Runs are read by [`crate::record::run_dir`]: only identity, status, metric and cost columns
//! of `instances.csv`, and only variant, tool and latency of `calls.csv`, streamed into
//! per-(variant, tool) latency lists for the quantiles (the calls are never held as
//! rows). The statistics ([`crate::report::stats`]) are plain Rust: per variant,
//! every accuracy metric with a 95% bootstrap interval (fixed seed: a report made twice
//! is identical) and the costs; per repository; and paired comparisons between
//! variants on the instances both scored (paired bootstrap of the Acc@k difference and
//! an exact McNemar test). [`tables`] writes `report.md` and `report.csv`, [`plots`] the
//! PNG and SVG figures, [`html`] `index.html` (the summary, the plots inlined, and a
//! drill-down per instance, streamed from the run directories' CSVs and transcripts).
//!
//! Runs of `navbench run --repeats K` are read one row per instance × variant, the
//! mean over its trials, so every table and paired test counts an instance once;
//! [`trials`] adds the figures over trials (means with t intervals, found in any / all
//! trials).
//!
//! For runs of an LLM agent (`navbench run --agent`), [`agent`] adds what the model
//! cost per variant and, when one agent played every run, each variant against `text`
//! on the instances both scored ("Does the tool help the agent?", from [`paired`]);
//! for any agent's runs (`--agent-cmd` too), [`answers`] shows how many answer lines
//! each variant had read and dropped.
//!
//! Runs of several datasets get a table of each variant beside the untuned `bm25`
//! ([`difficulty`]): `bm25`'s drop from one dataset to another is the datasets'
//! difficulty, a variant's drop beyond it is fitting.
//!
//! Several runs combine: shards of one run simply add up. When the same instance ×
//! variant appears in more than one run (say, `text` before and after a change), each
//! run's rows of that variant are kept apart as `variant@run-dir-name`, so the paired
//! comparisons set them against each other.

pub mod agent;
pub mod answers;
pub mod compare;
pub mod difficulty;
pub mod html;
pub mod markdown;
pub mod merge;
pub mod paired;
pub mod plots;
pub mod stats;
pub mod tables;
pub mod trials;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::policy::agent::config::AgentInfo;
use crate::record::run_dir::{self, ResultRow, Run};
use crate::report::stats::Bootstrap;
use agent::AgentScope;

/// Latency quantiles of one variant's calls (one tool, or every tool when `tool` is
/// `*`).
#[derive(Debug, Clone, PartialEq)]
pub struct CallLatency {
    pub variant: String,
    pub tool: String,
    pub n: usize,
    pub mean: f64,
    pub p05: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p95: f64,
    pub max: f64,
}

/// One run as the report describes it.
#[derive(Debug, Clone)]
pub struct RunDescription {
    pub dir: PathBuf,
    pub dataset: String,
    pub started: String,
    pub shard: String,
    pub rows: usize,
    /// The agent that played it (`run.json`); `None`: scripted policies.
    pub agent: Option<AgentInfo>,
    /// Each of its variants' label in the report (`variant`, or `variant@run` when
    /// the variant's instances are in more than one run).
    pub labels: BTreeMap<String, String>,
}

/// Everything a report is computed from.
#[derive(Debug, Clone)]
pub struct ReportData {
    pub runs: Vec<RunDescription>,
    /// Variant labels in report order.
    pub variants: Vec<String>,
    /// Every run's rows, `variant` replaced by its label: one per instance × variant,
    /// the mean over its trials ([`run_dir::per_instance_means`]).
    pub rows: Vec<ResultRow>,
    /// Every trial's row, labelled as `rows` ([`trials`]; the same rows as `rows`
    /// when no pair was played more than once).
    pub trials: Vec<ResultRow>,
    /// Per variant and tool.
    pub tool_latency: Vec<CallLatency>,
    /// Per variant, every tool together (`tool` = `*`).
    pub variant_latency: Vec<CallLatency>,
    pub bootstrap: Bootstrap,
    /// Who played the runs.
    pub agent: AgentScope,
    /// File Acc@5 and function Acc@10 per dataset and variant, for the table beside
    /// `bm25` ([`difficulty`]).
    pub by_dataset: difficulty::ByDataset,
}

/// The files a report wrote.
#[derive(Debug, Clone)]
pub struct ReportFiles {
    pub markdown: PathBuf,
    pub csv: PathBuf,
    pub plots: Vec<PathBuf>,
    /// `index.html`: the whole report, with a drill-down per instance.
    pub html: PathBuf,
}

/// Labels each (run, variant): the variant's name, or `variant@run` when the variant has
/// an instance in more than one run.
fn label_variants(runs: &[Run]) -> BTreeMap<(usize, String), String> {
    let mut seen: BTreeMap<(&str, &str), BTreeSet<usize>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for r in &run.rows {
            seen.entry((r.variant.as_str(), r.instance_id.as_str()))
                .or_default()
                .insert(i);
        }
    }
    let split: BTreeSet<&str> = seen
        .iter()
        .filter(|(_, runs)| runs.len() > 1)
        .map(|((v, _), _)| *v)
        .collect();
    // Run names for labels, made unique when two directories share a name.
    let mut names: Vec<String> = Vec::new();
    for run in runs {
        let mut name = run.label.clone();
        let mut k = 2;
        while names.contains(&name) {
            name = format!("{}#{k}", run.label);
            k += 1;
        }
        names.push(name);
    }
    let mut labels = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for r in &run.rows {
            let label = if split.contains(r.variant.as_str()) {
                format!("{}@{}", r.variant, names[i])
            } else {
                r.variant.clone()
            };
            labels.insert((i, r.variant.clone()), label);
        }
    }
    labels
}

/// Per-(label, tool) and per-label latency quantiles of every run's calls, sorted by
/// label and tool. Calls of a variant no instance row names have no label and are left
/// out; calls without a latency count in no figure (a group of only those has `n` 0
/// and NaN figures).
fn call_latency(
    runs: &[Run],
    labels: &BTreeMap<(usize, String), String>,
) -> anyhow::Result<(Vec<CallLatency>, Vec<CallLatency>)> {
    let mut per_tool: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut per_label: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        run_dir::for_each_call(&run.dir, |call| {
            let Some(label) = labels.get(&(i, call.variant)) else {
                return;
            };
            let tool = per_tool.entry((label.clone(), call.tool)).or_default();
            let all = per_label.entry(label.clone()).or_default();
            if let Some(ms) = call.latency_ms {
                tool.push(ms);
                all.push(ms);
            }
        })?;
    }
    let tools = per_tool
        .into_iter()
        .map(|((label, tool), ms)| latency_of(label, tool, ms))
        .collect();
    let variants = per_label
        .into_iter()
        .map(|(label, ms)| latency_of(label, "*".to_string(), ms))
        .collect();
    Ok((tools, variants))
}

/// The figures of one group's latencies.
fn latency_of(variant: String, tool: String, mut ms: Vec<f64>) -> CallLatency {
    ms.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| crate::report::stats::quantile(&ms, p).unwrap_or(f64::NAN);
    CallLatency {
        variant,
        tool,
        n: ms.len(),
        mean: crate::report::stats::mean(&ms).unwrap_or(f64::NAN),
        p05: q(0.05),
        p25: q(0.25),
        p50: q(0.5),
        p75: q(0.75),
        p95: q(0.95),
        max: ms.last().copied().unwrap_or(f64::NAN),
    }
}

/// Loads runs and prepares everything the tables and plots need.
pub fn load(dirs: &[PathBuf], bootstrap: Bootstrap) -> anyhow::Result<ReportData> {
    if dirs.is_empty() {
        anyhow::bail!(
            "no run directory given: pass one or more --out directories of `navbench run`"
        );
    }
    let runs: Vec<Run> = dirs
        .iter()
        .map(|d| run_dir::load(d))
        .collect::<anyhow::Result<_>>()?;
    let datasets: BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| r.info.as_ref().map(|i| i.dataset.as_str()))
        .collect();
    if datasets.len() > 1 {
        eprintln!(
            "warning: the runs are of different datasets ({}): per-variant figures mix them, paired comparisons use only shared instances",
            datasets.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let labels = label_variants(&runs);
    let mut variants: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    let mut trials = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let label = |r: &ResultRow| {
            labels
                .get(&(i, r.variant.clone()))
                .cloned()
                .unwrap_or_else(|| r.variant.clone())
        };
        for r in &run.rows {
            let label = label(r);
            if !variants.contains(&label) {
                variants.push(label.clone());
            }
            rows.push(ResultRow {
                variant: label,
                ..r.clone()
            });
        }
        for r in &run.trials {
            trials.push(ResultRow {
                variant: label(r),
                ..r.clone()
            });
        }
    }
    let (tool_latency, variant_latency) = call_latency(&runs, &labels)?;
    let descriptions = runs
        .iter()
        .enumerate()
        .map(|(i, r)| RunDescription {
            dir: r.dir.clone(),
            dataset: r
                .info
                .as_ref()
                .map(|i| i.dataset.clone())
                .unwrap_or_else(|| "?".into()),
            started: r
                .info
                .as_ref()
                .map(|i| i.started.clone())
                .unwrap_or_default(),
            shard: r
                .info
                .as_ref()
                .and_then(|i| i.shard)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            rows: r.rows.len(),
            agent: r.info.as_ref().and_then(|i| i.agent.clone()),
            labels: labels
                .iter()
                .filter(|((run, _), _)| *run == i)
                .map(|((_, v), l)| (v.clone(), l.clone()))
                .collect(),
        })
        .collect();
    let players: Vec<(&str, Option<&crate::record::output::RunInfo>)> = runs
        .iter()
        .map(|r| (r.label.as_str(), r.info.as_ref()))
        .collect();
    Ok(ReportData {
        runs: descriptions,
        variants,
        rows,
        trials,
        tool_latency,
        variant_latency,
        bootstrap,
        agent: agent::scope(&players),
        by_dataset: difficulty::by_dataset(&runs),
    })
}

/// Writes `report.md`, `report.csv`, the plots and `index.html` into `out` (created if
/// needed); `dataset` (`mini`, `dev` or a file) gives the page its issue texts when
/// the runs' own dataset is not embedded.
pub fn write(data: &ReportData, out: &Path, dataset: Option<&str>) -> anyhow::Result<ReportFiles> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create report dir {}", out.display()))?;
    let stats = tables::compute(data);
    let csv = out.join("report.csv");
    tables::write_csv(&csv, data, &stats)?;
    let plots = plots::draw_all(data, &stats, out)?;
    let markdown = out.join("report.md");
    let plot_names: Vec<String> = plots
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let text = markdown::markdown(data, &stats, &plot_names);
    std::fs::write(&markdown, &text)
        .with_context(|| format!("cannot write {}", markdown.display()))?;
    let html = html::write(data, &text, &plots, out, dataset)?;
    Ok(ReportFiles {
        markdown,
        csv,
        plots,
        html,
    })
}

/// `navbench report`: loads the runs, writes the report, returns what it wrote.
pub fn run(
    dirs: &[PathBuf],
    out: &Path,
    bootstrap: Bootstrap,
    dataset: Option<&str>,
) -> anyhow::Result<ReportFiles> {
    let data = load(dirs, bootstrap)?;
    write(&data, out, dataset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, variant: &str) -> ResultRow {
        ResultRow {
            instance_id: id.into(),
            repo: "o/r".into(),
            variant: variant.into(),
            status: "ok".into(),
            metrics: None,
            n_calls: 1.0,
            tool_ms: 1.0,
            index_ms: 1.0,
            response_tokens: 1.0,
            schema_tokens: 1.0,
            ..ResultRow::default()
        }
    }

    fn run(label: &str, rows: Vec<ResultRow>) -> Run {
        Run {
            dir: PathBuf::from(label),
            label: label.into(),
            info: None,
            trials: rows.clone(),
            rows,
        }
    }

    #[test]
    fn shards_add_up_and_reruns_are_told_apart() {
        // Shards: disjoint instances, labels stay plain.
        let runs = vec![
            run("s1", vec![row("a", "text")]),
            run("s2", vec![row("b", "text")]),
        ];
        let l = label_variants(&runs);
        assert_eq!(l[&(0, "text".to_string())], "text");
        assert_eq!(l[&(1, "text".to_string())], "text");
        // Same instance in two runs: text@before vs text@after; a variant in one run only
        // keeps its name.
        let runs = vec![
            run("before", vec![row("a", "text"), row("a", "graph")]),
            run("after", vec![row("a", "text")]),
        ];
        let l = label_variants(&runs);
        assert_eq!(l[&(0, "text".to_string())], "text@before");
        assert_eq!(l[&(1, "text".to_string())], "text@after");
        assert_eq!(l[&(0, "graph".to_string())], "graph");
        // Two directories with the same name.
        let runs = vec![run("x", vec![row("a", "t")]), run("x", vec![row("a", "t")])];
        let l = label_variants(&runs);
        assert_eq!(l[&(1, "t".to_string())], "t@x#2");
    }
}
