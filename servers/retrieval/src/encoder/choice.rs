//! Which encoder a server runs: [`EncoderKind`] (`--encoder minilm|static`) and the
//! [`TextEncoder`] trait the index and tools call, implemented by the MiniLM
//! [`Embedder`] and the [`StaticEncoder`].
//!
//! Stores are keyed by the kind ([`EncoderKind::store_suffix`]) and vectors by the
//! model id (`static-…` for a static model), so one encoder's index or vectors are
//! never read by the other.

use std::path::Path;

use crate::encoder::StaticEncoder;
use crate::model::{Embedder, ModelError};

/// The two encoders of the retrieval server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EncoderKind {
    /// The all-MiniLM-L6-v2 transformer (the default).
    #[default]
    Minilm,
    /// The static token-vector table distilled from it (`navbench-retrieval distill`).
    Static,
}

impl EncoderKind {
    /// The name used on the command line and in messages.
    pub fn name(self) -> &'static str {
        match self {
            EncoderKind::Minilm => "minilm",
            EncoderKind::Static => "static",
        }
    }

    /// The kind that made vectors with this model id (static ids start `static-`).
    pub fn of_model_id(model_id: &str) -> EncoderKind {
        if model_id.starts_with("static-") {
            EncoderKind::Static
        } else {
            EncoderKind::Minilm
        }
    }

    /// Appended to a repository's store names (`index`, `manifest`): empty for MiniLM,
    /// so its layout is unchanged, `-static` for the static encoder.
    pub fn store_suffix(self) -> &'static str {
        match self {
            EncoderKind::Minilm => "",
            EncoderKind::Static => "-static",
        }
    }
}

/// A sentence encoder: one L2-normalized vector per text, and the ids that key caches.
pub trait TextEncoder: Send + Sync + std::fmt::Debug {
    /// Which encoder this is.
    fn kind(&self) -> EncoderKind;
    /// One vector per text, in input order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError>;
    /// Vector dimension.
    fn dim(&self) -> usize;
    /// Stable id of the model's files; keys vector caches and index stores.
    fn model_id(&self) -> &str;
    /// A directory of vectors shared between processes, if any.
    fn shared_cache(&self) -> Option<&Path> {
        None
    }
}

impl TextEncoder for Embedder {
    fn kind(&self) -> EncoderKind {
        EncoderKind::Minilm
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        Embedder::embed(self, texts)
    }
    fn dim(&self) -> usize {
        Embedder::dim(self)
    }
    fn model_id(&self) -> &str {
        Embedder::model_id(self)
    }
    fn shared_cache(&self) -> Option<&Path> {
        Embedder::shared_cache(self)
    }
}

/// The static encoder embeds tens of thousands of chunks a second, so it shares no
/// vectors between processes: each index keeps its own cache.
impl TextEncoder for StaticEncoder {
    fn kind(&self) -> EncoderKind {
        EncoderKind::Static
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        StaticEncoder::embed(self, texts).map_err(|e| ModelError::Tokenizer {
            context: "static encoder".into(),
            reason: e.to_string(),
        })
    }
    fn dim(&self) -> usize {
        StaticEncoder::dim(self)
    }
    fn model_id(&self) -> &str {
        StaticEncoder::model_id(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_apart_by_model_id_and_store_names() {
        assert_eq!(EncoderKind::of_model_id("static-00ff"), EncoderKind::Static);
        assert_eq!(EncoderKind::of_model_id("00ff"), EncoderKind::Minilm);
        assert_ne!(
            EncoderKind::Minilm.store_suffix(),
            EncoderKind::Static.store_suffix()
        );
        assert_eq!(EncoderKind::default(), EncoderKind::Minilm);
    }
}
