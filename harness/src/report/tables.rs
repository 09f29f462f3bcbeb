//! The report's numbers and their two renderings: `report.md` (readable tables) and
//! `report.csv` (one tidy row per figure).

use std::path::Path;

use anyhow::Context;

use super::agent::{self, AGENT_COSTS, AgentCosts, HELP_COSTS, ToolHelp};
use super::paired::{self, PairedStats};
use super::{CallLatency, ReportData};
use crate::record::output::{STATUS_ERROR, STATUS_NO_GOLD, metric_columns};
use crate::record::run_dir::ResultRow;
use crate::report::stats::{self, Estimate};

pub use super::paired::acc_columns;
pub use crate::report::stats::CostStat;

/// Per-instance cost columns, with their report names.
pub const COSTS: [(&str, &str); 5] = [
    ("n_calls", "tool calls / instance"),
    ("response_tokens", "response tokens / instance"),
    ("schema_tokens", "schema tokens"),
    ("index_ms", "index ms"),
    ("tool_ms", "tool ms / instance"),
];

/// One variant's figures.
#[derive(Debug, Clone)]
pub struct VariantStats {
    pub variant: String,
    pub n_rows: usize,
    pub n_scored: usize,
    pub n_errors: usize,
    pub n_no_gold: usize,
    /// Rows where the server ran (cost means are over these).
    pub n_ran: usize,
    /// Per [`metric_columns`] entry; `None` without scored rows.
    pub metrics: Vec<Option<Estimate>>,
    /// Per [`COSTS`] entry; `None` without rows that ran.
    pub costs: Vec<Option<CostStat>>,
    /// Every call of the variant together.
    pub calls: Option<CallLatency>,
    /// What the model cost, for an agent's rows.
    pub agent: Option<AgentCosts>,
    /// How the agent's answers were read (built-in agent and `--agent-cmd`).
    pub answers: Option<super::answers::AnswerReading>,
}

/// Accuracy of one variant on one repository.
#[derive(Debug, Clone)]
pub struct RepoStats {
    pub repo: String,
    pub variant: String,
    pub n_scored: usize,
    /// Per [`acc_columns`] entry.
    pub acc: Vec<Option<Estimate>>,
}

/// All computed figures.
#[derive(Debug, Clone)]
pub struct Stats {
    pub variants: Vec<VariantStats>,
    pub repos: Vec<RepoStats>,
    pub paired: Vec<PairedStats>,
    /// Each variant against `text`, for runs of one agent.
    pub tool_help: ToolHelp,
    /// Figures over the trials of `--repeats` (empty without repeats).
    pub trials: Vec<super::trials::TrialStats>,
}

/// `file_acc_5` → `file Acc@5`, `module_ndcg_10` → `module NDCG@10`.
pub fn pretty_metric(name: &str) -> String {
    let parts: Vec<&str> = name.split('_').collect();
    match parts.as_slice() {
        [level, kind, k] => {
            let kind = match *kind {
                "acc" => "Acc",
                "recall" => "Recall",
                "ndcg" => "NDCG",
                "map" => "MAP",
                other => other,
            };
            format!("{level} {kind}@{k}")
        }
        _ => name.to_string(),
    }
}

fn cost_of(r: &ResultRow, name: &str) -> f64 {
    match name {
        "n_calls" => r.n_calls,
        "response_tokens" => r.response_tokens,
        "schema_tokens" => r.schema_tokens,
        "index_ms" => r.index_ms,
        "tool_ms" => r.tool_ms,
        _ => f64::NAN,
    }
}

/// Computes every figure of the report.
pub fn compute(data: &ReportData) -> Stats {
    Stats {
        variants: variant_stats(data),
        repos: repo_stats(data),
        paired: paired::all_pairs(data),
        tool_help: agent::tool_help(data),
        trials: super::trials::compute(data),
    }
}

/// Per variant: counts, bootstrap means of every metric, cost means and quantiles.
fn variant_stats(data: &ReportData) -> Vec<VariantStats> {
    let cfg = &data.bootstrap;
    let names = metric_columns();
    let mut variants = Vec::new();
    for v in &data.variants {
        let mine: Vec<&ResultRow> = data.rows.iter().filter(|r| &r.variant == v).collect();
        let scored: Vec<&Vec<f64>> = mine.iter().filter_map(|r| r.metrics.as_ref()).collect();
        let ran: Vec<&&ResultRow> = mine.iter().filter(|r| r.ran()).collect();
        let metrics = (0..names.len())
            .map(|i| {
                let vals: Vec<f64> = scored.iter().filter_map(|m| m.get(i).copied()).collect();
                stats::bootstrap_mean(&vals, cfg)
            })
            .collect();
        let costs = COSTS
            .iter()
            .map(|(c, _)| {
                let vals: Vec<f64> = ran.iter().map(|r| cost_of(r, c)).collect();
                stats::cost_stat(&vals, cfg)
            })
            .collect();
        variants.push(VariantStats {
            variant: v.clone(),
            n_rows: mine.len(),
            n_scored: scored.len(),
            n_errors: mine.iter().filter(|r| r.status == STATUS_ERROR).count(),
            n_no_gold: mine.iter().filter(|r| r.status == STATUS_NO_GOLD).count(),
            n_ran: ran.len(),
            metrics,
            costs,
            calls: data
                .variant_latency
                .iter()
                .find(|c| &c.variant == v)
                .cloned(),
            agent: agent::agent_costs(&mine, cfg),
            answers: super::answers::AnswerReading::of(&mine),
        });
    }

    variants
}

/// Per repository and variant: bootstrap means of the Acc columns.
fn repo_stats(data: &ReportData) -> Vec<RepoStats> {
    let cfg = &data.bootstrap;
    let acc = acc_columns();
    let acc_idx: Vec<usize> = acc.iter().filter_map(|a| paired::metric_index(a)).collect();
    let mut repo_names: Vec<&str> = data.rows.iter().map(|r| r.repo.as_str()).collect();
    repo_names.sort();
    repo_names.dedup();
    let mut repos = Vec::new();
    for repo in repo_names {
        for v in &data.variants {
            let scored: Vec<&Vec<f64>> = data
                .rows
                .iter()
                .filter(|r| r.repo == repo && &r.variant == v)
                .filter_map(|r| r.metrics.as_ref())
                .collect();
            if scored.is_empty() {
                continue;
            }
            repos.push(RepoStats {
                repo: repo.to_string(),
                variant: v.clone(),
                n_scored: scored.len(),
                acc: acc_idx
                    .iter()
                    .map(|i| {
                        let vals: Vec<f64> =
                            scored.iter().filter_map(|m| m.get(*i).copied()).collect();
                        stats::bootstrap_mean(&vals, cfg)
                    })
                    .collect(),
            });
        }
    }

    repos
}

fn f(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        String::new()
    }
}

/// An estimate's value and interval as CSV cells.
fn est(e: &Estimate) -> [String; 3] {
    [f(e.value), f(e.lo), f(e.hi)]
}

/// The `variant` section: counts, every metric and every cost of each variant.
fn write_variant_rows(w: &mut CsvOut, stats: &Stats) -> anyhow::Result<()> {
    let names = metric_columns();
    for v in &stats.variants {
        for (name, count) in [
            ("n_rows", v.n_rows),
            ("n_scored", v.n_scored),
            ("n_errors", v.n_errors),
            ("n_no_gold", v.n_no_gold),
        ] {
            w.write_record([
                "variant",
                &v.variant,
                "",
                "",
                "",
                name,
                &v.n_rows.to_string(),
                &count.to_string(),
                "",
                "",
                "",
                "",
                "",
            ])?;
        }
        for (name, m) in names.iter().zip(&v.metrics) {
            let Some(e) = m else { continue };
            let [val, lo, hi] = est(e);
            let n = v.n_scored.to_string();
            w.write_record([
                "variant", &v.variant, "", "", "", name, &n, &val, &lo, &hi, "", "", "",
            ])?;
        }
        for ((name, _), c) in COSTS.iter().zip(&v.costs) {
            if let Some(c) = c {
                write_cost(w, &v.variant, name, v.n_ran, c)?;
            }
        }
        if let Some(a) = &v.agent {
            write_agent_rows(w, &v.variant, a)?;
        }
        if let Some(a) = &v.answers {
            for (name, count) in a.counts() {
                let (n, count) = (a.answers.to_string(), count.to_string());
                w.write_record([
                    "variant", &v.variant, "", "", "", name, &n, &count, "", "", "", "", "",
                ])?;
            }
        }
    }
    Ok(())
}

type CsvOut = csv::Writer<std::fs::File>;

/// A cost's mean (with its interval), `_p50` and `_p95` rows.
fn write_cost(
    w: &mut CsvOut,
    variant: &str,
    name: &str,
    n: usize,
    c: &CostStat,
) -> anyhow::Result<()> {
    let [val, lo, hi] = est(&c.mean);
    let n = n.to_string();
    w.write_record([
        "variant", variant, "", "", "", name, &n, &val, &lo, &hi, "", "", "",
    ])?;
    for (suffix, x) in [("p50", c.p50), ("p95", c.p95)] {
        w.write_record([
            "variant",
            variant,
            "",
            "",
            "",
            &format!("{name}_{suffix}"),
            &n,
            &f(x),
            "",
            "",
            "",
            "",
            "",
        ])?;
    }
    Ok(())
}

/// An agent variant's costs (as [`write_cost`]), how many rows had estimated tokens,
/// and an `n_stop_<reason>` count per reason (`n`: the agent's rows).
fn write_agent_rows(w: &mut CsvOut, variant: &str, a: &AgentCosts) -> anyhow::Result<()> {
    for ((name, _), c) in AGENT_COSTS.iter().zip(&a.costs) {
        let n = if *name == "cost_usd" {
            a.n_priced
        } else {
            a.n_ran
        };
        if let Some(c) = c {
            write_cost(w, variant, name, n, c)?;
        }
    }
    let n_agent: usize = a.stop_reasons.iter().map(|(_, k)| k).sum();
    let counts = std::iter::once(("n_tokens_estimated".to_string(), a.n_estimated, a.n_ran)).chain(
        a.stop_reasons
            .iter()
            .map(|(r, k)| (format!("n_stop_{r}"), *k, n_agent)),
    );
    for (metric, count, n) in counts {
        w.write_record([
            "variant",
            variant,
            "",
            "",
            "",
            &metric,
            &n.to_string(),
            &count.to_string(),
            "",
            "",
            "",
            "",
            "",
        ])?;
    }
    Ok(())
}

/// The `tool_help` section: each variant against `text` (`variant` = text, `other` =
/// the variant) on [`agent::HELP_METRICS`] as paired rows, then `<cost>_ratio` rows
/// (the variant's mean over text's on the same instances).
fn write_help_rows(w: &mut CsvOut, help: &ToolHelp) -> anyhow::Result<()> {
    let ToolHelp::Rows(_, rows) = help else {
        return Ok(());
    };
    for r in rows {
        for p in &r.acc {
            write_paired(w, "tool_help", p)?;
        }
        for ((name, _), (t, x)) in HELP_COSTS.iter().zip(&r.costs) {
            w.write_record([
                "tool_help",
                agent::REFERENCE,
                &r.variant,
                "",
                "",
                &format!("{name}_ratio"),
                &r.n.to_string(),
                &f(agent::ratio(*t, *x)),
                "",
                "",
                "",
                "",
                "",
            ])?;
        }
    }
    Ok(())
}

/// One paired comparison as a row of `section`.
fn write_paired(w: &mut CsvOut, section: &str, p: &PairedStats) -> anyhow::Result<()> {
    let [val, lo, hi] = est(&p.diff);
    w.write_record([
        section,
        &p.a,
        &p.b,
        "",
        "",
        &p.metric,
        &p.n.to_string(),
        &val,
        &lo,
        &hi,
        &f(p.p_value),
        &p.discordance.a_only.to_string(),
        &p.discordance.b_only.to_string(),
    ])?;
    Ok(())
}

/// Writes `report.csv`: `section` (variant, repo, paired, tool_help, tool), the keys
/// (`variant`, `other`, `repo`, `tool`), `metric`, `n`, `value`, `ci_low`, `ci_high`,
/// `p_value`, `a_only`, `b_only`. Accuracies are fractions; a paired row's value is
/// `other − variant`.
pub fn write_csv(path: &Path, data: &ReportData, stats: &Stats) -> anyhow::Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    w.write_record([
        "section", "variant", "other", "repo", "tool", "metric", "n", "value", "ci_low", "ci_high",
        "p_value", "a_only", "b_only",
    ])?;
    write_variant_rows(&mut w, stats)?;
    let acc = acc_columns();
    for r in &stats.repos {
        for (name, e) in acc.iter().zip(&r.acc) {
            let Some(e) = e else { continue };
            let [val, lo, hi] = est(e);
            w.write_record([
                "repo",
                &r.variant,
                "",
                &r.repo,
                "",
                name,
                &r.n_scored.to_string(),
                &val,
                &lo,
                &hi,
                "",
                "",
                "",
            ])?;
        }
    }
    for p in &stats.paired {
        write_paired(&mut w, "paired", p)?;
    }
    write_help_rows(&mut w, &stats.tool_help)?;
    for row in super::trials::csv_rows(&stats.trials) {
        w.write_record(&row)?;
    }
    for l in data.variant_latency.iter().chain(&data.tool_latency) {
        for (name, x) in [
            ("latency_ms_mean", l.mean),
            ("latency_ms_p05", l.p05),
            ("latency_ms_p25", l.p25),
            ("latency_ms_p50", l.p50),
            ("latency_ms_p75", l.p75),
            ("latency_ms_p95", l.p95),
            ("latency_ms_max", l.max),
        ] {
            w.write_record([
                "tool",
                &l.variant,
                "",
                "",
                &l.tool,
                name,
                &l.n.to_string(),
                &f(x),
                "",
                "",
                "",
                "",
                "",
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markdown::markdown;
    use crate::report::stats::Bootstrap;

    fn row(id: &str, repo: &str, variant: &str, acc: f64) -> ResultRow {
        ResultRow {
            instance_id: id.into(),
            repo: repo.into(),
            variant: variant.into(),
            status: "ok".into(),
            metrics: Some(vec![acc; metric_columns().len()]),
            n_calls: 3.0,
            tool_ms: 10.0,
            index_ms: 5.0,
            response_tokens: 100.0,
            schema_tokens: 50.0,
            ..ResultRow::default()
        }
    }

    fn data() -> ReportData {
        let mut rows = Vec::new();
        // text finds 1 of 6, graph finds 6 of 6: graph-only on 5 instances.
        for i in 0..6 {
            let repo = if i < 3 { "a/one" } else { "b/two" };
            rows.push(row(
                &format!("i{i}"),
                repo,
                "text",
                if i == 0 { 1.0 } else { 0.0 },
            ));
            rows.push(row(&format!("i{i}"), repo, "graph", 1.0));
        }
        ReportData {
            runs: Vec::new(),
            variants: vec!["text".into(), "graph".into()],
            trials: rows.clone(),
            rows,
            tool_latency: Vec::new(),
            variant_latency: Vec::new(),
            bootstrap: Bootstrap::default(),
            agent: crate::report::agent::AgentScope::Scripted,
            by_dataset: Default::default(),
        }
    }

    #[test]
    fn computes_variant_repo_and_paired_figures() {
        let d = data();
        let s = compute(&d);
        assert_eq!(s.variants.len(), 2);
        let text = &s.variants[0];
        assert_eq!(text.n_scored, 6);
        let file1 = text.metrics[0].unwrap();
        assert!((file1.value - 1.0 / 6.0).abs() < 1e-12);
        assert!(file1.lo <= file1.value && file1.value <= file1.hi);
        let graph = &s.variants[1];
        assert_eq!(graph.metrics[0].unwrap().lo, 1.0);
        assert_eq!(text.costs[0].unwrap().mean.value, 3.0);
        // Two repos × two variants.
        assert_eq!(s.repos.len(), 4);
        assert_eq!(s.repos[0].repo, "a/one");
        // Seven Acc@k comparisons, each graph-only on 5 instances: p = 2/32.
        assert_eq!(s.paired.len(), 7);
        let p = &s.paired[0];
        assert_eq!((p.a.as_str(), p.b.as_str()), ("text", "graph"));
        assert_eq!(p.discordance.b_only, 5);
        assert!((p.p_value - 0.0625).abs() < 1e-12);
        assert!((p.diff.value - 5.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn markdown_and_csv_carry_the_figures() {
        let d = data();
        let s = compute(&d);
        let md = markdown(&d, &s, &["accuracy_vs_tokens.png".into()]);
        assert!(md.contains("## Accuracy per variant"), "{md}");
        assert!(md.contains("| **text** | 6 | 16.7 ["), "{md}");
        assert!(md.contains("### graph vs text (6 instances)"), "{md}");
        assert!(md.contains("| file Acc@1 | 16.7 | 100.0 | +83.3 ["), "{md}");
        assert!(md.contains("| 0 | 5 | 0.062 |"), "{md}");
        assert!(md.contains("![accuracy_vs_tokens](accuracy_vs_tokens.png)"));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.csv");
        write_csv(&p, &d, &s).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("section,variant,other,repo,tool,metric,n,value,ci_low"));
        assert!(
            text.contains("paired,text,graph,,,file_acc_1,6,0.833333,"),
            "{text}"
        );
        assert!(text.contains(",0.062500,0,5"), "{text}");
        assert!(text.contains("repo,graph,,b/two,,file_acc_5,3,1.000000,1.000000,1.000000"));
    }

    #[test]
    fn pretty_names() {
        assert_eq!(pretty_metric("file_acc_5"), "file Acc@5");
        assert_eq!(pretty_metric("module_ndcg_10"), "module NDCG@10");
        assert_eq!(acc_columns().len(), 7);
    }
}
