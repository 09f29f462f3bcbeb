//! The numeric kernels of the pass, each in candle's order of operations so the
//! vectors agree with its tensor path to float rounding: `gemm` products (the kernels
//! candle's CPU matmul calls), bias after the product, one-pass layer norm, softmax
//! with the maximum subtracted, `gelu_erf`.

use super::weights::{Dense, Norm};
use crate::encoder::erf::Erf;

/// `out = x · wᵀ + b` over `rows` rows (the product first, then the bias, as candle's
/// `Linear` does).
///
/// A one-row product would take gemm's matrix-vector path, which sums in another order
/// than its matrix kernels; the row is then computed twice as a two-row product.
pub(super) fn dense(d: &Dense, x: &[f32], out: &mut Vec<f32>, rows: usize) {
    let n = d.b.len();
    if rows == 1 {
        let twice: Vec<f32> = x[..d.inputs].repeat(2);
        let mut two = vec![0f32; 2 * n];
        matmul_t(&twice, &d.w, d.inputs, &mut two);
        two.truncate(n);
        *out = two;
    } else {
        out.resize(rows * n, 0.0);
        matmul_t(&x[..rows * d.inputs], &d.w, d.inputs, out);
    }
    for row in out.chunks_exact_mut(n) {
        row.iter_mut().zip(&d.b).for_each(|(y, b)| *y += b);
    }
}

/// `out = x · wᵀ` for row-major `x` (`m × k`) and `w` (`n × k`), as candle's CPU
/// matmul computes it for a `Linear`.
fn matmul_t(x: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
    let (m, n) = (x.len() / k.max(1), w.len() / k.max(1));
    let lhs = View::new(x, (m, k), (k, 1));
    let rhs = View::new(w, (k, n), (1, k));
    product(out, n, lhs, rhs);
}

/// A strided matrix in a slice: element `(r, c)` is `data[r·rs + c·cs]`.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

impl<'a> View<'a> {
    fn new(data: &'a [f32], (rows, cols): (usize, usize), (rs, cs): (usize, usize)) -> Self {
        View {
            data,
            rows,
            cols,
            rs,
            cs,
        }
    }

    /// Whether every element lies inside `data` (and the matrix is not empty).
    fn fits(&self) -> bool {
        self.rows > 0
            && self.cols > 0
            && (self.rows - 1) * self.rs + (self.cols - 1) * self.cs < self.data.len()
    }
}

/// `dst = lhs · rhs` by `gemm` on this thread, `dst` row-major with row stride
/// `dst_rs`: the call candle's CPU matmul makes (so the same kernels and summation
/// order, hence the same bits).
fn product(dst: &mut [f32], dst_rs: usize, lhs: View, rhs: View) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    let dst_fits = m > 0 && n > 0 && n <= dst_rs && (m - 1) * dst_rs + n <= dst.len();
    assert!(
        rhs.rows == k && lhs.fits() && rhs.fits() && dst_fits,
        "product: {m}x{k} · {}x{n} into {} values",
        rhs.rows,
        dst.len()
    );
    // SAFETY: the assertion keeps every element gemm reads (lhs, rhs) or writes (dst)
    // inside its slice; `dst` is borrowed mutably, so it aliases neither input. With
    // read_dst false, dst is only written.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            false,
            lhs.data.as_ptr(),
            lhs.cs as isize,
            lhs.rs as isize,
            rhs.data.as_ptr(),
            rhs.cs as isize,
            rhs.rs as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Self-attention of one sequence: `qkv` is `len` rows of `[q | k | v]` (each `h`
/// wide), `ctx` receives `len` rows of the heads' outputs side by side. As candle:
/// per head `Q·Kᵀ` (a matrix product), scaled by `1/√d`, soft-maxed (max
/// subtracted), times `V` (a matrix product). `scores` is scratch space (`len²`).
///
/// Every position attends to every other: a sequence is never padded (see
/// [`super::BertPass::embed`]), so there is no attention mask. Both products go
/// through `gemm` at every length: at distillation's three positions they are what
/// the pass was tuned on, and at hundreds they are where the attention time is.
pub(super) fn attend(
    qkv: &[f32],
    ctx: &mut [f32],
    (len, h, heads): (usize, usize, usize),
    scores: &mut Vec<f32>,
) {
    let d = h / heads;
    let scale = (1.0 / (d as f64).sqrt()) as f32;
    scores.resize(len * len, 0.0);
    for head in 0..heads {
        let q = View::new(&qkv[head * d..], (len, d), (3 * h, 1));
        let kt = View::new(&qkv[h + head * d..], (d, len), (1, 3 * h));
        product(scores, len, q, kt);
        for row in scores.chunks_exact_mut(len) {
            row.iter_mut().for_each(|s| *s *= scale);
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            row.iter_mut().for_each(|s| *s = (*s - max).exp());
            let total: f32 = row.iter().sum();
            row.iter_mut().for_each(|s| *s /= total);
        }
        let p = View::new(scores, (len, len), (len, 1));
        let v = View::new(&qkv[2 * h + head * d..], (len, d), (3 * h, 1));
        product(&mut ctx[head * d..], h, p, v);
    }
}

/// candle's layer norm, row by row and in place: one pass for the sum and the sum of
/// squares (f32), `var = E[x²] − mean²`.
pub(super) fn layer_norm(x: &mut [f32], h: usize, norm: &Norm, eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let (mut sum, mut sum2) = (0f32, 0f32);
        for &v in row.iter() {
            sum += v;
            sum2 += v * v;
        }
        let mean = sum / h as f32;
        let var = sum2 / h as f32 - mean * mean;
        let inv_std = (var + eps).sqrt().recip();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = (*v - mean) * inv_std * g + b;
        }
    }
}

/// GELU (erf) in place with candle's `gelu_erf` formula: `erf` is `erf` when given
/// (within an ulp of libm's `erff`, see [`Erf`]), else libm's as candle calls it.
pub(super) fn gelu(x: &mut [f32], erf: Option<&Erf>) {
    match erf {
        Some(erf) => erf.gelu(x),
        None => x.iter_mut().for_each(|v| {
            let e = candle_core::cpu::erf::erf_f32(*v * std::f32::consts::FRAC_1_SQRT_2);
            *v *= (e + 1.) * 0.5;
        }),
    }
}
