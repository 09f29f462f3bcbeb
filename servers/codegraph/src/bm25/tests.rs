//! Unit tests of the BM25 module.

use super::tokenize::{Tokenizer, tokenize, words};
use super::*;
use crate::chunk::Chunk;

fn chunk(file: &str, start: usize, end: usize, text: &str) -> Chunk {
    Chunk {
        file_path: file.to_string(),
        start_line: start,
        end_line: end,
        span_ids: vec!["impl".to_string()],
        tokens: 0,
        text: text.to_string(),
    }
}

fn sample_chunks() -> Vec<Chunk> {
    vec![
        chunk(
            "pkg/a.py",
            1,
            10,
            "def send(request):\n    return adapter.send(request)",
        ),
        chunk(
            "pkg/b.py",
            1,
            5,
            "class Session:\n    def request(self, method, url): pass",
        ),
        chunk(
            "pkg/b.py",
            7,
            20,
            "def merge_cookies(jar, cookies):\n    return jar",
        ),
        chunk("pkg/c.py", 1, 3, "ENCODING = 'utf-8'"),
    ]
}

#[test]
fn bm25_tokenize_lowercases_splits_and_drops_stop_words() {
    // Expected values from `bm25s.tokenize(text, stemmer=Stemmer.Stemmer("english"),
    // return_ids=False)` (bm25s 0.2.3, PyStemmer 2.2.0.3).
    assert_eq!(
        tokenize("The QuerySet.filter() is running into Errors"),
        ["queryset", "filter", "run", "error"]
    );
    assert_eq!(
        tokenize("django/db/models/query.py:QuerySet.filter"),
        ["django", "db", "model", "queri", "py", "queryset", "filter"]
    );
    assert_eq!(
        tokenize("a b c x1 __init__ HTTPAdapter.send() Größe 3.14 it's"),
        ["x1", "__init__", "httpadapt", "send", "größe", "14"]
    );
    assert!(tokenize("").is_empty());
    assert!(tokenize("the of a, to -- is").is_empty());
    // Words are kept in order with duplicates (a repeated query word counts twice).
    assert_eq!(words("Foo foo, BAR"), ["foo", "foo", "bar"]);
    assert_eq!(Tokenizer::new().stem("connections"), "connect");
}

#[test]
fn bm25_scoring_matches_bm25s_on_a_tiny_corpus() {
    // Corpus, queries and expected float32 scores from bm25s 0.2.3 itself:
    // `bm25s.BM25().index(bm25s.tokenize(corpus, stopwords="english", stemmer=…))`, then
    // `get_scores(query_tokens)`.
    let texts = [
        "the quick brown fox jumps over the lazy dog",
        "quick brown dogs and quick foxes",
        "a lazy afternoon with lazy cats",
    ];
    let chunks: Vec<Chunk> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| chunk(&format!("f{i}.py"), 1, 1, t))
        .collect();
    // Index the bare texts (no metadata header) through the module index, which uses the
    // same tokenizer and scorer as the content index.
    let ids: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    let idx = ModuleIndex::build(&ids);
    let cases: [(&str, [f32; 3]); 3] = [
        ("quick fox lazy", [0.494_469_58, 0.467_521_6, 0.292_041_1]),
        ("lazy lazy", [0.329_646_38, 0.0, 0.584_082_2]),
        ("dogs", [0.164_823_19, 0.193_442, 0.0]),
    ];
    for (q, expected) in cases {
        let hits = idx.search(q, 10);
        for (doc, want) in expected.iter().enumerate() {
            let got = hits
                .iter()
                .find(|h| h.id == texts[doc])
                .map(|h| h.score)
                .unwrap_or(0.0);
            assert!((got - want).abs() <= 1e-6, "{q} doc {doc}: {got} vs {want}");
        }
    }
    // The content index gives the same scores on the same documents.
    let content = Bm25Index::from_chunks(chunks).expect("in-memory index");
    let toks = tokenize("quick fox lazy");
    let direct = content
        .score_all(&toks)
        .expect("scores")
        .expect("some term indexed");
    assert_eq!(direct.len(), 3);
    // (Its documents include the metadata header, so only the ranking is comparable.)
    let hits = content.search("quick fox lazy", 3).expect("search").hits;
    assert_eq!(hits.len(), 3);
    assert!(hits[0].score >= hits[1].score && hits[1].score >= hits[2].score);
}

#[test]
fn bm25_search_ranks_and_breaks_ties_by_chunk_order() {
    let idx = Bm25Index::from_chunks(sample_chunks()).expect("index");
    let r = idx.search("adapter send request", 10).expect("search");
    assert_eq!(r.empty_reason, None);
    assert_eq!(r.hits[0].file, "pkg/a.py");
    assert_eq!((r.hits[0].start_line, r.hits[0].end_line), (1, 10));
    assert!(r.hits.iter().all(|h| h.score > 0.0));
    // Two identical chunks tie; the earlier one comes first.
    let twins = vec![
        chunk("x.py", 1, 2, "alpha beta"),
        chunk("x.py", 1, 2, "alpha beta"),
    ];
    let idx = Bm25Index::from_chunks(twins).expect("index");
    let hits = idx.search("alpha", 10).expect("search").hits;
    assert_eq!(hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(hits[0].score, hits[1].score);
    // top_k larger than the corpus is fine (the original raises).
    assert_eq!(idx.search("alpha", 100).expect("search").hits.len(), 2);
}

#[test]
fn bm25_empty_query_returns_no_hits_with_a_reason() {
    let idx = Bm25Index::from_chunks(sample_chunks()).expect("index");
    let r = idx.search("", 10).expect("search");
    assert!(r.hits.is_empty());
    assert_eq!(r.empty_reason, Some(EmptyReason::NoQueryTokens));
    let r = idx.search("  the, a; of!  x ", 10).expect("search");
    assert_eq!(r.empty_reason, Some(EmptyReason::NoQueryTokens));
    let r = idx.search("zyzzyva", 10).expect("search");
    assert_eq!(r.empty_reason, Some(EmptyReason::NoMatchingTokens));
    assert!(!EmptyReason::NoQueryTokens.to_string().is_empty());
    let empty = Bm25Index::from_chunks(Vec::new()).expect("index");
    assert_eq!(
        empty.search("send", 10).expect("search").empty_reason,
        Some(EmptyReason::EmptyIndex)
    );
    assert!(ModuleIndex::build(&[]).search("send", 10).is_empty());
    assert!(
        ModuleIndex::build(&["a.py".to_string()])
            .search("", 10)
            .is_empty()
    );
}

#[test]
fn bm25_save_open_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let idx = Bm25Index::from_chunks(sample_chunks()).expect("index");
    idx.save(dir.path()).expect("save");
    let reopened = Bm25Index::open(dir.path()).expect("open");
    assert_eq!(reopened.chunks(), idx.chunks());
    for q in [
        "send request",
        "session",
        "merge cookies jar",
        "encoding utf",
    ] {
        assert_eq!(
            reopened.search(q, 10).expect("search"),
            idx.search(q, 10).expect("search"),
            "{q}"
        );
    }
    // Saving again over an existing index replaces it.
    reopened.save(dir.path()).expect("save again");
    assert_eq!(Bm25Index::open(dir.path()).expect("open").len(), 4);
}

#[test]
fn bm25_open_detects_corruption() {
    let idx = Bm25Index::from_chunks(sample_chunks()).expect("index");

    // No index at all.
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        Bm25Index::open(dir.path()),
        Err(Bm25Error::Corrupt { .. })
    ));

    // A manifest whose fingerprint does not match the stored chunks.
    idx.save(dir.path()).expect("save");
    let manifest = dir.path().join("navbench-bm25.json");
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let fp = v["chunks_fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_string();
    std::fs::write(&manifest, text.replace(&fp, "0000000000000000")).expect("write");
    assert!(matches!(
        Bm25Index::open(dir.path()),
        Err(Bm25Error::Corrupt { .. })
    ));

    // Another format version.
    std::fs::write(
        &manifest,
        text.replace("\"format_version\": 1", "\"format_version\": 999"),
    )
    .expect("write");
    let err = Bm25Index::open(dir.path()).expect_err("version mismatch");
    assert!(err.to_string().contains("format version"), "{err}");

    // A damaged tantivy file (checksum).
    std::fs::write(&manifest, &text).expect("write");
    assert!(Bm25Index::open(dir.path()).is_ok());
    let tdir = dir.path().join("tantivy");
    let victim = std::fs::read_dir(&tdir)
        .expect("tantivy dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "store"))
        .expect("a doc store file");
    let mut bytes = std::fs::read(&victim).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&victim, bytes).expect("write");
    assert!(matches!(
        Bm25Index::open(dir.path()),
        Err(Bm25Error::Corrupt { .. })
    ));

    // Garbage manifest.
    std::fs::write(&manifest, b"{not json").expect("write");
    assert!(matches!(
        Bm25Index::open(dir.path()),
        Err(Bm25Error::Corrupt { .. })
    ));
}

#[test]
fn bm25_open_or_build_rebuilds_stale_or_corrupt_indexes() {
    let repo = tempfile::tempdir().expect("repo");
    std::fs::write(repo.path().join("m.py"), "def alpha():\n    return 1\n").expect("write");
    let cache = tempfile::tempdir().expect("cache");
    let (idx, loaded) = Bm25Index::open_or_build(cache.path(), repo.path()).expect("build");
    assert!(!loaded);
    assert_eq!(idx.len(), 1);
    assert_eq!(
        idx.search("alpha", 10).expect("search").hits[0].file,
        "m.py"
    );
    let (_, loaded) = Bm25Index::open_or_build(cache.path(), repo.path()).expect("open");
    assert!(loaded);
    std::fs::write(repo.path().join("m.py"), "def beta():\n    return 1\n").expect("write");
    let (idx, loaded) = Bm25Index::open_or_build(cache.path(), repo.path()).expect("rebuild");
    assert!(!loaded);
    assert_eq!(idx.search("beta", 10).expect("search").hits.len(), 1);
    std::fs::write(cache.path().join("navbench-bm25.json"), b"").expect("write");
    let (_, loaded) = Bm25Index::open_or_build(cache.path(), repo.path()).expect("rebuild");
    assert!(!loaded);
}

#[test]
fn bm25_build_indexes_a_repository_and_handles_empty_files() {
    let repo = tempfile::tempdir().expect("repo");
    let p = repo.path();
    std::fs::create_dir_all(p.join("pkg")).expect("mkdir");
    std::fs::create_dir_all(p.join("tests")).expect("mkdir");
    std::fs::write(p.join("pkg/empty.py"), "").expect("write");
    std::fs::write(
        p.join("pkg/api.py"),
        "def fetch_url(url):\n    return url\n",
    )
    .expect("write");
    std::fs::write(
        p.join("tests/test_api.py"),
        "def test_fetch_url():\n    pass\n",
    )
    .expect("write");
    let idx = Bm25Index::build(p).expect("build");
    assert_eq!(idx.len(), 1);
    let hits = idx.search("fetch url", 10).expect("search").hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].file, "pkg/api.py");
    assert_eq!(hits[0].text, "def fetch_url(url):\n    return url");
    assert_eq!(
        idx.source_fingerprint(),
        source_fingerprint(p).expect("fingerprint")
    );
}

#[test]
fn bm25_module_index_ranks_ids_and_filters_files() {
    let ids: Vec<String> = [
        "requests",
        "requests/adapters.py",
        "requests/adapters.py:BaseAdapter.send",
        "requests/adapters.py:HTTPAdapter",
        "requests/adapters.py:HTTPAdapter.send",
        "requests/sessions.py:Session.send",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let idx = ModuleIndex::build(&ids);
    assert_eq!(idx.len(), 6);
    let hits = idx.search("HTTPAdapter send", 10);
    assert_eq!(hits[0].id, "requests/adapters.py:HTTPAdapter.send");
    // BaseAdapter.send and Session.send tie; id order decides.
    let pos = |id: &str| hits.iter().position(|h| h.id == id).expect("hit");
    assert_eq!(
        hits[pos("requests/adapters.py:BaseAdapter.send")].score,
        hits[pos("requests/sessions.py:Session.send")].score
    );
    assert!(
        pos("requests/adapters.py:BaseAdapter.send") < pos("requests/sessions.py:Session.send")
    );
    assert!(hits.iter().all(|h| h.score > 0.0));
    // include_files keeps hits in those files, or all hits when none is.
    let only = idx.retrieve("send", Some(&["requests/sessions.py".to_string()]));
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].id, "requests/sessions.py:Session.send");
    let none = idx.retrieve("send", Some(&["other.py".to_string()]));
    assert_eq!(none.len(), 3);
}

#[test]
fn bm25_indexes_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Bm25Index>();
    assert_send_sync::<ModuleIndex>();
}

/// The content corpus reads the repository's languages, as the graph does: a Python
/// project's one JavaScript asset is no chunk by default (it would count in every
/// term's document frequency and take top-k slots that `search_code` then drops,
/// since its file is no graph node), and is one when every language is asked for.
#[test]
fn bm25_content_corpus_reads_the_repositorys_languages() {
    use navbench_lang::family::Selection;
    let repo = tempfile::tempdir().expect("repo");
    let p = repo.path();
    std::fs::create_dir_all(p.join("pkg/static")).expect("mkdir");
    for i in 0..10 {
        let text = format!("def toggle_{i}(flag):\n    return not flag\n");
        std::fs::write(p.join(format!("pkg/m{i}.py")), text).expect("write");
    }
    std::fs::write(
        p.join("pkg/static/widget.js"),
        "function toggle(el) {\n  el.hidden = !el.hidden;\n}\n",
    )
    .expect("write");
    let files = |idx: &Bm25Index| -> Vec<String> {
        let mut f: Vec<String> = idx.chunks().iter().map(|c| c.file_path.clone()).collect();
        f.dedup();
        f
    };
    let auto = Bm25Index::build(p).expect("build");
    assert_eq!(auto.len(), 10);
    assert!(
        files(&auto).iter().all(|f| f.ends_with(".py")),
        "{:?}",
        files(&auto)
    );
    let all = Bm25Index::build_for(p, &Selection::All).expect("build");
    assert_eq!(all.len(), 11);
    assert!(files(&all).contains(&"pkg/static/widget.js".to_string()));
    // The saved index of the same corpus is the in-memory one.
    let dir = tempfile::tempdir().expect("index dir");
    let saved = Bm25Index::build_saved(p, dir.path(), None, None, &Selection::Auto).expect("saved");
    assert_eq!(files(&saved), files(&auto));
}

#[test]
fn scores_computed_in_memory_equal_those_read_from_tantivy() {
    // The mini repository plus a chunk with a token tantivy drops for its length
    // (it still counts in the chunk's length), over both storage paths.
    let repo = tempfile::tempdir().expect("repo");
    let mini = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/mini/repo");
    let mut stack = vec![mini.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("list").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&mini).expect("under mini");
                let dst = repo.path().join(rel);
                std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
                std::fs::copy(&p, dst).expect("copy");
            }
        }
    }
    // Digits: one BM25 token, but cheap for the chunker's BPE token count (which
    // splits digit runs into threes).
    let long = "1234567890".repeat(tantivy::tokenizer::MAX_TOKEN_LEN / 10 + 1);
    std::fs::write(
        repo.path().join("shopkeep/huge.py"),
        format!("def huge_token():\n    return '{long} money money'\n"),
    )
    .expect("write");
    let tantivy = Bm25Index::build(repo.path()).expect("build");
    let store_dir = tempfile::tempdir().expect("store");
    let store = crate::chunk::ChunkStore::new(store_dir.path().to_path_buf());
    let (memory, cached) = Bm25Index::build_in_memory(
        repo.path(),
        Some(&store),
        None,
        &navbench_lang::family::Selection::Auto,
    )
    .expect("in memory");
    assert!(!cached, "a first build chunks every file");
    assert!(memory.tantivy_index().is_none());
    assert_eq!(memory.chunks(), tantivy.chunks());
    assert_eq!(memory.avgdl, tantivy.avgdl);
    for q in [
        "money allocate cents",
        "tax rounding total",
        "huge token money",
        "inventory stock warehouse reservation",
        "def return self",
    ] {
        assert_eq!(
            memory.search(q, 50).expect("search"),
            tantivy.search(q, 50).expect("search"),
            "{q}"
        );
    }
    // Every token's whole score list, to the float.
    let mut a: Vec<_> = memory.term_scores.iter().collect();
    let mut b: Vec<_> = tantivy.term_scores.iter().collect();
    a.sort_by(|x, y| x.0.cmp(y.0));
    b.sort_by(|x, y| x.0.cmp(y.0));
    assert_eq!(a, b);
    // Everything from the store now: reported as cached, same index.
    let (again, cached) = Bm25Index::build_in_memory(
        repo.path(),
        Some(&store),
        None,
        &navbench_lang::family::Selection::Auto,
    )
    .expect("again");
    assert!(cached);
    assert_eq!(again.chunks(), tantivy.chunks());
}
