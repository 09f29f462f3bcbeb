//! The report's numbers and their two renderings: `report.md` (readable tables) and
//! `report.csv` (one tidy row per figure).

use std::path::Path;

use anyhow::Context;

use super::{CallLatency, ReportData};
use crate::output::{STATUS_ERROR, STATUS_NO_GOLD, metric_columns};
use crate::run_dir::ResultRow;
use crate::stats::{self, Discordance, Estimate};

/// Per-instance cost columns, with their report names.
pub const COSTS: [(&str, &str); 5] = [
    ("n_calls", "tool calls / instance"),
    ("response_tokens", "response tokens / instance"),
    ("schema_tokens", "schema tokens"),
    ("index_ms", "index ms"),
    ("tool_ms", "tool ms / instance"),
];

/// A per-instance cost summarized: mean with interval, median and 95th percentile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostStat {
    pub mean: Estimate,
    pub p50: f64,
    pub p95: f64,
}

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

/// One paired comparison: variant `b` against variant `a` on one Acc@k metric.
#[derive(Debug, Clone)]
pub struct PairedStats {
    pub a: String,
    pub b: String,
    pub metric: String,
    /// Instances scored for both.
    pub n: usize,
    pub a_mean: f64,
    pub b_mean: f64,
    /// Mean of `b − a` with its paired-bootstrap interval.
    pub diff: Estimate,
    pub discordance: Discordance,
    /// Exact McNemar, two-sided.
    pub p_value: f64,
}

/// All computed figures.
#[derive(Debug, Clone)]
pub struct Stats {
    pub variants: Vec<VariantStats>,
    pub repos: Vec<RepoStats>,
    pub paired: Vec<PairedStats>,
}

/// The Acc@k columns (binary per instance), in [`metric_columns`] order.
pub fn acc_columns() -> Vec<String> {
    metric_columns()
        .into_iter()
        .filter(|c| c.contains("_acc_"))
        .collect()
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

fn metric_index(name: &str) -> Option<usize> {
    metric_columns().iter().position(|c| c == name)
}

/// Computes every figure of the report.
pub fn compute(data: &ReportData) -> Stats {
    Stats {
        variants: variant_stats(data),
        repos: repo_stats(data),
        paired: paired_stats(data),
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
                let sorted = stats::sorted(&vals);
                Some(CostStat {
                    mean: stats::bootstrap_mean(&vals, cfg)?,
                    p50: stats::quantile(&sorted, 0.5)?,
                    p95: stats::quantile(&sorted, 0.95)?,
                })
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
        });
    }

    variants
}

/// Per repository and variant: bootstrap means of the Acc columns.
fn repo_stats(data: &ReportData) -> Vec<RepoStats> {
    let cfg = &data.bootstrap;
    let acc = acc_columns();
    let acc_idx: Vec<usize> = acc.iter().filter_map(|a| metric_index(a)).collect();
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

/// Per pair of variants and Acc column, on the instances both scored: the paired
/// bootstrap difference and the exact McNemar test.
fn paired_stats(data: &ReportData) -> Vec<PairedStats> {
    let cfg = &data.bootstrap;
    let acc = acc_columns();
    let acc_idx: Vec<usize> = acc.iter().filter_map(|a| metric_index(a)).collect();
    let mut paired = Vec::new();
    for (ai, a) in data.variants.iter().enumerate() {
        for b in data.variants.iter().skip(ai + 1) {
            // Instances scored for both, in a stable order.
            let a_rows: std::collections::BTreeMap<&str, &Vec<f64>> = data
                .rows
                .iter()
                .filter(|r| &r.variant == a)
                .filter_map(|r| r.metrics.as_ref().map(|m| (r.instance_id.as_str(), m)))
                .collect();
            let both: Vec<(&Vec<f64>, &Vec<f64>)> = data
                .rows
                .iter()
                .filter(|r| &r.variant == b)
                .filter_map(|r| {
                    let mb = r.metrics.as_ref()?;
                    a_rows.get(r.instance_id.as_str()).map(|ma| (*ma, mb))
                })
                .collect();
            if both.is_empty() {
                continue;
            }
            for (name, i) in acc.iter().zip(&acc_idx) {
                let va: Vec<f64> = both.iter().map(|(x, _)| x[*i]).collect();
                let vb: Vec<f64> = both.iter().map(|(_, y)| y[*i]).collect();
                let Some(diff) = stats::paired_bootstrap_diff(&va, &vb, cfg) else {
                    continue;
                };
                let discordance = Discordance::of(&va, &vb);
                paired.push(PairedStats {
                    a: a.clone(),
                    b: b.clone(),
                    metric: name.clone(),
                    n: both.len(),
                    a_mean: stats::mean(&va).unwrap_or(0.0),
                    b_mean: stats::mean(&vb).unwrap_or(0.0),
                    diff,
                    p_value: discordance.p_value(),
                    discordance,
                });
            }
        }
    }
    paired
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
fn write_variant_rows(w: &mut csv::Writer<std::fs::File>, stats: &Stats) -> anyhow::Result<()> {
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
            let Some(c) = c else { continue };
            let [val, lo, hi] = est(&c.mean);
            let n = v.n_ran.to_string();
            w.write_record([
                "variant", &v.variant, "", "", "", name, &n, &val, &lo, &hi, "", "", "",
            ])?;
            for (suffix, x) in [("p50", c.p50), ("p95", c.p95)] {
                w.write_record([
                    "variant",
                    &v.variant,
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
        }
    }
    Ok(())
}

/// Writes `report.csv`: `section` (variant, repo, paired, tool), the keys (`variant`,
/// `other`, `repo`, `tool`), `metric`, `n`, `value`, `ci_low`, `ci_high`, `p_value`,
/// `a_only`, `b_only`. Accuracies are fractions; a paired row's value is `other −
/// variant`.
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
        let [val, lo, hi] = est(&p.diff);
        w.write_record([
            "paired",
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
    use crate::stats::Bootstrap;

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
            rows,
            tool_latency: Vec::new(),
            variant_latency: Vec::new(),
            bootstrap: Bootstrap::default(),
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
