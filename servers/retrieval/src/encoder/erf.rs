//! The error function for GELU in the distillation pass: four polynomials in `f64`,
//! all evaluated for every input and the right one selected, so a loop over a slice
//! vectorises (no branches, no table look-ups).
//!
//! A BERT layer applies GELU to every intermediate activation: for MiniLM's
//! vocabulary that is ~800 million `erf` calls, and libm's `erff` (what candle's
//! `gelu_erf` calls) branches on the input and spends two `expf` on most of them:
//! about a third of the whole pass. The polynomials interpolate libm's `erf` (in
//! `f64`, at Chebyshev nodes, once): `x · P(x²)` below 1 (relative accuracy near
//! zero), then one polynomial in `|x| − centre` on each of `[1, 2)`, `[2, 3)` and
//! `[3, 4)`; beyond 4, `erf` rounds to ±1 in `f32`. Each is within 1e-9 of `erf`
//! and evaluated in `f64`, so the result rounded to `f32` is the correctly rounded
//! `erf` but for inputs within 1e-9 of a tie: within an ulp of libm's `erff`, which
//! is itself an ulp off the correct rounding on ~2% of inputs. (Evaluated in `f32`,
//! Horner's rule would leave up to three ulps.)

/// `erf` by pieces (see the module docs); coefficients of rising powers.
pub struct Erf {
    /// `erf(x) / x` in powers of `x²`, for `|x| < 1`.
    small: [f64; 9],
    /// `erf` in powers of `|x| − 1.5`, on `[1, 2)`.
    one: [f64; 11],
    /// `erf` in powers of `|x| − 2.5`, on `[2, 3)`.
    two: [f64; 10],
    /// `erf` in powers of `|x| − 3.5`, on `[3, 4)`.
    three: [f64; 9],
}

impl Erf {
    /// Interpolates libm's `erf` (see the module docs).
    pub fn new() -> Erf {
        let erf = candle_core::cpu::erf::erf_f64;
        let over_x = |s: f64| {
            let x = s.sqrt();
            if x > 0.0 {
                erf(x) / x
            } else {
                std::f64::consts::FRAC_2_SQRT_PI
            }
        };
        Erf {
            small: interpolate(over_x, (0.0, 1.0), 0.0),
            one: interpolate(erf, (1.0, 2.0), 1.5),
            two: interpolate(erf, (2.0, 3.0), 2.5),
            three: interpolate(erf, (3.0, 4.0), 3.5),
        }
    }

    /// `erf(x)` (NaN stays NaN).
    #[inline(always)]
    pub fn eval(&self, x: f32) -> f32 {
        let a = f64::from(x.abs());
        // Every piece is computed (the unused ones may overflow harmlessly): selects,
        // not branches.
        let small = a * horner(&self.small, a * a);
        let one = horner(&self.one, a - 1.5);
        let two = horner(&self.two, a - 2.5);
        let three = horner(&self.three, a - 3.5);
        let r = if a < 1.0 {
            small
        } else if a < 2.0 {
            one
        } else if a < 3.0 {
            two
        } else if a < 4.0 {
            three
        } else {
            1.0
        };
        if x.is_nan() {
            x
        } else {
            (r as f32).copysign(x)
        }
    }

    /// candle's `gelu_erf` in place: `(erf(v/√2) + 1) · 0.5 · v`, in its `f32` order.
    pub fn gelu(&self, xs: &mut [f32]) {
        for v in xs {
            *v = (self.eval(*v * std::f32::consts::FRAC_1_SQRT_2) + 1.) * 0.5 * *v;
        }
    }
}

#[inline(always)]
fn horner<const N: usize>(coefficients: &[f64; N], u: f64) -> f64 {
    coefficients.iter().rev().fold(0f64, |acc, &c| acc * u + c)
}

/// The polynomial of degree `N − 1` interpolating `f` at the Chebyshev nodes of
/// `[lo, hi]`, as coefficients of rising powers of `y − origin`.
fn interpolate<const N: usize>(
    f: impl Fn(f64) -> f64,
    (lo, hi): (f64, f64),
    origin: f64,
) -> [f64; N] {
    use std::f64::consts::PI;
    let (mid, half) = ((lo + hi) / 2.0, (hi - lo) / 2.0);
    let angle = |j: usize, k: usize| PI * j as f64 * (k as f64 + 0.5) / N as f64;
    let values: Vec<f64> = (0..N).map(|k| f(mid + half * angle(1, k).cos())).collect();
    // In powers of t = (y − mid) / half: Σ c_j T_j(t).
    let mut in_t = [0f64; N];
    let mut prev = [0f64; N];
    let mut cur = [0f64; N];
    for j in 0..N {
        // T_j in powers of t, from T_{j−1} (cur) and T_{j−2} (prev).
        let next: [f64; N] = match j {
            0 => std::array::from_fn(|k| if k == 0 { 1.0 } else { 0.0 }),
            1 => std::array::from_fn(|k| if k == 1 { 1.0 } else { 0.0 }),
            _ => std::array::from_fn(|k| (if k > 0 { 2.0 * cur[k - 1] } else { 0.0 }) - prev[k]),
        };
        let weight = if j == 0 { 1.0 } else { 2.0 } / N as f64;
        let c: f64 = weight * (0..N).map(|k| values[k] * angle(j, k).cos()).sum::<f64>();
        for (o, p) in in_t.iter_mut().zip(&next) {
            *o += c * p;
        }
        (prev, cur) = (cur, next);
    }
    // t = α·u + β with u = y − origin; expand Σ m_i (α·u + β)^i.
    let (alpha, beta) = (1.0 / half, (origin - mid) / half);
    let mut out = [0f64; N];
    for (i, m) in in_t.iter().enumerate() {
        let mut binomial = 1f64;
        for (k, o) in out.iter_mut().enumerate().take(i + 1) {
            *o += m * binomial * alpha.powi(k as i32) * beta.powi((i - k) as i32);
            binomial = binomial * (i - k) as f64 / (k + 1) as f64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::cpu::erf::erf_f32;

    /// Distance in ulps of two finite values of the same sign.
    fn ulps(a: f32, b: f32) -> u32 {
        assert!(
            a == 0.0 || b == 0.0 || a.signum() == b.signum(),
            "{a} vs {b}"
        );
        (a.abs().to_bits() as i64 - b.abs().to_bits() as i64).unsigned_abs() as u32
    }

    /// libm's `erf` in `f64`, rounded: the correctly rounded `f32` result (but for
    /// ties closer than its own error).
    fn rounded(x: f32) -> f32 {
        candle_core::cpu::erf::erf_f64(f64::from(x)) as f32
    }

    /// Against the correctly rounded `erf`, and against libm's `erff` (candle's).
    #[test]
    fn correctly_rounded_but_near_ties_and_within_an_ulp_of_erff() {
        let erf = Erf::new();
        let n = 2_000_000;
        let xs = (0..=n).map(|k| -4.5 + 9.0 * k as f32 / n as f32);
        let (mut off_rounded, mut worst_rounded, mut worst_erff) = (0usize, 0u32, 0u32);
        for x in xs.chain([1e-30, -1e-20, 1e-6, 0.999_999_9, 1.0, 2.0, 3.0, 3.999_999_8]) {
            let got = erf.eval(x);
            let u = ulps(got, rounded(x));
            off_rounded += usize::from(u > 0);
            worst_rounded = worst_rounded.max(u);
            worst_erff = worst_erff.max(ulps(got, erf_f32(x)));
        }
        assert!(
            worst_rounded <= 1,
            "{worst_rounded} ulps from the rounded erf"
        );
        assert!(worst_erff <= 1, "{worst_erff} ulps from erff");
        assert!(
            off_rounded < n / 1000,
            "{off_rounded} of {n} not correctly rounded"
        );
    }

    #[test]
    fn gelu_follows_candles_gelu_erf() {
        let erf = Erf::new();
        let xs: Vec<f32> = (0..=20_000)
            .map(|k| -8.0 + 16.0 * k as f32 / 20_000.0)
            .collect();
        let mut got = xs.clone();
        erf.gelu(&mut got);
        let t = candle_core::Tensor::new(xs.as_slice(), &candle_core::Device::Cpu).unwrap();
        let want: Vec<f32> = t.gelu_erf().unwrap().to_vec1().unwrap();
        for ((x, g), w) in xs.iter().zip(&got).zip(&want) {
            assert!(
                (g - w).abs() <= 3.0 * f32::EPSILON * x.abs().max(1e-3),
                "{x}: {g} vs {w}"
            );
        }
    }

    #[test]
    fn odd_saturating_and_nan_preserving() {
        let erf = Erf::new();
        for x in [0.1f32, 0.7, 1.3, 2.9, 3.99] {
            assert_eq!(erf.eval(-x), -erf.eval(x));
        }
        assert_eq!(erf.eval(0.0).to_bits(), 0f32.to_bits());
        assert_eq!(erf.eval(-0.0).to_bits(), (-0f32).to_bits());
        assert_eq!(erf.eval(1e-30), rounded(1e-30));
        assert_eq!(erf.eval(4.0), 1.0);
        assert_eq!(erf.eval(-1e30), -1.0);
        assert_eq!(erf.eval(f32::INFINITY), 1.0);
        assert!(erf.eval(f32::NAN).is_nan());
    }
}
