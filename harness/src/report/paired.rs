//! Paired comparisons of two variants on the instances both scored: per Acc@k metric,
//! the mean difference with a paired-bootstrap interval and the exact McNemar test on
//! the instances only one of them found. The report's "Paired comparisons" (every pair
//! of variants) and "Does the tool help the agent?" (each variant against `text`) both
//! come from here.

use std::collections::BTreeMap;

use super::ReportData;
use crate::record::output::metric_columns;
use crate::record::run_dir::ResultRow;
use crate::report::stats::{self, Bootstrap, Discordance, Estimate};

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

/// The Acc@k columns, in [`metric_columns`] order.
pub fn acc_columns() -> Vec<String> {
    metric_columns()
        .into_iter()
        .filter(|c| c.contains("_acc_"))
        .collect()
}

/// Where `name` is among [`metric_columns`].
pub fn metric_index(name: &str) -> Option<usize> {
    metric_columns().iter().position(|c| c == name)
}

/// The rows of `a` and `b` on the instances both scored, in `b`'s row order.
pub fn scored_pairs<'d>(
    data: &'d ReportData,
    a: &str,
    b: &str,
) -> Vec<(&'d ResultRow, &'d ResultRow)> {
    let a_rows: BTreeMap<&str, &ResultRow> = data
        .rows
        .iter()
        .filter(|r| r.variant == a && r.metrics.is_some())
        .map(|r| (r.instance_id.as_str(), r))
        .collect();
    data.rows
        .iter()
        .filter(|r| r.variant == b && r.metrics.is_some())
        .filter_map(|r| a_rows.get(r.instance_id.as_str()).map(|ra| (*ra, r)))
        .collect()
}

/// `b` against `a` on each of `metrics` over `pairs` (from [`scored_pairs`]); a metric
/// without a value on some row is left out.
pub fn compare_pair(
    a: &str,
    b: &str,
    pairs: &[(&ResultRow, &ResultRow)],
    metrics: &[String],
    cfg: &Bootstrap,
) -> Vec<PairedStats> {
    let value = |r: &ResultRow, i: usize| r.metrics.as_ref().and_then(|m| m.get(i)).copied();
    let mut out = Vec::new();
    for name in metrics {
        let Some(i) = metric_index(name) else {
            continue;
        };
        let Some(va) = pairs
            .iter()
            .map(|(x, _)| value(x, i))
            .collect::<Option<Vec<f64>>>()
        else {
            continue;
        };
        let Some(vb) = pairs
            .iter()
            .map(|(_, y)| value(y, i))
            .collect::<Option<Vec<f64>>>()
        else {
            continue;
        };
        let Some(diff) = stats::paired_bootstrap_diff(&va, &vb, cfg) else {
            continue;
        };
        let discordance = Discordance::of(&va, &vb);
        out.push(PairedStats {
            a: a.to_string(),
            b: b.to_string(),
            metric: name.clone(),
            n: pairs.len(),
            a_mean: stats::mean(&va).unwrap_or(0.0),
            b_mean: stats::mean(&vb).unwrap_or(0.0),
            diff,
            p_value: discordance.p_value(),
            discordance,
        });
    }
    out
}

/// Per pair of variants (in report order, the earlier one as `a`) and Acc column, on
/// the instances both scored.
pub fn all_pairs(data: &ReportData) -> Vec<PairedStats> {
    let acc = acc_columns();
    let mut paired = Vec::new();
    for (ai, a) in data.variants.iter().enumerate() {
        for b in data.variants.iter().skip(ai + 1) {
            let pairs = scored_pairs(data, a, b);
            if !pairs.is_empty() {
                paired.extend(compare_pair(a, b, &pairs, &acc, &data.bootstrap));
            }
        }
    }
    paired
}
