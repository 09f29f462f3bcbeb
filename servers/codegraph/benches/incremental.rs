//! Graph builds that reuse stored per-file parse results ([`FileStore`]) against a
//! fresh build, on a copy of the larger bench tree (the `.py` files of
//! `NAVBENCH_BENCH_TREE`, or the synthetic package):
//!
//! - `fresh`: every file parsed (no store);
//! - `reuse_unchanged`: the same tree again, every file's extraction reused;
//! - `reuse_one_edit`: one file edited before each build (a new text each time), so
//!   one file is parsed and a new pack written: the next commit of a repository.
//!
//! and the per-function BM25 index of the bm25 variant the same three ways
//! (`functions/…`: `cold`, `store_unchanged`, `store_one_edit`), and the codegraph
//! server's whole `init_repository` (graph, BM25 content index, entity and fuzzy
//! indexes; `init/…`): `cold` (an empty cache, as a repository's first instance)
//! against `warm_one_edit` (a new server on the cache of the previous tree, one file
//! edited: the next instance of a repository).
//!
//! ```text
//! cargo bench -p navbench-codegraph --bench incremental
//! NAVBENCH_BENCH_TREE=/path/to/checkout cargo bench -p navbench-codegraph --bench incremental
//! ```

use std::fs;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use navbench_codegraph::builder::{BuildOptions, FileStore, build_graph_with};
use navbench_codegraph::functions::{FunctionIndex, TestFilter};
use navbench_lang::family::Selection;
use navbench_server_support::timings::TimingsRecorder;

mod support;

/// The server binary's allocator, so the timings are those the server would show.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Copies the `.py` files under `from` (not through symlinks or `.git`) to `to`; the
/// bench edits the copy, never the given tree. Returns the copied paths.
fn copy_py(from: &Path, to: &Path, rel: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(from.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let child = rel.join(e.file_name());
        if ft.is_dir() && e.file_name() != ".git" {
            copy_py(from, to, &child, out);
        } else if ft.is_file() && child.extension().is_some_and(|x| x == "py") {
            fs::create_dir_all(to.join(&child).parent().expect("a parent")).expect("mkdir");
            fs::copy(from.join(&child), to.join(&child)).expect("copy a file");
            out.push(to.join(child));
        }
    }
}

fn bench_incremental(c: &mut Criterion) {
    let tree = support::large();
    let copy = tempfile::tempdir().expect("a directory for the copy");
    let mut files = Vec::new();
    copy_py(&tree.root, copy.path(), Path::new(""), &mut files);
    files.sort();
    let edited = files.get(files.len() / 2).expect("a .py file").clone();
    let original = fs::read_to_string(&edited).unwrap_or_default();
    let root = copy.path();
    let store_dir = tempfile::tempdir().expect("a directory for the store");
    let reuse = BuildOptions {
        reuse: Some(FileStore::new(store_dir.path())),
        ..BuildOptions::default()
    };
    let (_, warm) = build_graph_with(root, &reuse).expect("build the graph");
    eprintln!(
        "{}: {} files, {} parsed by the warming build",
        tree.label, warm.files, warm.parsed
    );

    let mut group = c.benchmark_group(format!("incremental/{}", tree.label));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("fresh", |b| {
        b.iter(|| black_box(build_graph_with(root, &BuildOptions::default()).expect("build")))
    });
    group.bench_function("reuse_unchanged", |b| {
        b.iter(|| black_box(build_graph_with(root, &reuse).expect("build")))
    });
    let mut n = 0u64;
    group.bench_function("reuse_one_edit", |b| {
        b.iter_batched(
            || {
                n += 1;
                fs::write(&edited, format!("{original}\n# edit {n}\n")).expect("edit a file");
            },
            |()| {
                let (g, report) = build_graph_with(root, &reuse).expect("build");
                assert_eq!(report.parsed, 1, "only the edited file is parsed");
                black_box(g)
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// The per-function BM25 index (`--tools functions`, the bm25 variant) of the same
/// copy: `cold` without a store; `store_unchanged` from a store that holds every file;
/// `store_one_edit` with one file edited before each build (its documents read
/// again, the rest from the store, a new pack written).
fn bench_functions(c: &mut Criterion) {
    let tree = support::large();
    let copy = tempfile::tempdir().expect("a directory for the copy");
    let mut files = Vec::new();
    copy_py(&tree.root, copy.path(), Path::new(""), &mut files);
    files.sort();
    let edited = files
        .iter()
        .find(|f| !f.to_string_lossy().to_lowercase().contains("test"))
        .expect("a non-test .py file")
        .clone();
    let original = fs::read_to_string(&edited).unwrap_or_default();
    let root = copy.path();
    let store = tempfile::tempdir().expect("a directory for the store");
    let timings = TimingsRecorder::default();
    let build = |store: Option<&Path>| {
        FunctionIndex::build_with(root, TestFilter::Path, &Selection::Auto, store, &timings)
            .expect("build the function index")
    };
    let warm = build(Some(store.path()));
    eprintln!(
        "{}: {} function documents",
        tree.label,
        warm.stats().documents
    );
    let mut group = c.benchmark_group(format!("functions/{}", tree.label));
    group.sample_size(10);
    group.bench_function("cold", |b| b.iter(|| black_box(build(None))));
    group.bench_function("store_unchanged", |b| {
        b.iter(|| black_box(build(Some(store.path()))))
    });
    let mut n = 0u64;
    group.bench_function("store_one_edit", |b| {
        b.iter_batched(
            || {
                n += 1;
                fs::write(&edited, format!("{original}\ndef edit_{n}():\n    pass\n"))
                    .expect("edit a file");
            },
            |()| black_box(build(Some(store.path()))),
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// The codegraph server's `init_repository` on the same copy: `cold` with an empty
/// cache each time; `warm_one_edit` with one file edited before each call and a new
/// server on the cache the earlier calls filled, so the graph cache misses and only
/// the edited file is parsed and chunked again.
fn bench_init(c: &mut Criterion) {
    use navbench_codegraph::tools::{CodegraphTools, InitRepositoryArgs, Limits};
    let tree = support::large();
    let copy = tempfile::tempdir().expect("a directory for the copy");
    let mut files = Vec::new();
    copy_py(&tree.root, copy.path(), Path::new(""), &mut files);
    files.sort();
    let edited = files.get(files.len() / 2).expect("a .py file").clone();
    let original = fs::read_to_string(&edited).unwrap_or_default();
    let args = InitRepositoryArgs {
        repo_path: copy.path().to_string_lossy().into_owned(),
        force_rebuild: None,
    };
    let init = |cache: &Path| {
        CodegraphTools::new(cache.to_path_buf(), Limits::default())
            .init_repository(&args)
            .expect("init_repository")
    };
    let warm_cache = tempfile::tempdir().expect("a directory for the cache");
    init(warm_cache.path());
    let mut group = c.benchmark_group(format!("init/{}", tree.label));
    group.sample_size(10);
    group.bench_function("cold", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("an empty cache"),
            |cache| black_box(init(cache.path())),
            criterion::BatchSize::PerIteration,
        )
    });
    let mut n = 0u64;
    group.bench_function("warm_one_edit", |b| {
        b.iter_batched(
            || {
                n += 1;
                fs::write(
                    &edited,
                    format!(
                        "{original}
def edit_{n}():
    pass
"
                    ),
                )
                .expect("edit a file");
            },
            |()| {
                let out = init(warm_cache.path());
                assert_eq!(out.data.cache, "miss", "a new tree");
                black_box(out)
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_incremental, bench_functions, bench_init);
criterion_main!(benches);
