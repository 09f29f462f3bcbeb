//! Localization metrics with exactly LocAgent's definitions (`evaluation/eval_metric.py`),
//! quirks included, so figures compare with the paper.
//!
//! For one level (file, module or function) with cut-offs `ks`, `K = max(ks)`:
//! - the ideal label vector has `min(|gold|, K)` leading ones, length `K`;
//! - the prediction label vector marks `pred[..K][i] ∈ gold` (a duplicate prediction
//!   counts twice, as in the original);
//! - `acc@k` succeeds iff `sum(pred[..k]) == sum(ideal[..k])`: the top k hold
//!   `min(|gold|, K, k)` gold items (so with more gold items than `k`, every one of the
//!   top `k` must be gold);
//! - `recall@k = sum(pred[..k]) / min(|gold|, K)` (the ideal is not cut to `k`);
//! - `ndcg@k = DCG(pred[..k]) / DCG(ideal[..k])`, `DCG(x) = Σ x_i / log2(i + 1)`;
//! - `map@k = Σ_{j<k, pred_j = 1} hits_so_far / (j + 1) / k` (divided by `k`, not by the
//!   number of relevant items: LocAgent's definition).
//!
//! Instances with empty gold are left out of the means; a missing prediction scores zero.

use serde::Serialize;

/// The three localization levels, with LocAgent's default cut-offs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Level {
    File,
    Module,
    Function,
}

impl Level {
    /// All levels, in report order.
    pub const ALL: [Level; 3] = [Level::File, Level::Module, Level::Function];

    /// Column prefix: `file`, `module`, `function`.
    pub fn name(self) -> &'static str {
        match self {
            Level::File => "file",
            Level::Module => "module",
            Level::Function => "function",
        }
    }

    /// LocAgent's reported cut-offs: file @1/3/5, module and function @5/10.
    pub fn ks(self) -> &'static [usize] {
        match self {
            Level::File => &[1, 3, 5],
            Level::Module | Level::Function => &[5, 10],
        }
    }
}

/// One level's scores for one instance, one value per cut-off in [`Level::ks`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelScores {
    pub level: Level,
    pub acc: Vec<f64>,
    pub recall: Vec<f64>,
    pub ndcg: Vec<f64>,
    pub map: Vec<f64>,
}

/// Scores `pred` (ranked) against `gold` at `level`; `None` when `gold` is empty, since
/// such instances are left out of LocAgent's means.
pub fn score_level(level: Level, gold: &[String], pred: &[String]) -> Option<LevelScores> {
    score_with_ks(level, level.ks(), gold, pred)
}

fn score_with_ks(
    level: Level,
    ks: &[usize],
    gold: &[String],
    pred: &[String],
) -> Option<LevelScores> {
    if gold.is_empty() {
        return None;
    }
    let big_k = ks.iter().copied().max().unwrap_or(0);
    let n_ideal = gold.len().min(big_k);
    let ideal: Vec<f64> = (0..big_k)
        .map(|i| if i < n_ideal { 1.0 } else { 0.0 })
        .collect();
    let mut labels: Vec<f64> = pred
        .iter()
        .take(big_k)
        .map(|p| if gold.contains(p) { 1.0 } else { 0.0 })
        .collect();
    labels.resize(big_k, 0.0);

    let sum = |v: &[f64], k: usize| v.iter().take(k).sum::<f64>();
    let dcg = |v: &[f64], k: usize| {
        v.iter()
            .take(k)
            .enumerate()
            .map(|(i, x)| x / ((i + 2) as f64).log2())
            .sum::<f64>()
    };
    let finite_or_zero = |x: f64| if x.is_finite() { x } else { 0.0 };

    let mut scores = LevelScores {
        level,
        acc: Vec::with_capacity(ks.len()),
        recall: Vec::with_capacity(ks.len()),
        ndcg: Vec::with_capacity(ks.len()),
        map: Vec::with_capacity(ks.len()),
    };
    for &k in ks {
        let hits = sum(&labels, k);
        scores
            .acc
            .push(if hits == sum(&ideal, k) { 1.0 } else { 0.0 });
        scores.recall.push(finite_or_zero(hits / n_ideal as f64));
        scores
            .ndcg
            .push(finite_or_zero(dcg(&labels, k) / dcg(&ideal, k)));
        let mut seen = 0.0;
        let mut ap = 0.0;
        for (j, &x) in labels.iter().take(k).enumerate() {
            if x > 0.0 {
                seen += 1.0;
                ap += seen / (j + 1) as f64;
            }
        }
        scores.map.push(ap / k as f64);
    }
    Some(scores)
}

/// The names of the metric columns of one level, in the order [`LevelScores::values`]
/// yields them: `file_acc_1, file_acc_3, …, file_recall_1, …, file_ndcg_1, …, file_map_1, …`.
pub fn column_names(level: Level) -> Vec<String> {
    let mut cols = Vec::new();
    for metric in ["acc", "recall", "ndcg", "map"] {
        for k in level.ks() {
            cols.push(format!("{}_{metric}_{k}", level.name()));
        }
    }
    cols
}

impl LevelScores {
    /// Values in [`column_names`] order.
    pub fn values(&self) -> Vec<f64> {
        [&self.acc, &self.recall, &self.ndcg, &self.map]
            .into_iter()
            .flat_map(|v| v.iter().copied())
            .collect()
    }
}

/// Mean of per-instance values rounded to 4 decimals, as LocAgent reports them
/// (a fraction: 0.7774, not 77.74). `None` for an empty slice.
pub fn locagent_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    Some((mean * 10_000.0).round() / 10_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn acc_requires_all_of_topk_when_gold_is_larger() {
        let gold = s(&["a", "b", "c"]);
        // Top-1 is gold: acc@1 succeeds. Top-3 has 2 of 3 gold: acc@3 fails.
        let sc = score_level(Level::File, &gold, &s(&["a", "x", "b"])).unwrap();
        assert_eq!(sc.acc, vec![1.0, 0.0, 0.0]);
        // recall@5 is 2 / min(3, 5).
        assert!((sc.recall[2] - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn single_gold_found_at_rank_two() {
        let gold = s(&["g"]);
        let sc = score_level(Level::Function, &gold, &s(&["x", "g"])).unwrap();
        assert_eq!(sc.acc, vec![1.0, 1.0]);
        assert_eq!(sc.recall, vec![1.0, 1.0]);
        let want_ndcg = 1.0 / 3f64.log2();
        assert!((sc.ndcg[0] - want_ndcg).abs() < 1e-12);
        // map@5 = (1/2) / 5: divided by k, LocAgent's quirk.
        assert!((sc.map[0] - 0.1).abs() < 1e-12);
        assert!((sc.map[1] - 0.05).abs() < 1e-12);
    }

    #[test]
    fn duplicate_predictions_count_twice() {
        let gold = s(&["a", "b"]);
        let sc = score_level(Level::File, &gold, &s(&["a", "a"])).unwrap();
        // Two hits in the top 3 equal the two ideal ones: acc@3 succeeds, as in the original.
        assert_eq!(sc.acc[1], 1.0);
    }

    #[test]
    fn empty_gold_is_skipped_and_empty_pred_scores_zero() {
        assert!(score_level(Level::File, &[], &s(&["a"])).is_none());
        let sc = score_level(Level::Module, &s(&["a"]), &[]).unwrap();
        assert!(sc.values().iter().all(|v| *v == 0.0));
    }

    #[test]
    fn gold_beyond_big_k_is_capped() {
        // 12 gold functions, K = 10: ideal has 10 ones; 10 gold in the top 10 is acc@10.
        let gold: Vec<String> = (0..12).map(|i| format!("g{i}")).collect();
        let pred: Vec<String> = (0..10).map(|i| format!("g{i}")).collect();
        let sc = score_level(Level::Function, &gold, &pred).unwrap();
        assert_eq!(sc.acc, vec![1.0, 1.0]);
        assert_eq!(sc.recall[1], 1.0);
    }

    #[test]
    fn column_names_match_values() {
        let sc = score_level(Level::File, &s(&["a"]), &s(&["a"])).unwrap();
        assert_eq!(column_names(Level::File).len(), sc.values().len());
        assert_eq!(column_names(Level::File)[0], "file_acc_1");
        assert_eq!(column_names(Level::Module)[5], "module_ndcg_10");
    }

    #[test]
    fn mean_rounds_to_four_decimals() {
        assert_eq!(locagent_mean(&[1.0, 0.0, 0.0]), Some(0.3333));
        assert_eq!(locagent_mean(&[]), None);
    }

    /// The published LocAgent + Claude-3.5 predictions on the 24 dev instances, scored
    /// against the dataset's gold, give the figures of `shared/datasets/README.md`.
    #[test]
    fn reproduces_the_published_dev_figures() {
        let ds = crate::data::dataset::Dataset::from_jsonl("dev", crate::run::inputs::DEV_DATASET);
        assert_eq!(ds.instances.len(), 24);
        let mut per_level: Vec<Vec<Vec<f64>>> = vec![Vec::new(); 3];
        for inst in &ds.instances {
            let gold = inst.gold.clone().unwrap();
            let pred: crate::data::dataset::Locations =
                inst.locagent_claude35.clone().unwrap().into();
            for (i, (level, g, p)) in [
                (Level::File, &gold.files, &pred.files),
                (Level::Module, &gold.modules, &pred.modules),
                (Level::Function, &gold.functions, &pred.functions),
            ]
            .into_iter()
            .enumerate()
            {
                per_level[i].push(score_level(level, g, p).unwrap().acc);
            }
        }
        let pct = |level: usize, k: usize| {
            let vals: Vec<f64> = per_level[level].iter().map(|a| a[k]).collect();
            format!("{:.1}", locagent_mean(&vals).unwrap() * 100.0)
        };
        let got = [
            pct(0, 0),
            pct(0, 1),
            pct(0, 2),
            pct(1, 0),
            pct(1, 1),
            pct(2, 0),
            pct(2, 1),
        ];
        assert_eq!(
            got,
            ["79.2", "95.8", "95.8", "87.5", "91.7", "79.2", "87.5"]
        );
    }
}
