//! Distillation of a static token table from a BERT sentence encoder (see the
//! [module docs](super) for the method).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::Tensor;

use super::bert_pass::{self, BertPass};
use super::pca::Pca;
use super::{EMBEDDINGS_TENSOR, EncoderError, METHOD, SIF_COEFFICIENT, STATIC_FILES, io_err};
use crate::model::Embedder;

/// What a distillation produced.
#[derive(Debug, Clone)]
pub struct DistillReport {
    /// The directory holding the static model.
    pub out_dir: PathBuf,
    /// Rows in the table (the tokenizer's vocabulary size).
    pub vocab_size: usize,
    /// Rows that were encoded (not special or `[unusedN]` tokens).
    pub encoded_tokens: usize,
    /// Columns in the table.
    pub dims: usize,
    /// Fraction of the token vectors' variance the kept components explain.
    pub explained_variance: f64,
    /// Wall-clock seconds of the whole distillation.
    pub seconds: f64,
}

/// Distills the BERT model in `source_dir` (Hugging Face layout, as for
/// [`Embedder::load`]) into a static model of `dims` columns in `out_dir`.
///
/// Same source files → byte-identical output files on a machine: the transformer runs
/// in fixed-size batches in id order, each on one thread ([`BertPass`]), PCA sums in a
/// fixed order, and the JSON is written from sorted maps. `static.json` is written last, so a directory without it is an
/// interrupted distillation and [`super::StaticEncoder::load`] refuses it.
pub fn distill(
    source_dir: &Path,
    out_dir: &Path,
    dims: usize,
) -> Result<DistillReport, EncoderError> {
    let started = Instant::now();
    let embedder = Embedder::load(source_dir)?;
    let hidden = embedder.dim();
    if dims == 0 || dims > hidden {
        return Err(EncoderError::Invalid(format!(
            "--dims {dims} is out of range: the source model has {hidden} dimensions, so pass 1..={hidden}"
        )));
    }
    let tokenizer = embedder.tokenizer();
    let vocab_size = tokenizer.get_vocab_size(true);
    let skip = skipped_tokens(&embedder, vocab_size)?;
    let kept: Vec<u32> = (0..vocab_size as u32)
        .filter(|&id| !skip[id as usize])
        .collect();
    if kept.len() <= dims {
        return Err(EncoderError::Invalid(format!(
            "the vocabulary has {} usable tokens, too few for {dims} dimensions; pass a smaller --dims",
            kept.len()
        )));
    }
    tracing::info!(
        tokens = kept.len(),
        "distill: encoding every vocabulary token with the transformer"
    );
    let phase = Instant::now();
    let vectors = token_vectors(&embedder, embedder.pass(), &kept)?;
    tracing::info!(
        seconds = phase.elapsed().as_secs_f64(),
        "distill: transformer pass done"
    );
    let phase = Instant::now();
    let rows: Vec<&[f32]> = vectors.chunks(hidden).collect();
    let pca = Pca::fit(&rows, hidden, dims);
    tracing::info!(
        explained = pca.explained_ratio(),
        seconds = phase.elapsed().as_secs_f64(),
        "distill: PCA to {dims} dimensions"
    );
    let phase = Instant::now();
    let table = weighted_table(&pca, &rows, &kept, vocab_size);
    tracing::info!(
        seconds = phase.elapsed().as_secs_f64(),
        "distill: token table projected"
    );
    let phase = Instant::now();
    write_outputs(
        source_dir,
        out_dir,
        embedder.model_id(),
        &table,
        (vocab_size, dims),
        &pca,
    )?;
    tracing::info!(
        seconds = phase.elapsed().as_secs_f64(),
        "distill: files written"
    );
    Ok(DistillReport {
        out_dir: out_dir.to_path_buf(),
        vocab_size,
        encoded_tokens: kept.len(),
        dims,
        explained_variance: pca.explained_ratio(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Tokens that never reach a static encoding's mean: added/special tokens (`[CLS]`,
/// `[PAD]`, …, dropped by encoding without special tokens) and BERT's `[unusedN]`
/// placeholders, which carry no trained meaning and would only add noise to PCA.
fn skipped_tokens(embedder: &Embedder, vocab_size: usize) -> Result<Vec<bool>, EncoderError> {
    let tokenizer = embedder.tokenizer();
    let unused = regex::Regex::new(r"^\[unused\d+\]$")
        .map_err(|e| EncoderError::Invalid(format!("internal pattern: {e}")))?;
    let mut skip = vec![false; vocab_size];
    for (id, token) in tokenizer.get_added_tokens_decoder() {
        if token.special
            && let Some(s) = skip.get_mut(id as usize)
        {
            *s = true;
        }
    }
    for (token, id) in tokenizer.get_vocab(true) {
        if unused.is_match(&token)
            && let Some(s) = skip.get_mut(id as usize)
        {
            *s = true;
        }
    }
    Ok(skip)
}

/// `[CLS] token [SEP]` through the transformer for every id in `ids`, mean-pooled over
/// the three positions: `ids.len() × hidden` values, row-major, in `ids` order.
fn token_vectors(
    embedder: &Embedder,
    pass: &BertPass,
    ids: &[u32],
) -> Result<Vec<f32>, EncoderError> {
    let (prefix, suffix) = framing(embedder)?;
    let len = 1 + usize::from(prefix.is_some()) + usize::from(suffix.is_some());
    let mut seqs = Vec::with_capacity(ids.len() * len);
    for &id in ids {
        seqs.extend(prefix.into_iter().chain([id]).chain(suffix));
    }
    let every = bert_pass::BATCH * 20;
    let progress = |done: usize| {
        if done.is_multiple_of(every) {
            tracing::info!("distill: {done}/{} tokens encoded", ids.len());
        }
    };
    Ok(pass.mean_pooled(&seqs, len, &progress)?)
}

/// The special tokens the tokenizer puts around a text (`[CLS]`, `[SEP]` for BERT).
fn framing(embedder: &Embedder) -> Result<(Option<u32>, Option<u32>), EncoderError> {
    let tokenizer = embedder.tokenizer();
    let framing = tokenizer
        .encode("", true)
        .map_err(|e| EncoderError::Invalid(format!("the tokenizer cannot frame a token: {e}")))?;
    match framing.get_ids() {
        [] => Ok((None, None)),
        [bos, eos] => Ok((Some(*bos), Some(*eos))),
        other => Err(EncoderError::Invalid(format!(
            "the tokenizer frames a text with {} special tokens; distillation expects a \
             BERT-style `[CLS] text [SEP]` template",
            other.len()
        ))),
    }
}

/// The `vocab_size × k` table: row `kept[i]` is `rows[i]` projected by `pca` and scaled
/// by its SIF weight; skipped tokens keep zero rows.
fn weighted_table(pca: &Pca, rows: &[&[f32]], kept: &[u32], vocab_size: usize) -> Vec<f32> {
    let dims = pca.components.len();
    let projected = pca.transform_all(rows);
    let weights = sif_weights(kept.len());
    let mut table = vec![0f32; vocab_size * dims];
    for ((&id, row), w) in kept.iter().zip(projected.chunks_exact(dims)).zip(&weights) {
        let start = id as usize * dims;
        for (cell, y) in table[start..start + dims].iter_mut().zip(row) {
            *cell = (y * w) as f32;
        }
    }
    table
}

/// model2vec's Zipf/SIF weights: the token of rank `r` (0-based, vocabulary order)
/// gets probability `p ∝ 1 / (r + 2)` and weight `a / (a + p)`.
fn sif_weights(n: usize) -> Vec<f64> {
    let inv: Vec<f64> = (0..n).map(|r| 1.0 / (r as f64 + 2.0)).collect();
    let total: f64 = inv.iter().sum();
    inv.iter()
        .map(|x| SIF_COEFFICIENT / (SIF_COEFFICIENT + x / total))
        .collect()
}

fn write_outputs(
    source_dir: &Path,
    out_dir: &Path,
    source_id: &str,
    table: &[f32],
    (vocab_size, dims): (usize, usize),
    pca: &Pca,
) -> Result<(), EncoderError> {
    fs::create_dir_all(out_dir).map_err(io_err(out_dir))?;
    // A stale static.json must not vouch for half-written files.
    let meta_path = out_dir.join(STATIC_FILES[2]);
    if meta_path.exists() {
        fs::remove_file(&meta_path).map_err(io_err(&meta_path))?;
    }
    let tensor = Tensor::from_slice(table, (vocab_size, dims), &candle_core::Device::Cpu)
        .map_err(|e| EncoderError::Invalid(format!("building the token table: {e}")))?;
    let weights_path = out_dir.join(STATIC_FILES[0]);
    let tensors = HashMap::from([(EMBEDDINGS_TENSOR.to_string(), tensor)]);
    candle_core::safetensors::save(&tensors, &weights_path)
        .map_err(|e| EncoderError::Invalid(format!("writing {}: {e}", weights_path.display())))?;
    let tok_src = source_dir.join("tokenizer.json");
    let tok_dst = out_dir.join(STATIC_FILES[1]);
    fs::copy(&tok_src, &tok_dst).map_err(io_err(&tok_dst))?;
    let meta = serde_json::json!({
        "method": METHOD,
        "source_model_id": source_id,
        "dims": dims,
        "vocab_size": vocab_size,
        "sif_coefficient": SIF_COEFFICIENT,
        "explained_variance": (pca.explained_ratio() * 1e6).round() / 1e6,
    });
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| EncoderError::Invalid(format!("serializing static.json: {e}")))?;
    fs::write(&meta_path, text + "\n").map_err(io_err(&meta_path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write_tiny_model;

    #[test]
    fn sif_weights_favour_rare_tokens() {
        let w = sif_weights(1000);
        assert!(w.windows(2).all(|p| p[0] < p[1]));
        assert!(w.iter().all(|&x| x > 0.0 && x < 1.0));
    }

    #[test]
    fn distillation_is_deterministic_and_sized() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("bert");
        write_tiny_model(&src, 11).unwrap();
        let a = distill(&src, &tmp.path().join("a"), 16).unwrap();
        let b = distill(&src, &tmp.path().join("b"), 16).unwrap();
        assert_eq!((a.dims, a.vocab_size), (16, b.vocab_size));
        assert!(a.encoded_tokens < a.vocab_size, "specials are skipped");
        for f in STATIC_FILES {
            let x = fs::read(tmp.path().join("a").join(f)).unwrap();
            let y = fs::read(tmp.path().join("b").join(f)).unwrap();
            assert!(x == y, "{f} differs between two distillations");
        }
        let meta: serde_json::Value =
            serde_json::from_slice(&fs::read(tmp.path().join("a/static.json")).unwrap()).unwrap();
        assert_eq!(meta["dims"], 16);
        assert_eq!(meta["vocab_size"], a.vocab_size);
        let source = Embedder::load(&src).unwrap();
        assert_eq!(meta["source_model_id"], source.model_id());
    }

    /// The transformer pass as it was before [`BertPass`]: candle's `BertModel` over
    /// batches of 512 sequences, mean-pooled with tensor operations.
    fn reference_token_vectors(src: &Path, embedder: &Embedder, ids: &[u32]) -> Vec<f32> {
        let model = bert_pass::reference::bert_model(src);
        let (prefix, suffix) = framing(embedder).unwrap();
        let len = 1 + usize::from(prefix.is_some()) + usize::from(suffix.is_some());
        let mut out = Vec::new();
        for batch in ids.chunks(512) {
            let input: Vec<u32> = batch
                .iter()
                .flat_map(|&id| prefix.into_iter().chain([id]).chain(suffix))
                .collect();
            out.extend(bert_pass::reference::candle_mean(&model, &input, len));
        }
        out
    }

    fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// The distilled table against the procedure before this one (candle's tensor
    /// path, PCA row by row) on the tiny random-weight model: the same vectors up to
    /// float rounding.
    #[test]
    fn the_table_matches_the_tensor_path() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("bert");
        write_tiny_model(&src, 11).unwrap();
        let out = tmp.path().join("static");
        let report = distill(&src, &out, 16).unwrap();

        let embedder = Embedder::load(&src).unwrap();
        let vocab_size = report.vocab_size;
        let skip = skipped_tokens(&embedder, vocab_size).unwrap();
        let kept: Vec<u32> = (0..vocab_size as u32)
            .filter(|&id| !skip[id as usize])
            .collect();
        let old = reference_token_vectors(&src, &embedder, &kept);
        let new = token_vectors(&embedder, &BertPass::load(&src).unwrap(), &kept).unwrap();
        let scale = old.iter().fold(0f32, |m, x| m.max(x.abs()));
        let diff = max_abs_diff(&old, &new);
        assert!(
            diff <= 1e-5 * scale,
            "token vectors differ by {diff} (scale {scale})"
        );

        let rows: Vec<&[f32]> = old.chunks(embedder.dim()).collect();
        let pca = Pca::fit(&rows, embedder.dim(), 16);
        let weights = sif_weights(kept.len());
        let mut expected = vec![0f32; vocab_size * 16];
        for ((&id, row), w) in kept.iter().zip(&rows).zip(&weights) {
            for (cell, y) in expected[id as usize * 16..][..16]
                .iter_mut()
                .zip(pca.transform(row))
            {
                *cell = (y * w) as f32;
            }
        }
        let tensors =
            candle_core::safetensors::load(out.join(STATIC_FILES[0]), &candle_core::Device::Cpu)
                .unwrap();
        let got = tensors[EMBEDDINGS_TENSOR]
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let scale = expected.iter().fold(0f32, |m, x| m.max(x.abs()));
        let diff = max_abs_diff(&expected, &got);
        assert!(
            diff <= 1e-4 * scale,
            "tables differ by {diff} (scale {scale})"
        );
    }

    #[test]
    fn dims_beyond_the_source_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("bert");
        write_tiny_model(&src, 11).unwrap();
        let err = distill(&src, &tmp.path().join("o"), 33)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--dims 33") && err.contains("1..=32"), "{err}");
    }
}
