//! Figures over the trials of `navbench run --repeats K` ([`TrialStats`]), for the
//! "Trials" section of `report.md` and the `trials` rows of `report.csv`; nothing when
//! every pair was played once, so such a report is what it was before trials.
//!
//! Per variant and headline accuracy ([`HELP_METRICS`]: file Acc@5, module Acc@10,
//! function Acc@10): the accuracy of each trial over the instances it scored, their
//! mean with a t-based 95% interval over the K trial accuracies (mean ± t(K−1, 0.975)
//! · sd / √K: how far another K trials' mean may fall, the instances held fixed), and
//! the share of instances found in any and in all of the variant's trials (found: an
//! Acc of 1; a trial that did not score counts as not found). The other tables of the
//! report read one row per instance, the mean over its trials
//! ([`crate::record::run_dir::per_instance_means`]), so the paired tests compare
//! per-instance means.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::ReportData;
use super::agent::HELP_METRICS;
use super::paired::metric_index;
use crate::policy::Trial;
use crate::record::run_dir::ResultRow;

/// One variant's figures over its trials.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialStats {
    pub variant: String,
    /// Distinct trials among its rows (K).
    pub trials: usize,
    /// Instances with at least one scored trial (what `any` / `all` count over).
    pub instances: usize,
    /// Per [`HELP_METRICS`] entry.
    pub metrics: Vec<TrialMetric>,
}

/// One accuracy over the trials of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialMetric {
    pub metric: &'static str,
    /// Each trial's accuracy over the instances it scored, in trial order (a trial
    /// that scored none is left out).
    pub per_trial: Vec<f64>,
    /// The mean of `per_trial`.
    pub mean: f64,
    /// The t-based 95% interval of the mean; `None` with fewer than two trials.
    pub interval: Option<(f64, f64)>,
    /// Share of the instances found (Acc of 1) in at least one trial.
    pub any: f64,
    /// Share of the instances found in every trial.
    pub all: f64,
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (t(df,
/// 0.975)): tabulated to 30, then the Cornish–Fisher expansion around the normal's
/// 1.959964, which is within 1e-4 of the exact value from 31 on.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    if (1..=30).contains(&df) {
        return TABLE[df - 1];
    }
    let z: f64 = 1.959964;
    let n = df.max(1) as f64;
    z + (z.powi(3) + z) / (4.0 * n)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
}

/// The mean of `values` and its t-based 95% interval (`None` under two values).
pub fn t_interval(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return Some((mean, None));
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t_975(values.len() - 1) * (var / n).sqrt();
    Some((mean, Some((mean - half, mean + half))))
}

/// `file_acc_5` → `file Acc@5` (as the report's other tables name it).
fn pretty(name: &str) -> String {
    match name.split('_').collect::<Vec<_>>().as_slice() {
        [level, "acc", k] => format!("{level} Acc@{k}"),
        _ => name.to_string(),
    }
}

/// True when a trial's Acc value says the gold was found.
fn found(acc: f64) -> bool {
    acc >= 1.0 - 1e-9
}

/// The figures over trials of every variant, in report order; empty when no
/// variant has more than one trial of a pair.
pub fn compute(data: &ReportData) -> Vec<TrialStats> {
    let repeated = data.trials.iter().any(|r| !r.trial.is_first());
    if !repeated {
        return Vec::new();
    }
    data.variants
        .iter()
        .filter_map(|v| {
            let mine: Vec<&ResultRow> = data.trials.iter().filter(|r| &r.variant == v).collect();
            of_variant(v, &mine)
        })
        .collect()
}

/// One variant's [`TrialStats`] from its trial rows; `None` when none scored.
fn of_variant(variant: &str, rows: &[&ResultRow]) -> Option<TrialStats> {
    let trials: BTreeSet<Trial> = rows.iter().map(|r| r.trial).collect();
    // Instance → trial → metrics, for the trials that scored.
    let mut scored: BTreeMap<&str, BTreeMap<Trial, &[f64]>> = BTreeMap::new();
    for r in rows {
        if let Some(m) = &r.metrics {
            scored
                .entry(r.instance_id.as_str())
                .or_default()
                .insert(r.trial, m);
        }
    }
    if scored.is_empty() {
        return None;
    }
    let metrics = HELP_METRICS
        .iter()
        .filter_map(|&name| {
            let i = metric_index(name)?;
            let value = |m: &&[f64]| m.get(i).copied();
            let per_trial: Vec<f64> = trials
                .iter()
                .filter_map(|t| {
                    let vals: Vec<f64> = scored
                        .values()
                        .filter_map(|by| by.get(t).and_then(value))
                        .collect();
                    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
                })
                .collect();
            let (mean, interval) = t_interval(&per_trial)?;
            let hits = |by: &BTreeMap<Trial, &[f64]>| {
                trials
                    .iter()
                    .filter(|t| by.get(*t).and_then(value).is_some_and(found))
                    .count()
            };
            let n = scored.len() as f64;
            let any = scored.values().filter(|by| hits(by) > 0).count() as f64 / n;
            let all = scored
                .values()
                .filter(|by| hits(by) == trials.len())
                .count() as f64
                / n;
            Some(TrialMetric {
                metric: name,
                per_trial,
                mean,
                interval,
                any,
                all,
            })
        })
        .collect();
    Some(TrialStats {
        variant: variant.to_string(),
        trials: trials.len(),
        instances: scored.len(),
        metrics,
    })
}

/// The "Trials" section of `report.md` (nothing without repeats).
pub fn section(out: &mut String, stats: &[TrialStats]) {
    if stats.is_empty() {
        return;
    }
    out.push_str("## Trials\n\n");
    out.push_str(
        "Each instance × variant was played several times (`run --repeats`). Per variant: \
         the mean of the trials' accuracies with a t-based 95% interval over the trials \
         (mean ± t(K−1, 0.975) · sd / √K), and the share of instances found (Acc of 1) in \
         **any** and in **all** of its trials; a trial that did not score counts as not \
         found. The other tables read each instance once, as the mean over its trials; \
         the paired comparisons compare those per-instance means (McNemar's counts take \
         an instance found in at least half its trials as found).\n\n",
    );
    let mut header = "| variant | trials | instances |".to_string();
    let mut rule = "|---|---:|---:|".to_string();
    for name in HELP_METRICS {
        let p = pretty(name);
        let _ = write!(header, " {p} | {p} any | {p} all |");
        rule.push_str("---:|---:|---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    for s in stats {
        let mut line = format!("| **{}** | {} | {} |", s.variant, s.trials, s.instances);
        for name in HELP_METRICS {
            match s.metrics.iter().find(|m| m.metric == name) {
                Some(m) => {
                    let mean = match m.interval {
                        Some((lo, hi)) => format!("{} [{}, {}]", pct(m.mean), pct(lo), pct(hi)),
                        None => pct(m.mean),
                    };
                    let _ = write!(line, " {mean} | {} | {} |", pct(m.any), pct(m.all));
                }
                None => line.push_str(" - | - | - |"),
            }
        }
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
}

/// `report.csv`'s `trials` rows: per variant and metric, the mean over trials with its
/// interval (`n` = trials), then `<metric>_any` and `<metric>_all` (`n` = instances).
pub fn csv_rows(stats: &[TrialStats]) -> Vec<[String; 13]> {
    let f = |x: f64| format!("{x:.6}");
    let mut rows = Vec::new();
    for s in stats {
        for m in &s.metrics {
            let (lo, hi) = m
                .interval
                .map_or((String::new(), String::new()), |(l, h)| (f(l), f(h)));
            let row = |metric: String, n: usize, value: f64, lo: String, hi: String| {
                [
                    "trials".to_string(),
                    s.variant.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    metric,
                    n.to_string(),
                    f(value),
                    lo,
                    hi,
                    String::new(),
                    String::new(),
                    String::new(),
                ]
            };
            rows.push(row(m.metric.to_string(), s.trials, m.mean, lo, hi));
            let (any, all) = (format!("{}_any", m.metric), format!("{}_all", m.metric));
            rows.push(row(any, s.instances, m.any, String::new(), String::new()));
            rows.push(row(all, s.instances, m.all, String::new(), String::new()));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::output::metric_columns;

    #[test]
    fn t_quantiles_match_the_table_and_the_normal_limit() {
        assert_eq!(t_975(1), 12.7062);
        assert_eq!(t_975(2), 4.3027);
        // Exact values: t(40) = 2.0211, t(120) = 1.9799.
        assert!((t_975(40) - 2.0211).abs() < 1e-3, "{}", t_975(40));
        assert!((t_975(120) - 1.9799).abs() < 1e-3, "{}", t_975(120));
        assert!(t_975(30) > t_975(31));
    }

    #[test]
    fn t_interval_by_hand() {
        // 0.5, 0.6, 0.7: mean 0.6, sd 0.1, half-width 4.3027 · 0.1 / √3.
        let (mean, ci) = t_interval(&[0.5, 0.6, 0.7]).unwrap();
        let half = 4.3027 * 0.1 / 3f64.sqrt();
        let (lo, hi) = ci.unwrap();
        assert!((mean - 0.6).abs() < 1e-12);
        assert!((lo - (0.6 - half)).abs() < 1e-9 && (hi - (0.6 + half)).abs() < 1e-9);
        assert_eq!(t_interval(&[0.4]), Some((0.4, None)));
        assert_eq!(t_interval(&[]), None);
        // Identical trials: a zero-width interval.
        assert_eq!(t_interval(&[1.0, 1.0]), Some((1.0, Some((1.0, 1.0)))));
    }

    fn row(id: &str, trial: u32, acc: Option<f64>) -> ResultRow {
        ResultRow {
            instance_id: id.into(),
            variant: "text".into(),
            trial: Trial::new(trial).unwrap(),
            status: if acc.is_some() { "ok" } else { "error" }.into(),
            metrics: acc.map(|a| vec![a; metric_columns().len()]),
            ..ResultRow::default()
        }
    }

    #[test]
    fn any_and_all_count_instances_and_failed_trials_as_not_found() {
        // i1 found in trials 1 and 2 of 3, i2 in every trial, i3's trial 3 failed.
        let rows = [
            row("i1", 1, Some(1.0)),
            row("i1", 2, Some(1.0)),
            row("i1", 3, Some(0.0)),
            row("i2", 1, Some(1.0)),
            row("i2", 2, Some(1.0)),
            row("i2", 3, Some(1.0)),
            row("i3", 1, Some(1.0)),
            row("i3", 2, Some(1.0)),
            row("i3", 3, None),
        ];
        let refs: Vec<&ResultRow> = rows.iter().collect();
        let s = of_variant("text", &refs).unwrap();
        assert_eq!((s.trials, s.instances), (3, 3));
        let m = &s.metrics[0];
        assert_eq!(m.metric, "file_acc_5");
        // Trial accuracies over the instances each scored: 1, 1, 0.5.
        assert_eq!(m.per_trial, [1.0, 1.0, 0.5]);
        assert!((m.any - 1.0).abs() < 1e-12);
        assert!((m.all - 1.0 / 3.0).abs() < 1e-12);
        let (lo, hi) = m.interval.unwrap();
        assert!(lo < m.mean && m.mean < hi);
    }

    #[test]
    fn nothing_without_repeats() {
        let one = vec![row("i1", 1, Some(1.0))];
        let mut data = ReportData {
            runs: Vec::new(),
            variants: vec!["text".into()],
            rows: one.clone(),
            trials: one,
            tool_latency: Vec::new(),
            variant_latency: Vec::new(),
            bootstrap: Default::default(),
            agent: crate::report::agent::AgentScope::Scripted,
            by_dataset: Default::default(),
        };
        assert!(compute(&data).is_empty());
        let mut out = String::new();
        section(&mut out, &[]);
        assert!(out.is_empty());
        data.trials.push(row("i1", 2, Some(0.0)));
        let s = compute(&data);
        assert_eq!((s.len(), s[0].trials), (1, 2));
        section(&mut out, &s);
        assert!(
            out.contains("## Trials") && out.contains("| **text** | 2 | 1 | 50.0 ["),
            "{out}"
        );
        assert_eq!(csv_rows(&s).len(), 3 * HELP_METRICS.len());
    }
}
