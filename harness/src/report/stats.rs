//! The statistics behind `navbench report` and `navbench compare`, in plain Rust so
//! they can be checked against hand-computed cases:
//! - [`bootstrap_mean`]: a percentile bootstrap confidence interval for a mean;
//! - [`paired_bootstrap_diff`]: the same for the mean difference of paired values
//!   (both variants on the same instances, resampled together);
//! - [`mcnemar_exact`]: the exact (binomial, two-sided) McNemar test on discordant pairs;
//! - [`quantile`]: linear interpolation between order statistics (numpy's default);
//! - [`cost_stat`]: a per-instance cost as reports show it (mean with interval, p50, p95).
//!
//! Resampling uses [`Rng`], a small seeded generator (SplitMix64), so a report made twice
//! from the same runs prints the same intervals.

/// The seed every report uses unless told otherwise ("navbench" in ASCII).
pub const DEFAULT_SEED: u64 = 0x6e61_7662_656e_6368;
/// Bootstrap resamples unless told otherwise.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// Confidence level of the intervals.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// SplitMix64: tiny, fast, good enough for resampling, and identical on every platform.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n > 0`), without modulo bias (Lemire's method with
    /// rejection).
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        if n <= 1 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as usize;
            }
        }
    }
}

/// A point estimate with a confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The statistic on the observed data.
    pub value: f64,
    /// Lower bound of the interval.
    pub lo: f64,
    /// Upper bound of the interval.
    pub hi: f64,
}

/// How to bootstrap: resample count, confidence level and seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    pub resamples: usize,
    /// Confidence level in (0, 1), e.g. 0.95.
    pub level: f64,
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: DEFAULT_RESAMPLES,
            level: DEFAULT_LEVEL,
            seed: DEFAULT_SEED,
        }
    }
}

/// Arithmetic mean; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// The `q` quantile (0 ≤ q ≤ 1) of sorted values by linear interpolation between the
/// order statistics at `q·(n−1)` (numpy's "linear"); `None` when empty.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Sorts floats (NaNs last) for [`quantile`].
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// Percentile interval of bootstrap replicates at `level`.
fn percentile_interval(mut reps: Vec<f64>, level: f64) -> (f64, f64) {
    reps.sort_by(|a, b| a.total_cmp(b));
    let alpha = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    let lo = quantile(&reps, alpha).unwrap_or(f64::NAN);
    let hi = quantile(&reps, 1.0 - alpha).unwrap_or(f64::NAN);
    (lo, hi)
}

/// Mean of `values` with a percentile-bootstrap interval: `resamples` times, draw `n`
/// values with replacement and take the mean; the interval holds the central `level`
/// of those means. `None` for no values. With one value (or all equal) the interval
/// is that value.
pub fn bootstrap_mean(values: &[f64], cfg: &Bootstrap) -> Option<Estimate> {
    let value = mean(values)?;
    let n = values.len();
    if n == 1 || values.iter().all(|v| *v == values[0]) || cfg.resamples == 0 {
        return Some(Estimate {
            value,
            lo: value,
            hi: value,
        });
    }
    let mut rng = Rng::new(cfg.seed);
    let reps: Vec<f64> = (0..cfg.resamples)
        .map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    let (lo, hi) = percentile_interval(reps, cfg.level);
    Some(Estimate { value, lo, hi })
}

/// Mean of `b[i] − a[i]` with a paired percentile-bootstrap interval: instances are
/// resampled, each carrying both of its values, so what the two variants share (an
/// easy instance is easy for both) does not widen the interval. `None` when the slices
/// are empty or of different lengths.
pub fn paired_bootstrap_diff(a: &[f64], b: &[f64], cfg: &Bootstrap) -> Option<Estimate> {
    if a.len() != b.len() {
        return None;
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    bootstrap_mean(&diffs, cfg)
}

/// The exact McNemar test: of the `b + c` discordant pairs (`b` where only the first
/// variant succeeds, `c` where only the second does), is the split compatible with a
/// fair coin? Two-sided p-value `min(1, 2·P(X ≤ min(b, c)))`, `X ~ Binomial(b + c, ½)`;
/// 1 when there is no discordant pair.
pub fn mcnemar_exact(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // Sum the binomial pmf in log space (0.5^n underflows for large n).
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut terms = Vec::with_capacity(k + 1);
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        terms.push(ln_choose - ln2n);
    }
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = max.exp() * terms.iter().map(|t| (t - max).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// A per-instance cost summarized: mean with its bootstrap interval, median and 95th
/// percentile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostStat {
    pub mean: Estimate,
    pub p50: f64,
    pub p95: f64,
}

/// [`CostStat`] of `values`; `None` for no values.
pub fn cost_stat(values: &[f64], cfg: &Bootstrap) -> Option<CostStat> {
    let sorted = sorted(values);
    Some(CostStat {
        mean: bootstrap_mean(values, cfg)?,
        p50: quantile(&sorted, 0.5)?,
        p95: quantile(&sorted, 0.95)?,
    })
}

/// Counts of a paired binary outcome: `a_only` where only A succeeded, `b_only` where
/// only B did, `both` and `neither`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Discordance {
    pub both: usize,
    pub a_only: usize,
    pub b_only: usize,
    pub neither: usize,
}

impl Discordance {
    /// Tallies paired outcomes (a value ≥ 0.5 is a success).
    pub fn of(a: &[f64], b: &[f64]) -> Discordance {
        let mut d = Discordance::default();
        for (x, y) in a.iter().zip(b) {
            match (*x >= 0.5, *y >= 0.5) {
                (true, true) => d.both += 1,
                (true, false) => d.a_only += 1,
                (false, true) => d.b_only += 1,
                (false, false) => d.neither += 1,
            }
        }
        d
    }

    /// [`mcnemar_exact`] on the discordant pairs.
    pub fn p_value(&self) -> f64 {
        mcnemar_exact(self.a_only, self.b_only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn mcnemar_matches_hand_computed_binomial_tails() {
        // No discordant pair: nothing to test.
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // 0 vs 5: 2 · (1/32).
        assert!(close(mcnemar_exact(0, 5), 2.0 / 32.0));
        assert!(close(mcnemar_exact(5, 0), 2.0 / 32.0));
        // 1 vs 9: 2 · (C(10,0) + C(10,1)) / 1024 = 22/1024.
        assert!(close(mcnemar_exact(1, 9), 22.0 / 1024.0));
        // 2 vs 8: 2 · (1 + 10 + 45) / 1024 = 112/1024.
        assert!(close(mcnemar_exact(8, 2), 112.0 / 1024.0));
        // A balanced split is capped at 1: 2 · (1+6+15+20)/64 > 1.
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        // One discordant pair: 2 · 1/2.
        assert_eq!(mcnemar_exact(1, 0), 1.0);
        // Large n stays finite and tiny: 0 vs 2000.
        let p = mcnemar_exact(0, 2000);
        assert!((0.0..1e-300).contains(&p), "{p}");
        // Symmetric at large n, and close to 1 for a near-even split.
        assert!(close(mcnemar_exact(700, 720), mcnemar_exact(720, 700)));
        assert!(mcnemar_exact(700, 720) > 0.5);
    }

    #[test]
    fn cost_stat_gives_mean_median_and_p95() {
        let c = cost_stat(&[4.0, 1.0, 3.0, 2.0], &Bootstrap::default()).unwrap();
        assert_eq!((c.mean.value, c.p50), (2.5, 2.5));
        assert!(close(c.p95, 3.85));
        assert!(c.mean.lo <= 2.5 && c.mean.hi >= 2.5);
        assert_eq!(cost_stat(&[], &Bootstrap::default()), None);
    }

    #[test]
    fn quantile_interpolates_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), Some(1.0));
        assert_eq!(quantile(&v, 1.0), Some(4.0));
        assert_eq!(quantile(&v, 0.5), Some(2.5));
        // 0.95 · 3 = 2.85 → 3 + 0.85.
        assert!(close(quantile(&v, 0.95).unwrap(), 3.85));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[7.0], 0.95), Some(7.0));
    }

    #[test]
    fn bootstrap_of_constant_or_single_values_is_degenerate() {
        let cfg = Bootstrap::default();
        let e = bootstrap_mean(&[1.0, 1.0, 1.0], &cfg).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (1.0, 1.0, 1.0));
        let e = bootstrap_mean(&[0.25], &cfg).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (0.25, 0.25, 0.25));
        assert!(bootstrap_mean(&[], &cfg).is_none());
    }

    #[test]
    fn bootstrap_of_two_values_spans_both() {
        // Resampled means of {0, 1} are 0 (¼), ½ (½) and 1 (¼): the central 95% is [0, 1].
        let e = bootstrap_mean(&[0.0, 1.0], &Bootstrap::default()).unwrap();
        assert_eq!(e.value, 0.5);
        assert_eq!((e.lo, e.hi), (0.0, 1.0));
    }

    #[test]
    fn bootstrap_of_one_success_in_ten_matches_the_binomial() {
        // Resampled successes ~ Binomial(10, 0.1): P(0) = 0.349 > 2.5%, so the lower bound
        // is 0; P(≤2) = 0.930 < 97.5% ≤ P(≤3) = 0.987, so the upper bound is 0.3.
        let mut v = vec![0.0; 10];
        v[3] = 1.0;
        let e = bootstrap_mean(&v, &Bootstrap::default()).unwrap();
        assert!(close(e.value, 0.1));
        assert_eq!(e.lo, 0.0);
        assert!(close(e.hi, 0.3), "{e:?}");
    }

    #[test]
    fn bootstrap_is_reproducible_with_its_seed() {
        let v: Vec<f64> = (0..37).map(|i| ((i * 7) % 5) as f64 / 4.0).collect();
        let cfg = Bootstrap::default();
        assert_eq!(bootstrap_mean(&v, &cfg), bootstrap_mean(&v, &cfg));
        let other = Bootstrap { seed: 1, ..cfg };
        let (a, b) = (
            bootstrap_mean(&v, &cfg).unwrap(),
            bootstrap_mean(&v, &other).unwrap(),
        );
        assert_eq!(a.value, b.value);
        assert!(a.lo <= a.value && a.value <= a.hi);
    }

    #[test]
    fn paired_bootstrap_sees_a_constant_shift_exactly() {
        // B is A plus 0.1 on every instance: paired, the difference is exactly 0.1 even
        // though A alone varies a lot.
        let a = [0.0, 1.0, 0.2, 0.9, 0.5, 0.0, 1.0];
        let b: Vec<f64> = a.iter().map(|x| x + 0.1).collect();
        let e = paired_bootstrap_diff(&a, &b, &Bootstrap::default()).unwrap();
        assert!(
            close(e.value, 0.1) && close(e.lo, 0.1) && close(e.hi, 0.1),
            "{e:?}"
        );
        // One instance flips from miss to hit out of two: diffs {0, 1} → [0, 1].
        let e = paired_bootstrap_diff(&[0.0, 0.0], &[0.0, 1.0], &Bootstrap::default()).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (0.5, 0.0, 1.0));
        assert!(paired_bootstrap_diff(&[1.0], &[], &Bootstrap::default()).is_none());
    }

    #[test]
    fn discordance_counts_and_p_value() {
        let a = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0];
        let b = [1.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let d = Discordance::of(&a, &b);
        assert_eq!(
            d,
            Discordance {
                both: 2,
                a_only: 1,
                b_only: 3,
                neither: 0
            }
        );
        // 1 vs 3: 2 · (1 + 4) / 16.
        assert!(close(d.p_value(), 10.0 / 16.0));
    }

    #[test]
    fn rng_below_is_in_range_and_roughly_uniform() {
        let mut rng = Rng::new(DEFAULT_SEED);
        let mut counts = [0usize; 3];
        for _ in 0..30_000 {
            counts[rng.below(3)] += 1;
        }
        assert!(
            counts.iter().all(|c| (9_000..11_000).contains(c)),
            "{counts:?}"
        );
        assert_eq!(rng.below(1), 0);
    }
}
