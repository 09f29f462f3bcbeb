use std::path::PathBuf;

use candle_transformers::models::bert::BertModel;

use super::reference::{bert_model, candle_embed, candle_mean};
use super::*;
use crate::model::{Embedder, write_tiny_model};

fn tiny() -> (tempfile::TempDir, BertPass, BertModel) {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_model(dir.path(), 5).unwrap();
    let pass = BertPass::load(dir.path()).unwrap();
    let model = bert_model(dir.path());
    (dir, pass, model)
}

/// The real MiniLM that `NAVBENCH_MINILM_DIR` points at; the tests that need it are
/// ignored unless asked for, and then fail saying what to set.
fn minilm_dir() -> PathBuf {
    let dir = std::env::var_os("NAVBENCH_MINILM_DIR").map(PathBuf::from);
    match dir {
        Some(d) if d.join("model.safetensors").is_file() => d,
        other => panic!(
            "NAVBENCH_MINILM_DIR ({other:?}) does not name an all-MiniLM-L6-v2 directory with model.safetensors: set it (navbench-retrieval fetch-model installs the model)"
        ),
    }
}

/// `[CLS] id [SEP]` for ids 5.. of the tiny vocabulary, repeated past two batches.
fn triples(n: usize) -> Vec<u32> {
    (0..n as u32).flat_map(|i| [2, 5 + i % 150, 3]).collect()
}

/// Sequences of the lengths the brief names (1, 7, 60, 250, the 512 cap) and a few
/// more, ids in `first..first + span`, framed by `cls`/`sep` from two tokens on.
fn sequences(first: u32, span: u32, (cls, sep): (u32, u32)) -> Vec<Vec<u32>> {
    let mut state = 0x2545_f491_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        first + state % span
    };
    [1, 7, 60, 250, 512, 2, 7, 33, 60, 128, 3, 250]
        .iter()
        .map(|&len| match len {
            1 => vec![cls],
            _ => std::iter::once(cls)
                .chain((2..len).map(|_| next()))
                .chain([sep])
                .collect(),
        })
        .collect()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max)
}

/// Each vector's `k` nearest others by cosine (the vectors are unit length).
fn neighbours(vectors: &[Vec<f32>], k: usize) -> Vec<Vec<usize>> {
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    (0..vectors.len())
        .map(|i| {
            let mut others: Vec<usize> = (0..vectors.len()).filter(|&j| j != i).collect();
            others.sort_by(|&a, &b| {
                dot(&vectors[i], &vectors[b]).total_cmp(&dot(&vectors[i], &vectors[a]))
            });
            others.truncate(k);
            others
        })
        .collect()
}

/// The pass's sentence embeddings against `BertModel`'s padded, masked batches: the
/// largest difference, after checking the neighbours agree.
fn compare_embeddings(pass: &BertPass, model: &BertModel, seqs: &[Vec<u32>]) -> f32 {
    let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
    let got = pass.embed(&refs).unwrap();
    let want = candle_embed(model, &refs, 0, 4);
    assert_eq!(
        neighbours(&got, 3),
        neighbours(&want, 3),
        "neighbours differ"
    );
    got.iter()
        .zip(&want)
        .map(|(a, b)| max_diff(a, b))
        .fold(0f32, f32::max)
}

/// With libm's `erff`, the pass computes candle's bits; with [`Erf`], GELU's
/// rounding differs on a few inputs and the vectors by float rounding.
#[test]
fn candles_bits_with_libms_erf_and_its_rounding_with_ours() {
    let (_d, mut pass, model) = tiny();
    for (seqs, len) in [(triples(300), 3), ((5..60).collect(), 1)] {
        let want = candle_mean(&model, &seqs, len);
        let fast = pass.mean_pooled(&seqs, len, &|_| {}).unwrap();
        let diff = max_diff(&fast, &want);
        assert!(diff < 1e-5, "len {len}: max difference {diff}");
        let erf = pass.erf.take();
        let exact = pass.mean_pooled(&seqs, len, &|_| {}).unwrap();
        pass.erf = erf;
        assert!(exact == want, "len {len}: not candle's bits");
    }
}

/// Sentence embeddings of 1 to 512 tokens, unpadded, against `BertModel` padded with
/// a mask (the tiny model's 512 positions).
#[test]
fn embeddings_match_bert_models_padded_batches_on_the_tiny_model() {
    let (_d, pass, model) = tiny();
    let diff = compare_embeddings(&pass, &model, &sequences(5, 150, (2, 3)));
    eprintln!("tiny model: max |difference| from BertModel {diff:e}");
    assert!(diff <= 1e-5, "{diff}");
}

/// The same through [`Embedder::embed`] (tokenizer, truncation at 512), so model.rs's
/// use of the pass is what is compared.
#[test]
fn the_embedder_matches_bert_model_on_texts_of_every_length() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_model(dir.path(), 9).unwrap();
    let embedder = Embedder::load(dir.path())
        .unwrap()
        .with_max_tokens(512)
        .unwrap();
    let words: Vec<&str> = include_str!("kernels.rs").split_whitespace().collect();
    let texts: Vec<String> = [0, 1, 3, 20, 90, 400, 5000, 2, 45]
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            words
                .iter()
                .cycle()
                .skip(i * 7)
                .take(n)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let got = embedder.embed(&refs).unwrap();
    let encodings = embedder.tokenizer().encode_batch(refs, true).unwrap();
    let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
    assert_eq!(ids.iter().map(|s| s.len()).max(), Some(512));
    let want = candle_embed(&bert_model(dir.path()), &ids, 0, 16);
    let diff = got
        .iter()
        .zip(&want)
        .map(|(a, b)| max_diff(a, b))
        .fold(0f32, f32::max);
    assert!(diff <= 1e-5, "{diff}");
    assert_eq!(neighbours(&got, 3), neighbours(&want, 3));
}

#[test]
fn embeddings_depend_on_neither_threads_nor_the_other_texts() {
    let (_d, pass, _) = tiny();
    let mut seqs = sequences(5, 150, (2, 3));
    seqs.extend((0..300).map(|i| vec![2, 5 + i % 150, 3]));
    let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
    let run = |threads: usize, input: &[&[u32]]| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| pass.embed(input).unwrap())
    };
    let all = run(1, &refs);
    assert!(all == run(3, &refs), "one thread and three differ");
    let reversed: Vec<&[u32]> = refs.iter().rev().copied().collect();
    let back: Vec<Vec<f32>> = run(2, &reversed).into_iter().rev().collect();
    assert!(all == back, "the input order changed a vector");
    // Alone, a sequence's batch has other row counts: gemm may block its sums
    // otherwise, so the vector agrees to float rounding, not to the bit.
    for (i, seq) in refs.iter().enumerate() {
        let diff = max_diff(&all[i], &run(2, &[*seq])[0]);
        assert!(diff <= 1e-6, "sequence {i} alone differs by {diff}");
    }
    let empty: &[u32] = &[];
    assert!(pass.embed(&[empty]).unwrap()[0].iter().all(|&v| v == 0.0));
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
fn ids_beyond_the_vocabulary_and_ragged_or_long_input_are_refused() {
    let (_d, pass, _) = tiny();
    let err = pass.mean_pooled(&[2, 99_999, 3], 3, &|_| {}).unwrap_err();
    assert!(err.to_string().contains("99999"), "{err}");
    let err = pass.mean_pooled(&[2, 7, 3, 2], 3, &|_| {}).unwrap_err();
    assert!(err.to_string().contains("sequences of 3"), "{err}");
    assert!(pass.mean_pooled(&[2, 7], 0, &|_| {}).is_err());
    let (good, bad): (&[u32], &[u32]) = (&[2, 3], &[2, 99_999, 3]);
    let err = pass.embed(&[good, bad]).unwrap_err();
    assert!(err.to_string().contains("99999"), "{err}");
    let long = vec![7u32; 513];
    let err = pass.embed(&[long.as_slice()]).unwrap_err();
    assert!(err.to_string().contains("512 positions"), "{err}");
}

#[test]
fn weights_that_do_not_fit_the_config_are_named() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_model(dir.path(), 5).unwrap();
    let path = dir.path().join("config.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"intermediate_size\": 64", "\"intermediate_size\": 65"),
    )
    .unwrap();
    let err = BertPass::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("intermediate.dense.weight") && err.contains("65"),
        "{err}"
    );
    std::fs::write(
        &path,
        text.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"),
    )
    .unwrap();
    let err = BertPass::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("encoder.layer.2"), "{err}");
}

/// On the real MiniLM when `NAVBENCH_MINILM_DIR` points at it: 2,048 vocabulary
/// tokens framed as distillation frames them, against candle's `BertModel`.
#[test]
#[ignore = "needs all-MiniLM-L6-v2: set NAVBENCH_MINILM_DIR to its directory (navbench run or navbench-retrieval fetch-model installs it); .ci/run runs it after the mini run"]
fn candles_bits_on_minilm_when_installed() {
    let dir = minilm_dir();
    let mut pass = BertPass::load(&dir).unwrap();
    let model = bert_model(&dir);
    let seqs: Vec<u32> = (0..2048u32)
        .flat_map(|i| [101, 1000 + i * 14, 102])
        .collect();
    let want: Vec<f32> = seqs
        .chunks(512 * 3)
        .flat_map(|c| candle_mean(&model, c, 3))
        .collect();
    let fast = pass.mean_pooled(&seqs, 3, &|_| {}).unwrap();
    let diff = max_diff(&fast, &want);
    eprintln!("MiniLM: max |difference| from candle {diff:e}");
    assert!(diff < 1e-5, "{diff}");
    pass.erf = None;
    assert!(pass.mean_pooled(&seqs, 3, &|_| {}).unwrap() == want);
}

/// Sentence embeddings of 1 to 512 tokens on the real MiniLM against `BertModel`'s
/// padded batches, when `NAVBENCH_MINILM_DIR` points at it.
#[test]
#[ignore = "needs all-MiniLM-L6-v2: set NAVBENCH_MINILM_DIR to its directory (navbench run or navbench-retrieval fetch-model installs it); .ci/run runs it after the mini run"]
fn minilm_embeddings_match_bert_model_when_installed() {
    let dir = minilm_dir();
    let pass = BertPass::load(&dir).unwrap();
    let model = bert_model(&dir);
    let diff = compare_embeddings(&pass, &model, &sequences(1996, 28_000, (101, 102)));
    eprintln!("MiniLM sentence embeddings: max |difference| from BertModel {diff:e}");
    assert!(diff <= 1e-5, "{diff}");
}
