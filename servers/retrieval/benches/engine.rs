//! Engine benches: chunking, exact cosine scan, embedding and hybrid search.
//!
//! ```text
//! cargo bench -p navbench-retrieval --bench engine
//! NAVBENCH_MINILM_DIR=/path/to/all-MiniLM-L6-v2 NAVBENCH_BENCH_TREE=/path/to/checkout \
//!     cargo bench -p navbench-retrieval --bench engine
//! ```
//!
//! Without `NAVBENCH_MINILM_DIR` the model is the tiny random-weight BERT the tests
//! use (so the figures measure the pipeline, not MiniLM); without
//! `NAVBENCH_BENCH_TREE` the tree is a synthetic 200-module Python package.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use navbench_retrieval::chunk::chunk_file;
use navbench_retrieval::index::{FileFilter, RepoIndex, SearchOptions, cosine_scores};
use navbench_retrieval::model::{Embedder, write_tiny_model};

const QUERIES: &[&str] = &[
    "how are redirects handled",
    "where is the request timeout configured",
    "parse a url into its parts",
    "register a blueprint on the application",
    "session cookies are not persisted",
];

fn synthetic_tree(dir: &std::path::Path) {
    for m in 0..200 {
        let mut src = format!(
            "\"\"\"Module {m}.\"\"\"\nimport os\nfrom .base import Base\n\nLIMIT_{m} = {m}\n\n"
        );
        for f in 0..6 {
            src.push_str(&format!(
                "\ndef helper_{m}_{f}(path: str, retries: int = 3) -> str:\n    try:\n        return os.path.join(path, str(retries))\n    except OSError:\n        return path\n\n"
            ));
        }
        src.push_str(&format!(
            "\nclass Handler{m}(Base):\n    \"\"\"Handles requests number {m}.\"\"\"\n"
        ));
        for k in 0..5 {
            src.push_str(&format!("\n    def handle_{k}(self, request):\n        value = helper_{m}_{k}(request.path)\n        return self.respond(value)\n"));
        }
        std::fs::write(dir.join(format!("mod_{m}.py")), src).expect("write synthetic module");
    }
}

fn setup() -> (Vec<tempfile::TempDir>, Embedder, PathBuf) {
    let mut keep = Vec::new();
    let embedder = match std::env::var_os("NAVBENCH_MINILM_DIR") {
        Some(d) => Embedder::load(std::path::Path::new(&d)).expect("load NAVBENCH_MINILM_DIR"),
        None => {
            let d = tempfile::tempdir().expect("tempdir");
            write_tiny_model(d.path(), 1).expect("tiny model");
            let e = Embedder::load(d.path()).expect("load tiny model");
            keep.push(d);
            e
        }
    };
    let root = match std::env::var_os("NAVBENCH_BENCH_TREE") {
        Some(t) => PathBuf::from(t),
        None => {
            let d = tempfile::tempdir().expect("tempdir");
            synthetic_tree(d.path());
            let p = d.path().to_path_buf();
            keep.push(d);
            p
        }
    };
    (keep, embedder, root)
}

fn bench_engine(c: &mut Criterion) {
    let (_keep, embedder, root) = setup();
    let store = tempfile::tempdir().expect("tempdir");
    let (index, _) = RepoIndex::build(&root, &FileFilter::default(), &embedder, store.path())
        .expect("build the index");
    let files: Vec<(String, String)> = index
        .files()
        .into_iter()
        .filter_map(|f| Some((f.to_string(), std::fs::read_to_string(root.join(f)).ok()?)))
        .collect();

    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));

    group.throughput(Throughput::Elements(files.len() as u64));
    group.bench_function("chunk_files", |b| {
        b.iter(|| {
            for (rel, text) in &files {
                black_box(chunk_file(rel, text));
            }
        })
    });

    let texts: Vec<&str> = index
        .chunks()
        .iter()
        .take(32)
        .map(|c| c.content.as_str())
        .collect();
    group.throughput(Throughput::Elements(texts.len() as u64));
    group.bench_function("embed_chunks", |b| {
        b.iter(|| black_box(embedder.embed(&texts).expect("embed")))
    });

    // The exact scan at sympy scale: 40,000 chunks × 384 dims.
    let (rows, dim) = (40_000, 384);
    let matrix: Vec<f32> = (0..rows * dim)
        .map(|i| ((i % 97) as f32 - 48.0) / 97.0)
        .collect();
    let q: Vec<f32> = (0..dim).map(|i| (i as f32).cos()).collect();
    group.throughput(Throughput::Elements(rows as u64));
    group.bench_function("cosine_scan_40k_x_384", |b| {
        b.iter(|| black_box(cosine_scores(&matrix, dim, &q)))
    });

    group.throughput(Throughput::Elements(QUERIES.len() as u64));
    group.bench_function("hybrid_search_top10", |b| {
        b.iter(|| {
            for q in QUERIES {
                black_box(
                    index
                        .search(&embedder, q, &SearchOptions::default())
                        .expect("search"),
                );
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_engine);
criterion_main!(benches);
