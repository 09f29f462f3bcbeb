//! Two general rules every scripted variant must keep, on repositories the tests write
//! (tempfile + git2) and the real binaries (`navbench run`, the servers):
//! - a method of a nested type gets gold's id in every language (Python nested
//!   classes, Java static nested classes, TypeScript classes in a namespace, Rust
//!   `impl`s in a `mod`);
//! - source ranks above the build output (`dist/` bundles that copy `lib/`), the
//!   vendored code and the tests of a JavaScript repository.
//!
//! The variants are text, codegraph and bm25 (the retrieval variants need a model
//! download; their ids come from the same `policy::entities` mapping the text and
//! codegraph rows exercise here).

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::navbench;
use common::repo::read_csv;

const VARIANTS: &str = "text,codegraph,bm25";

/// Commits `files` as the base (HEAD) of a new repository in `dir`; returns its id.
fn commit_base(dir: &Path, files: &[(&str, String)]) -> git2::Oid {
    let repo = git2::Repository::init(dir).unwrap();
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    navbench::checkout::commit::commit_files(&repo, &[], &files, &sig, "base", Some("HEAD"))
        .unwrap()
}

/// The unified diff (as `git diff` writes it) of `files` with `edit` applied to `path`.
fn patch_of(
    dir: &Path,
    base: git2::Oid,
    files: &[(&str, String)],
    path: &str,
    edit: (&str, &str),
) -> String {
    let repo = git2::Repository::open(dir).unwrap();
    let edited: Vec<(&str, String)> = files
        .iter()
        .map(|(p, c)| {
            if *p == path {
                assert!(c.contains(edit.0), "{:?} not in {p}", edit.0);
                (*p, c.replacen(edit.0, edit.1, 1))
            } else {
                (*p, c.clone())
            }
        })
        .collect();
    let bytes: Vec<(&str, &[u8])> = edited.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    let fix = navbench::checkout::commit::commit_files(&repo, &[base], &bytes, &sig, "fix", None)
        .unwrap();
    let old = repo.find_commit(base).unwrap().tree().unwrap();
    let new = repo.find_commit(fix).unwrap().tree().unwrap();
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .unwrap();
    let mut text = String::new();
    diff.print(git2::DiffFormat::Patch, |_, _, line| {
        let origin = line.origin();
        if matches!(origin, '+' | '-' | ' ') {
            text.push(origin);
        }
        text.push_str(std::str::from_utf8(line.content()).unwrap());
        true
    })
    .unwrap();
    text
}

fn instance(id: &str, commit: git2::Oid, issue: &str, patch: &str) -> String {
    serde_json::json!({
        "instance_id": id,
        "repo": "acme/books",
        "base_commit": commit.to_string(),
        "problem_statement": issue,
        "patch": patch,
    })
    .to_string()
}

/// Runs the variants on `instances` against the repository in `repo`; returns the
/// rows of `instances.csv` by (instance, variant).
fn run(repo: &Path, instances: &[String]) -> HashMap<(String, String), HashMap<String, String>> {
    let work = tempfile::tempdir().unwrap();
    let ds = work.path().join("ds.jsonl");
    std::fs::write(&ds, instances.join("\n") + "\n").unwrap();
    let out = navbench()
        .args(["run", "--dataset"])
        .arg(&ds)
        .arg("--repo-url")
        .arg(repo)
        .arg("--cache")
        .arg(work.path().join("cache"))
        .arg("--out")
        .arg(work.path().join("out"))
        .args(["--variants", VARIANTS])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "navbench run failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    read_csv(&work.path().join("out/instances.csv"))
        .into_iter()
        .map(|r| ((r["instance_id"].clone(), r["variant"].clone()), r))
        .collect()
}

fn list(cell: &str) -> Vec<&str> {
    cell.split(';').filter(|s| !s.is_empty()).collect()
}

/// One language's case: (file, text, edit of the nested method, issue, gold function
/// id, gold module id).
type NestedCase = (
    &'static str,
    String,
    (&'static str, &'static str),
    &'static str,
    &'static str,
    &'static str,
);

/// Per language, a method of a nested type.
fn nested_cases() -> Vec<NestedCase> {
    vec![
        (
            "books/ledger.py",
            "class Ledger:\n    def total(self):\n        return 0\n\n    class Entry:\n        def reconcile_balance(self, amount):\n            return amount - 1\n".to_string(),
            ("return amount - 1", "return amount"),
            "reconcile_balance() of a ledger entry subtracts one from the amount\n\nCalling `Ledger.Entry.reconcile_balance(10)` returns 9; reconcile_balance should return the amount unchanged.",
            "books/ledger.py:Ledger",
            "books/ledger.py:Ledger",
        ),
        (
            "sdk/src/main/java/books/Journal.java",
            "package books;\n\npublic class Journal {\n    public int size() {\n        return 0;\n    }\n\n    static class Posting {\n        int applyRefund(int cents) {\n            return cents - 1;\n        }\n    }\n}\n".to_string(),
            ("return cents - 1;", "return cents;"),
            "applyRefund of a journal posting loses a cent\n\n`Journal.Posting.applyRefund(100)` returns 99; applyRefund must return the refund unchanged.",
            "sdk/src/main/java/books/Journal.java:Journal.Posting.applyRefund",
            "sdk/src/main/java/books/Journal.java:Journal.Posting",
        ),
        (
            "web/src/invoice.ts",
            "export namespace Billing {\n  export class Invoice {\n    splitInvoice(parts: number): number {\n      return parts - 1;\n    }\n  }\n}\n".to_string(),
            ("return parts - 1;", "return parts;"),
            "splitInvoice gives one part too few\n\n`new Billing.Invoice().splitInvoice(3)` returns 2; splitInvoice should return 3 parts.",
            "web/src/invoice.ts:Billing.Invoice.splitInvoice",
            "web/src/invoice.ts:Billing.Invoice",
        ),
        (
            "cli/src/batches.rs",
            "mod batching {\n    pub struct Batcher;\n\n    impl Batcher {\n        pub fn merge_batches(&self, n: usize) -> usize {\n            n - 1\n        }\n    }\n}\n".to_string(),
            ("            n - 1\n", "            n\n"),
            "merge_batches drops a batch\n\n`Batcher::merge_batches(4)` returns 3; merge_batches should keep every batch.",
            "cli/src/batches.rs:batching.Batcher.merge_batches",
            "cli/src/batches.rs:batching.Batcher",
        ),
    ]
}

#[test]
fn nested_type_methods_get_gold_ids_in_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let cases = nested_cases();
    let files: Vec<(&str, String)> = cases.iter().map(|c| (c.0, c.1.clone())).collect();
    let base = commit_base(dir.path(), &files);
    let instances: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let patch = patch_of(dir.path(), base, &files, c.0, c.2);
            instance(&format!("books-{i}"), base, c.3, &patch)
        })
        .collect();
    let rows = run(dir.path(), &instances);
    for (i, c) in cases.iter().enumerate() {
        let id = format!("books-{i}");
        for variant in VARIANTS.split(',') {
            let row = &rows[&(id.clone(), variant.to_string())];
            let what = format!("{} × {variant}: {row:?}", c.0);
            assert_eq!(row["status"], "ok", "{what}");
            assert_eq!(list(&row["gold_functions"]), [c.4], "{what}");
            let functions = list(&row["pred_functions"]);
            let modules = list(&row["pred_modules"]);
            assert_eq!(functions.first(), Some(&c.4), "{what}");
            assert_eq!(modules.first(), Some(&c.5), "{what}");
        }
    }
}

#[test]
fn source_ranks_above_bundles_vendored_code_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    let source = "'use strict';\n\n/**\n * Parses a duration such as \"1h30m\" into seconds.\n */\nfunction parseDuration(text) {\n  const match = /^(\\d+)h(\\d+)m$/.exec(text);\n  return Number(match[1]) * 3600 + Number(match[2]);\n}\n\nmodule.exports = { parseDuration };\n";
    let bundle = format!(
        "(function (root) {{\n{}\n  root.timing = {{ parseDuration: parseDuration }};\n}})(this);\n",
        source.replace("module.exports = { parseDuration };\n", "")
    );
    let files: Vec<(&str, String)> = vec![
        ("lib/duration.js", source.to_string()),
        ("lib/index.js", "module.exports = require('./duration');\n".to_string()),
        ("dist/timing.js", bundle.clone()),
        ("dist/timing.esm.js", bundle.replace("(this)", "(globalThis)")),
        ("dist/timing.min.js", bundle.replace('\n', " ")),
        ("vendor/duration-shim.js", source.replace("parseDuration", "parseDurationShim")),
        (
            "test/duration.spec.js",
            "const { parseDuration } = require('../lib/duration');\n\nit('parseDuration parses minutes into seconds', () => {\n  expect(parseDuration('1h30m')).toBe(5400);\n});\n".to_string(),
        ),
        ("package.json", "{\"name\": \"timing\", \"main\": \"lib/index.js\"}\n".to_string()),
    ];
    let base = commit_base(dir.path(), &files);
    let patch = patch_of(
        dir.path(),
        base,
        &files,
        "lib/duration.js",
        ("Number(match[2]);", "Number(match[2]) * 60;"),
    );
    let issue = "parseDuration counts minutes as seconds\n\n`parseDuration('1h30m')` returns 3630 seconds instead of 5400: the minutes of the duration are added as seconds. parseDuration should multiply the minutes by 60.";
    let rows = run(dir.path(), &[instance("timing-1", base, issue, &patch)]);
    for variant in VARIANTS.split(',') {
        let row = &rows[&("timing-1".to_string(), variant.to_string())];
        let what = format!("{variant}: {row:?}");
        assert_eq!(row["status"], "ok", "{what}");
        assert_eq!(
            list(&row["pred_files"]).first(),
            Some(&"lib/duration.js"),
            "{what}"
        );
        assert_eq!(
            list(&row["pred_functions"]).first(),
            Some(&"lib/duration.js:parseDuration"),
            "{what}"
        );
    }
}
