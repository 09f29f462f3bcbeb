//! The static encoder: a token-vector table distilled here from the MiniLM transformer,
//! so a text is embedded by a table look-up and a mean instead of a forward pass.
//!
//! - [`distill()`]: every vocabulary token of a BERT model, fed alone as
//!   `[CLS] token [SEP]`, goes through the transformer once (mean-pooled over the three
//!   positions); the vectors are reduced by [`pca::Pca`] to `dims`, weighted by a
//!   Zipf/SIF prior on the token's rank in the vocabulary (lower ids are more
//!   frequent in BERT vocabularies) and written as `model.safetensors` (one
//!   `embeddings` tensor, `vocab × dims`, f32) + a copy of `tokenizer.json` +
//!   `static.json` (source model hash, dims, method, vocabulary size). This is the
//!   model2vec method; the files are byte-identical for the same source.
//! - [`StaticEncoder`]: loads those files; [`StaticEncoder::embed`] tokenizes each text
//!   (no special tokens, unknown and special tokens dropped), averages its token rows
//!   and L2-normalizes the mean. ASCII text takes an exact fast path through the
//!   BERT WordPiece tables (`wordpiece`), ten times cheaper than the general tokenizer.
//! - [`TextEncoder`]: the trait the index and tools embed through, implemented by
//!   the MiniLM [`crate::model::Embedder`] and [`StaticEncoder`]; [`EncoderKind`]
//!   (`--encoder minilm|static`) names the stores each keeps apart (`index`,
//!   `index-static`).
//!
//! The rows keep their SIF weight (they are not unit vectors): a frequent token such
//! as `self` or `(` has a short row and so counts less in a text's mean. Unit length
//! is a property of the encoded text, not of the rows.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use navbench_retrieval::encoder::{StaticEncoder, distill};
//! use navbench_retrieval::model::write_tiny_model;
//!
//! let tmp = tempfile::tempdir()?;
//! write_tiny_model(&tmp.path().join("bert"), 7)?; // random weights (tests only)
//! distill(&tmp.path().join("bert"), &tmp.path().join("static"), 16)?;
//! let encoder = StaticEncoder::load(&tmp.path().join("static"))?;
//! let v = encoder.embed(&["def parse_url(s): return s"])?;
//! assert_eq!(v[0].len(), 16);
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};

use crate::model::{DEFAULT_MODEL_NAME, ModelError};

pub(crate) mod bert_pass;
mod choice;
mod distill;
mod erf;
pub mod pca;
mod static_model;
mod wordpiece;

pub use choice::{EncoderKind, TextEncoder};
pub use distill::{DistillReport, distill};
pub use static_model::StaticEncoder;

/// The files a static model directory holds.
pub const STATIC_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "static.json"];
/// Name of the token-vector tensor in `model.safetensors`.
pub const EMBEDDINGS_TENSOR: &str = "embeddings";
/// Default PCA dimension (model2vec's default).
pub const DEFAULT_STATIC_DIMS: usize = 256;
/// SIF coefficient `a` in the token weight `a / (a + p(token))`.
pub const SIF_COEFFICIENT: f64 = 1e-4;
/// `static.json`'s `method` field; bumped when the recipe changes.
pub const METHOD: &str =
    "navbench-static-v1: [CLS] token [SEP] mean-pooled, PCA, Zipf-rank SIF 1e-4";

/// Where the default static model lives: `<cache>/models/all-MiniLM-L6-v2-static`.
pub fn default_static_dir(cache_dir: &Path) -> PathBuf {
    cache_dir
        .join("models")
        .join(format!("{DEFAULT_MODEL_NAME}-static"))
}

/// Why a static model could not be distilled, loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EncoderError {
    /// The directory does not hold a distilled model; the message says what to run.
    #[error(
        "no static encoder in {}: missing {missing}; run `navbench-retrieval distill` to distill it from all-MiniLM-L6-v2 (about a minute), or pass --model-dir DIR (with --encoder static) naming a directory made by it",
        dir.display()
    )]
    NotDistilled {
        /// The directory that was looked in.
        dir: PathBuf,
        /// The missing files, comma-separated.
        missing: String,
    },
    /// The source transformer could not be loaded or run.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Reading or writing a file failed.
    #[error("cannot access '{}': {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The files exist but do not make a valid static model, or the request is invalid.
    #[error("{0}")]
    Invalid(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> EncoderError + '_ {
    move |source| EncoderError::Io {
        path: path.to_path_buf(),
        source,
    }
}
