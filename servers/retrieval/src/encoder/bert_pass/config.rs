//! The part of a Hugging Face BERT `config.json` the encoder reads, checked for what
//! [`super::BertPass`] implements.

use std::path::Path;

use serde::Deserialize;

use crate::model::ModelError;

/// `hidden_act` values this encoder runs: BERT's exact GELU, `x · Φ(x)` with `erf`
/// (Hugging Face calls it `gelu`; `gelu_erf` is accepted as its explicit name).
pub const SUPPORTED_ACTIVATIONS: [&str; 2] = ["gelu", "gelu_erf"];

/// BERT hyper-parameters from `config.json`; keys it does not name are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    /// Rows of the word embedding table.
    pub vocab_size: usize,
    /// Width of every hidden state (the sentence vector's dimension).
    pub hidden_size: usize,
    /// Encoder layers.
    pub num_hidden_layers: usize,
    /// Attention heads a layer; `hidden_size` must be a multiple of it.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// The feed-forward activation; only [`SUPPORTED_ACTIVATIONS`] are accepted.
    pub hidden_act: String,
    /// Rows of the position embedding table: the longest sequence the model takes.
    pub max_position_embeddings: usize,
    /// Rows of the token type table (type 0 is the one used).
    pub type_vocab_size: usize,
    /// Layer norm epsilon (Hugging Face's default when absent).
    #[serde(default = "default_layer_norm_eps")]
    pub layer_norm_eps: f64,
    /// Only `absolute` position embeddings are implemented (as in candle's BERT).
    #[serde(default)]
    pub position_embedding_type: Option<String>,
    /// A prefix the weights may carry (`bert.`, or this name followed by a dot).
    #[serde(default)]
    pub model_type: Option<String>,
}

fn default_layer_norm_eps() -> f64 {
    1e-12
}

impl BertConfig {
    /// Parses and checks `config.json`'s bytes; `path` names the file in errors.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<BertConfig, ModelError> {
        let invalid = |reason: String| ModelError::Config {
            path: path.to_path_buf(),
            reason,
        };
        let config: BertConfig =
            serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
        if !SUPPORTED_ACTIVATIONS.contains(&config.hidden_act.as_str()) {
            return Err(invalid(format!(
                "hidden_act \"{}\" is not supported: this encoder implements BERT's exact \
                 (erf) GELU only, hidden_act \"gelu\" or \"gelu_erf\"",
                config.hidden_act
            )));
        }
        if let Some(kind) = config
            .position_embedding_type
            .as_deref()
            .filter(|k| *k != "absolute")
        {
            return Err(invalid(format!(
                "position_embedding_type \"{kind}\" is not supported: only \"absolute\" is"
            )));
        }
        let (h, heads) = (config.hidden_size, config.num_attention_heads);
        if heads == 0 || h == 0 || !h.is_multiple_of(heads) {
            return Err(invalid(format!(
                "hidden size {h} is not a multiple of {heads} attention heads"
            )));
        }
        let sizes = [
            ("vocab_size", config.vocab_size),
            ("intermediate_size", config.intermediate_size),
            ("max_position_embeddings", config.max_position_embeddings),
            ("type_vocab_size", config.type_vocab_size),
        ];
        if let Some((name, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return Err(invalid(format!("{name} is 0")));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(act: &str, extra: &str) -> String {
        format!(
            r#"{{"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
                "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "{act}",
                "max_position_embeddings": 16, "type_vocab_size": 2{extra}}}"#
        )
    }

    #[test]
    fn gelu_configs_parse_with_defaults() {
        for act in SUPPORTED_ACTIVATIONS {
            let c = BertConfig::parse(config(act, "").as_bytes(), Path::new("c.json")).unwrap();
            assert_eq!(c.layer_norm_eps, 1e-12);
            assert_eq!(c.model_type, None);
        }
    }

    #[test]
    fn other_activations_and_shapes_are_refused_with_what_is_supported() {
        let p = Path::new("c.json");
        let err = BertConfig::parse(config("relu", "").as_bytes(), p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"relu\"") && err.contains("\"gelu\""),
            "{err}"
        );
        assert!(err.contains("c.json"), "{err}");
        let relative = config("gelu", r#", "position_embedding_type": "relative_key""#);
        let err = BertConfig::parse(relative.as_bytes(), p)
            .unwrap_err()
            .to_string();
        assert!(err.contains("relative_key"), "{err}");
        let heads = config("gelu", "")
            .replace(r#""num_attention_heads": 2"#, r#""num_attention_heads": 3"#);
        let err = BertConfig::parse(heads.as_bytes(), p)
            .unwrap_err()
            .to_string();
        assert!(err.contains("3 attention heads"), "{err}");
        assert!(BertConfig::parse(b"{}", p).is_err());
    }
}
