//! The reference in `docs/` stays true to the CLI: every flag that `navbench
//! <subcommand> --help` lists, for every subcommand (nested ones included), appears in
//! some page under `docs/` (every `*.md` there, whoever added it).

use std::collections::BTreeSet;
use std::path::Path;

mod common;

use common::navbench;

/// `navbench ARGS --help`'s text.
fn help(args: &[String]) -> String {
    let o = navbench().args(args).arg("--help").output().unwrap();
    assert!(o.status.success(), "navbench {args:?} --help failed");
    String::from_utf8(o.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                break;
            }
            let name = line.split_whitespace().next().unwrap_or_default();
            // A description's continuation line is indented further than a name.
            if line.starts_with("  ") && !line.starts_with("   ") && name != "help" {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The long flags a help text's options list (`--name`), without `--help`/`--version`.
fn flags(text: &str) -> BTreeSet<String> {
    let re = regex::Regex::new(r"(?m)^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)").unwrap();
    re.captures_iter(text)
        .map(|c| c[1].to_string())
        .filter(|f| f != "--help" && f != "--version")
        .collect()
}

/// Every `docs/*.md`, concatenated.
fn docs() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let mut text = String::new();
    let mut pages = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            text.push_str(&std::fs::read_to_string(&p).unwrap());
            text.push('\n');
            pages += 1;
        }
    }
    assert!(pages >= 10, "docs/ has {pages} pages");
    text
}

/// True when `flag` stands in `text` as a whole flag (`--max` is not `--max-files`).
fn mentions(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        !text[i + flag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_flag_of_every_subcommand_is_in_the_docs() {
    let docs = docs();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    let mut checked = 0;
    let mut missing = Vec::new();
    while let Some(path) = todo.pop() {
        let text = help(&path);
        for sub in subcommands(&text) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        for f in flags(&text) {
            checked += 1;
            if !mentions(&docs, &f) {
                missing.push(format!("navbench {} {f}", path.join(" ")));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} flags found: is the help parsed?"
    );
    assert!(
        missing.is_empty(),
        "flags in --help but in no page under docs/ (document them there):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_help_parser_finds_subcommands_and_flags() {
    let text = "Usage: x\n\nCommands:\n  run     Run it\n          more words\n  dataset Build\n  help    Print\n\nOptions:\n  -o, --out <DIR>  where\n      --max-files <N>\n          long text --not-a-flag\n  -h, --help\n";
    assert_eq!(subcommands(text), ["run", "dataset"]);
    assert_eq!(
        flags(text),
        ["--max-files", "--out"].map(String::from).into()
    );
    assert!(mentions("use --max 3", "--max") && !mentions("--max-files", "--max"));
}
