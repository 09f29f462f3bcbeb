//! Query benches on built indexes: BM25 content search (`Bm25Index::search`, top 10,
//! issue-like and identifier queries), fuzzy entity search (`FuzzyIndex::search`,
//! top 10), and dependency traversal (`traverse_graph`, depth 2, downstream, upstream
//! and both, from several classes and functions) — each iteration runs every query or
//! start entity once; the throughput line gives the time per query.
//!
//! ```text
//! cargo bench -p navbench-codegraph --bench query
//! NAVBENCH_BENCH_TREE=/path/to/checkout cargo bench -p navbench-codegraph --bench query
//! ```
//!
//! Without `NAVBENCH_BENCH_TREE` the larger tree is a synthetic 300-module Python
//! package generated into a temporary directory.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use navbench_codegraph::bm25::Bm25Index;
use navbench_codegraph::builder::build_graph;
use navbench_codegraph::fuzzy::FuzzyIndex;
use navbench_codegraph::traverse::subgraph::traverse_graph;
use navbench_codegraph::traverse::{Direction, RepoGraph, TraverseOptions};

mod support;

fn bench_queries(c: &mut Criterion) {
    for tree in support::trees() {
        let root = tree.root.as_path();
        let graph = RepoGraph::new(build_graph(root).expect("build the graph"));
        let fuzzy = FuzzyIndex::build(graph.graph());
        let bm25 = Bm25Index::build(root).expect("build the BM25 index");
        let starts = support::sample_entities(graph.graph(), 8);

        let mut group = c.benchmark_group(format!("query/{}", tree.label));
        group.sample_size(20);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));

        group.throughput(Throughput::Elements(support::QUERIES.len() as u64));
        group.bench_function("bm25_search", |b| {
            b.iter(|| {
                for q in support::QUERIES {
                    black_box(bm25.search(q, 10).expect("search"));
                }
            })
        });

        group.throughput(Throughput::Elements(support::ENTITY_QUERIES.len() as u64));
        group.bench_function("fuzzy_entities", |b| {
            b.iter(|| {
                for q in support::ENTITY_QUERIES {
                    black_box(fuzzy.search(graph.graph(), q, None, None, 10));
                }
            })
        });

        group.throughput(Throughput::Elements(starts.len() as u64));
        for direction in [Direction::Downstream, Direction::Upstream, Direction::Both] {
            let opts = TraverseOptions {
                direction,
                hops: 2,
                node_types: None,
                edge_types: None,
            };
            group.bench_function(format!("dependencies_depth2_{direction}"), |b| {
                b.iter(|| {
                    for &s in &starts {
                        black_box(traverse_graph(&graph, &[s], &opts).to_dot(&graph));
                    }
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench_queries);
criterion_main!(benches);
