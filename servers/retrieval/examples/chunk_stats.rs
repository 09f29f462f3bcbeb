//! Chunks a repository tree the way an index build does (same walk, same filter, no
//! chunk cache) and reports files, chunks per kind and language, and the time taken;
//! nothing is embedded. For sizing the chunker on real repositories when a full
//! index build is too slow to repeat.
//!
//! `cargo run --release -p navbench-retrieval --example chunk_stats -- REPO_ROOT...`

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use navbench_retrieval::chunk::{Chunk, chunk_file, code_language};
use navbench_retrieval::index::FileFilter;
use navbench_server_support::walk::{WalkOptions, walk_files};

fn main() -> anyhow::Result<()> {
    let roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if roots.is_empty() {
        anyhow::bail!("usage: chunk_stats REPO_ROOT...");
    }
    let filter = FileFilter::default().compile()?;
    for root in roots {
        let t = Instant::now();
        let files: Vec<String> = walk_files(&root, &WalkOptions::default())?
            .into_iter()
            .map(|f| f.rel)
            .filter(|rel| filter.accepts(rel))
            .collect();
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut read = 0usize;
        for rel in &files {
            let Ok(text) = std::fs::read_to_string(root.join(rel)) else {
                continue;
            };
            read += 1;
            chunks.extend(chunk_file(rel, &text));
        }
        let secs = t.elapsed().as_secs_f64();
        let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
        let mut by_lang: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &chunks {
            *by_kind.entry(c.kind.to_string()).or_default() += 1;
            let lang = code_language(&c.file).map_or("python/text", |l| l.name());
            *by_lang.entry(lang).or_default() += 1;
        }
        let outlines = chunks
            .iter()
            .filter(|c| c.kind.as_str() == "class" && c.end_line + 1 - c.start_line > 60)
            .count();
        println!(
            "{}: {read} files, {} chunks in {secs:.2}s; by kind {by_kind:?}; by language {by_lang:?}; {outlines} long types as outlines",
            root.display(),
            chunks.len()
        );
    }
    Ok(())
}
