//! The index of a tree a few files apart from one already indexed: built cold, and
//! made from the predecessor's index by difference (what a server started with
//! `--index-bases` does: seed from the base, open it, find the changed files by the
//! manifest, update them).
//!
//! ```text
//! cargo bench -p navbench-retrieval --bench incremental
//! NAVBENCH_STATIC_DIR=~/.cache/navbench/models/all-MiniLM-L6-v2-static \
//! NAVBENCH_BENCH_TREE=/path/to/checkout cargo bench -p navbench-retrieval --bench incremental
//! ```
//!
//! The encoder is the static one (`NAVBENCH_STATIC_DIR`, else one distilled from the
//! tiny random-weight BERT the tests use); the tree is `NAVBENCH_BENCH_TREE` copied
//! (else a synthetic 200-module Python package), and the next tree is that one with
//! five Python files changed, one added and one removed. Cold builds start with an
//! empty embedding cache only in their first iteration: later ones find their vectors
//! in the directory they rebuild, as a server's vectors cache does.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use navbench_retrieval::bases::Bases;
use navbench_retrieval::encoder::{StaticEncoder, distill};
use navbench_retrieval::index::{FileFilter, RepoIndex};
use navbench_retrieval::model::write_tiny_model;
use navbench_retrieval::source::Manifest;

fn synthetic_tree(dir: &Path) {
    for m in 0..200 {
        let mut src = format!("\"\"\"Module {m}.\"\"\"\nimport os\n\nLIMIT_{m} = {m}\n\n");
        for f in 0..6 {
            src.push_str(&format!(
                "\ndef helper_{m}_{f}(path: str, retries: int = 3) -> str:\n    try:\n        return os.path.join(path, str(retries))\n    except OSError:\n        return path\n\n"
            ));
        }
        fs::write(dir.join(format!("mod_{m}.py")), src).expect("write synthetic module");
    }
}

/// Copies `from` into `to` (files only, `.git` left out).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create the copy");
    for e in fs::read_dir(from).expect("read the tree").flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == ".git" {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() => copy_tree(&src, &dst),
            Ok(t) if t.is_file() => {
                fs::copy(&src, &dst).expect("copy a file");
            }
            _ => {}
        }
    }
}

/// The Python files of `root`, sorted.
fn python_files(root: &Path) -> Vec<String> {
    let walked = navbench_server_support::walk::walk_files(root, &Default::default())
        .expect("walk the tree");
    walked
        .into_iter()
        .map(|f| f.rel)
        .filter(|r| r.ends_with(".py"))
        .collect()
}

/// Makes the next tree: five Python files changed, one added, one removed.
fn next_tree(root: &Path) {
    let py = python_files(root);
    let step = (py.len() / 6).max(1);
    for rel in py.iter().step_by(step).take(5) {
        let p = root.join(rel);
        let mut text = fs::read_to_string(&p).unwrap_or_default();
        text.push_str("\n\ndef added_by_the_next_commit(x):\n    return x + 1\n");
        fs::write(&p, text).expect("change a file");
    }
    fs::write(
        root.join("added_module.py"),
        "def brand_new(a, b):\n    return a * b\n",
    )
    .expect("add a file");
    if let Some(last) = py.last() {
        fs::remove_file(root.join(last)).expect("remove a file");
    }
}

fn encoder(keep: &Path) -> StaticEncoder {
    let dir = match std::env::var_os("NAVBENCH_STATIC_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            write_tiny_model(&keep.join("bert"), 1).expect("tiny model");
            distill(&keep.join("bert"), &keep.join("static"), 16).expect("distil");
            keep.join("static")
        }
    };
    StaticEncoder::load(&dir).expect("load the static encoder")
}

fn bench_incremental(c: &mut Criterion) {
    let keep = tempfile::tempdir().expect("tempdir");
    let encoder = encoder(keep.path());
    let (before, after) = (keep.path().join("before"), keep.path().join("after"));
    match std::env::var_os("NAVBENCH_BENCH_TREE") {
        Some(t) => copy_tree(Path::new(&t), &before),
        None => {
            fs::create_dir_all(&before).expect("tree dir");
            synthetic_tree(&before);
        }
    }
    copy_tree(&before, &after);
    next_tree(&after);

    // The predecessor's index, published as a base.
    let filter = FileFilter::default();
    let base_data = keep.path().join("base");
    let (base, _) = RepoIndex::build(&before, &filter, &encoder, &base_data.join("index"))
        .expect("build the predecessor's index");
    let files = base.files();
    Manifest::scan(&before, &files)
        .save(&base_data.join("manifest.json"))
        .expect("save the manifest");
    drop(files);
    let bases = Bases::new(keep.path().join("bases"));
    bases
        .publish(None, base.dir(), &base_data.join("manifest.json"))
        .expect("publish the base");
    let after_files: Vec<String> =
        navbench_server_support::walk::walk_files(&after, &Default::default())
            .expect("walk")
            .into_iter()
            .map(|f| f.rel)
            .collect();

    let mut group = c.benchmark_group("retrieval_index");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    let cold_dir = keep.path().join("cold");
    group.bench_function("cold_build_next_tree", |b| {
        b.iter(|| RepoIndex::build(&after, &filter, &encoder, &cold_dir).expect("cold build"))
    });
    let mut n = 0;
    group.bench_function("incremental_next_tree", |b| {
        b.iter(|| {
            n += 1;
            let data = keep.path().join(format!("inc-{n}"));
            let (dir, manifest) = (data.join("index"), data.join("manifest.json"));
            bases
                .seed(&after_files, &dir, &manifest)
                .expect("seeded from the base");
            let mut index = RepoIndex::open(&dir, &encoder).expect("open the seeded index");
            let current: Vec<String> = after_files
                .iter()
                .filter(|f| index.accepts(f))
                .cloned()
                .collect();
            let refs: Vec<&str> = current.iter().map(String::as_str).collect();
            let changes = Manifest::load(&manifest)
                .expect("manifest")
                .changes(&after, &refs);
            index
                .update_files(&after, &changes.all(), &encoder)
                .expect("update");
            let files = index.files();
            Manifest::scan(&after, &files)
                .save(&manifest)
                .expect("save the manifest");
            drop(files);
            let _ = fs::remove_dir_all(&data);
        })
    });
    group.finish();
}

criterion_group!(benches, bench_incremental);
criterion_main!(benches);
