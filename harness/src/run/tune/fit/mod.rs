//! Fitted rankers for the scripted policies: features extracted once, then fitted and
//! judged leave-one-repository-out in seconds.
//!
//! Two steps, both under `navbench tune`:
//! 1. `--features` ([`extract`]): every instance × variant played once; each
//!    candidate of the policy's pool written with its features to `features.csv`.
//! 2. `--fit DIR,…` ([`fit_tables`]): the feature tables of one or more runs (any
//!    datasets: tuning, polyglot, dev) read back ([`read`]); per variant and level, a
//!    pairwise linear model ([`learn`]) fitted on everything (in sample) and once per
//!    repository on the others (leave-one-repository-out); `fit.md` compares both with
//!    the hand-weighted order and untuned `bm25`, per dataset; `fitted/<variant>.json`
//!    holds the model fitted on everything, with its provenance, ready to copy to
//!    `harness/src/policy/fitted/`.

pub mod extract;
pub mod learn;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;

use crate::policy::fitted::{Model, Provenance, features};
use learn::{Candidate, Group, Played};

/// Every played instance of the tables under `dirs`, by variant.
pub fn read(dirs: &[PathBuf]) -> anyhow::Result<BTreeMap<String, Vec<Played>>> {
    let mut out: BTreeMap<String, Vec<Played>> = BTreeMap::new();
    for dir in dirs {
        let mut played: HashMap<(String, String), Played> = HashMap::new();
        let mut order: Vec<(String, String)> = Vec::new();
        let ip = dir.join("feature_instances.csv");
        let mut r = csv::Reader::from_path(&ip).with_context(|| {
            format!(
                "cannot read {}: write it with `navbench tune --features --out {}`",
                ip.display(),
                dir.display()
            )
        })?;
        for rec in r.records() {
            let rec = rec.with_context(|| format!("{}: a broken row", ip.display()))?;
            if rec.get(4) != Some("ok") {
                continue;
            }
            let n = |i: usize| -> anyhow::Result<usize> {
                (rec.get(i).unwrap_or("").parse())
                    .with_context(|| format!("{}: gold count is not a number", ip.display()))
            };
            let key = (rec[3].to_string(), rec[2].to_string());
            let mut levels: [Group; 3] = Default::default();
            for (l, g) in levels.iter_mut().enumerate() {
                g.n_gold = n(5 + l)?;
            }
            order.push(key.clone());
            played.insert(
                key,
                Played {
                    dataset: rec[0].to_string(),
                    repo: rec[1].to_string(),
                    instance: rec[2].to_string(),
                    levels,
                },
            );
        }
        let fp = dir.join("features.csv");
        let mut r = csv::Reader::from_path(&fp).with_context(|| {
            format!(
                "cannot read {}: rerun `navbench tune --features`",
                fp.display()
            )
        })?;
        let head = r.headers()?.clone();
        let names: Vec<&str> = head.iter().skip(8).collect();
        if names != features::NAMES {
            anyhow::bail!(
                "{} has features [{}], this navbench computes [{}]: rerun `navbench tune --features`",
                fp.display(),
                names.join(", "),
                features::NAMES.join(", ")
            );
        }
        for rec in r.records() {
            let rec = rec.with_context(|| format!("{}: a broken row", fp.display()))?;
            let Some(p) = played.get_mut(&(rec[3].to_string(), rec[2].to_string())) else {
                continue;
            };
            let level = match &rec[4] {
                "file" => 0,
                "module" => 1,
                _ => 2,
            };
            let mut x = [0.0; features::N];
            for (k, slot) in x.iter_mut().enumerate() {
                *slot = rec[8 + k].parse().with_context(|| {
                    format!(
                        "{}: feature {} is not a number",
                        fp.display(),
                        features::NAMES[k]
                    )
                })?;
            }
            p.levels[level].candidates.push(Candidate {
                hand_rank: rec[6].parse().ok(),
                label: &rec[7] == "1",
                x,
            });
        }
        for key in order {
            if let Some(p) = played.remove(&key) {
                out.entry(key.0).or_default().push(p);
            }
        }
    }
    Ok(out)
}

/// What `--fit` produced: the report and the models.
pub struct Fitted {
    pub markdown: String,
    pub models: Vec<Model>,
    /// Variants whose leave-one-repository-out objective beats the hand-weighted one.
    pub better: Vec<String>,
    pub fit_seconds: f64,
}

/// The three headline figures and their mean, as a table cell run.
fn cells(h: [Option<f64>; 3]) -> String {
    let vals: Vec<f64> = h.iter().flatten().copied().collect();
    let obj = match vals.is_empty() {
        true => 0.0,
        false => vals.iter().sum::<f64>() / vals.len() as f64,
    };
    let f = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.1}"));
    format!("{} | {} | {} | {obj:.1}", f(h[0]), f(h[1]), f(h[2]))
}

fn objective(h: [Option<f64>; 3]) -> f64 {
    let vals: Vec<f64> = h.iter().flatten().copied().collect();
    vals.iter().sum::<f64>() / vals.len().max(1) as f64
}

/// A feature directory as the models' provenance names it: its last component, so a
/// committed model says which tables it was fitted on without naming a path of the
/// machine that fitted it.
pub fn dir_name(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Fits every variant but `bm25` (the untuned reference) in `data` (see the module
/// doc); `command` is recorded in the models' provenance, and each of `dirs` by its
/// name ([`dir_name`]).
pub fn fit_tables(data: &BTreeMap<String, Vec<Played>>, dirs: &[PathBuf], command: &str) -> Fitted {
    let t0 = Instant::now();
    let mut md = String::from(
        "# Fitted rankers (`navbench tune --fit`)\n\n\
         Acc % file@5 | module@10 | function@10 | their mean. *hand*: the policy's own order; \
         *in sample*: a model fitted on every instance; *LOO*: each repository's instances \
         ordered by the model fitted on the other repositories.\n\n\
         | variant | dataset | instances | order | file@5 | mod@10 | fn@10 | objective |\n\
         |---|---|---:|---|---:|---:|---:|---:|\n",
    );
    let (mut models, mut better) = (Vec::new(), Vec::new());
    let datasets = |played: &[Played]| -> Vec<String> {
        let mut v: Vec<String> = played.iter().map(|p| p.dataset.clone()).collect();
        v.dedup();
        v.sort();
        v.dedup();
        v
    };
    if let Some(bm25) = data.get("bm25") {
        for ds in datasets(bm25) {
            let rows: Vec<&Played> = bm25.iter().filter(|p| p.dataset == ds).collect();
            let h = learn::headline(&rows, |p, l| learn::hand_order(&p.levels[l]));
            md += &format!(
                "| bm25 | {ds} | {} | untuned | {} |\n",
                rows.len(),
                cells(h)
            );
        }
    }
    let mut verdicts = String::new();
    for (variant, played) in data.iter().filter(|(v, _)| *v != "bm25") {
        let all: Vec<&Played> = played.iter().collect();
        let full = [0, 1, 2].map(|l| learn::fit(&all, l));
        let folds = learn::loo_weights(&all);
        let loo_order = |p: &Played, l: usize| learn::model_order(&p.levels[l], &folds[&p.repo][l]);
        let mut sets: Vec<(String, Vec<&Played>)> = datasets(played)
            .into_iter()
            .map(|ds| {
                let rows = all.iter().copied().filter(|p| p.dataset == ds).collect();
                (ds, rows)
            })
            .collect();
        sets.push(("all".to_string(), all.clone()));
        let mut totals = None;
        for (ds, rows) in &sets {
            let hand = learn::headline(rows, |p, l| learn::hand_order(&p.levels[l]));
            let ins = learn::headline(rows, |p, l| learn::model_order(&p.levels[l], &full[l]));
            let loo = learn::headline(rows, loo_order);
            for (name, h) in [
                ("hand", hand),
                ("fitted, in sample", ins),
                ("fitted, LOO", loo),
            ] {
                md += &format!(
                    "| {variant} | {ds} | {} | {name} | {} |\n",
                    rows.len(),
                    cells(h)
                );
            }
            if ds == "all" {
                totals = Some((objective(hand), objective(loo)));
            }
        }
        let (hand_all, loo_all) = totals.unwrap_or_default();
        let keep = loo_all > hand_all;
        verdicts += &format!(
            "- {variant}: leave-one-repository-out {loo_all:.1} against hand-weighted {hand_all:.1} on all {} instances: {}\n",
            all.len(),
            if keep {
                "the fitted ranker does better"
            } else {
                "the hand-weighted order stays"
            }
        );
        if keep {
            better.push(variant.clone());
        }
        let repos: std::collections::BTreeSet<&str> = all.iter().map(|p| p.repo.as_str()).collect();
        let [file, module, function] = full;
        models.push(Model {
            variant: variant.clone(),
            provenance: Provenance {
                data: dirs
                    .iter()
                    .map(|d| format!("{}/features.csv", dir_name(d)))
                    .collect(),
                command: command.to_string(),
                date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
                navbench_commit: navbench_commit(),
                instances: all.len(),
                repositories: repos.len(),
            },
            features: features::NAMES.iter().map(|s| s.to_string()).collect(),
            file,
            module,
            function,
        });
    }
    md += "\n";
    md += &verdicts;
    Fitted {
        markdown: md,
        models,
        better,
        fit_seconds: t0.elapsed().as_secs_f64(),
    }
}

/// The commit of the working directory's repository, or `unknown`.
fn navbench_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Writes `fit.md` and `fitted/<variant>.json` under `out`.
pub fn write(out: &Path, fitted: &Fitted) -> anyhow::Result<()> {
    let dir = out.join("fitted");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for m in &fitted.models {
        let p = dir.join(format!("{}.json", m.variant));
        let text = serde_json::to_string_pretty(m)?;
        std::fs::write(&p, text + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    let p = out.join("fit.md");
    std::fs::write(&p, &fitted.markdown)
        .with_context(|| format!("cannot write {}", p.display()))?;
    Ok(())
}
