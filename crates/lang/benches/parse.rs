//! The Python front end's [`Language::parse`] over every `.py` file of a tree: the
//! directory in `NAVBENCH_BENCH_TREE` when set (e.g. a sympy checkout), otherwise the
//! workspace itself (the embedded mini repository and the harness fixtures). Sources
//! are read before measuring, so only parsing and reading the tree count.
//!
//! ```text
//! cargo bench -p navbench-lang --bench parse
//! NAVBENCH_BENCH_TREE=/path/to/checkout cargo bench -p navbench-lang --bench parse
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use navbench_lang::Language;
use navbench_lang::python::Python;

/// Every `.py` file under `dir` (not `.git`, `target`, `node_modules`).
fn py_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if matches!(
            e.file_name().to_str(),
            Some(".git" | "target" | "node_modules")
        ) {
            continue;
        }
        if path.is_dir() {
            py_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "py") {
            out.push(path);
        }
    }
}

fn bench_parse(c: &mut Criterion) {
    let (label, root) = match std::env::var_os("NAVBENCH_BENCH_TREE") {
        Some(dir) => ("tree", PathBuf::from(dir)),
        None => (
            "workspace",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        ),
    };
    let mut files = Vec::new();
    py_files(&root, &mut files);
    let sources: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let bytes: usize = sources.iter().map(String::len).sum();
    eprintln!("{label}: {} .py files, {bytes} bytes", sources.len());
    let mut group = c.benchmark_group("python_parse");
    group.sample_size(10);
    group.throughput(criterion::Throughput::Bytes(bytes as u64));
    group.bench_function(label, |b| {
        b.iter(|| {
            for s in &sources {
                black_box(Python.parse(s));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
