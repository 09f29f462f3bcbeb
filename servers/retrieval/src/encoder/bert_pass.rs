//! The transformer pass of distillation: a BERT encoder run over many short sequences
//! of one length (`[CLS] token [SEP]`), mean-pooled, on the CPU.
//!
//! It computes what candle's `BertModel::forward` followed by a mean over the
//! positions computes, in the same operation order (the same `gemm` matrix products,
//! bias added after each product, candle's one-pass layer norm, its `gelu_erf`), so
//! the vectors agree with the tensor path to float rounding. What it saves is the
//! tensor library's per-operation cost, which dominates on inputs this small: every
//! operation allocating its output (megabytes a batch, so page faults), attention as
//! thousands of 3 × 3 matrix products, element-wise passes synchronised across threads
//! by spinning barriers. Here a batch runs on one thread with buffers it reuses, the
//! query, key and value projections are one product, and threads take whole batches,
//! so they never wait on each other (which matters most on a busy machine).
//!
//! Batches are fixed chunks of the input in order and each is computed on one thread,
//! so the vectors do not depend on the thread count.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};
use rayon::prelude::*;

use super::EncoderError;
use super::erf::Erf;

/// Sequences per batch: 256 × 3 rows keep the matrix products efficient while a
/// batch's buffers (about 13 MB for MiniLM) stay per thread.
pub const BATCH: usize = 256;

/// A dense layer: `y = x · wᵀ + b`, `w` row-major `out × in`.
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    inputs: usize,
}

/// A layer norm's scale and shift.
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// One encoder layer; `qkv` stacks the query, key and value projections.
struct Layer {
    qkv: Dense,
    out: Dense,
    attn_norm: Norm,
    up: Dense,
    down: Dense,
    out_norm: Norm,
}

/// BERT weights as plain row-major matrices (see the module docs).
pub struct BertPass {
    hidden: usize,
    heads: usize,
    eps: f32,
    act: HiddenAct,
    /// `vocab × hidden`.
    word: Vec<f32>,
    /// Token type 0's embedding.
    type0: Vec<f32>,
    /// `max_positions × hidden`.
    positions: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
    /// GELU's `erf`: [`Erf`], or libm's `erff` as candle calls it (`None`, tests only).
    erf: Option<Erf>,
}

/// The buffers one batch needs, reused by the batches a thread runs.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    y: Vec<f32>,
    inter: Vec<f32>,
    scores: Vec<f32>,
}

fn candle(context: &str) -> impl FnOnce(candle_core::Error) -> EncoderError + '_ {
    move |e| EncoderError::Invalid(format!("{context}: {e}"))
}

fn values(t: &Tensor, what: &str) -> Result<Vec<f32>, EncoderError> {
    t.to_dtype(DType::F32)
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(candle(what))
}

impl BertPass {
    /// Reads `config.json` and `model.safetensors` from a Hugging Face-layout BERT
    /// directory, finding the weights as candle's `BertModel::load` does (no prefix,
    /// `bert.`, or the config's `model_type`).
    pub fn load(dir: &Path) -> Result<BertPass, EncoderError> {
        let config_path = dir.join("config.json");
        let bytes = std::fs::read(&config_path).map_err(super::io_err(&config_path))?;
        let config: Config = serde_json::from_slice(&bytes).map_err(|e| {
            EncoderError::Invalid(format!(
                "{} is not a BERT config: {e}",
                config_path.display()
            ))
        })?;
        let (h, heads) = (config.hidden_size, config.num_attention_heads);
        if heads == 0 || h % heads != 0 {
            return Err(EncoderError::Invalid(format!(
                "hidden size {h} is not a multiple of {heads} attention heads"
            )));
        }
        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(super::io_err(&weights_path))?;
        let root = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(candle("reading model.safetensors"))?;
        let vb = [None, Some("bert"), config.model_type.as_deref()]
            .into_iter()
            .map(|p| p.map_or_else(|| root.clone(), |p| root.pp(p)))
            .find(|vb| vb.contains_tensor("embeddings.word_embeddings.weight"))
            .unwrap_or(root);
        let norm = |vb: VarBuilder| -> Result<Norm, EncoderError> {
            let ln = candle_nn::layer_norm(h, config.layer_norm_eps, vb)
                .map_err(candle("loading a layer norm"))?;
            let beta = ln
                .bias()
                .map_or_else(|| Ok(vec![0.0; h]), |b| values(b, "norm"))?;
            Ok(Norm {
                gamma: values(ln.weight(), "norm")?,
                beta,
            })
        };
        let dense = |vbs: &[VarBuilder], inputs: usize, outputs: usize| {
            let mut d = Dense {
                w: Vec::new(),
                b: Vec::new(),
                inputs,
            };
            for vb in vbs {
                let l = candle_nn::linear(inputs, outputs, vb.clone())
                    .map_err(candle("loading a dense layer"))?;
                d.w.extend(values(l.weight(), "dense")?);
                let bias = l
                    .bias()
                    .map_or_else(|| Ok(vec![0.0; outputs]), |b| values(b, "bias"))?;
                d.b.extend(bias);
            }
            Ok::<Dense, EncoderError>(d)
        };
        let emb = vb.pp("embeddings");
        let table = |name: &str, rows: usize| {
            candle_nn::embedding(rows, h, emb.pp(name))
                .map_err(candle("loading the embeddings"))
                .and_then(|e| values(e.embeddings(), name))
        };
        let types = table("token_type_embeddings", config.type_vocab_size)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let lv = vb.pp(format!("encoder.layer.{l}"));
            let attn = lv.pp("attention");
            let s = attn.pp("self");
            layers.push(Layer {
                qkv: dense(&[s.pp("query"), s.pp("key"), s.pp("value")], h, h)?,
                out: dense(&[attn.pp("output.dense")], h, h)?,
                attn_norm: norm(attn.pp("output.LayerNorm"))?,
                up: dense(&[lv.pp("intermediate.dense")], h, config.intermediate_size)?,
                down: dense(&[lv.pp("output.dense")], config.intermediate_size, h)?,
                out_norm: norm(lv.pp("output.LayerNorm"))?,
            });
        }
        Ok(BertPass {
            hidden: h,
            heads,
            eps: config.layer_norm_eps as f32,
            act: config.hidden_act,
            word: table("word_embeddings", config.vocab_size)?,
            type0: types.get(..h).map(<[f32]>::to_vec).ok_or_else(|| {
                EncoderError::Invalid("the model has no token type embeddings".into())
            })?,
            positions: table("position_embeddings", config.max_position_embeddings)?,
            embed_norm: norm(emb.pp("LayerNorm"))?,
            layers,
            erf: Some(Erf::new()),
        })
    }

    /// Runs every `len`-token sequence of `seqs` (concatenated) through the encoder
    /// and returns the mean over positions of the last hidden states: `hidden` values
    /// a sequence, row-major, in input order. `progress` is called with the number of
    /// sequences done after each batch (from any thread).
    pub fn mean_pooled(
        &self,
        seqs: &[u32],
        len: usize,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<f32>, EncoderError> {
        let vocab = self.word.len() / self.hidden;
        if len == 0 || !seqs.len().is_multiple_of(len) || len > self.positions.len() / self.hidden {
            return Err(EncoderError::Invalid(format!(
                "{} ids do not make sequences of {len} tokens the model can take",
                seqs.len()
            )));
        }
        if let Some(bad) = seqs.iter().find(|&&id| id as usize >= vocab) {
            return Err(EncoderError::Invalid(format!(
                "token id {bad} is beyond the model's {vocab} word embeddings \
                 (do tokenizer.json and model.safetensors belong together?)"
            )));
        }
        let done = AtomicUsize::new(0);
        let batches: Vec<Vec<f32>> = seqs
            .par_chunks(BATCH * len)
            .map_init(Scratch::default, |scratch, batch| {
                let out = self.batch(batch, len, scratch);
                progress(done.fetch_add(batch.len() / len, Ordering::Relaxed) + batch.len() / len);
                out
            })
            .collect();
        Ok(batches.concat())
    }

    /// One batch on this thread (see [`BertPass::mean_pooled`]).
    fn batch(&self, ids: &[u32], len: usize, s: &mut Scratch) -> Vec<f32> {
        let (h, rows) = (self.hidden, ids.len());
        s.x.clear();
        for (i, &id) in ids.iter().enumerate() {
            let word = &self.word[id as usize * h..][..h];
            let pos = &self.positions[(i % len) * h..][..h];
            s.x.extend(
                word.iter()
                    .zip(&self.type0)
                    .zip(pos)
                    .map(|((w, t), p)| (w + t) + p),
            );
        }
        layer_norm(&mut s.x, h, &self.embed_norm, self.eps);
        for layer in &self.layers {
            self.layer(layer, rows, len, s);
        }
        // candle's `mean(1)`: the sum over positions, times 1/len.
        let scale = (1.0 / len as f64) as f32;
        let mut out = Vec::with_capacity(rows / len * h);
        let mut sum = vec![0f32; h];
        for seq in s.x.chunks_exact(len * h) {
            sum.fill(0.0);
            for pos in seq.chunks_exact(h) {
                sum.iter_mut().zip(pos).for_each(|(a, x)| *a += x);
            }
            out.extend(sum.iter().map(|v| v * scale));
        }
        out
    }

    /// One encoder layer over `rows` rows of `s.x`, in place.
    fn layer(&self, layer: &Layer, rows: usize, len: usize, s: &mut Scratch) {
        let h = self.hidden;
        dense(&layer.qkv, &s.x, &mut s.qkv, rows);
        s.ctx.resize(rows * h, 0.0);
        for (qkv, ctx) in s
            .qkv
            .chunks_exact(len * 3 * h)
            .zip(s.ctx.chunks_exact_mut(len * h))
        {
            attend(qkv, ctx, (len, h, self.heads), &mut s.scores);
        }
        dense(&layer.out, &s.ctx, &mut s.y, rows);
        s.y.iter_mut().zip(&s.x).for_each(|(y, x)| *y += x);
        layer_norm(&mut s.y, h, &layer.attn_norm, self.eps);
        dense(&layer.up, &s.y, &mut s.inter, rows);
        activate(&mut s.inter, self.act, self.erf.as_ref());
        dense(&layer.down, &s.inter, &mut s.x, rows);
        s.x.iter_mut().zip(&s.y).for_each(|(x, y)| *x += y);
        layer_norm(&mut s.x, h, &layer.out_norm, self.eps);
    }
}

/// `out = x · wᵀ + b` over `rows` rows (the product first, then the bias, as candle's
/// `Linear` does).
fn dense(d: &Dense, x: &[f32], out: &mut Vec<f32>, rows: usize) {
    let n = d.b.len();
    out.resize(rows * n, 0.0);
    matmul_t(&x[..rows * d.inputs], &d.w, d.inputs, out);
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
/// subtracted), times `V` (a matrix product). `scores` is scratch space.
fn attend(
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
fn layer_norm(x: &mut [f32], h: usize, norm: &Norm, eps: f32) {
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

/// The hidden activation, with candle's f32 formulas; GELU's `erf` is `erf` when
/// given (within an ulp of libm's `erff`, see [`Erf`]), else libm's as candle calls it.
fn activate(x: &mut [f32], act: HiddenAct, erf: Option<&Erf>) {
    // candle's SQRT_TWO_OVER_PI_F32 rounds to this same f32.
    const SQRT_TWO_OVER_PI: f32 = 0.797_884_6;
    match (act, erf) {
        (HiddenAct::Gelu, Some(erf)) => erf.gelu(x),
        (HiddenAct::Gelu, None) => x.iter_mut().for_each(|v| {
            let e = candle_core::cpu::erf::erf_f32(*v * std::f32::consts::FRAC_1_SQRT_2);
            *v *= (e + 1.) * 0.5;
        }),
        (HiddenAct::GeluApproximate, _) => x.iter_mut().for_each(|v| {
            let t = f32::tanh(SQRT_TWO_OVER_PI * *v * (1.0 + 0.044715 * *v * *v));
            *v = 0.5 * *v * (1.0 + t);
        }),
        (HiddenAct::Relu, _) => x.iter_mut().for_each(|v| *v = v.max(0.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Embedder, write_tiny_model};

    fn tiny() -> (tempfile::TempDir, BertPass, Embedder) {
        let dir = tempfile::tempdir().unwrap();
        write_tiny_model(dir.path(), 5).unwrap();
        let pass = BertPass::load(dir.path()).unwrap();
        let embedder = Embedder::load(dir.path()).unwrap();
        (dir, pass, embedder)
    }

    /// `[CLS] id [SEP]` for ids 5.. of the tiny vocabulary, repeated past two batches.
    fn triples(n: usize) -> Vec<u32> {
        (0..n as u32).flat_map(|i| [2, 5 + i % 150, 3]).collect()
    }

    /// candle's `BertModel` and a mean over positions, as distillation ran before.
    fn candle_mean(embedder: &Embedder, seqs: &[u32], len: usize) -> Vec<f32> {
        let (model, _, device) = embedder.parts();
        let ids = Tensor::from_vec(seqs.to_vec(), (seqs.len() / len, len), device).unwrap();
        let mask = ids.ones_like().unwrap();
        let hidden = model
            .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
            .unwrap();
        hidden
            .mean(1)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap()
    }

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    }

    /// With libm's `erff`, the pass computes candle's bits; with [`Erf`], GELU's
    /// rounding differs on a few inputs and the vectors by float rounding.
    #[test]
    fn candles_bits_with_libms_erf_and_its_rounding_with_ours() {
        let (_d, mut pass, embedder) = tiny();
        for (seqs, len) in [(triples(300), 3), ((5..60).collect(), 1)] {
            let want = candle_mean(&embedder, &seqs, len);
            let fast = pass.mean_pooled(&seqs, len, &|_| {}).unwrap();
            let diff = max_diff(&fast, &want);
            assert!(diff < 1e-5, "len {len}: max difference {diff}");
            let erf = pass.erf.take();
            let exact = pass.mean_pooled(&seqs, len, &|_| {}).unwrap();
            pass.erf = erf;
            assert!(exact == want, "len {len}: not candle's bits");
        }
    }

    #[test]
    fn vectors_do_not_depend_on_the_thread_count() {
        let (_d, pass, _) = tiny();
        let seqs = triples(BATCH * 2 + 17);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| pass.mean_pooled(&seqs, 3, &|_| {}).unwrap())
        };
        let one = run(1);
        assert_eq!(one.len(), (BATCH * 2 + 17) * 32);
        assert!(one == run(3), "one thread and three differ");
    }

    #[test]
    fn progress_counts_every_sequence() {
        let (_d, pass, _) = tiny();
        let seqs = triples(BATCH + 3);
        let seen = std::sync::Mutex::new(Vec::new());
        pass.mean_pooled(&seqs, 3, &|n| seen.lock().unwrap().push(n))
            .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen.last(), Some(&(BATCH + 3)));
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn ids_beyond_the_vocabulary_and_ragged_input_are_refused() {
        let (_d, pass, _) = tiny();
        let err = pass.mean_pooled(&[2, 99_999, 3], 3, &|_| {}).unwrap_err();
        assert!(err.to_string().contains("99999"), "{err}");
        let err = pass.mean_pooled(&[2, 7, 3, 2], 3, &|_| {}).unwrap_err();
        assert!(err.to_string().contains("sequences of 3"), "{err}");
        assert!(pass.mean_pooled(&[2, 7], 0, &|_| {}).is_err());
    }

    /// On the real MiniLM when `NAVBENCH_MINILM_DIR` points at it: 2,048 vocabulary
    /// tokens framed as distillation frames them, against candle's `BertModel`.
    #[test]
    fn candles_bits_on_minilm_when_installed() {
        let Some(dir) = std::env::var_os("NAVBENCH_MINILM_DIR").map(std::path::PathBuf::from)
        else {
            eprintln!("NAVBENCH_MINILM_DIR is not set; skipping");
            return;
        };
        let (Ok(mut pass), Ok(embedder)) = (BertPass::load(&dir), Embedder::load(&dir)) else {
            eprintln!("no MiniLM in {}; skipping", dir.display());
            return;
        };
        let seqs: Vec<u32> = (0..2048u32)
            .flat_map(|i| [101, 1000 + i * 14, 102])
            .collect();
        let want: Vec<f32> = seqs
            .chunks(512 * 3)
            .flat_map(|c| candle_mean(&embedder, c, 3))
            .collect();
        let fast = pass.mean_pooled(&seqs, 3, &|_| {}).unwrap();
        let diff = max_diff(&fast, &want);
        eprintln!("MiniLM: max |difference| from candle {diff:e}");
        assert!(diff < 1e-5, "{diff}");
        pass.erf = None;
        assert!(pass.mean_pooled(&seqs, 3, &|_| {}).unwrap() == want);
    }
}
