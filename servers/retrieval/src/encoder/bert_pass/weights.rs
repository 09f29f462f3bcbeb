//! BERT weights read from `model.safetensors` with candle-core's safetensors reader,
//! as plain row-major `f32` matrices (no `VarBuilder`, so no candle-nn).

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};

use super::config::BertConfig;
use crate::model::ModelError;

/// A dense layer: `y = x · wᵀ + b`, `w` row-major `out × in`.
pub(super) struct Dense {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
    pub inputs: usize,
}

/// A layer norm's scale and shift.
pub(super) struct Norm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

/// One encoder layer; `qkv` stacks the query, key and value projections.
pub(super) struct Layer {
    pub qkv: Dense,
    pub out: Dense,
    pub attn_norm: Norm,
    pub up: Dense,
    pub down: Dense,
    pub out_norm: Norm,
}

/// Every weight the forward pass reads.
pub(super) struct Weights {
    /// `vocab × hidden`.
    pub word: Vec<f32>,
    /// Token type 0's embedding.
    pub type0: Vec<f32>,
    /// `max_positions × hidden`.
    pub positions: Vec<f32>,
    pub embed_norm: Norm,
    pub layers: Vec<Layer>,
}

fn weights_error(reason: String) -> ModelError {
    ModelError::Candle {
        context: "loading BERT weights (do model.safetensors and config.json belong together?)"
            .into(),
        source: candle_core::Error::Msg(reason),
    }
}

/// The tensors of a safetensors file under the prefix that holds BERT's embeddings.
struct Store {
    tensors: HashMap<String, Tensor>,
    prefix: String,
}

impl Store {
    /// The tensor `name` (after the prefix) as `f32` values, checked to have `shape`.
    fn take(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, ModelError> {
        let full = format!("{}{name}", self.prefix);
        let t = self
            .tensors
            .get(&full)
            .ok_or_else(|| weights_error(format!("model.safetensors has no tensor '{full}'")))?;
        if t.dims() != shape {
            return Err(weights_error(format!(
                "tensor '{full}' has shape {:?}, config.json implies {shape:?}",
                t.dims()
            )));
        }
        t.to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|source| ModelError::Candle {
                context: format!("reading tensor '{full}'"),
                source,
            })
    }

    fn norm(&self, name: &str, h: usize) -> Result<Norm, ModelError> {
        Ok(Norm {
            gamma: self.take(&format!("{name}.weight"), &[h])?,
            beta: self.take(&format!("{name}.bias"), &[h])?,
        })
    }

    /// The dense layers `names` stacked into one (their outputs side by side).
    fn dense(&self, names: &[String], inputs: usize, outputs: usize) -> Result<Dense, ModelError> {
        let mut d = Dense {
            w: Vec::with_capacity(names.len() * inputs * outputs),
            b: Vec::with_capacity(names.len() * outputs),
            inputs,
        };
        for name in names {
            d.w.extend(self.take(&format!("{name}.weight"), &[outputs, inputs])?);
            d.b.extend(self.take(&format!("{name}.bias"), &[outputs])?);
        }
        Ok(d)
    }
}

/// Reads the weights of `config`'s BERT from a safetensors buffer, finding them as
/// candle's `BertModel::load` does: no prefix, `bert.`, or the config's `model_type`.
pub(super) fn load(bytes: &[u8], config: &BertConfig) -> Result<Weights, ModelError> {
    let tensors = candle_core::safetensors::load_buffer(bytes, &Device::Cpu).map_err(|source| {
        ModelError::Candle {
            context: "reading model.safetensors".into(),
            source,
        }
    })?;
    let prefix = [Some("bert"), config.model_type.as_deref()]
        .into_iter()
        .flatten()
        .map(|p| format!("{p}."))
        .find(|p| tensors.contains_key(&format!("{p}embeddings.word_embeddings.weight")))
        .unwrap_or_default();
    let store = Store { tensors, prefix };
    let (h, inter) = (config.hidden_size, config.intermediate_size);
    let mut layers = Vec::with_capacity(config.num_hidden_layers);
    for l in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{l}");
        let qkv: Vec<String> = ["query", "key", "value"]
            .iter()
            .map(|m| format!("{p}.attention.self.{m}"))
            .collect();
        layers.push(Layer {
            qkv: store.dense(&qkv, h, h)?,
            out: store.dense(&[format!("{p}.attention.output.dense")], h, h)?,
            attn_norm: store.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
            up: store.dense(&[format!("{p}.intermediate.dense")], h, inter)?,
            down: store.dense(&[format!("{p}.output.dense")], inter, h)?,
            out_norm: store.norm(&format!("{p}.output.LayerNorm"), h)?,
        });
    }
    let types = store.take(
        "embeddings.token_type_embeddings.weight",
        &[config.type_vocab_size, h],
    )?;
    Ok(Weights {
        word: store.take("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
        type0: types[..h].to_vec(),
        positions: store.take(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?,
        embed_norm: store.norm("embeddings.LayerNorm", h)?,
        layers,
    })
}
