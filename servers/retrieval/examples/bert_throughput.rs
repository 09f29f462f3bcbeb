//! Embedding throughput of the project's BERT pass against candle-transformers'
//! `BertModel` (the path `model.rs` ran before), in one process on the same chunks.
//!
//! `cargo run --release -p navbench-retrieval --example bert_throughput -- MODEL_DIR [TREE] [ROUNDS=2]`
//!
//! The chunks are the Python files under `TREE` (default: the repository's
//! `datasets/mini/repo`) cut into windows of 10 to 60 lines starting every 10 lines,
//! so lengths are mixed (some reach the 256-token truncation). The old path is
//! model.rs's former `embed`: texts sorted longest first, batches of 16 padded to
//! their longest, an attention mask, masked mean, L2 norm. The new one is
//! `Embedder::embed` in the index's groups of 128 texts, longest first. Each round
//! times both; the figures printed are per round and the best of each.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use navbench_retrieval::model::Embedder;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Python files under `dir`, sorted, recursively.
fn python_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            python_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "py") {
            out.push(p);
        }
    }
    Ok(())
}

/// Windows of 10, 25, 40, 60 lines (in turn) starting every 10 lines of each file.
fn chunks(tree: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    python_files(tree, &mut files)?;
    let mut out = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
        let lines: Vec<&str> = text.lines().collect();
        for (i, start) in (0..lines.len()).step_by(10).enumerate() {
            let size = [10, 25, 40, 60][i % 4];
            let piece = lines[start..lines.len().min(start + size)].join("\n");
            if !piece.trim().is_empty() {
                out.push(piece);
            }
        }
    }
    Ok(out)
}

/// model.rs's embedding path before the BERT pass (candle-transformers' `BertModel`).
struct OldPath {
    model: BertModel,
    tokenizer: Tokenizer,
}

impl OldPath {
    fn load(dir: &Path) -> anyhow::Result<OldPath> {
        let config: Config = serde_json::from_slice(&std::fs::read(dir.join("config.json"))?)?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(anyhow::Error::msg)?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: 256.min(config.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(anyhow::Error::msg)?;
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            ..PaddingParams::default()
        }));
        let weights = std::fs::read(dir.join("model.safetensors"))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)?;
        let model = BertModel::load(vb, &config)?;
        Ok(OldPath { model, tokenizer })
    }

    fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(16) {
            let inputs: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            let enc = self
                .tokenizer
                .encode_batch(inputs, true)
                .map_err(anyhow::Error::msg)?;
            let (n, len) = (enc.len(), enc.first().map_or(0, |e| e.get_ids().len()));
            let ids: Vec<u32> = enc.iter().flat_map(|e| e.get_ids().to_vec()).collect();
            let mask: Vec<u32> = enc
                .iter()
                .flat_map(|e| e.get_attention_mask().to_vec())
                .collect();
            let ids = Tensor::from_vec(ids, (n, len), &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, (n, len), &Device::Cpu)?;
            let hidden = self.model.forward(&ids, &ids.zeros_like()?, Some(&mask))?;
            let maskf = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&maskf)?.sum(1)?;
            let counts = maskf.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            for (&i, v) in batch
                .iter()
                .zip(mean.broadcast_div(&norm)?.to_vec2::<f32>()?)
            {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

/// `Embedder::embed` as the index calls it: longest first, groups of 128.
fn embed_new(embedder: &Embedder, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
    let mut out = vec![Vec::new(); texts.len()];
    for group in order.chunks(128) {
        let inputs: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
        for (&i, v) in group.iter().zip(embedder.embed(&inputs)?) {
            out[i] = v;
        }
    }
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(model_dir) = args.first().map(PathBuf::from) else {
        anyhow::bail!("usage: bert_throughput MODEL_DIR [TREE] [ROUNDS]");
    };
    let tree = args.get(1).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/mini/repo"),
        PathBuf::from,
    );
    let rounds: usize = args.get(2).map_or(Ok(2), |s| s.parse())?;
    let texts = chunks(&tree)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let old = OldPath::load(&model_dir)?;
    let new = Embedder::load(&model_dir)?;
    let lengths: Vec<usize> = old
        .tokenizer
        .encode_batch(refs.clone(), true)
        .map_err(anyhow::Error::msg)?
        .iter()
        .map(|e| e.get_attention_mask().iter().filter(|&&m| m == 1).count())
        .collect();
    let capped = lengths.iter().filter(|&&l| l >= new.max_tokens()).count();
    println!(
        "{} chunks from {}: {} tokens on average, {capped} at the {}-token cap; {} threads",
        texts.len(),
        tree.display(),
        lengths.iter().sum::<usize>() / lengths.len().max(1),
        new.max_tokens(),
        rayon::current_num_threads()
    );
    let (mut best_old, mut best_new) = (0f64, 0f64);
    for round in 1..=rounds {
        let t = Instant::now();
        let a = old.embed(&refs)?;
        let old_rate = refs.len() as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        let b = embed_new(&new, &refs)?;
        let new_rate = refs.len() as f64 / t.elapsed().as_secs_f64();
        let diff = a
            .iter()
            .flatten()
            .zip(b.iter().flatten())
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        println!(
            "round {round}: BertModel {old_rate:.1} chunks/s, BERT pass {new_rate:.1} chunks/s \
             (x{:.2}); max |difference| {diff:e}",
            new_rate / old_rate
        );
        best_old = best_old.max(old_rate);
        best_new = best_new.max(new_rate);
    }
    println!(
        "best: BertModel {best_old:.1} chunks/s, BERT pass {best_new:.1} chunks/s, ratio {:.2}",
        best_new / best_old
    );
    Ok(())
}
