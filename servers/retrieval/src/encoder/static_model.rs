//! [`StaticEncoder`]: loading a distilled token table and embedding texts with it.

use std::fs;
use std::path::Path;

use rayon::prelude::*;
use tokenizers::Tokenizer;

use super::wordpiece::FastWordPiece;
use super::{EMBEDDINGS_TENSOR, EncoderError, STATIC_FILES, io_err};

/// Texts per rayon task: large enough that scheduling costs nothing next to
/// tokenizing, small enough to balance two cores on a few hundred texts.
const TEXTS_PER_TASK: usize = 32;

/// A static sentence encoder: tokenizer + one row of `dim` floats per token.
///
/// `Send + Sync`; [`StaticEncoder::embed`] takes `&self` and spreads texts over the
/// rayon pool.
pub struct StaticEncoder {
    tokenizer: Tokenizer,
    /// The ASCII fast path, when the tokenizer is a lowercasing BERT WordPiece.
    fast: Option<FastWordPiece>,
    /// `vocab × dim`, row-major.
    table: Vec<f32>,
    dim: usize,
    /// Ids whose rows never count: special tokens and the unknown token.
    skip: Vec<bool>,
    model_id: String,
}

impl std::fmt::Debug for StaticEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEncoder")
            .field("dim", &self.dim)
            .field("vocab", &self.skip.len())
            .field("model_id", &self.model_id)
            .finish_non_exhaustive()
    }
}

impl StaticEncoder {
    /// Loads a directory written by [`super::distill`]. A directory without the
    /// files says to run `navbench-retrieval distill`.
    pub fn load(dir: &Path) -> Result<StaticEncoder, EncoderError> {
        let missing: Vec<&str> = STATIC_FILES
            .iter()
            .copied()
            .filter(|f| !dir.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(EncoderError::NotDistilled {
                dir: dir.to_path_buf(),
                missing: missing.join(", "),
            });
        }
        let weights_path = dir.join(STATIC_FILES[0]);
        let weights = fs::read(&weights_path).map_err(io_err(&weights_path))?;
        let tok_path = dir.join(STATIC_FILES[1]);
        let tok_bytes = fs::read(&tok_path).map_err(io_err(&tok_path))?;
        let invalid = |what: String| {
            EncoderError::Invalid(format!(
                "{} is not a static model ({what}); run `navbench-retrieval distill` again",
                dir.display()
            ))
        };
        let tensors = candle_core::safetensors::load_buffer(&weights, &candle_core::Device::Cpu)
            .map_err(|e| invalid(format!("model.safetensors: {e}")))?;
        let tensor = tensors
            .get(EMBEDDINGS_TENSOR)
            .ok_or_else(|| invalid(format!("no '{EMBEDDINGS_TENSOR}' tensor")))?;
        let (vocab, dim) = tensor
            .dims2()
            .map_err(|e| invalid(format!("'{EMBEDDINGS_TENSOR}' shape: {e}")))?;
        let table = tensor
            .to_dtype(candle_core::DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| invalid(format!("'{EMBEDDINGS_TENSOR}' values: {e}")))?;
        let mut tokenizer = Tokenizer::from_bytes(&tok_bytes)
            .map_err(|e| invalid(format!("tokenizer.json: {e}")))?;
        // Whole texts count: no truncation, and one text at a time needs no padding.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| invalid(format!("tokenizer.json: {e}")))?;
        if tokenizer.get_vocab_size(true) > vocab {
            return Err(invalid(format!(
                "tokenizer has {} tokens, table {vocab} rows",
                tokenizer.get_vocab_size(true)
            )));
        }
        let mut skip = vec![false; vocab];
        for (id, token) in tokenizer.get_added_tokens_decoder() {
            if token.special
                && let Some(s) = skip.get_mut(id as usize)
            {
                *s = true;
            }
        }
        let unk = tokenizer_unk(&tokenizer);
        if let Some(s) = unk.and_then(|id| skip.get_mut(id as usize)) {
            *s = true;
        }
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&weights);
        hasher.update(&tok_bytes);
        Ok(StaticEncoder {
            fast: FastWordPiece::from_tokenizer_json(&tok_bytes),
            tokenizer,
            table,
            dim,
            skip,
            model_id: format!("static-{:032x}", hasher.digest128()),
        })
    }

    /// One L2-normalized vector per text, in input order: the mean of the rows of the
    /// text's tokens (special and unknown tokens left out). A text with no counted
    /// token gets the zero vector.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        texts
            .par_iter()
            .with_min_len(TEXTS_PER_TASK)
            .map(|t| self.embed_one(t))
            .collect()
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EncoderError> {
        let ids = self.token_ids(text)?;
        let mut sum = vec![0f32; self.dim];
        let mut n = 0usize;
        for id in ids {
            let row = self.row(id);
            if let Some(row) = row {
                sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
                n += 1;
            }
        }
        if n > 0 {
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                // The mean's direction is the sum's: dividing by n is unnecessary.
                sum.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(sum)
    }

    /// The token ids a text is encoded from (no special tokens added).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EncoderError> {
        let mut ids = Vec::with_capacity(text.len() / 3);
        if let Some(fast) = &self.fast
            && fast.encode(text, &mut ids)
        {
            return Ok(ids);
        }
        let enc = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| EncoderError::Invalid(format!("tokenizing a text: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    /// The row of a token, or `None` for special, unknown and out-of-table ids.
    pub fn row(&self, id: u32) -> Option<&[f32]> {
        let i = id as usize;
        if self.skip.get(i).copied().unwrap_or(true) {
            return None;
        }
        Some(&self.table[i * self.dim..(i + 1) * self.dim])
    }

    /// Embedding dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Stable id of the table and tokenizer (`static-` + xxh3-128 hex); keys caches so
    /// static vectors are never mixed with another encoder's.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }
}

/// The unknown token's id, when the tokenizer's model declares one.
fn tokenizer_unk(tokenizer: &Tokenizer) -> Option<u32> {
    ["[UNK]", "<unk>"]
        .iter()
        .find_map(|t| tokenizer.token_to_id(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoder::distill;
    use crate::model::write_tiny_model;

    fn tiny_static(dims: usize) -> (tempfile::TempDir, StaticEncoder) {
        let tmp = tempfile::tempdir().unwrap();
        write_tiny_model(&tmp.path().join("bert"), 5).unwrap();
        distill(&tmp.path().join("bert"), &tmp.path().join("static"), dims).unwrap();
        let e = StaticEncoder::load(&tmp.path().join("static")).unwrap();
        (tmp, e)
    }

    #[test]
    fn encodings_are_unit_vectors_of_the_stated_size() {
        let (_t, e) = tiny_static(12);
        assert_eq!(e.dim(), 12);
        assert!(e.model_id().starts_with("static-"));
        let v = e
            .embed(&["def parse_url(s): return s", "class Cat: pass", "x"])
            .unwrap();
        for x in &v {
            assert_eq!(x.len(), 12);
            let n = x.iter().map(|a| a * a).sum::<f32>().sqrt();
            assert!((n - 1.0).abs() < 1e-5, "norm {n}");
        }
        assert_ne!(v[0], v[1]);
    }

    #[test]
    fn an_encoding_is_the_normalized_mean_of_its_token_rows() {
        let (_t, e) = tiny_static(16);
        let text = "def load(path): return open(path).read() ☃";
        let ids = e.token_ids(text).unwrap();
        let rows: Vec<&[f32]> = ids.iter().filter_map(|&id| e.row(id)).collect();
        assert!(rows.len() >= 8, "{ids:?}");
        assert!(rows.len() < ids.len(), "the unknown snowman is left out");
        let mut mean = vec![0f32; 16];
        for r in &rows {
            for (m, x) in mean.iter_mut().zip(*r) {
                *m += x / rows.len() as f32;
            }
        }
        let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
        let got = &e.embed(&[text]).unwrap()[0];
        for (g, m) in got.iter().zip(&mean) {
            assert!((g - m / norm).abs() < 1e-5, "{g} vs {}", m / norm);
        }
    }

    #[test]
    fn batch_and_single_encodings_agree_and_empty_text_is_zero() {
        let (_t, e) = tiny_static(8);
        let texts: Vec<String> = (0..100).map(|i| format!("def f{i}(x): return x")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let all = e.embed(&refs).unwrap();
        assert_eq!(all[37], e.embed(&[refs[37]]).unwrap()[0]);
        assert!(e.embed(&[""]).unwrap()[0].iter().all(|&x| x == 0.0));
    }

    #[test]
    fn a_missing_model_says_to_run_distill() {
        let tmp = tempfile::tempdir().unwrap();
        let err = StaticEncoder::load(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("navbench-retrieval distill"), "{err}");
        assert!(
            err.contains("model.safetensors, tokenizer.json, static.json"),
            "{err}"
        );
        // An interrupted distillation (no static.json) is refused the same way.
        let (t, _) = tiny_static(4);
        fs::remove_file(t.path().join("static/static.json")).unwrap();
        let err = StaticEncoder::load(&t.path().join("static"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing static.json"), "{err}");
    }
}
