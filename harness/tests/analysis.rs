//! After the run: the real `navbench` binary runs the real `navbench-text` server on a
//! git repository made here, then `compare`, `merge`, `run --shard`, `report` and
//! `mcp-config` work on what it wrote — including a deliberately worsened policy that
//! `compare` must catch, and the refusals a user meets.
//!
//! Needs every binary built (`cargo test --workspace` does it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::{APP, PATCH, navbench};
use navbench::data::dataset::Locations;
use navbench::record::output::{InstanceRow, RunOutput, read_info, read_instance_rows};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// A repository, a dataset of `n` instances of the same bug told differently, a work dir.
struct Bench {
    _repo: tempfile::TempDir,
    repo_path: PathBuf,
    work: tempfile::TempDir,
    dataset: PathBuf,
    ids: Vec<String>,
}

fn bench(n: usize) -> Bench {
    let repo = tempfile::tempdir().unwrap();
    let r = git2::Repository::init(repo.path()).unwrap();
    for (p, c) in [
        ("shop/__init__.py", ""),
        ("shop/store.py", APP),
        (
            "shop/report.py",
            "from shop.store import Store, format_price\n\n\ndef report(path):\n    s = Store(path)\n    s.load()\n    return format_price(s.total_price())\n",
        ),
        ("README.md", "# shop\n"),
    ] {
        let full = repo.path().join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, c).unwrap();
    }
    let mut index = r.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    let tree = r.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    let commit = r
        .commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap()
        .to_string();
    let statements = [
        "`Store.total_price()` ignores quantity\n\nWhen an item has quantity 3, total_price counts it once.",
        "The report total is wrong when items have a quantity; report() shows the price of one.",
        "total_price in shop/store.py should multiply by quantity",
    ];
    let ids: Vec<String> = (1..=n).map(|i| format!("acme__shop-{i}")).collect();
    let lines: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            serde_json::json!({
                "instance_id": id,
                "repo": "acme/shop",
                "base_commit": commit,
                "problem_statement": statements[i % statements.len()],
                "patch": PATCH,
            })
            .to_string()
        })
        .collect();
    let work = tempfile::tempdir().unwrap();
    let dataset = work.path().join("shop.jsonl");
    std::fs::write(&dataset, lines.join("\n") + "\n").unwrap();
    Bench {
        repo_path: repo.path().to_path_buf(),
        _repo: repo,
        work,
        dataset,
        ids,
    }
}

impl Bench {
    fn dir(&self, name: &str) -> PathBuf {
        self.work.path().join(name)
    }

    fn run(&self, out: &str, extra: &[&str]) -> Output {
        navbench()
            .args(["run", "--variants", "text", "--dataset"])
            .arg(&self.dataset)
            .arg("--repo-url")
            .arg(&self.repo_path)
            .arg("--cache")
            .arg(self.dir("cache"))
            .arg("--out")
            .arg(self.dir(out))
            .args(extra)
            .output()
            .unwrap()
    }

    fn run_ok(&self, out: &str, extra: &[&str]) -> PathBuf {
        let o = self.run(out, extra);
        assert!(o.status.success(), "{}", show(&o));
        self.dir(out)
    }
}

fn copy_run(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["calls.csv", "instances.csv", "summary.csv", "run.json"] {
        if from.join(f).exists() {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
    }
}

/// Rewrites a run's instances.csv through `edit`.
fn rewrite_rows(dir: &Path, edit: impl Fn(&mut Vec<InstanceRow>)) {
    let mut rows = read_instance_rows(&dir.join("instances.csv")).unwrap();
    edit(&mut rows);
    std::fs::remove_file(dir.join("instances.csv")).unwrap();
    let out = RunOutput::open(dir).unwrap();
    for r in &rows {
        out.write_instance(r).unwrap();
    }
}

/// What a text policy that drops its top answer at every level would have scored.
fn drop_top_answer(r: &mut InstanceRow) {
    if r.status != "ok" {
        return;
    }
    let gold_loc = Locations::from_edit_functions(&r.gold_functions);
    let gold = Locations {
        files: r.gold_files.clone(),
        ..gold_loc
    };
    for list in [
        &mut r.pred_files,
        &mut r.pred_modules,
        &mut r.pred_functions,
    ] {
        if !list.is_empty() {
            list.remove(0);
        }
    }
    let pred = Locations {
        files: r.pred_files.clone(),
        modules: r.pred_modules.clone(),
        functions: r.pred_functions.clone(),
    };
    r.metrics = navbench::run::pipeline::score_all(&gold, &pred).unwrap();
}

fn compare(base: &Path, new: &Path, extra: &[&str]) -> Output {
    navbench()
        .arg("compare")
        .arg(base)
        .arg(new)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn compare_passes_identical_runs_and_catches_a_worsened_policy() {
    let b = bench(3);
    let base = b.run_ok("base", &[]);
    let rows = read_instance_rows(&base.join("instances.csv")).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter().any(|r| r.metrics.first() == Some(&1.0)),
        "the text policy should find some culprit first: {rows:?}"
    );

    // A second run of the same policy: deterministic accuracy, so exact comparison passes
    // with CI's loose cost ratios.
    let again = b.run_ok("again", &[]);
    let ci = [
        "--max-acc-drop",
        "0",
        "--max-latency-ratio",
        "5",
        "--max-token-ratio",
        "1.5",
    ];
    let o = compare(&base, &again, &ci);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(text(&o.stdout).contains("no regression"), "{}", show(&o));
    assert!(text(&o.stdout).contains("all 28 unchanged"), "{}", show(&o));

    // The policy drops its top answer: compare must fail naming metric, variant, instance.
    let worse = b.dir("worse");
    copy_run(&base, &worse);
    rewrite_rows(&worse, |rows| rows.iter_mut().for_each(drop_top_answer));
    let o = compare(&base, &worse, &ci);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = text(&o.stderr);
    let found_first: Vec<&InstanceRow> = rows
        .iter()
        .filter(|r| r.metrics.first() == Some(&1.0))
        .collect();
    let line = err
        .lines()
        .find(|l| l.starts_with("regression: text: file_acc_1 dropped"))
        .unwrap_or_else(|| panic!("{}", show(&o)));
    for r in &found_first {
        assert!(line.contains(&r.instance_id), "{line}");
    }
    assert!(line.contains("found → missed"), "{line}");
    assert!(
        text(&o.stdout).contains("metrics that dropped"),
        "{}",
        show(&o)
    );

    // The same drop passes when the threshold allows it.
    let o = compare(&base, &worse, &["--max-acc-drop", "100"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
}

#[test]
fn compare_names_cost_regressions_and_variant_changes() {
    let b = bench(2);
    let base = b.run_ok("base", &[]);

    // Tokens tripled on one instance.
    let costly = b.dir("costly");
    copy_run(&base, &costly);
    rewrite_rows(&costly, |rows| {
        rows[1].response_tokens *= 10;
    });
    let o = compare(&base, &costly, &["--max-token-ratio", "1.5"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = text(&o.stderr);
    assert!(
        err.contains("regression: text: response_tokens per instance rose")
            && err.contains("acme__shop-2 (×10.00)"),
        "{}",
        show(&o)
    );
    // Without the threshold it is reported, not failed.
    let o = compare(&base, &costly, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));

    // A variant only in the new run is noted; one missing from it fails.
    let extra = b.dir("extra");
    copy_run(&base, &extra);
    rewrite_rows(&extra, |rows| {
        let more: Vec<InstanceRow> = rows
            .iter()
            .map(|r| InstanceRow {
                variant: "graph".into(),
                ..r.clone()
            })
            .collect();
        rows.extend(more);
    });
    let o = compare(&base, &extra, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(text(&o.stdout).contains("graph: new variant, no baseline"));
    let o = compare(&extra, &base, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        text(&o.stderr).contains(
            "variant 'graph' is in the baseline (2 instance(s)) but missing from the new run"
        ),
        "{}",
        show(&o)
    );
}

#[test]
fn compare_refuses_what_cannot_be_compared() {
    let b = bench(1);
    let base = b.run_ok("base", &[]);

    let other = b.dir("other");
    copy_run(&base, &other);
    let mut info = read_info(&other).unwrap().unwrap();
    info.dataset = "dev".into();
    std::fs::write(
        other.join("run.json"),
        serde_json::to_string(&info).unwrap(),
    )
    .unwrap();
    let o = compare(&base, &other, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        text(&o.stderr).contains("refused: refusing to compare runs of different datasets"),
        "{}",
        show(&o)
    );

    let disjoint = b.dir("disjoint");
    copy_run(&base, &disjoint);
    rewrite_rows(&disjoint, |rows| {
        rows[0].instance_id = "acme__shop-99".into()
    });
    let o = compare(&base, &disjoint, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(text(&o.stderr).contains("no instance × variant in common"));

    let o = compare(&base, &b.dir("nope"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(text(&o.stderr).contains("not found"), "{}", show(&o));

    let o = compare(&base, &base, &["--max-latency-ratio", "0.5"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
}

fn ids_of(dir: &Path) -> Vec<String> {
    read_instance_rows(&dir.join("instances.csv"))
        .unwrap()
        .into_iter()
        .map(|r| r.instance_id)
        .collect()
}

#[test]
fn shards_partition_the_run_and_merge_back_into_it() {
    let b = bench(7);
    let full = b.run_ok("full", &[]);
    let shards: Vec<PathBuf> = (1..=3)
        .map(|i| b.run_ok(&format!("s{i}"), &["--shard", &format!("{i}/3")]))
        .collect();
    // Disjoint, and together the whole dataset.
    let mut all: Vec<String> = Vec::new();
    for s in &shards {
        let info = read_info(s).unwrap().unwrap();
        assert_eq!(info.shard.map(|x| x.count), Some(3));
        assert_eq!(
            info.dataset_fingerprint,
            read_info(&full).unwrap().unwrap().dataset_fingerprint
        );
        all.extend(ids_of(s));
    }
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "shards overlap: {all:?}");
    let want: BTreeSet<&String> = b.ids.iter().collect();
    assert_eq!(unique, want);
    // Stable: the same shard again selects the same instances.
    let again = b.run_ok("s1-again", &["--shard", "1/3"]);
    assert_eq!(ids_of(&again), ids_of(&shards[0]));

    let merged = b.dir("merged");
    let o = navbench()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        text(&o.stdout).contains("7 instance row(s)"),
        "{}",
        show(&o)
    );
    let mut got = ids_of(&merged);
    got.sort();
    let mut want = b.ids.clone();
    want.sort();
    assert_eq!(got, want);
    assert!(merged.join("summary.csv").exists() && merged.join("calls.csv").exists());
    // The merged run is the full run, as far as accuracy goes.
    let o = compare(&full, &merged, &["--max-acc-drop", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        text(&o.stdout).contains("7 paired instance(s)"),
        "{}",
        show(&o)
    );

    // Refusals: a shard twice, a gap, a full run among shards.
    let refuse = |dirs: &[&PathBuf], out: &str, want: &str| {
        let o = navbench()
            .arg("merge")
            .args(dirs)
            .arg("--out")
            .arg(b.dir(out))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        assert!(
            text(&o.stderr).contains(want),
            "want '{want}': {}",
            show(&o)
        );
    };
    refuse(&[&shards[0], &shards[0]], "m1", "shard 1/3 is given twice");
    refuse(&[&shards[0], &shards[1]], "m2", "missing shard(s) 3/3");
    refuse(
        &[&shards[0], &full],
        "m3",
        "mismatched settings: shard count",
    );
    refuse(&[&shards[0], &again], "m4", "shard 1/3 is given twice");

    let o = b.run("bad", &["--shard", "4/3"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(text(&o.stderr).contains("I/N"), "{}", show(&o));
}

#[test]
fn report_writes_tables_and_plots_reproducibly() {
    let b = bench(3);
    let base = b.run_ok("base", &[]);
    let worse = b.dir("worse");
    copy_run(&base, &worse);
    rewrite_rows(&worse, |rows| rows.iter_mut().for_each(drop_top_answer));

    let report = |out: &str| {
        let o = navbench()
            .arg("report")
            .arg(&base)
            .arg(&worse)
            .arg("--out")
            .arg(b.dir(out))
            .args(["--resamples", "2000"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        b.dir(out)
    };
    let r1 = report("r1");
    let md = std::fs::read_to_string(r1.join("report.md")).unwrap();
    // The same variant in two runs is told apart and paired.
    assert!(
        md.contains("**text@base**") && md.contains("**text@worse**"),
        "{md}"
    );
    assert!(
        md.contains("### text@worse vs text@base (3 instances)"),
        "{md}"
    );
    assert!(md.contains("McNemar p"), "{md}");
    assert!(
        md.contains("## Latency per tool") && md.contains("`grep`"),
        "{md}"
    );
    assert!(md.contains("acme/shop"), "{md}");
    let csv = std::fs::read_to_string(r1.join("report.csv")).unwrap();
    assert!(
        csv.contains("paired,text@base,text@worse,,,file_acc_1,3,"),
        "{csv}"
    );
    assert!(
        csv.contains("tool,text@base,,,grep,latency_ms_p95,"),
        "{csv}"
    );
    for stem in [
        "accuracy_vs_tokens",
        "latency_per_tool",
        "accuracy_per_repo",
    ] {
        let png = std::fs::read(r1.join(format!("{stem}.png"))).unwrap();
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 5_000,
            "{stem}"
        );
        let svg = std::fs::read_to_string(r1.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("<text"), "{stem}");
    }
    // Fixed seed: the same runs give the same report.
    let r2 = report("r2");
    assert_eq!(std::fs::read_to_string(r2.join("report.csv")).unwrap(), csv);
    assert_eq!(
        std::fs::read_to_string(r2.join("report.md")).unwrap(),
        md.replace(&r1.display().to_string(), &r2.display().to_string())
    );

    let o = navbench()
        .args(["report"])
        .arg(b.dir("nope"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("not found"), "{}", show(&o));
}

#[test]
fn mcp_config_launches_the_harness_servers() {
    let root = tempfile::tempdir().unwrap();
    let root_abs = std::fs::canonicalize(root.path()).unwrap();
    let o = navbench()
        .args(["mcp-config", "--format", "claude-desktop", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text_server = &v["mcpServers"]["navbench-text"];
    assert!(
        text_server["command"]
            .as_str()
            .unwrap()
            .ends_with("navbench-text"),
        "{v}"
    );
    assert_eq!(
        text_server["args"],
        serde_json::json!(["--root", root_abs.to_string_lossy()])
    );

    let o = navbench()
        .args([
            "mcp-config",
            "--variant",
            "text",
            "--format",
            "claude-code",
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        text(&o.stdout).contains("claude mcp add navbench-text -- "),
        "{}",
        show(&o)
    );

    let o = navbench()
        .args(["mcp-config", "--variant", "nosuch"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("unknown variant 'nosuch'"),
        "{}",
        show(&o)
    );
}
