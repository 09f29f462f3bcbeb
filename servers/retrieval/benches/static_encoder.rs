//! Static encoder throughput: chunks embedded per second (tokenize + mean of rows).
//!
//! ```text
//! cargo bench -p navbench-retrieval --bench static_encoder
//! NAVBENCH_STATIC_DIR=/path/to/all-MiniLM-L6-v2-static NAVBENCH_BENCH_TREE=/path/to/checkout \
//!     cargo bench -p navbench-retrieval --bench static_encoder
//! ```
//!
//! Without `NAVBENCH_STATIC_DIR` the table is distilled from the tiny random-weight BERT
//! the tests use (its small vocabulary tokenizes differently from MiniLM's, so use the
//! real one for figures); without `NAVBENCH_BENCH_TREE` the chunks come from a
//! synthetic Python package. The chunks are the retrieval index's own
//! (`chunk::chunk_file`), at most 4,000 of them. With `NAVBENCH_MINILM_DIR` the
//! transformer embeds the first 64 of the same chunks too, for the speed ratio.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use navbench_retrieval::chunk::chunk_file;
use navbench_retrieval::encoder::{StaticEncoder, distill};
use navbench_retrieval::model::{Embedder, write_tiny_model};

const MAX_CHUNKS: usize = 4000;

fn synthetic_module(m: usize) -> String {
    let mut src = format!("\"\"\"Module {m}.\"\"\"\nimport os\n\nLIMIT_{m} = {m}\n\n");
    for f in 0..8 {
        src.push_str(&format!(
            "\ndef helper_{m}_{f}(path: str, retries: int = 3) -> str:\n    \"\"\"Join the path with the retry count.\"\"\"\n    try:\n        value = os.path.join(path, str(retries))\n        return value.strip()\n    except OSError as exc:\n        raise ValueError(f\"bad path {{path}}: {{exc}}\")\n\n"
        ));
    }
    src
}

/// `.py` files under `root`, depth-first in name order.
fn python_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if p.is_dir() && !hidden {
            python_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "py") {
            out.push(p);
        }
    }
}

fn chunk_texts() -> Vec<String> {
    let mut texts = Vec::new();
    match std::env::var_os("NAVBENCH_BENCH_TREE") {
        Some(root) => {
            let root = PathBuf::from(root);
            let mut files = Vec::new();
            python_files(&root, &mut files);
            for f in files {
                let Ok(text) = std::fs::read_to_string(&f) else {
                    continue;
                };
                let rel = f.strip_prefix(&root).unwrap_or(&f).to_string_lossy();
                texts.extend(chunk_file(&rel, &text).into_iter().map(|c| c.content));
                if texts.len() >= MAX_CHUNKS {
                    break;
                }
            }
        }
        None => {
            for m in 0..200 {
                let src = synthetic_module(m);
                texts.extend(
                    chunk_file(&format!("mod_{m}.py"), &src)
                        .into_iter()
                        .map(|c| c.content),
                );
            }
        }
    }
    texts.truncate(MAX_CHUNKS);
    texts
}

fn bench_static(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = match std::env::var_os("NAVBENCH_STATIC_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            write_tiny_model(&tmp.path().join("bert"), 1).expect("tiny model");
            distill(&tmp.path().join("bert"), &tmp.path().join("static"), 32).expect("distill");
            tmp.path().join("static")
        }
    };
    let encoder = StaticEncoder::load(&dir).expect("load the static model");
    let texts = chunk_texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let chars: usize = texts.iter().map(String::len).sum();
    eprintln!(
        "static_encoder: {} chunks, {} chars on average, dim {}",
        refs.len(),
        chars / refs.len().max(1),
        encoder.dim()
    );

    let mut group = c.benchmark_group("static_encoder");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(refs.len() as u64));
    group.bench_function("embed_chunks", |b| {
        b.iter(|| black_box(encoder.embed(&refs).expect("embed")))
    });
    if let Some(d) = std::env::var_os("NAVBENCH_MINILM_DIR") {
        let minilm = Embedder::load(Path::new(&d)).expect("load NAVBENCH_MINILM_DIR");
        let few = &refs[..refs.len().min(64)];
        group.throughput(Throughput::Elements(few.len() as u64));
        group.bench_function("minilm_embed_chunks", |b| {
            b.iter(|| black_box(minilm.embed(few).expect("embed")))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_static);
criterion_main!(benches);
