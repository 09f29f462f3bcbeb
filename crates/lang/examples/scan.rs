//! Reads every file under a directory with its front end and prints, per language:
//! files, megabytes, files with syntax errors, definitions, imports, and the time
//! spent in tree-sitter's parser alone and in the whole front end.
//!
//! ```text
//! cargo run -p navbench-lang --example scan -- <dir> [passes]
//! ```
//! A robustness and speed check on real repositories (a checkout of one per
//! language), and the parse-speed side of a grammar's build-time trade-off.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use navbench_lang::language_for_path;

#[derive(Default)]
struct Tally {
    files: usize,
    bytes: usize,
    errors: usize,
    definitions: usize,
    imports: usize,
    raw: Duration,
    full: Duration,
    error_examples: Vec<String>,
}

fn grammar(name: &str) -> Option<tree_sitter::Language> {
    Some(match name {
        "python" => tree_sitter_python::LANGUAGE.into(),
        "typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "javascript" => tree_sitter_javascript::LANGUAGE.into(),
        "java" => tree_sitter_java::LANGUAGE.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "rust" => tree_sitter_rust::LANGUAGE.into(),
        _ => return None,
    })
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == ".git" || name == "node_modules" {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => files_under(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

/// Where the first error or missing node starts (0-based row and column).
fn first_error(root: tree_sitter::Node<'_>) -> Option<(usize, usize)> {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let p = node.start_position();
            return Some((p.row, p.column));
        }
        if node.has_error() {
            let mut cursor = node.walk();
            let children: Vec<_> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    None
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: scan <dir> [passes]");
        std::process::exit(2);
    };
    let passes: usize = args.next().and_then(|p| p.parse().ok()).unwrap_or(1);
    let mut files = Vec::new();
    files_under(&dir, &mut files);
    files.sort();
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut parser = tree_sitter::Parser::new();
    for path in &files {
        let rel = path.strip_prefix(&dir).unwrap_or(path).to_string_lossy();
        let Some(lang) = language_for_path(&rel) else {
            continue;
        };
        let Ok(source) = std::fs::read_to_string(path) else {
            continue;
        };
        let tally = tallies.entry(lang.name()).or_default();
        tally.files += 1;
        tally.bytes += source.len();
        if let Some(g) = grammar(lang.name())
            && parser.set_language(&g).is_ok()
        {
            let t = Instant::now();
            for _ in 0..passes {
                std::hint::black_box(parser.parse(&source, None));
            }
            tally.raw += t.elapsed();
        }
        let t = Instant::now();
        let mut parsed = lang.parse(&source);
        for _ in 1..passes {
            parsed = lang.parse(&source);
        }
        tally.full += t.elapsed();
        tally.definitions += parsed.definitions.len();
        tally.imports += parsed.imports.len();
        if parsed.has_syntax_errors {
            tally.errors += 1;
            if tally.error_examples.len() < 5 {
                let at = grammar(lang.name())
                    .filter(|g| parser.set_language(g).is_ok())
                    .and_then(|_| parser.parse(&source, None))
                    .and_then(|t| first_error(t.root_node()))
                    .map(|(row, col)| format!(":{}:{}", row + 1, col + 1))
                    .unwrap_or_default();
                tally.error_examples.push(format!("{rel}{at}"));
            }
        }
    }
    println!(
        "language    files      MB  errors    defs  imports  parse ms  front-end ms  parse MB/s"
    );
    for (name, t) in &tallies {
        let mb = t.bytes as f64 / 1e6;
        let raw = t.raw.as_secs_f64() * 1e3 / passes as f64;
        let full = t.full.as_secs_f64() * 1e3 / passes as f64;
        println!(
            "{name:<10} {:>6} {mb:>7.2} {:>7} {:>7} {:>8} {raw:>9.1} {full:>13.1} {:>11.1}",
            t.files,
            t.errors,
            t.definitions,
            t.imports,
            if raw > 0.0 { mb / (raw / 1e3) } else { 0.0 }
        );
        for e in &t.error_examples {
            println!("    syntax error: {e}");
        }
    }
}
