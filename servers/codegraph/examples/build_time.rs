//! Times one build phase in a fresh process (tokenizer start-up included).
//!
//! ```text
//! build_time graph|chunk|bm25 TREE
//! build_time tokens TREE   # compare the fast token counter with tiktoken on every .py file
//! ```

use std::path::Path;
use std::time::Instant;

use navbench_codegraph::bm25::Bm25Index;
use navbench_codegraph::builder::build_graph;
use navbench_codegraph::chunk::{ChunkConfig, chunk_repo};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(phase), Some(tree)) = (args.first(), args.get(1)) else {
        return Err("usage: build_time graph|chunk|bm25 TREE".into());
    };
    let root = Path::new(tree);
    let t = Instant::now();
    let n = match phase.as_str() {
        "graph" => build_graph(root)?.node_count(),
        "chunk" => chunk_repo(root, &ChunkConfig::default())?.len(),
        "bm25" => {
            Bm25Index::build(root)?;
            0
        }
        "tokens" => check_tokens(root)?,
        other => return Err(format!("unknown phase {other}").into()),
    };
    println!(
        "{phase} {tree} {n} {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// Compares `count_tokens` with tiktoken on each `.py` file under `root`, whole and in
/// windows of 1 and 7 lines; returns the number of texts compared.
fn check_tokens(root: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    use navbench_codegraph::chunk::tokens::count_tokens;
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let mut stack = vec![root.to_path_buf()];
    let mut n = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                let text = navbench_codegraph::chunk::files::read_lossy(&p)?;
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                let mut texts = vec![text.clone()];
                for w in [1, 7] {
                    for win in lines.windows(w) {
                        texts.push(win.concat());
                    }
                }
                for t in texts {
                    let want = if t.contains("<|") {
                        bpe.count_with_special_tokens(&t)
                    } else {
                        bpe.count_ordinary(&t)
                    };
                    if count_tokens(&t) != want {
                        return Err(format!("mismatch in {}: {t:?}", p.display()).into());
                    }
                    n += 1;
                }
            }
        }
    }
    Ok(n)
}
