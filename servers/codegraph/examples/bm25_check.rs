//! Checks the BM25 port against the original's reference outputs, and dumps chunks and
//! CodeBlock trees for debugging.
//!
//! ```text
//! bm25_check check <requests-tree> <flask-tree> [reference-dir] [dataset.jsonl]
//! bm25_check check-one <name> <tree> <reference.json> [dataset.jsonl]
//! bm25_check chunks <repo> <out.jsonl>      # chunk_repo output
//! bm25_check blocks <repo> <out.jsonl>      # block trees + chunks of every .py file
//! bm25_check stem <words.txt> <out.tsv>     # stems, one word a line
//! bm25_check time <repo> [dataset.jsonl]    # build time and query latency
//! bm25_check profile <repo>                 # slowest files to chunk
//! bm25_check module <ids.txt> <queries.txt> # ModuleIndex top-10
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use navbench_codegraph::bm25::Bm25Index;
use navbench_codegraph::chunk::{self, ChunkConfig, split};
use serde_json::{Value, json};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> Res<&str> {
        args.get(i).map(String::as_str).ok_or_else(|| {
            format!("missing argument {i}; see the file's doc comment for usage").into()
        })
    };
    match arg(0)? {
        "check" => {
            let refdir = args.get(3).cloned().unwrap_or_else(|| {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../../shared/reference/locagent-bm25"
                )
                .to_string()
            });
            let dataset = args.get(4).cloned().unwrap_or_else(|| {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../../shared/datasets/swe-bench-lite-dev.jsonl"
                )
                .to_string()
            });
            let problems = load_problems(Path::new(&dataset))?;
            let mut ok = true;
            for (name, tree) in [("requests", arg(1)?), ("flask", arg(2)?)] {
                let reference: Value = serde_json::from_slice(&std::fs::read(
                    Path::new(&refdir).join(format!("{name}.json")),
                )?)?;
                ok &= check_repo(name, Path::new(tree), &reference, &problems)?;
            }
            if !ok {
                std::process::exit(1);
            }
        }
        "check-one" => {
            // check-one <name> <tree> <reference.json> [dataset.jsonl]
            let dataset = args.get(4).cloned().unwrap_or_else(|| {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../../shared/datasets/swe-bench-lite-dev.jsonl"
                )
                .to_string()
            });
            let problems = load_problems(Path::new(&dataset))?;
            let reference: Value = serde_json::from_slice(&std::fs::read(arg(3)?)?)?;
            if !check_repo(arg(1)?, Path::new(arg(2)?), &reference, &problems)? {
                std::process::exit(1);
            }
        }
        "chunks" => {
            let chunks = chunk::chunk_repo(Path::new(arg(1)?), &ChunkConfig::default())?;
            let mut out = String::new();
            for c in chunks {
                out.push_str(&serde_json::to_string(&c)?);
                out.push('\n');
            }
            std::fs::write(arg(2)?, out)?;
        }
        "blocks" => dump_blocks(Path::new(arg(1)?), Path::new(arg(2)?))?,
        "module" => {
            // ids.txt: one id a line; queries.txt: one query a line. Prints top-10.
            let ids: Vec<String> = std::fs::read_to_string(arg(1)?)?
                .lines()
                .map(str::to_string)
                .collect();
            let idx = navbench_codegraph::bm25::ModuleIndex::build(&ids);
            for q in std::fs::read_to_string(arg(2)?)?.lines() {
                let hits: Vec<String> = idx
                    .search(q, 10)
                    .iter()
                    .map(|h| format!("{} {:.4}", h.id, h.score))
                    .collect();
                println!("{q}\t{}", hits.join("\t"));
            }
        }
        "profile" => {
            // Per-file chunking time, slowest first.
            let files = chunk::list_corpus_files(Path::new(arg(1)?))?;
            let mut times = Vec::new();
            for f in files {
                let src = chunk::files::read_lossy(&f.abs_path)?;
                let t = Instant::now();
                let _ = chunk::chunk_source(&f.rel_path, &src, &ChunkConfig::default());
                times.push((t.elapsed(), f.rel_path, src.len()));
            }
            times.sort_by_key(|t| std::cmp::Reverse(t.0));
            for (d, p, n) in times.iter().take(8) {
                println!("{d:>10.2?} {n:>8} {p}");
            }
            let t = Instant::now();
            let mut n = 0;
            for (_, p, _) in &times {
                let src = chunk::files::read_lossy(&Path::new(arg(1)?).join(p))?;
                n += chunk::tokens::count_tokens(&src);
            }
            println!(
                "whole-file token counting: {:.2?} ({n} tokens)",
                t.elapsed()
            );
        }
        "stem" => {
            // One word per line in, `word<TAB>stem` out (to compare with PyStemmer).
            let mut t = navbench_codegraph::bm25::tokenize::Tokenizer::new();
            let mut out = String::new();
            for w in std::fs::read_to_string(arg(1)?)?.lines() {
                out.push_str(&format!("{w}\t{}\n", t.stem(w)));
            }
            std::fs::write(arg(2)?, out)?;
        }
        "time" => {
            let dataset = args.get(2).cloned().unwrap_or_else(|| {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../../shared/datasets/swe-bench-lite-dev.jsonl"
                )
                .to_string()
            });
            time_repo(Path::new(arg(1)?), Path::new(&dataset))?;
        }
        other => return Err(format!("unknown command {other}").into()),
    }
    Ok(())
}

fn load_problems(path: &Path) -> Res<HashMap<String, String>> {
    let mut m = HashMap::new();
    for line in std::fs::read_to_string(path)?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)?;
        if let (Some(id), Some(ps)) = (v["instance_id"].as_str(), v["problem_statement"].as_str()) {
            m.insert(id.to_string(), ps.to_string());
        }
    }
    Ok(m)
}

type Key = (String, u64, u64);

fn row_key(row: &Value) -> Option<(Key, f64)> {
    Some((
        (
            row[0].as_str()?.to_string(),
            row[1].as_u64()?,
            row[2].as_u64()?,
        ),
        row[3].as_f64()?,
    ))
}

fn check_repo(
    name: &str,
    tree: &Path,
    reference: &Value,
    problems: &HashMap<String, String>,
) -> Res<bool> {
    let t0 = Instant::now();
    let index = Bm25Index::build(tree)?;
    let build = t0.elapsed();
    let mine = index.chunks();
    let empty = Vec::new();
    let refs = reference["chunks"].as_array().unwrap_or(&empty);
    // Chunk agreement: exact (file, start, end) matches, plus token counts and span ids.
    let ref_keys: Vec<Key> = refs
        .iter()
        .filter_map(|c| {
            Some((
                c["file_path"].as_str()?.to_string(),
                c["start_line"].as_u64()?,
                c["end_line"].as_u64()?,
            ))
        })
        .collect();
    let my_keys: Vec<Key> = mine
        .iter()
        .map(|c| (c.file_path.clone(), c.start_line as u64, c.end_line as u64))
        .collect();
    let my_set: std::collections::HashSet<&Key> = my_keys.iter().collect();
    let ref_set: std::collections::HashSet<&Key> = ref_keys.iter().collect();
    let matched = ref_keys.iter().filter(|k| my_set.contains(k)).count();
    let mut full = 0;
    for (r, m) in refs.iter().zip(mine.iter()) {
        let mut rs: Vec<String> = r["span_ids"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect();
        rs.sort();
        if r["file_path"].as_str() == Some(m.file_path.as_str())
            && r["start_line"].as_u64() == Some(m.start_line as u64)
            && r["end_line"].as_u64() == Some(m.end_line as u64)
            && r["tokens"].as_u64() == Some(m.tokens as u64)
            && r["text_len"].as_u64() == Some(m.text.chars().count() as u64)
            && rs == m.span_ids
        {
            full += 1;
        }
    }
    println!(
        "{name}: chunks: reference {}, ours {}; boundaries matching {matched}/{}; identical in order \
         (path, lines, tokens, text length, span ids) {full}/{}  [build {:.2?}]",
        ref_keys.len(),
        my_keys.len(),
        ref_keys.len(),
        ref_keys.len(),
        build
    );
    for k in ref_keys.iter().filter(|k| !my_set.contains(k)).take(10) {
        println!("  missing {k:?}");
    }
    for k in my_keys.iter().filter(|k| !ref_set.contains(k)).take(10) {
        println!("  extra   {k:?}");
    }

    // Top-10 agreement.
    let by_key: HashMap<Key, usize> = my_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), i))
        .collect();
    let mut agree_total = 0usize;
    let mut pos_total = 0usize;
    let mut all_ok = true;
    for (section, query_of) in [
        ("problem_statement_queries", true),
        ("short_queries", false),
    ] {
        let mut s_agree = 0;
        let mut s_total = 0;
        let mut zero_pad = 0;
        for q in reference[section].as_array().unwrap_or(&empty) {
            let (label, query) = if query_of {
                let id = q["instance_id"].as_str().unwrap_or("");
                (
                    id.to_string(),
                    problems.get(id).cloned().unwrap_or_default(),
                )
            } else {
                let t = q["terms"].as_str().unwrap_or("").to_string();
                (t.clone(), t)
            };
            let reference_rows: Vec<(Key, f64)> = q["top10"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .filter_map(row_key)
                .collect();
            let tokens = navbench_codegraph::bm25::tokenize::tokenize(&query);
            let scores = index
                .score_all(&tokens)?
                .unwrap_or_else(|| vec![0.0; mine.len()]);
            let hits = index.search(&query, reference_rows.len())?.hits;
            let mut agree = 0;
            let mut notes = Vec::new();
            for (pos, (rk, rscore)) in reference_rows.iter().enumerate() {
                let Some(h) = hits.get(pos) else {
                    // We return positive scores only; the original pads with arbitrary
                    // zero-score chunks, which are ties of each other.
                    if *rscore == 0.0 {
                        agree += 1;
                        zero_pad += 1;
                    } else {
                        notes.push(format!("#{pos}: no hit (ref {rk:?} {rscore})"));
                    }
                    continue;
                };
                let same_chunk = my_keys[h.chunk_id] == *rk;
                // Tie: our score of the reference's chunk equals our score at this position.
                let tie = by_key.get(rk).is_some_and(|&i| {
                    let a = scores[i] as f64;
                    let b = h.score as f64;
                    (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
                });
                if same_chunk || tie {
                    agree += 1;
                } else {
                    notes.push(format!(
                        "#{pos}: ours {:?} {:.4}, ref {rk:?} {rscore} (our score for it: {:.4})",
                        my_keys[h.chunk_id],
                        h.score,
                        by_key.get(rk).map(|&i| scores[i]).unwrap_or(f32::NAN)
                    ));
                }
                // Score check (reference rounded to 4 decimals).
                if same_chunk && (h.score as f64 - rscore).abs() > 6e-5 {
                    notes.push(format!("#{pos}: score {:.5} vs ref {rscore}", h.score));
                }
            }
            s_agree += agree;
            s_total += reference_rows.len();
            if agree < reference_rows.len() {
                println!("  {section} {label}: {agree}/{}", reference_rows.len());
                for n in notes {
                    println!("    {n}");
                }
            }
        }
        let pct = if s_total == 0 {
            100.0
        } else {
            100.0 * s_agree as f64 / s_total as f64
        };
        println!(
            "{name}: top-10 agreement ({section}): {s_agree}/{s_total} = {pct:.1}% \
             (of which {zero_pad} zero-score padding positions of the original)"
        );
        if query_of {
            agree_total += s_agree;
            pos_total += s_total;
            all_ok &= pct >= 95.0;
        }
    }
    let _ = (agree_total, pos_total);
    Ok(all_ok && matched == ref_keys.len())
}

fn time_repo(root: &Path, dataset: &Path) -> Res<()> {
    let t = Instant::now();
    let chunks = chunk::chunk_repo(root, &ChunkConfig::default())?;
    let t_chunk = t.elapsed();
    let t = Instant::now();
    let n = Bm25Index::from_chunks(chunks)?.len();
    println!(
        "  phases: chunking {t_chunk:.2?}, indexing {:.2?} ({n} chunks)",
        t.elapsed()
    );
    let t0 = Instant::now();
    let index = Bm25Index::build(root)?;
    let build = t0.elapsed();
    let problems = load_problems(dataset)?;
    let mut queries: Vec<String> = problems.into_values().collect();
    queries.sort();
    queries.truncate(60);
    let mut times = Vec::new();
    for _ in 0..5 {
        for q in &queries {
            let t = Instant::now();
            let r = index.search(q, 10)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(r);
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let p95 = times[(times.len() * 95 / 100).min(times.len() - 1)];
    println!(
        "{}: {} chunks, build {:.2?}, query median {median:.3} ms, p95 {p95:.3} ms ({} queries)",
        root.display(),
        index.len(),
        build,
        times.len()
    );
    Ok(())
}

fn dump_blocks(root: &Path, out: &Path) -> Res<()> {
    let mut files: Vec<PathBuf> = Vec::new();
    collect_py(root, &mut files)?;
    files.sort();
    let mut s = String::new();
    for f in files {
        let rel = f.strip_prefix(root)?.to_string_lossy().replace('\\', "/");
        let src = chunk::files::read_lossy(&f)?;
        let tree = navbench_python::parse_tree(&src);
        let rec = match chunk::parse_blocks(&src, &tree) {
            Err(e) => json!({"file": rel, "error": e.to_string()}),
            Ok(bt) => {
                let mut blocks = Vec::new();
                let mut depth = HashMap::new();
                depth.insert(0usize, 0usize);
                for id in bt.preorder() {
                    let b = &bt.blocks[id];
                    let d = b.parent.map(|p| depth[&p] + 1).unwrap_or(0);
                    depth.insert(id, d);
                    blocks.push(json!({"d": d, "t": b.kind.name(), "id": b.identifier, "s": b.start_line,
                        "e": b.end_line, "tok": b.tokens, "pre": b.pre_code, "c": b.content, "ts": b.ts_kind,
                        "span": b.span_id}));
                }
                let chunks: Vec<Value> = split::chunk_contents(&bt, &ChunkConfig::default())
                    .into_iter()
                    .filter(|c| !c.is_empty())
                    .map(|c| {
                        let mut spans: Vec<String> =
                            c.iter().filter_map(|&b| bt.blocks[b].span_id.clone()).collect();
                        spans.sort();
                        spans.dedup();
                        json!({"s": bt.blocks[c[0]].start_line, "e": bt.blocks[c[c.len()-1]].end_line,
                            "spans": spans, "text": split::render_chunk(&bt, &c),
                            "paths": c.iter().map(|&b| bt.path_string(b)).collect::<Vec<_>>()})
                    })
                    .collect();
                json!({"file": rel, "blocks": blocks, "chunks": chunks})
            }
        };
        s.push_str(&rec.to_string());
        s.push('\n');
    }
    std::fs::write(out, s)?;
    Ok(())
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) -> Res<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        if e.file_type()?.is_dir() {
            collect_py(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "py") {
            out.push(p);
        }
    }
    Ok(())
}
