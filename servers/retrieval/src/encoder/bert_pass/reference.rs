//! candle-transformers' `BertModel`, the reference the pass is tested against; it is a
//! dev-dependency, used by tests only.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

/// candle's `BertModel` for the model directory `dir`.
pub(crate) fn bert_model(dir: &Path) -> BertModel {
    let config = std::fs::read(dir.join("config.json")).unwrap();
    let config: Config = serde_json::from_slice(&config).unwrap();
    let weights = std::fs::read(dir.join("model.safetensors")).unwrap();
    let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).unwrap();
    BertModel::load(vb, &config).unwrap()
}

/// `BertModel` and a mean over positions of `len`-token sequences (concatenated), as
/// distillation ran before the pass.
pub(crate) fn candle_mean(model: &BertModel, seqs: &[u32], len: usize) -> Vec<f32> {
    let ids = Tensor::from_vec(seqs.to_vec(), (seqs.len() / len, len), &Device::Cpu).unwrap();
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

/// The sentence embeddings `model.rs` computed with `BertModel` before the pass: the
/// sequences padded (id `pad`) to the longest, with an attention mask, the hidden
/// states averaged over the mask and L2-normalized, in batches of `batch`.
pub(crate) fn candle_embed(
    model: &BertModel,
    seqs: &[&[u32]],
    pad: u32,
    batch: usize,
) -> Vec<Vec<f32>> {
    let mut out = Vec::with_capacity(seqs.len());
    for group in seqs.chunks(batch) {
        let (n, len) = (group.len(), group.iter().map(|s| s.len()).max().unwrap());
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for s in group {
            ids.extend_from_slice(s);
            ids.resize(ids.len() + len - s.len(), pad);
            mask.extend((0..len).map(|p| u32::from(p < s.len())));
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (n, len), &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, (n, len), &Device::Cpu)?;
            let hidden = model.forward(&ids, &ids.zeros_like()?, Some(&mask))?;
            let maskf = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&maskf)?.sum(1)?;
            let counts = maskf.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        };
        out.extend(run().unwrap());
    }
    out
}
