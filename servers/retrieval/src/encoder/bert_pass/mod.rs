//! The project's own BERT encoder pass on the CPU: sentence embeddings for
//! [`crate::model::Embedder`] and the `[CLS] token [SEP]` vectors of distillation.
//!
//! It computes what candle's `BertModel::forward` followed by a mean over the
//! positions computes, in the same operation order (the same `gemm` matrix products,
//! bias added after each product, candle's one-pass layer norm, its `gelu_erf`), so
//! the vectors agree with the tensor path to float rounding. What it saves is the
//! tensor library's per-operation cost (every operation allocating its output,
//! attention as thousands of small matrix products, element-wise passes synchronised
//! across threads by spinning barriers) and its build time: only candle-core is
//! needed, to read the safetensors file. Here a batch runs on one thread with buffers
//! it reuses, the query, key and value projections are one product, and threads take
//! whole batches, so they never wait on each other (which matters most on a busy
//! machine).
//!
//! Sequences are never padded: [`BertPass::embed`] groups them by token length, so
//! a batch holds sequences of one length, attention needs no mask and no work goes
//! to pad positions. Every batch runs on one thread and batches are formed from the
//! lengths alone, so the vectors do not depend on the thread count or the input
//! order (bit for bit). They do depend, at float rounding (≤ 1e-6 in the tests), on
//! how many sequences of the same length share a call: gemm may block a product's
//! sums differently for another row count.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use self::config::BertConfig;
use self::kernels::{attend, dense, gelu, layer_norm};
use self::weights::{Layer, Weights};
use super::erf::Erf;
use crate::model::ModelError;

pub mod config;
mod kernels;
#[cfg(test)]
pub(crate) mod reference;
#[cfg(test)]
mod tests;
mod weights;

/// Distillation's sequences per batch: 256 × 3 rows keep the matrix products
/// efficient while a batch's buffers (about 13 MB for MiniLM) stay per thread.
pub const BATCH: usize = 256;
/// Rows (positions) per batch, whatever the sequence length: a batch of 512-token
/// sequences holds one, of 3-token ones [`BATCH`].
const BATCH_ROWS: usize = BATCH * 3;

/// BERT weights as plain row-major matrices (see the module docs).
pub struct BertPass {
    hidden: usize,
    heads: usize,
    eps: f32,
    weights: Weights,
    /// GELU's `erf`: [`Erf`], or libm's `erff` as candle calls it (`None`, tests only).
    erf: Option<Erf>,
}

impl std::fmt::Debug for BertPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertPass")
            .field("hidden", &self.hidden)
            .field("heads", &self.heads)
            .field("layers", &self.weights.layers.len())
            .finish_non_exhaustive()
    }
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

/// Sequences of one length that run as one batch: indices into the caller's input.
struct Group<'a> {
    len: usize,
    members: &'a [usize],
}

impl BertPass {
    /// Reads `config.json` and `model.safetensors` from a Hugging Face-layout BERT
    /// directory. The server loads the pass through [`crate::model::Embedder::load`]
    /// (which also hashes the files); tests load it alone.
    #[cfg(test)]
    pub fn load(dir: &std::path::Path) -> Result<BertPass, ModelError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| ModelError::Io { path, source })
        };
        let config = BertConfig::parse(&read("config.json")?, &dir.join("config.json"))?;
        BertPass::from_config(&config, &read("model.safetensors")?)
    }

    /// The pass of a parsed `config` with the weights of a safetensors buffer
    /// (weights with or without a `bert.` or `<model_type>.` prefix).
    pub fn from_config(config: &BertConfig, safetensors: &[u8]) -> Result<BertPass, ModelError> {
        Ok(BertPass {
            hidden: config.hidden_size,
            heads: config.num_attention_heads,
            eps: config.layer_norm_eps as f32,
            weights: weights::load(safetensors, config)?,
            erf: Some(Erf::new()),
        })
    }

    /// The longest sequence the model takes (its position embeddings).
    pub fn max_positions(&self) -> usize {
        self.weights.positions.len() / self.hidden
    }

    fn vocab(&self) -> usize {
        self.weights.word.len() / self.hidden
    }

    /// An error naming the first id beyond the vocabulary, if any.
    fn check_ids(&self, ids: &[u32]) -> Result<(), ModelError> {
        let vocab = self.vocab();
        match ids.iter().find(|&&id| id as usize >= vocab) {
            None => Ok(()),
            Some(bad) => Err(ModelError::Tokenizer {
                context: "running the encoder".into(),
                reason: format!(
                    "token id {bad} is beyond the model's {vocab} word embeddings \
                     (do tokenizer.json and model.safetensors belong together?)"
                ),
            }),
        }
    }

    /// Sentence embeddings as sentence-transformers computes them for MiniLM: each
    /// sequence of token ids through the encoder, its last hidden states averaged over
    /// its positions, the mean L2-normalized. One vector a sequence, in input order;
    /// an empty sequence gets a zero vector.
    ///
    /// Sequences are grouped by length (no padding, no attention mask) and the groups
    /// run in parallel, one batch a thread; the vectors depend on neither the thread
    /// count nor the input order (see the module docs).
    pub fn embed(&self, seqs: &[&[u32]]) -> Result<Vec<Vec<f32>>, ModelError> {
        let max = self.max_positions();
        let mut by_len: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, seq) in seqs.iter().enumerate() {
            if seq.len() > max {
                return Err(ModelError::Tokenizer {
                    context: "running the encoder".into(),
                    reason: format!(
                        "a sequence of {} tokens exceeds the model's {max} positions",
                        seq.len()
                    ),
                });
            }
            self.check_ids(seq)?;
            if !seq.is_empty() {
                by_len.entry(seq.len()).or_default().push(i);
            }
        }
        // Longest first: the costliest batches start first, the short ones fill in.
        let groups: Vec<Group> = by_len
            .iter()
            .rev()
            .flat_map(|(&len, members)| {
                members
                    .chunks((BATCH_ROWS / len).max(1))
                    .map(move |members| Group { len, members })
            })
            .collect();
        let done: Vec<Vec<Vec<f32>>> = groups
            .par_iter()
            .with_max_len(1)
            .map_init(Scratch::default, |scratch, g| {
                let ids: Vec<u32> = g.members.iter().flat_map(|&i| seqs[i]).copied().collect();
                let sums = self.forward_sums(&ids, g.len, scratch);
                sums.chunks_exact(self.hidden)
                    .map(|sum| normalized_mean(sum, g.len))
                    .collect()
            })
            .collect();
        let mut out = vec![vec![0f32; self.hidden]; seqs.len()];
        for (g, vectors) in groups.iter().zip(done) {
            for (&i, v) in g.members.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Runs every `len`-token sequence of `seqs` (concatenated) through the encoder
    /// and returns the mean over positions of the last hidden states: `hidden` values
    /// a sequence, row-major, in input order (candle's `mean(1)`: the sum times
    /// `1/len`, not normalized). Distillation's pass. `progress` is called with the
    /// number of sequences done after each batch (from any thread).
    pub fn mean_pooled(
        &self,
        seqs: &[u32],
        len: usize,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<f32>, ModelError> {
        if len == 0 || !seqs.len().is_multiple_of(len) || len > self.max_positions() {
            return Err(ModelError::Tokenizer {
                context: "running the encoder".into(),
                reason: format!(
                    "{} ids do not make sequences of {len} tokens the model can take",
                    seqs.len()
                ),
            });
        }
        self.check_ids(seqs)?;
        let scale = (1.0 / len as f64) as f32;
        let done = AtomicUsize::new(0);
        let batches: Vec<Vec<f32>> = seqs
            .par_chunks((BATCH_ROWS / len).max(1) * len)
            .map_init(Scratch::default, |scratch, batch| {
                let mut out = self.forward_sums(batch, len, scratch);
                out.iter_mut().for_each(|v| *v *= scale);
                let n = batch.len() / len;
                progress(done.fetch_add(n, Ordering::Relaxed) + n);
                out
            })
            .collect();
        Ok(batches.concat())
    }

    /// One batch of `len`-token sequences (`ids` concatenated, ids checked) on this
    /// thread: the sum over each sequence's positions of its last hidden states,
    /// `hidden` values a sequence.
    fn forward_sums(&self, ids: &[u32], len: usize, s: &mut Scratch) -> Vec<f32> {
        let (h, rows) = (self.hidden, ids.len());
        let weights = &self.weights;
        s.x.clear();
        for (i, &id) in ids.iter().enumerate() {
            let word = &weights.word[id as usize * h..][..h];
            let pos = &weights.positions[(i % len) * h..][..h];
            s.x.extend(
                word.iter()
                    .zip(&weights.type0)
                    .zip(pos)
                    .map(|((w, t), p)| (w + t) + p),
            );
        }
        layer_norm(&mut s.x, h, &weights.embed_norm, self.eps);
        for layer in &weights.layers {
            self.layer(layer, rows, len, s);
        }
        let mut out = Vec::with_capacity(rows / len * h);
        for seq in s.x.chunks_exact(len * h) {
            let mut sum = vec![0f32; h];
            for pos in seq.chunks_exact(h) {
                sum.iter_mut().zip(pos).for_each(|(a, x)| *a += x);
            }
            out.extend(sum);
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
        gelu(&mut s.inter, self.erf.as_ref());
        dense(&layer.down, &s.inter, &mut s.x, rows);
        s.x.iter_mut().zip(&s.y).for_each(|(x, y)| *x += y);
        layer_norm(&mut s.x, h, &layer.out_norm, self.eps);
    }
}

/// sentence-transformers' pooling of one sequence: the sum over its `len` positions
/// divided by `len` (the attention mask's count), then divided by its L2 norm
/// (at least 1e-12).
fn normalized_mean(sum: &[f32], len: usize) -> Vec<f32> {
    let count = len as f32;
    let mean: Vec<f32> = sum.iter().map(|v| v / count).collect();
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    mean.iter().map(|v| v / norm).collect()
}
