use std::sync::OnceLock;

use super::*;
use crate::encoder::TextEncoder;
use crate::model::Embedder;

/// One tiny model for all tests in this module (loading is the slow part).
fn embedder() -> &'static Embedder {
    static E: OnceLock<(tempfile::TempDir, Embedder)> = OnceLock::new();
    &E.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        crate::model::write_tiny_model(dir.path(), 11).unwrap();
        let e = Embedder::load(dir.path()).unwrap();
        (dir, e)
    })
    .1
}

fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = d.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    w(
        "pkg/urls.py",
        "import re\n\n\ndef parse_url(s):\n    \"\"\"Parse a url into parts.\"\"\"\n    return re.split('://', s)\n\n\ndef join_path(a, b):\n    return a + '/' + b\n",
    );
    w(
        "pkg/animals.py",
        "class Cat:\n    def meow(self):\n        print('meow')\n\n    def sleep(self):\n        return None\n",
    );
    w(
        "pkg/session.py",
        "from .urls import parse_url\n\n\ndef open_session(url):\n    return parse_url(url)\n",
    );
    w(
        "README.md",
        "# Demo\n\nA demo package that parses url strings.\n",
    );
    w("data.bin", "\u{0}\u{1}");
    w(
        "tests/test_urls.py",
        "from pkg.urls import parse_url\n\n\ndef test_parse():\n    assert parse_url('a://b')\n",
    );
    d
}

fn build(root: &Path, filter: &FileFilter) -> (tempfile::TempDir, RepoIndex, IndexStats) {
    let store = tempfile::tempdir().unwrap();
    let (idx, stats) = RepoIndex::build(root, filter, embedder(), store.path()).unwrap();
    (store, idx, stats)
}

fn top_names(idx: &RepoIndex, q: &str, opts: &SearchOptions) -> Vec<String> {
    idx.search(embedder(), q, opts)
        .unwrap()
        .iter()
        .map(|h| {
            let c = &idx.chunks()[h.chunk];
            c.name.clone().unwrap_or_else(|| c.id.clone())
        })
        .collect()
}

#[test]
fn build_indexes_python_and_text_and_finds_by_keyword() {
    let r = repo();
    let (_s, idx, stats) = build(r.path(), &FileFilter::default());
    assert_eq!(stats.files, 5);
    assert_eq!(stats.chunks, idx.chunks().len());
    assert_eq!(stats.embedded + stats.reused, stats.chunks);
    assert_eq!(
        idx.files(),
        [
            "README.md",
            "pkg/animals.py",
            "pkg/session.py",
            "pkg/urls.py",
            "tests/test_urls.py"
        ]
    );
    let hits = idx
        .search(embedder(), "parse_url", &SearchOptions::default())
        .unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| (0.0..=1.0).contains(&h.score) && !h.reason.is_empty())
    );
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    // With random weights the semantic ranking is arbitrary; the keyword ranking is not.
    let pos = hits.iter().position(|h| h.bm25_rank == Some(1)).unwrap();
    assert!(pos < 3, "{hits:?}");
    let first = &idx.chunks()[hits[pos].chunk];
    assert_eq!(first.name.as_deref(), Some("parse_url"), "{hits:?}");
    assert!(
        hits[pos].reason.contains("keyword #1"),
        "{}",
        hits[pos].reason
    );
    let c = idx.chunk_by_id(&first.id).unwrap();
    assert_eq!(c.file, "pkg/urls.py");
}

#[test]
fn search_options_limit_and_filter() {
    let r = repo();
    let (_s, idx, _) = build(r.path(), &FileFilter::default());
    let opts = SearchOptions {
        top_k: 2,
        ..SearchOptions::default()
    };
    assert_eq!(idx.search(embedder(), "url", &opts).unwrap().len(), 2);
    let only_tests = SearchOptions {
        file_filter: Some("tests/".into()),
        ..SearchOptions::default()
    };
    let hits = idx.search(embedder(), "parse url", &only_tests).unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| idx.chunks()[h.chunk].file.starts_with("tests/"))
    );
    let glob = SearchOptions {
        file_filter: Some("*.md".into()),
        ..SearchOptions::default()
    };
    let hits = idx.search(embedder(), "demo", &glob).unwrap();
    assert!(
        hits.iter()
            .all(|h| idx.chunks()[h.chunk].file == "README.md")
    );
    let methods = SearchOptions {
        chunk_kind: Some(ChunkKind::Method),
        ..SearchOptions::default()
    };
    let names = top_names(&idx, "cat meow", &methods);
    assert_eq!(
        names.first().map(String::as_str),
        Some("Cat.meow"),
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.starts_with("Cat.")));
    assert!(
        idx.search(embedder(), "   ", &SearchOptions::default())
            .unwrap()
            .is_empty()
    );
    let bad = SearchOptions {
        file_filter: Some("[".into()),
        ..SearchOptions::default()
    };
    assert!(matches!(
        idx.search(embedder(), "x", &bad),
        Err(IndexError::InvalidGlob { .. })
    ));
}

#[test]
fn include_and_exclude_filters() {
    let r = repo();
    let filter = FileFilter {
        include: vec!["*.py".into()],
        exclude: vec!["tests/".into()],
    };
    let (_s, idx, _) = build(r.path(), &filter);
    assert_eq!(
        idx.files(),
        ["pkg/animals.py", "pkg/session.py", "pkg/urls.py"]
    );
    assert_eq!(idx.filter(), &filter);
    let bad = FileFilter {
        include: vec!["a{".into()],
        exclude: vec![],
    };
    let store = tempfile::tempdir().unwrap();
    assert!(matches!(
        RepoIndex::build(r.path(), &bad, embedder(), store.path()),
        Err(IndexError::InvalidGlob { .. })
    ));
}

#[test]
fn open_reloads_the_same_index() {
    let r = repo();
    let (s, idx, _) = build(r.path(), &FileFilter::default());
    let opened = RepoIndex::open(s.path(), embedder()).unwrap();
    assert_eq!(opened.chunks(), idx.chunks());
    let opts = SearchOptions::default();
    assert_eq!(
        opened.search(embedder(), "join path", &opts).unwrap(),
        idx.search(embedder(), "join path", &opts).unwrap()
    );
}

#[test]
fn open_rejects_other_model_and_corrupt_store() {
    let r = repo();
    let (s, _idx, _) = build(r.path(), &FileFilter::default());
    let other_dir = tempfile::tempdir().unwrap();
    crate::model::write_tiny_model(other_dir.path(), 99).unwrap();
    let other = Embedder::load(other_dir.path()).unwrap();
    let err = RepoIndex::open(s.path(), &other).unwrap_err();
    assert!(err.to_string().contains("another embedding model"), "{err}");
    fs::write(s.path().join("store.live"), "{not json").unwrap();
    let err = RepoIndex::open(s.path(), embedder()).unwrap_err();
    assert!(matches!(err, IndexError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("rebuild"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        RepoIndex::open(empty.path(), embedder()),
        Err(IndexError::Corrupt { .. })
    ));
}

#[test]
fn rebuild_reuses_cached_embeddings() {
    let r = repo();
    let store = tempfile::tempdir().unwrap();
    let (_, first) =
        RepoIndex::build(r.path(), &FileFilter::default(), embedder(), store.path()).unwrap();
    assert!(first.embedded > 0);
    fs::write(
        r.path().join("pkg/animals.py"),
        "class Dog:\n    def bark(self):\n        return 'woof'\n",
    )
    .unwrap();
    let (idx, second) =
        RepoIndex::build(r.path(), &FileFilter::default(), embedder(), store.path()).unwrap();
    assert_eq!(second.embedded, 2, "{second:?}");
    assert_eq!(second.reused, second.chunks - 2);
    assert!(
        idx.chunks()
            .iter()
            .any(|c| c.name.as_deref() == Some("Dog.bark"))
    );
}

#[test]
fn update_files_adds_changes_and_removes() {
    let r = repo();
    let (s, mut idx, _) = build(r.path(), &FileFilter::default());
    let before = idx.chunks().len();
    fs::write(
        r.path().join("pkg/urls.py"),
        "import re\n\n\ndef parse_url(s):\n    \"\"\"Parse a url into parts.\"\"\"\n    return re.split('://', s)\n\n\ndef quote_url(u):\n    return u.replace(' ', '%20')\n",
    )
    .unwrap();
    fs::write(
        r.path().join("pkg/new.py"),
        "def brand_new_function():\n    return 42\n",
    )
    .unwrap();
    fs::remove_file(r.path().join("pkg/animals.py")).unwrap();
    let stats = idx
        .update_files(
            r.path(),
            &[
                "pkg/urls.py".into(),
                "pkg/new.py".into(),
                "pkg/animals.py".into(),
                "data.bin".into(),
            ],
            embedder(),
        )
        .unwrap();
    assert_eq!(stats.files, 2);
    assert_eq!(stats.embedded, 2, "{stats:?}"); // quote_url + brand_new_function
    assert!(stats.reused >= 2);
    assert!(!idx.files().contains(&"pkg/animals.py"));
    assert!(
        idx.chunks()
            .iter()
            .all(|c| c.name.as_deref() != Some("join_path"))
    );
    assert_eq!(idx.chunks().len(), before - 3 - 1 + 1 + 1);
    let names = top_names(&idx, "brand_new_function", &SearchOptions::default());
    assert_eq!(
        names.first().map(String::as_str),
        Some("brand_new_function")
    );
    let names = top_names(&idx, "meow", &SearchOptions::default());
    assert!(!names.iter().any(|n| n.starts_with("Cat")), "{names:?}");
    // The persisted index reflects the update.
    let opened = RepoIndex::open(s.path(), embedder()).unwrap();
    assert_eq!(opened.chunks(), idx.chunks());
    // A removed directory removes everything under it.
    fs::remove_dir_all(r.path().join("tests")).unwrap();
    idx.update_files(r.path(), &["tests".into()], embedder())
        .unwrap();
    assert!(!idx.files().iter().any(|f| f.starts_with("tests/")));
}

#[test]
fn cosine_scores_match_naive_dot_products() {
    let dim = 37;
    let rows = 40_000;
    let matrix: Vec<f32> = (0..rows * dim)
        .map(|i| ((i * 7919) % 101) as f32 / 101.0 - 0.5)
        .collect();
    let q: Vec<f32> = (0..dim).map(|i| (i as f32).sin()).collect();
    let fast = cosine_scores(&matrix, dim, &q);
    assert_eq!(fast.len(), rows);
    for r in [0, 1, 8191, 16384, rows - 1] {
        let naive: f32 = matrix[r * dim..(r + 1) * dim]
            .iter()
            .zip(&q)
            .map(|(a, b)| a * b)
            .sum();
        assert!((fast[r] - naive).abs() < 1e-4);
    }
    assert!(cosine_scores(&matrix, dim, &q[1..]).is_empty());
}

#[test]
fn a_shared_embedding_cache_spares_other_trees_the_work() {
    let model = tempfile::tempdir().unwrap();
    crate::model::write_tiny_model(model.path(), 11).unwrap();
    let shared = tempfile::tempdir().unwrap();
    let load = || {
        Embedder::load(model.path())
            .unwrap()
            .with_shared_cache(shared.path().to_path_buf())
    };
    let (a, b) = (repo(), repo());
    let (sa, sb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (_, first) =
        RepoIndex::build(a.path(), &FileFilter::default(), &load(), sa.path()).unwrap();
    assert!(first.embedded > 0);
    // Another tree with the same files, another store, another process's embedder.
    let (idx, second) =
        RepoIndex::build(b.path(), &FileFilter::default(), &load(), sb.path()).unwrap();
    assert_eq!(second.embedded, 0, "{second:?}");
    assert_eq!(second.reused, second.chunks);
    // The vectors are the ones the first build computed: same search results.
    let opts = SearchOptions::default();
    let (_store, again, _) = build(a.path(), &FileFilter::default());
    assert_eq!(
        top_names(&idx, "parse a url", &opts),
        top_names(&again, "parse a url", &opts)
    );
    // A corrupt pack is skipped, never trusted.
    let pack_dir = fs::read_dir(shared.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fs::write(pack_dir.join("0-bad.pack"), b"not a pack").unwrap();
    let sc = tempfile::tempdir().unwrap();
    let (_, third) =
        RepoIndex::build(b.path(), &FileFilter::default(), &load(), sc.path()).unwrap();
    assert_eq!(third.embedded, 0);
}

#[test]
fn another_truncation_is_another_model_id() {
    let model = tempfile::tempdir().unwrap();
    crate::model::write_tiny_model(model.path(), 11).unwrap();
    let full = Embedder::load(model.path()).unwrap();
    let id = full.model_id().to_string();
    let cut = full.with_max_tokens(16).unwrap();
    assert_ne!(cut.model_id(), id);
    assert_eq!(cut.max_tokens(), 16);
}

/// A tiny static encoder distilled from the tiny model.
fn static_encoder() -> (tempfile::TempDir, crate::encoder::StaticEncoder) {
    let tmp = tempfile::tempdir().unwrap();
    crate::model::write_tiny_model(&tmp.path().join("bert"), 11).unwrap();
    crate::encoder::distill(&tmp.path().join("bert"), &tmp.path().join("static"), 16).unwrap();
    let e = crate::encoder::StaticEncoder::load(&tmp.path().join("static")).unwrap();
    (tmp, e)
}

#[test]
fn a_store_of_one_encoder_is_refused_by_the_other() {
    let r = repo();
    let (_model, stat) = static_encoder();
    let (minilm_store, _, _) = build(r.path(), &FileFilter::default());
    let err = RepoIndex::open(minilm_store.path(), &stat).unwrap_err();
    assert!(
        matches!(
            err,
            IndexError::EncoderMismatch {
                store: "minilm",
                wanted: "static",
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("minilm encoder")
            && msg.contains("static encoder")
            && msg.contains("--encoder minilm"),
        "{msg}"
    );

    let static_store = tempfile::tempdir().unwrap();
    let (idx, stats) =
        RepoIndex::build(r.path(), &FileFilter::default(), &stat, static_store.path()).unwrap();
    assert!(stats.embedded > 0, "{stats:?}");
    let err = RepoIndex::open(static_store.path(), embedder()).unwrap_err();
    assert!(
        matches!(
            err,
            IndexError::EncoderMismatch {
                store: "static",
                wanted: "minilm",
                ..
            }
        ),
        "{err}"
    );
    // The static encoder reads its own store back, and its vectors sit in their own cache.
    let reopened = RepoIndex::open(static_store.path(), &stat).unwrap();
    assert_eq!(reopened.chunks(), idx.chunks());
    let opts = SearchOptions::default();
    assert_eq!(
        reopened.search(&stat, "parse url", &opts).unwrap(),
        idx.search(&stat, "parse url", &opts).unwrap()
    );
    let live = fs::read(static_store.path().join("store.live")).unwrap();
    let live = String::from_utf8_lossy(&live);
    assert!(live.contains(stat.model_id()), "{live}");
}

/// The tiny model behind a gate: each `embed` call after the first announces itself
/// and waits for the test to let it through, so the test sees a build mid-way.
#[derive(Debug)]
struct Gated {
    entered: std::sync::Mutex<std::sync::mpsc::Sender<()>>,
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
    calls: std::sync::atomic::AtomicUsize,
}

impl TextEncoder for Gated {
    fn kind(&self) -> EncoderKind {
        EncoderKind::Minilm
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 0 {
            let _ = self.entered.lock().unwrap().send(());
            let _ = self.release.lock().unwrap().recv();
        }
        embedder().embed(texts)
    }
    fn dim(&self) -> usize {
        embedder().dim()
    }
    fn model_id(&self) -> &str {
        embedder().model_id()
    }
}

#[test]
fn a_running_build_reports_its_progress_and_forgets_it_when_done() {
    let repo = tempfile::tempdir().unwrap();
    let body: String = (0..200)
        .map(|i| format!("def function_{i}(x):\n    return x + {i}\n\n\n"))
        .collect();
    fs::write(repo.path().join("many.py"), body).unwrap();
    let store = tempfile::tempdir().unwrap();
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let gated = Gated {
        entered: std::sync::Mutex::new(entered_tx),
        release: std::sync::Mutex::new(release_rx),
        calls: Default::default(),
    };
    let dir = store.path().to_path_buf();
    let build = std::thread::spawn(move || {
        RepoIndex::build(repo.path(), &FileFilter::default(), &gated, &dir).map(|(_, s)| s)
    });
    entered.recv().unwrap();
    let s = progress::snapshot(store.path()).expect("the build is registered");
    assert_eq!(s.stage, "embedding");
    assert_eq!(s.chunks_embedded, embed_group(EncoderKind::Minilm));
    assert!(s.chunks_to_embed > s.chunks_embedded, "{s:?}");
    assert!(s.line().contains("chunks embedded"), "{}", s.line());
    drop(release);
    let stats = build.join().unwrap().unwrap();
    assert_eq!(stats.embedded, s.chunks_to_embed);
    assert!(progress::snapshot(store.path()).is_none());
}

/// The tiny model, counting the texts it embeds.
#[derive(Debug, Default)]
struct Counting(std::sync::atomic::AtomicUsize);

impl Counting {
    fn texts(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl TextEncoder for Counting {
    fn kind(&self) -> EncoderKind {
        EncoderKind::Minilm
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        self.0
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        embedder().embed(texts)
    }
    fn dim(&self) -> usize {
        embedder().dim()
    }
    fn model_id(&self) -> &str {
        embedder().model_id()
    }
}

#[test]
fn a_flipped_bit_in_the_store_is_refused_and_the_rebuild_embeds_that_file_alone() {
    let r = repo();
    let (s, idx, _) = build(r.path(), &FileFilter::default());
    let seg = segments::seg_path(s.path(), segments::segments_in(s.path())[0]);
    let mut bytes = fs::read(&seg).unwrap();
    // A bit inside the first record's payload (the first file's chunks).
    let at = navbench_server_support::frame::HEADER_LEN + 40;
    bytes[at] ^= 0x01;
    fs::write(&seg, &bytes).unwrap();
    let err = RepoIndex::open(s.path(), embedder()).unwrap_err();
    assert!(
        matches!(&err, IndexError::Corrupt { reason, .. } if reason.contains("checksum")),
        "{err}"
    );
    // The rebuild takes every intact record's vectors: only the damaged file's chunks
    // are embedded again.
    let first_file = idx.chunks()[0].file.clone();
    let damaged = idx.chunks().iter().filter(|c| c.file == first_file).count();
    let counting = Counting::default();
    let (rebuilt, stats) =
        RepoIndex::build(r.path(), &FileFilter::default(), &counting, s.path()).unwrap();
    assert_eq!(
        (stats.embedded, counting.texts()),
        (damaged, damaged),
        "{stats:?}"
    );
    let opts = SearchOptions::default();
    // (Rankings, not scores: a text embedded alone may differ in the last bits from
    // the same text embedded in a padded batch.)
    for q in ["join path", "parse a url", "meow"] {
        assert_eq!(
            top_names(&rebuilt, q, &opts),
            top_names(&idx, q, &opts),
            "{q}"
        );
    }
    // The rebuilt store opens and computes nothing; the damaged segment is gone.
    let again = Counting::default();
    RepoIndex::open(s.path(), &again).unwrap();
    assert_eq!(again.texts(), 0);
    assert!(!seg.exists());
}
