//! Index-build benches: LocAgent's dependency graph (`builder::build_graph`) and the BM25
//! content index (EpicSplitter chunking + tantivy indexing, `Bm25Index::from_chunks`),
//! on the mini repository and on a larger tree.
//!
//! ```text
//! cargo bench -p navbench-codegraph --bench build
//! NAVBENCH_BENCH_TREE=/path/to/checkout cargo bench -p navbench-codegraph --bench build
//! ```
//!
//! Without `NAVBENCH_BENCH_TREE` the larger tree is a synthetic 300-module Python
//! package generated into a temporary directory.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use navbench_codegraph::bm25::Bm25Index;
use navbench_codegraph::builder::build_graph;
use navbench_codegraph::chunk::{ChunkConfig, chunk_repo};

mod support;

fn bench_build(c: &mut Criterion) {
    for tree in support::trees() {
        let root = tree.root.as_path();
        let graph = build_graph(root).expect("build the graph");
        let chunks = chunk_repo(root, &ChunkConfig::default()).expect("chunk the tree");
        eprintln!(
            "{}: {} nodes, {} edges, {} chunks",
            tree.label,
            graph.node_count(),
            graph.edge_count(),
            chunks.len()
        );
        let mut group = c.benchmark_group(format!("build/{}", tree.label));
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(5));
        group.bench_function("graph", |b| {
            b.iter(|| black_box(build_graph(root).expect("build the graph")))
        });
        group.bench_function("bm25_chunk", |b| {
            b.iter(|| black_box(chunk_repo(root, &ChunkConfig::default()).expect("chunk")))
        });
        group.bench_function("bm25_index", |b| {
            b.iter_batched(
                || chunks.clone(),
                |chunks| black_box(Bm25Index::from_chunks(chunks).expect("index the chunks")),
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_function("bm25_total", |b| {
            b.iter(|| black_box(Bm25Index::build(root).expect("build the BM25 index")))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_build);
criterion_main!(benches);
