//! The chunk store by difference (`store.rs`, `segments.rs`): updates append one
//! segment each, the store compacts once garbage or segments pass their bounds, a file
//! removed and added back unchanged embeds nothing, and after every step the index on
//! disk opens to what a cold build of the same tree answers; a torn segment, a lost
//! one, or a live set from another tantivy commit is refused, never served.

use std::path::{Path, PathBuf};

use super::store::{MAX_GARBAGE, MAX_SEGMENTS};
use super::*;
use crate::encoder::{StaticEncoder, distill};
use crate::model::write_tiny_model;

/// The static encoder distilled from the tiny model: it embeds each text alone, so a
/// vector is bit-identical however texts are grouped and scores compare exactly.
fn encoder() -> &'static StaticEncoder {
    static E: std::sync::OnceLock<(tempfile::TempDir, StaticEncoder)> = std::sync::OnceLock::new();
    &E.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        write_tiny_model(&tmp.path().join("bert"), 5).unwrap();
        distill(&tmp.path().join("bert"), &tmp.path().join("static"), 16).unwrap();
        let e = StaticEncoder::load(&tmp.path().join("static")).unwrap();
        (tmp, e)
    })
    .1
}

fn module(i: usize, body: &str) -> String {
    format!(
        "\"\"\"Module {i}.\"\"\"\nimport os\n\n\ndef handler_{i}(path):\n    \"\"\"Handle path {i}.\"\"\"\n    {body}\n\n\nclass Store{i}:\n    def get(self, key):\n        return self.items.get(key)\n"
    )
}

/// A repository of `n` modules.
fn repo(n: usize) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("pkg")).unwrap();
    for i in 0..n {
        fs::write(
            d.path().join(format!("pkg/m{i:02}.py")),
            module(i, "return os.path.join(path, 'x')"),
        )
        .unwrap();
    }
    d
}

const QUERIES: [&str; 4] = [
    "handle path join",
    "store get key",
    "handler_3 missing file",
    "module 7",
];

/// One hit as compared: chunk id, score, vector rank, BM25 rank, reason.
type Answer = (String, f32, Option<usize>, Option<usize>, String);

/// Every query's hits.
fn answers(idx: &RepoIndex) -> Vec<Vec<Answer>> {
    let opts = SearchOptions {
        top_k: 8,
        ..SearchOptions::default()
    };
    QUERIES
        .iter()
        .map(|q| {
            idx.search(encoder(), q, &opts)
                .unwrap()
                .into_iter()
                .map(|h| {
                    let id = idx.chunks()[h.chunk].id.clone();
                    (id, h.score, h.vector_rank, h.bm25_rank, h.reason)
                })
                .collect()
        })
        .collect()
}

/// The index in `dir` reopened from disk answers as `idx` and as a cold build of `root`.
fn check_against_cold(root: &Path, dir: &Path, idx: &RepoIndex, step: &str) {
    let opened = RepoIndex::open(dir, encoder()).unwrap();
    assert_eq!(opened.chunks(), idx.chunks(), "{step}");
    let cold_dir = tempfile::tempdir().unwrap();
    let (cold, _) =
        RepoIndex::build(root, &FileFilter::default(), encoder(), cold_dir.path()).unwrap();
    assert_eq!(cold.chunks(), idx.chunks(), "{step}");
    assert_eq!(answers(&opened), answers(&cold), "{step}: reopened vs cold");
    assert_eq!(answers(idx), answers(&cold), "{step}: updated vs cold");
}

fn seg_files(dir: &Path) -> Vec<PathBuf> {
    segments::segments_in(dir)
        .into_iter()
        .map(|s| segments::seg_path(dir, s))
        .collect()
}

/// A repository of `modules` modules, a store directory, and the cold build of the
/// one into the other.
fn built(modules: usize) -> (tempfile::TempDir, tempfile::TempDir, RepoIndex) {
    let r = repo(modules);
    let store = tempfile::tempdir().unwrap();
    let (idx, _) =
        RepoIndex::build(r.path(), &FileFilter::default(), encoder(), store.path()).unwrap();
    (r, store, idx)
}

#[test]
fn updates_append_segments_and_the_store_compacts_past_its_bounds() {
    let (r, store, mut idx) = built(24);
    assert_eq!(seg_files(store.path()).len(), 1);
    let first_seg = seg_files(store.path())[0].clone();
    let (mut most, mut compactions) = (1, 0);
    for step in 0..24 {
        let rel = format!("pkg/m{:02}.py", step % 10);
        fs::write(
            r.path().join(&rel),
            module(step % 10, &format!("return {step}")),
        )
        .unwrap();
        let before = seg_files(store.path()).len();
        idx.update_files(r.path(), std::slice::from_ref(&rel), encoder())
            .unwrap();
        let now = seg_files(store.path()).len();
        assert_eq!(
            now,
            idx.disk.segments.len(),
            "step {step}: unused segments go"
        );
        assert!(now <= MAX_SEGMENTS, "step {step}");
        let total: u64 = idx.disk.segments.values().sum();
        assert!(
            idx.disk.garbage() as f64 <= MAX_GARBAGE * total as f64,
            "step {step}: garbage {} of {total}",
            idx.disk.garbage()
        );
        // One new segment per update; a segment all of whose records died goes (the
        // file rewritten again was the only one in it); a compaction leaves one.
        assert!(now <= before + 1, "step {step}: {before} → {now} segments");
        let compacted = now == 1;
        if compacted {
            compactions += 1;
        }
        most = most.max(now);
        if step % 6 == 5 || compacted {
            check_against_cold(r.path(), store.path(), &idx, &format!("step {step}"));
        }
    }
    assert!(most > 2, "updates were appended ({most} segments at most)");
    assert!(compactions > 0, "the store compacted");
    assert!(
        !first_seg.exists(),
        "the cold build's segment was compacted away"
    );
}

#[test]
fn a_file_removed_and_added_back_unchanged_embeds_nothing() {
    let (r, store, mut idx) = built(6);
    let rel = "pkg/m03.py".to_string();
    let text = fs::read_to_string(r.path().join(&rel)).unwrap();
    fs::remove_file(r.path().join(&rel)).unwrap();
    let gone = idx
        .update_files(r.path(), std::slice::from_ref(&rel), encoder())
        .unwrap();
    assert_eq!((gone.files, gone.embedded), (0, 0), "{gone:?}");
    assert!(!idx.files().contains(&rel.as_str()));
    check_against_cold(r.path(), store.path(), &idx, "removed");
    fs::write(r.path().join(&rel), &text).unwrap();
    let back = idx
        .update_files(r.path(), std::slice::from_ref(&rel), encoder())
        .unwrap();
    assert_eq!((back.files, back.embedded), (1, 0), "{back:?}");
    assert!(back.reused > 0);
    check_against_cold(r.path(), store.path(), &idx, "added back");
    // A server that opens the store after the removal has no vectors of the file
    // (the store keeps live records only): it embeds them again, and still answers
    // as a cold build.
    fs::remove_file(r.path().join(&rel)).unwrap();
    idx.update_files(r.path(), std::slice::from_ref(&rel), encoder())
        .unwrap();
    fs::write(r.path().join(&rel), &text).unwrap();
    let mut reopened = RepoIndex::open(store.path(), encoder()).unwrap();
    let again = reopened
        .update_files(r.path(), std::slice::from_ref(&rel), encoder())
        .unwrap();
    assert_eq!(again.files, 1);
    check_against_cold(r.path(), store.path(), &reopened, "reopened, added back");
}

#[test]
fn a_torn_or_lost_segment_or_a_live_set_of_another_commit_is_refused() {
    let (r, store, mut idx) = built(6);
    let old_live = fs::read(store.path().join("store.live")).unwrap();
    let rel = "pkg/m01.py".to_string();
    fs::write(r.path().join(&rel), module(1, "return 'changed'")).unwrap();
    idx.update_files(r.path(), std::slice::from_ref(&rel), encoder())
        .unwrap();
    let segs = seg_files(store.path());
    assert_eq!(segs.len(), 2, "the update appended a segment");
    let delta = segs[1].clone();
    let intact = fs::read(&delta).unwrap();
    let refused = |why: &str| {
        let err = RepoIndex::open(store.path(), encoder()).unwrap_err();
        assert!(
            matches!(&err, IndexError::Corrupt { reason, .. } if reason.contains(why)),
            "{err}"
        );
    };

    // A write torn short.
    fs::write(&delta, &intact[..intact.len() - 7]).unwrap();
    refused("torn write");
    // Torn to the same length: the bytes past the tear are zeros.
    let mut zeroed = intact.clone();
    let n = zeroed.len();
    zeroed[n - 7..].fill(0);
    fs::write(&delta, &zeroed).unwrap();
    refused("checksum");
    // Lost.
    fs::remove_file(&delta).unwrap();
    refused(&delta.display().to_string());
    fs::write(&delta, &intact).unwrap();
    RepoIndex::open(store.path(), encoder()).unwrap();

    // A crash after tantivy's commit but before the live set's rename: the old live set
    // with the new tantivy commit.
    let new_live = fs::read(store.path().join("store.live")).unwrap();
    fs::write(store.path().join("store.live"), &old_live).unwrap();
    refused("BM25 index at commit");
    fs::write(store.path().join("store.live"), &new_live).unwrap();

    // A rebuild over a damaged store is the cold build.
    fs::write(&delta, &intact[..intact.len() - 7]).unwrap();
    let (rebuilt, stats) =
        RepoIndex::build(r.path(), &FileFilter::default(), encoder(), store.path()).unwrap();
    assert!(
        stats.embedded < stats.chunks,
        "intact records' vectors are reused: {stats:?}"
    );
    check_against_cold(r.path(), store.path(), &rebuilt, "rebuilt");
}
