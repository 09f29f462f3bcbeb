//! Fitting a ranker from feature tables: a pairwise logistic model (RankNet with a
//! linear scorer) per variant and level, fitted by Newton's method with a small L2
//! penalty, and evaluated in sample and leave-one-repository-out.
//!
//! Each instance's gold candidates are paired with the negatives of its pool (the
//! first [`NEGATIVES`] in the pool's order, the ones a better order must pass); the
//! loss is `log(1 + exp(-w·(x⁺ - x⁻)))`, averaged per instance so an instance with a
//! large pool weighs as much as one with a small one. The loss is convex, so the fit
//! is deterministic and needs no tuning of its own.

use std::collections::BTreeMap;

use crate::policy::fitted::{dot, features};

/// Negatives paired with each positive, in the pool's order.
pub const NEGATIVES: usize = 30;
/// L2 penalty on the weights (the loss is a mean over instances).
pub const L2: f64 = 1e-3;

/// One candidate of one instance at one level.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Rank in the hand-weighted answer (1-based), when it is in it.
    pub hand_rank: Option<usize>,
    pub label: bool,
    pub x: features::Row,
}

/// One instance's candidates at one level, in the pool's order, and its gold count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    pub candidates: Vec<Candidate>,
    pub n_gold: usize,
}

/// One instance as a variant played it: its repository and its three levels.
#[derive(Debug, Clone, PartialEq)]
pub struct Played {
    pub dataset: String,
    pub repo: String,
    pub instance: String,
    pub levels: [Group; 3],
}

/// The cut-off of each level's headline accuracy: file@5, module@10, function@10.
pub const HEADLINE_K: [usize; 3] = [5, 10, 10];

/// Fits the weights of level `level` on `played` (see the module doc).
pub fn fit(played: &[&Played], level: usize) -> Vec<f64> {
    let mut groups: Vec<Vec<features::Row>> = Vec::new();
    for p in played {
        let g = &p.levels[level];
        let negatives: Vec<&Candidate> = (g.candidates.iter())
            .filter(|c| !c.label)
            .take(NEGATIVES)
            .collect();
        let mut diffs = Vec::new();
        for pos in g.candidates.iter().filter(|c| c.label) {
            for neg in &negatives {
                let mut d = [0.0; features::N];
                for (k, slot) in d.iter_mut().enumerate() {
                    *slot = pos.x[k] - neg.x[k];
                }
                diffs.push(d);
            }
        }
        if !diffs.is_empty() {
            groups.push(diffs);
        }
    }
    newton(&groups)
}

/// Minimises the mean over groups of each group's mean pairwise logistic loss, plus
/// `L2/2 · |w|²`, by Newton's method from `w = 0`.
pub fn newton(groups: &[Vec<features::Row>]) -> Vec<f64> {
    const N: usize = features::N;
    let mut w = vec![0.0; N];
    if groups.is_empty() {
        return w;
    }
    let n_groups = groups.len() as f64;
    for _ in 0..50 {
        let mut grad = [0.0; N];
        let mut hess = [[0.0; N]; N];
        for g in groups {
            let share = 1.0 / (g.len() as f64 * n_groups);
            for d in g {
                let s = dot(&w, d);
                let p = 1.0 / (1.0 + s.exp()); // σ(-s)
                let curv = p * (1.0 - p) * share;
                for ((da, ga), row) in d.iter().zip(grad.iter_mut()).zip(hess.iter_mut()) {
                    *ga -= p * da * share;
                    if *da != 0.0 {
                        for (db, h) in d.iter().zip(row.iter_mut()) {
                            *h += curv * da * db;
                        }
                    }
                }
            }
        }
        for (a, (ga, row)) in grad.iter_mut().zip(hess.iter_mut()).enumerate() {
            *ga += L2 * w[a];
            row[a] += L2;
        }
        let Some(step) = solve(hess, grad) else { break };
        let mut size = 0.0_f64;
        for (wa, sa) in w.iter_mut().zip(step) {
            *wa -= sa;
            size = size.max(sa.abs());
        }
        if size < 1e-9 {
            break;
        }
    }
    w
}

/// Solves `a · x = b` for a symmetric positive definite `a` (Cholesky); `None` when
/// it is not. Written with indexes, as the textbook writes it.
#[allow(clippy::needless_range_loop)]
fn solve<const N: usize>(a: [[f64; N]; N], b: [f64; N]) -> Option<[f64; N]> {
    let mut l = [[0.0; N]; N];
    for i in 0..N {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = a[i][i] - s;
                if v <= 0.0 || !v.is_finite() {
                    return None;
                }
                l[i][j] = v.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    let mut y = [0.0; N];
    for i in 0..N {
        let s: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
        y[i] = (b[i] - s) / l[i][i];
    }
    let mut x = [0.0; N];
    for i in (0..N).rev() {
        let s: f64 = (i + 1..N).map(|k| l[k][i] * x[k]).sum();
        x[i] = (y[i] - s) / l[i][i];
    }
    Some(x)
}

/// Accuracy at `k` of an order of `g` (indexes into its candidates): every gold entry
/// (or `k` of them) within the first `k`; `None` without gold.
pub fn acc(g: &Group, order: &[usize], k: usize) -> Option<f64> {
    if g.n_gold == 0 {
        return None;
    }
    let hits = order
        .iter()
        .take(k)
        .filter(|&&i| g.candidates[i].label)
        .count();
    Some(if hits >= g.n_gold.min(k) { 1.0 } else { 0.0 })
}

/// The hand-weighted order of `g`.
pub fn hand_order(g: &Group) -> Vec<usize> {
    let mut v: Vec<(usize, usize)> = (g.candidates.iter().enumerate())
        .filter_map(|(i, c)| Some((c.hand_rank?, i)))
        .collect();
    v.sort();
    v.into_iter().map(|(_, i)| i).collect()
}

/// The order of `g` by `w` (ties in the pool's order).
pub fn model_order(g: &Group, w: &[f64]) -> Vec<usize> {
    let mut v: Vec<(usize, f64)> = (g.candidates.iter().enumerate())
        .map(|(i, c)| (i, dot(w, &c.x)))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter().map(|(i, _)| i).collect()
}

/// Mean headline accuracies (%, per level; `None` without gold) of some instances,
/// each ordered by `order(instance, level)`.
pub fn headline(
    played: &[&Played],
    mut order: impl FnMut(&Played, usize) -> Vec<usize>,
) -> [Option<f64>; 3] {
    let mut out = [None; 3];
    for (level, slot) in out.iter_mut().enumerate() {
        let vals: Vec<f64> = played
            .iter()
            .filter_map(|p| acc(&p.levels[level], &order(p, level), HEADLINE_K[level]))
            .collect();
        if !vals.is_empty() {
            *slot = Some(100.0 * vals.iter().sum::<f64>() / vals.len() as f64);
        }
    }
    out
}

/// Leave-one-repository-out: for each repository, the weights fitted on the others'
/// instances; keyed by repository.
pub fn loo_weights(played: &[&Played]) -> BTreeMap<String, [Vec<f64>; 3]> {
    let repos: std::collections::BTreeSet<&str> = played.iter().map(|p| p.repo.as_str()).collect();
    let mut out = BTreeMap::new();
    for repo in repos {
        let train: Vec<&Played> = played.iter().copied().filter(|p| p.repo != repo).collect();
        out.insert(repo.to_string(), [0, 1, 2].map(|l| fit(&train, l)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic table whose gold candidates are the ones with the larger
    /// `2·x0 − x1` (feature 2 is noise): the fit must recover that direction.
    fn synthetic(repos: usize, per_repo: usize) -> Vec<Played> {
        let mut seed = 7u64;
        let mut rnd = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut out = Vec::new();
        for r in 0..repos {
            for i in 0..per_repo {
                let mut cands: Vec<Candidate> = (0..8)
                    .map(|j| {
                        let mut x = [0.0; features::N];
                        (x[0], x[1], x[2]) = (rnd(), rnd(), rnd());
                        Candidate {
                            hand_rank: Some(j + 1),
                            label: false,
                            x,
                        }
                    })
                    .collect();
                let best = (0..cands.len())
                    .max_by(|&a, &b| {
                        let s = |c: &Candidate| 2.0 * c.x[0] - c.x[1];
                        s(&cands[a]).total_cmp(&s(&cands[b]))
                    })
                    .unwrap();
                cands[best].label = true;
                let g = Group {
                    candidates: cands,
                    n_gold: 1,
                };
                out.push(Played {
                    dataset: "s".into(),
                    repo: format!("o/r{r}"),
                    instance: format!("r{r}-{i}"),
                    levels: [g.clone(), g.clone(), g],
                });
            }
        }
        out
    }

    #[test]
    fn fitting_recovers_a_separating_direction() {
        let data = synthetic(3, 40);
        let refs: Vec<&Played> = data.iter().collect();
        let w = fit(&refs, 0);
        assert!(w[0] > 0.0 && w[1] < 0.0, "{w:?}");
        let ratio = -w[0] / w[1];
        assert!((1.5..2.7).contains(&ratio), "w0/w1 = {ratio}, {w:?}");
        assert!(w[2].abs() < 0.2 * w[0], "noise weight {w:?}");
        // The fitted order finds the gold first on every instance (separable data).
        let top1 = headline(&refs, |p, l| model_order(&p.levels[l], &w));
        assert_eq!(top1[0], Some(100.0));
        // The hand order is arbitrary here: far from perfect.
        let hand = headline(&refs, |p, l| hand_order(&p.levels[l]));
        assert!(hand[0].unwrap() < 90.0, "{hand:?}");
    }

    #[test]
    fn leave_one_out_never_trains_on_the_held_out_repository() {
        let mut data = synthetic(3, 10);
        // Repository r2's gold is the opposite rule: fitted without it, the weights
        // must still follow the other two; fitted with it they would weaken.
        for p in data.iter_mut().filter(|p| p.repo == "o/r2") {
            for g in &mut p.levels {
                for c in &mut g.candidates {
                    c.x[0] = 1.0 - c.x[0];
                }
            }
        }
        let refs: Vec<&Played> = data.iter().collect();
        let folds = loo_weights(&refs);
        assert_eq!(folds.keys().collect::<Vec<_>>(), ["o/r0", "o/r1", "o/r2"]);
        let only_good: Vec<&Played> = data.iter().filter(|p| p.repo != "o/r2").collect();
        assert_eq!(folds["o/r2"][0], fit(&only_good, 0));
        assert_ne!(folds["o/r0"][0], fit(&refs, 0));
    }

    #[test]
    fn accuracy_needs_every_gold_entry_within_k() {
        let c = |label| Candidate {
            hand_rank: None,
            label,
            x: [0.0; features::N],
        };
        let g = Group {
            candidates: vec![c(false), c(true), c(true)],
            n_gold: 3,
        };
        assert_eq!(acc(&g, &[0, 1, 2], 5), Some(0.0));
        let g = Group { n_gold: 2, ..g };
        assert_eq!(acc(&g, &[0, 1, 2], 5), Some(1.0));
        assert_eq!(acc(&g, &[0, 1, 2], 2), Some(0.0));
        assert_eq!(acc(&Group::default(), &[], 5), None);
    }
}
