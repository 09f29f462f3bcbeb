//! Leave-one-repository-out: how a tuning procedure's choice holds on a repository it
//! never saw. For each repository R, the setting with the best objective on the
//! other repositories is chosen and scored on R alone; the held-out figure pools
//! every instance under its own fold's choice. Beside it stand the in-sample figures:
//! the shipped defaults, and the best setting chosen on every repository at once
//! (what fitting on the whole set promises).
//!
//! The objective is the mean of the three levels' headline accuracies — file Acc@5,
//! module Acc@10, function Acc@10, each averaged over the instances with gold at that
//! level — so no level is tuned at the others' expense. Ties keep the earlier
//! setting, and the defaults come first ([`super::grid::settings`]).

use crate::data::dataset::Locations;
use crate::score::metrics::{Level, score_level};

/// The accuracies a tuning run keeps per instance and setting, in this order.
pub const COLUMNS: [&str; 7] = [
    "file@1", "file@3", "file@5", "mod@5", "mod@10", "fn@5", "fn@10",
];
/// Indexes in [`COLUMNS`] of the objective's three figures.
const HEADLINE: [usize; 3] = [2, 4, 6];

/// One instance's accuracies (0 or 1); `None` where its gold has nothing at that level.
pub type Accs = [Option<f64>; 7];

/// One instance of a tuning run: its accuracies under every setting, by setting index.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub instance: String,
    pub repo: String,
    pub by_setting: Vec<Accs>,
}

/// The accuracies of `pred` against `gold`.
pub fn accs(gold: &Locations, pred: &Locations) -> Accs {
    let mut out = [None; 7];
    let mut at = 0;
    for level in Level::ALL {
        let (g, p) = match level {
            Level::File => (&gold.files, &pred.files),
            Level::Module => (&gold.modules, &pred.modules),
            Level::Function => (&gold.functions, &pred.functions),
        };
        let scores = score_level(level, g, p);
        for i in 0..level.ks().len() {
            out[at] = scores.as_ref().map(|s| s.acc[i]);
            at += 1;
        }
    }
    out
}

/// Mean accuracies (0–1) of `rows` under `setting`, each over the rows with gold.
pub fn means(rows: &[&Scored], setting: usize) -> Accs {
    let mut out = [None; 7];
    for (c, slot) in out.iter_mut().enumerate() {
        let vals: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.by_setting.get(setting).and_then(|a| a[c]))
            .collect();
        if !vals.is_empty() {
            *slot = Some(vals.iter().sum::<f64>() / vals.len() as f64);
        }
    }
    out
}

/// The objective of some means (see the module doc); 0 when no level has gold.
pub fn objective(m: &Accs) -> f64 {
    let vals: Vec<f64> = HEADLINE.iter().filter_map(|&i| m[i]).collect();
    match vals.is_empty() {
        true => 0.0,
        false => vals.iter().sum::<f64>() / vals.len() as f64,
    }
}

/// The setting with the best objective on `rows` (the earliest on a tie).
pub fn best(rows: &[&Scored], n_settings: usize) -> usize {
    let mut best = (0, f64::NEG_INFINITY);
    for s in 0..n_settings {
        let o = objective(&means(rows, s));
        if o > best.1 + 1e-12 {
            best = (s, o);
        }
    }
    best.0
}

/// One held-out repository.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    pub repo: String,
    pub instances: usize,
    /// The setting chosen on the other repositories.
    pub chosen: usize,
    /// The repository's figures under the defaults.
    pub default: Accs,
    /// Its figures under the chosen setting.
    pub held_out: Accs,
}

/// A variant's leave-one-repository-out table.
#[derive(Debug, Clone, PartialEq)]
pub struct Loo {
    /// Every instance under the defaults.
    pub default: Accs,
    /// The setting best on every instance, and its figures (in-sample).
    pub best: (usize, Accs),
    /// Every instance under its fold's choice; `None` with fewer than two repositories.
    pub held_out: Option<Accs>,
    pub folds: Vec<Fold>,
}

/// Computes the table for `rows`, scored under `n_settings` settings.
pub fn leave_one_repository_out(rows: &[Scored], n_settings: usize) -> Loo {
    let all: Vec<&Scored> = rows.iter().collect();
    let chosen_all = best(&all, n_settings);
    let mut repos: Vec<&str> = Vec::new();
    for r in rows {
        if !repos.contains(&r.repo.as_str()) {
            repos.push(&r.repo);
        }
    }
    let mut folds = Vec::new();
    let mut pooled: Vec<Scored> = Vec::new();
    if repos.len() >= 2 {
        for repo in &repos {
            let (inside, outside): (Vec<&Scored>, Vec<&Scored>) =
                all.iter().partition(|r| r.repo == *repo);
            let chosen = best(&outside, n_settings);
            folds.push(Fold {
                repo: repo.to_string(),
                instances: inside.len(),
                chosen,
                default: means(&inside, 0),
                held_out: means(&inside, chosen),
            });
            pooled.extend(inside.iter().map(|r| Scored {
                by_setting: r.by_setting.get(chosen).into_iter().copied().collect(),
                ..(*r).clone()
            }));
        }
    }
    let pooled_refs: Vec<&Scored> = pooled.iter().collect();
    Loo {
        default: means(&all, 0),
        best: (chosen_all, means(&all, chosen_all)),
        held_out: (!folds.is_empty()).then(|| means(&pooled_refs, 0)),
        folds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instance of `repo` whose headline accuracies are `v` under each setting.
    fn row(repo: &str, v: &[f64]) -> Scored {
        Scored {
            instance: format!("{repo}-{}", v.len()),
            repo: repo.into(),
            by_setting: v
                .iter()
                .map(|&x| [Some(x), Some(x), Some(x), Some(x), Some(x), None, Some(x)])
                .collect(),
        }
    }

    #[test]
    fn accuracies_follow_locagents_levels_and_leave_missing_gold_out() {
        let gold = Locations {
            files: vec!["a.py".into()],
            modules: vec!["a.py:f".into()],
            functions: vec![],
        };
        let pred = Locations {
            files: vec!["b.py".into(), "a.py".into()],
            modules: vec!["a.py:f".into()],
            functions: vec!["a.py:f".into()],
        };
        assert_eq!(
            accs(&gold, &pred),
            [
                Some(0.0),
                Some(1.0),
                Some(1.0),
                Some(1.0),
                Some(1.0),
                None,
                None
            ]
        );
    }

    #[test]
    fn a_setting_fitted_to_one_repository_is_chosen_only_where_it_helps_the_others() {
        // Setting 1 is perfect on `a` and useless elsewhere; setting 2 is a little
        // better than the defaults everywhere.
        let rows = vec![
            row("a", &[0.5, 1.0, 0.6]),
            row("a", &[0.5, 1.0, 0.6]),
            row("a", &[0.5, 1.0, 0.6]),
            row("b", &[0.5, 0.0, 0.6]),
            row("c", &[0.5, 0.0, 0.6]),
        ];
        let loo = leave_one_repository_out(&rows, 3);
        // In sample, setting 1 wins (3 of 5 instances perfect).
        assert_eq!(loo.best.0, 1);
        assert_eq!(objective(&loo.best.1), 0.6);
        assert_eq!(objective(&loo.default), 0.5);
        let chosen: Vec<(&str, usize)> = loo
            .folds
            .iter()
            .map(|f| (f.repo.as_str(), f.chosen))
            .collect();
        // Held out `a`, the others prefer setting 2; held out `b` or `c`, the other
        // folds still hold `a`'s three instances, so setting 1 is chosen and fails.
        assert_eq!(chosen, [("a", 2), ("b", 1), ("c", 1)]);
        let held = loo.held_out.unwrap();
        // a: 3 × 0.6, b: 0, c: 0 → 1.8 / 5.
        assert!((objective(&held) - 0.36).abs() < 1e-9, "{held:?}");
        assert_eq!(held[5], None);
    }

    #[test]
    fn one_repository_has_no_held_out_figure_and_ties_keep_the_defaults() {
        let rows = vec![row("a", &[0.5, 0.5]), row("a", &[1.0, 1.0])];
        let loo = leave_one_repository_out(&rows, 2);
        assert_eq!(loo.held_out, None);
        assert!(loo.folds.is_empty());
        assert_eq!(loo.best.0, 0);
    }
}
