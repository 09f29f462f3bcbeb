//! Measures the engine on a repository tree: embedding throughput, full index time,
//! re-index time after touching a few files, and search latency.
//!
//! `cargo run --release -p navbench-retrieval --example measure_index -- MODEL_DIR REPO_ROOT STORE_DIR [TOUCH=5]`
//!
//! The repository tree is modified (a comment is appended to `TOUCH` Python files);
//! run it on a scratch copy.

use std::path::PathBuf;
use std::time::Instant;

use navbench_retrieval::index::{FileFilter, RepoIndex, SearchOptions};
use navbench_retrieval::model::Embedder;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, root, store] = [0, 1, 2].map(|i| args.get(i).map(PathBuf::from));
    let (Some(model), Some(root), Some(store)) = (model, root, store) else {
        anyhow::bail!("usage: measure_index MODEL_DIR REPO_ROOT STORE_DIR [TOUCH]");
    };
    let touch: usize = args.get(3).map_or(Ok(5), |s| s.parse())?;
    let t = Instant::now();
    let embedder = Embedder::load(&model)?;
    println!("model load: {:.2}s", t.elapsed().as_secs_f64());

    let _ = std::fs::remove_dir_all(&store);
    let (mut idx, stats) = RepoIndex::build(&root, &FileFilter::default(), &embedder, &store)?;
    println!(
        "full index: {} files, {} chunks, {} embedded in {:.1}s ({:.1} chunks/s overall)",
        stats.files,
        stats.chunks,
        stats.embedded,
        stats.elapsed_ms as f64 / 1000.0,
        stats.embedded as f64 / (stats.elapsed_ms as f64 / 1000.0)
    );

    // Pure embedding throughput on (up to) 256 of the repository's chunks.
    let texts: Vec<&str> = idx
        .chunks()
        .iter()
        .take(256)
        .map(|c| c.content.as_str())
        .collect();
    let t = Instant::now();
    embedder.embed(&texts)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "embedding throughput: {} chunks in {:.2}s = {:.1} chunks/s",
        texts.len(),
        secs,
        texts.len() as f64 / secs
    );

    // The same chunks truncated to 128 tokens (MiniLM's training length).
    let short = Embedder::load(&model)?.with_max_tokens(128)?;
    let t = Instant::now();
    short.embed(&texts)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "embedding throughput at 128 tokens: {:.1} chunks/s",
        texts.len() as f64 / secs
    );

    let t = Instant::now();
    let reopened = RepoIndex::open(&store, &embedder)?;
    println!(
        "reopen: {} chunks in {:.0} ms",
        reopened.chunks().len(),
        t.elapsed().as_secs_f64() * 1000.0
    );

    let queries = [
        "how are redirects handled",
        "where is the request timeout configured",
        "url parsing",
        "register a blueprint",
        "session cookies are not persisted",
        "json encoding of responses",
    ];
    let mut times = Vec::new();
    for _ in 0..5 {
        for q in queries {
            let t = Instant::now();
            let hits = idx.search(&embedder, q, &SearchOptions::default())?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            std::hint::black_box(hits);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "search: median {:.1} ms, p95 {:.1} ms over {} queries",
        times[times.len() / 2],
        times[times.len() * 95 / 100],
        times.len()
    );
    let hits = idx.search(
        &embedder,
        queries[0],
        &SearchOptions {
            top_k: 5,
            ..SearchOptions::default()
        },
    )?;
    for h in hits {
        let c = &idx.chunks()[h.chunk];
        println!(
            "  {:.3} {}:{}-{} {:?} [{}]",
            h.score, c.file, c.start_line, c.end_line, c.name, h.reason
        );
    }

    let touched: Vec<String> = idx
        .files()
        .into_iter()
        .filter(|f| f.ends_with(".py"))
        .step_by(3)
        .take(touch)
        .map(str::to_string)
        .collect();
    for f in &touched {
        let p = root.join(f);
        let mut text = std::fs::read_to_string(&p)?;
        text.push_str("\n\ndef navbench_touched_helper():\n    return 'touched'\n");
        std::fs::write(&p, text)?;
    }
    let s = idx.update_files(&root, &touched, &embedder)?;
    println!(
        "update_files({} files): {} embedded, {} reused, {} ms ({:.2}% of full)",
        touched.len(),
        s.embedded,
        s.reused,
        s.elapsed_ms,
        100.0 * s.elapsed_ms as f64 / stats.elapsed_ms.max(1) as f64
    );
    let (_, s2) = RepoIndex::build(&root, &FileFilter::default(), &embedder, &store)?;
    println!(
        "rebuild of the touched tree (new commit): {} embedded, {} reused, {} ms ({:.2}% of full)",
        s2.embedded,
        s2.reused,
        s2.elapsed_ms,
        100.0 * s2.elapsed_ms as f64 / stats.elapsed_ms.max(1) as f64
    );
    Ok(())
}
