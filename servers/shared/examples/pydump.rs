// TEMPORARY differential-test helper (to be deleted).
use navbench_shared::python::*;
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    for path in s.split('\n').filter(|p| !p.is_empty()) {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        println!("FILE {path}");
        let m = parse_module(&text);
        if m.has_syntax_errors {
            println!("ERR");
            continue;
        }
        for e in &m.entities {
            println!(
                "E {} {} {} {} {} {} {}",
                if e.kind == EntityKind::Class {
                    "C"
                } else {
                    "F"
                },
                e.qualname,
                e.decorated_start_line,
                e.start_line,
                e.end_line,
                e.conditional as u8,
                e.is_async as u8
            );
        }
        let w: Vec<&str> = m
            .walk_order
            .iter()
            .map(|&i| m.entities[i].qualname.as_str())
            .collect();
        if w.is_empty() {
            println!("W");
        } else {
            println!("W {}", w.join(" "));
        }
        for r in &m.imports {
            println!("I {} {}", r.start, r.end);
        }
        let mut ds = m.class_docstrings.clone();
        // python order: ast.walk order of classes
        let _ = &mut ds;
        for r in &ds {
            println!("D {} {}", r.start, r.end);
        }
        let n = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .lines()
            .count();
        for line in 1..=n + 1 {
            if let Some(u) = m.gold_unit_at(line) {
                let d = match &u {
                    GoldUnit::Init { class } => format!("class: {class}"),
                    GoldUnit::Method { class, method } => format!("function: {class}.{method}"),
                    GoldUnit::Function { name } => format!("function: {name}"),
                };
                println!("U {line} {d}");
            }
        }
    }
}
