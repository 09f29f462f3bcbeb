//! Principal component analysis for distillation: a covariance matrix and a cyclic
//! Jacobi eigen-solver, both in `f64` with a fixed summation order, so the same input
//! gives bit-identical components on every run and any thread count.
//!
//! The vocabulary matrix of a MiniLM-sized model is about 30,000 × 384: the covariance
//! costs ~2 G multiply-adds and the projection of every row onto 256 components ~3 G.
//! Both are written so each result is still one sequential sum over the rows (or the
//! dimensions), in order, as a plain dot product would give it, but with many sums
//! running side by side: the covariance as rank-one updates of a tile of its rows
//! (rayon splits the tiles), the projection against the components laid out
//! dimension-major (rayon splits the rows). The compiler vectorises across the
//! independent sums, which a single dot product's dependency chain forbids, and the
//! bits do not change. Jacobi on a 384 × 384 matrix converges in ~10 sweeps; it keeps
//! the eigenvectors transposed, so the rotations of their columns are contiguous.

use rayon::prelude::*;

/// Rows of the covariance matrix one rayon task accumulates (a tile of 8 × 384 `f64`
/// stays in the L1 cache while every data row streams past it).
const COV_TILE: usize = 8;

/// A fitted projection: `y = (x - mean) · components`.
#[derive(Debug, Clone)]
pub struct Pca {
    /// Column means of the fitted data (length `dim`).
    pub mean: Vec<f64>,
    /// The `k` principal directions, each of length `dim`, by decreasing variance.
    pub components: Vec<Vec<f64>>,
    /// Variance along each kept component.
    pub explained_variance: Vec<f64>,
    /// Sum of the variances of all `dim` directions (the covariance trace).
    pub total_variance: f64,
}

impl Pca {
    /// Fits `k` components to `rows` (each of length `dim`, at least two rows).
    ///
    /// Each component's sign is fixed so that its largest-magnitude entry is
    /// positive (the eigen-solver's sign is otherwise arbitrary).
    pub fn fit(rows: &[&[f32]], dim: usize, k: usize) -> Pca {
        let k = k.min(dim);
        let n = rows.len().max(1);
        let mut mean = vec![0f64; dim];
        for r in rows {
            for (m, &x) in mean.iter_mut().zip(r.iter()) {
                *m += f64::from(x);
            }
        }
        for m in &mut mean {
            *m /= n as f64;
        }
        let cov = covariance(rows, &mean);
        let total_variance = (0..dim).map(|i| cov[i][i]).sum();
        let (values, vectors) = jacobi_eigen(cov);
        let mut order: Vec<usize> = (0..dim).collect();
        // Descending variance; ties broken by index, so the order is total.
        order.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
        let components: Vec<Vec<f64>> = order[..k]
            .iter()
            .map(|&c| {
                let mut v: Vec<f64> = (0..dim).map(|r| vectors[r][c]).collect();
                let lead = v
                    .iter()
                    .copied()
                    .fold(0f64, |m, x| if x.abs() > m.abs() { x } else { m });
                if lead < 0.0 {
                    v.iter_mut().for_each(|x| *x = -*x);
                }
                v
            })
            .collect();
        Pca {
            mean,
            explained_variance: order[..k].iter().map(|&c| values[c].max(0.0)).collect(),
            components,
            total_variance,
        }
    }

    /// Projects one row onto the components.
    pub fn transform(&self, row: &[f32]) -> Vec<f64> {
        let centered: Vec<f64> = row
            .iter()
            .zip(&self.mean)
            .map(|(&x, m)| f64::from(x) - m)
            .collect();
        self.components.iter().map(|c| dot(&centered, c)).collect()
    }

    /// [`Pca::transform`] of every row, `k` values a row, row-major, in parallel;
    /// bit-identical to calling it row by row.
    pub fn transform_all(&self, rows: &[&[f32]]) -> Vec<f64> {
        let k = self.components.len();
        let dim = self.mean.len();
        // Dimension-major components: entry (d, c) is component c's d-th coordinate.
        let by_dim: Vec<f64> = (0..dim)
            .flat_map(|d| self.components.iter().map(move |c| c[d]))
            .collect();
        let mut out = vec![0f64; rows.len() * k];
        if k == 0 {
            return out;
        }
        out.par_chunks_mut(k)
            .zip(rows.par_iter())
            .for_each(|(acc, row)| {
                for ((&x, m), comps) in row.iter().zip(&self.mean).zip(by_dim.chunks_exact(k)) {
                    let centered = f64::from(x) - m;
                    acc.iter_mut()
                        .zip(comps)
                        .for_each(|(a, &c)| *a += centered * c);
                }
            });
        out
    }

    /// Fraction of the total variance the kept components explain.
    pub fn explained_ratio(&self) -> f64 {
        if self.total_variance > 0.0 {
            self.explained_variance.iter().sum::<f64>() / self.total_variance
        } else {
            0.0
        }
    }
}

/// The sample covariance of `rows` (centred by `mean`), as a full symmetric matrix.
///
/// Entry `(i, j)` is `Σ_r (x_ri − m_i)(x_rj − m_j) / (n − 1)`, the sum taken over the
/// rows in order: the bits of a sequential dot product of the two centred columns.
fn covariance(rows: &[&[f32]], mean: &[f64]) -> Vec<Vec<f64>> {
    let dim = mean.len();
    let denom = (rows.len().saturating_sub(1)).max(1) as f64;
    // Tile t holds rows lo..hi of the upper triangle, each row i as columns i..dim.
    let tiles: Vec<Vec<Vec<f64>>> = (0..dim.div_ceil(COV_TILE))
        .into_par_iter()
        .map(|t| {
            let (lo, hi) = (t * COV_TILE, ((t + 1) * COV_TILE).min(dim));
            let mut acc: Vec<Vec<f64>> = (lo..hi).map(|i| vec![0f64; dim - i]).collect();
            let mut centered = vec![0f64; dim - lo];
            for r in rows {
                for ((c, &x), m) in centered.iter_mut().zip(&r[lo..]).zip(&mean[lo..]) {
                    *c = f64::from(x) - m;
                }
                for (off, row) in acc.iter_mut().enumerate() {
                    let ci = centered[off];
                    row.iter_mut()
                        .zip(&centered[off..])
                        .for_each(|(a, &cj)| *a += ci * cj);
                }
            }
            acc
        })
        .collect();
    let mut cov = vec![vec![0f64; dim]; dim];
    for (i, row) in tiles.into_iter().flatten().enumerate() {
        for (off, v) in row.into_iter().enumerate() {
            let v = v / denom;
            cov[i][i + off] = v;
            cov[i + off][i] = v;
        }
    }
    cov
}

/// Sequential dot product: a fixed summation order keeps results reproducible.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations.
///
/// Returns the eigenvalues and the matrix whose columns are the matching unit
/// eigenvectors. Sweeps visit the pairs `(p, q)` in a fixed order and stop when the
/// off-diagonal mass is negligible next to the diagonal (or after 100 sweeps).
pub fn jacobi_eigen(a: Vec<Vec<f64>>) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = a.len();
    let mut a: Vec<f64> = a.into_iter().flatten().collect();
    // Transposed eigenvectors: row c is eigenvector c.
    let mut vt: Vec<f64> = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    let mut sweeps = 0;
    for _ in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        let diag: f64 = (0..n).map(|i| a[i * n + i] * a[i * n + i]).sum();
        if off <= 1e-30 * diag.max(f64::MIN_POSITIVE) {
            break;
        }
        sweeps += 1;
        for p in 0..n {
            for q in p + 1..n {
                rotate(&mut a, &mut vt, n, p, q);
            }
        }
    }
    tracing::debug!(sweeps, "jacobi: converged");
    let values = (0..n).map(|i| a[i * n + i]).collect();
    let vectors = (0..n)
        .map(|r| (0..n).map(|c| vt[c * n + r]).collect())
        .collect();
    (values, vectors)
}

/// One Jacobi rotation zeroing `a[p][q]` (Golub & Van Loan, algorithm 8.4.1) on the
/// row-major `n × n` matrix `a`, and on the eigenvectors kept as the rows of `vt`.
/// The columns of `a` are rotated first, then its rows.
fn rotate(a: &mut [f64], vt: &mut [f64], n: usize, p: usize, q: usize) {
    let apq = a[p * n + q];
    if apq == 0.0 {
        return;
    }
    let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
    let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
    let t = if theta == 0.0 { 1.0 } else { t };
    let c = 1.0 / (t * t + 1.0).sqrt();
    let s = t * c;
    for row in a.chunks_exact_mut(n) {
        let (akp, akq) = (row[p], row[q]);
        row[p] = c * akp - s * akq;
        row[q] = s * akp + c * akq;
    }
    rotate_rows(a, n, p, q, c, s);
    rotate_rows(vt, n, p, q, c, s);
}

/// Rows `p < q` of a row-major matrix with `n` columns: `(x, y) → (c·x − s·y, s·x + c·y)`.
fn rotate_rows(m: &mut [f64], n: usize, p: usize, q: usize, c: f64, s: f64) {
    let (low, high) = m.split_at_mut(q * n);
    for (x, y) in low[p * n..(p + 1) * n].iter_mut().zip(&mut high[..n]) {
        let (xv, yv) = (*x, *y);
        *x = c * xv - s * yv;
        *y = s * xv + c * yv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_recovers_a_known_spectrum() {
        // A = Q diag(5, 2, 1) Qᵀ for a rotation Q about the z axis.
        let (c, s) = (0.6f64, 0.8f64);
        let q = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
        let d = [5.0, 2.0, 1.0];
        let a: Vec<Vec<f64>> = (0..3)
            .map(|i| {
                (0..3)
                    .map(|j| (0..3).map(|k| q[i][k] * d[k] * q[j][k]).sum())
                    .collect()
            })
            .collect();
        let (mut values, vectors) = jacobi_eigen(a.clone());
        for col in 0..3 {
            // A v = λ v for every returned pair.
            for i in 0..3 {
                let av: f64 = (0..3).map(|j| a[i][j] * vectors[j][col]).sum();
                assert!((av - values[col] * vectors[i][col]).abs() < 1e-9);
            }
        }
        values.sort_by(|x, y| y.total_cmp(x));
        for (got, want) in values.iter().zip(d) {
            assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        }
    }

    /// The covariance and Jacobi solver as first written (column dot products, a
    /// `Vec<Vec>` matrix rotated in place), to pin the faster ones to the same bits.
    mod reference {
        pub fn covariance(rows: &[&[f32]], mean: &[f64]) -> Vec<Vec<f64>> {
            let dim = mean.len();
            let cols: Vec<Vec<f64>> = (0..dim)
                .map(|j| rows.iter().map(|r| f64::from(r[j]) - mean[j]).collect())
                .collect();
            let denom = (rows.len().saturating_sub(1)).max(1) as f64;
            let mut cov = vec![vec![0f64; dim]; dim];
            for i in 0..dim {
                for j in i..dim {
                    let v = super::dot(&cols[i], &cols[j]) / denom;
                    cov[i][j] = v;
                    cov[j][i] = v;
                }
            }
            cov
        }

        pub fn jacobi(mut a: Vec<Vec<f64>>) -> (Vec<f64>, Vec<Vec<f64>>) {
            let n = a.len();
            let mut v: Vec<Vec<f64>> = (0..n)
                .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
                .collect();
            for _ in 0..100 {
                let off: f64 = (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .map(|(i, j)| a[i][j] * a[i][j])
                    .sum();
                let diag: f64 = (0..n).map(|i| a[i][i] * a[i][i]).sum();
                if off <= 1e-30 * diag.max(f64::MIN_POSITIVE) {
                    break;
                }
                for p in 0..n {
                    for q in p + 1..n {
                        rotate(&mut a, &mut v, p, q);
                    }
                }
            }
            ((0..n).map(|i| a[i][i]).collect(), v)
        }

        fn rotate(a: &mut [Vec<f64>], v: &mut [Vec<f64>], p: usize, q: usize) {
            let apq = a[p][q];
            if apq == 0.0 {
                return;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * apq);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for row in a.iter_mut() {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (low, high) = a.split_at_mut(q);
            for (apk, aqk) in low[p].iter_mut().zip(high[0].iter_mut()) {
                let (x, y) = (*apk, *aqk);
                *apk = c * x - s * y;
                *aqk = s * x + c * y;
            }
            for row in v.iter_mut() {
                let (vkp, vkq) = (row[p], row[q]);
                row[p] = c * vkp - s * vkq;
                row[q] = s * vkp + c * vkq;
            }
        }
    }

    /// Correlated pseudo-random rows (`n × dim`), so the covariance is dense.
    fn sample(n: usize, dim: usize) -> Vec<Vec<f32>> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        (0..n)
            .map(|_| {
                let base: Vec<f32> = (0..4).map(|_| next()).collect();
                (0..dim)
                    .map(|j| base[j % 4] * (j as f32 + 1.0) + next())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_fast_paths_give_the_bits_of_the_first_ones() {
        let data = sample(300, 37);
        let rows: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
        let p = Pca::fit(&rows, 37, 12);
        let cov = covariance(&rows, &p.mean);
        assert!(cov == reference::covariance(&rows, &p.mean), "covariance");
        assert!(
            jacobi_eigen(cov.clone()) == reference::jacobi(cov),
            "eigen-decomposition"
        );
        let all = p.transform_all(&rows);
        let one_by_one: Vec<f64> = rows.iter().flat_map(|r| p.transform(r)).collect();
        assert!(all == one_by_one, "projection");
    }

    #[test]
    fn pca_finds_the_dominant_direction_and_is_deterministic() {
        // Points spread along (1, 1, 0) with small noise in the other directions.
        let rows: Vec<Vec<f32>> = (0..200)
            .map(|i| {
                let t = i as f32 / 10.0 - 10.0;
                let e = ((i * 37) % 11) as f32 / 100.0 - 0.05;
                vec![t + e, t - e, 0.5 * e]
            })
            .collect();
        let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let p = Pca::fit(&refs, 3, 2);
        let c = &p.components[0];
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((c[0] - h).abs() < 1e-3 && (c[1] - h).abs() < 1e-3, "{c:?}");
        assert!(p.explained_ratio() > 0.99);
        assert!(p.explained_variance[0] >= p.explained_variance[1]);
        let again = Pca::fit(&refs, 3, 2);
        assert_eq!(p.components, again.components);
        // Projection of the mean is the origin.
        let mean: Vec<f32> = p.mean.iter().map(|&m| m as f32).collect();
        assert!(p.transform(&mean).iter().all(|x| x.abs() < 1e-5));
    }
}
