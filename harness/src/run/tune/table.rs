//! What `navbench tune` writes at the end (`scores.csv`, every instance under every
//! setting, is written as the run goes: [`super::progress`]): `settings.csv` (each setting's in-sample means), `loo.csv` (the
//! leave-one-repository-out table, fold by fold) and `tune.md` (the same for a
//! reader: per variant the in-sample and held-out figures, the folds, and what each
//! constant is worth). Accuracies are percentages with one decimal, as `report` has
//! them.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use super::VariantScores;
use super::loo::{self, Accs, COLUMNS, Loo, Scored};
use super::progress::pct;

/// Writes the three tables into `dir`; returns `tune.md`'s text.
pub fn write_all(dir: &Path, dataset: &str, variants: &[VariantScores]) -> anyhow::Result<String> {
    let mut settings = writer(dir, "settings.csv", &["variant", "setting", "instances"])?;
    let mut folds = writer(
        dir,
        "loo.csv",
        &["variant", "figure", "repo", "setting", "instances"],
    )?;
    let mut md = String::new();
    let _ = writeln!(md, "# Tuning and leave-one-repository-out: {dataset}\n");
    let _ = writeln!(
        md,
        "Objective: the mean of file Acc@5, module Acc@10 and function Acc@10. Settings: \
         the shipped defaults, then each constant alone switched off, halved and doubled \
         (counts halved and doubled). Leave-one-repository-out: for each repository, the \
         setting best on the others is scored on it; the held-out row pools every \
         instance under its own fold's choice.\n"
    );
    for vs in variants {
        let n = vs.settings.len();
        let all: Vec<&Scored> = vs.rows.iter().collect();
        for (i, s) in vs.settings.iter().enumerate() {
            let m = loo::means(&all, i);
            let head = [vs.name.clone(), s.label.clone(), all.len().to_string()];
            record(&mut settings, &head, &m, loo::objective(&m))?;
        }
        let table = loo::leave_one_repository_out(&vs.rows, n);
        for (figure, repo, setting, count, m) in loo_rows(vs, &table) {
            let head = [vs.name.clone(), figure, repo, setting, count.to_string()];
            record(&mut folds, &head, &m, loo::objective(&m))?;
        }
        variant_markdown(&mut md, vs, &table);
    }
    for w in [&mut settings, &mut folds] {
        w.flush().context("cannot write the tuning tables")?;
    }
    let path = dir.join("tune.md");
    std::fs::write(&path, &md).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(md)
}

/// A CSV writer for `dir/name` with `head`, the accuracy columns and the objective.
fn writer(dir: &Path, name: &str, head: &[&str]) -> anyhow::Result<csv::Writer<std::fs::File>> {
    let path = dir.join(name);
    let mut w = csv::Writer::from_path(&path)
        .with_context(|| format!("cannot create {}; pass a writable --out", path.display()))?;
    let mut cols: Vec<&str> = head.to_vec();
    cols.extend(COLUMNS);
    cols.push("objective");
    w.write_record(&cols)?;
    Ok(w)
}

fn record(
    w: &mut csv::Writer<std::fs::File>,
    head: &[String],
    accs: &Accs,
    objective: f64,
) -> anyhow::Result<()> {
    let mut row: Vec<String> = head.to_vec();
    row.extend(accs.iter().map(|a| a.map(pct).unwrap_or_default()));
    row.push(pct(objective));
    w.write_record(&row)?;
    Ok(())
}

/// `loo.csv`'s rows: (figure, repository, setting, instances, accuracies).
fn loo_rows(vs: &VariantScores, t: &Loo) -> Vec<(String, String, String, usize, Accs)> {
    let label = |i: usize| {
        vs.settings
            .get(i)
            .map(|s| s.label.clone())
            .unwrap_or_default()
    };
    let n = vs.rows.len();
    let mut out = vec![
        (
            "in-sample-default".into(),
            "*".into(),
            label(0),
            n,
            t.default,
        ),
        (
            "in-sample-best".into(),
            "*".into(),
            label(t.best.0),
            n,
            t.best.1,
        ),
    ];
    if let Some(h) = t.held_out {
        out.push(("held-out".into(), "*".into(), "per fold".into(), n, h));
    }
    for f in &t.folds {
        let (repo, k) = (f.repo.clone(), f.instances);
        out.push(("fold-default".into(), repo.clone(), label(0), k, f.default));
        out.push(("fold-held-out".into(), repo, label(f.chosen), k, f.held_out));
    }
    out
}

/// One variant's section of `tune.md`.
fn variant_markdown(md: &mut String, vs: &VariantScores, t: &Loo) {
    let label = |i: usize| vs.settings.get(i).map(|s| s.label.as_str()).unwrap_or("?");
    let repos = t.folds.len().max(usize::from(!vs.rows.is_empty()));
    let _ = writeln!(
        md,
        "## {} ({} instances, {} repositories, {} setting{})\n",
        vs.name,
        vs.rows.len(),
        repos,
        vs.settings.len(),
        if vs.settings.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        md,
        "| figure | setting | {} | objective |\n|---|---|{}---:|",
        COLUMNS.join(" | "),
        "---:|".repeat(COLUMNS.len())
    );
    let mut line = |name: &str, setting: &str, m: &Accs| {
        let cells: Vec<String> = m.iter().map(|a| a.map(pct).unwrap_or("–".into())).collect();
        let o = pct(loo::objective(m));
        let _ = writeln!(md, "| {name} | {setting} | {} | {o} |", cells.join(" | "));
    };
    line("in-sample, shipped defaults", label(0), &t.default);
    line("in-sample, best of the grid", label(t.best.0), &t.best.1);
    if let Some(h) = &t.held_out {
        line("leave-one-repository-out", "chosen per fold", h);
    }
    md.push('\n');
    if t.held_out.is_none() {
        let _ = writeln!(md, "One repository only (or none): no held-out figure.\n");
    }
    if !t.folds.is_empty() {
        let _ = writeln!(
            md,
            "| held-out repository | instances | chosen on the others | objective, defaults | objective, held out |\n|---|---:|---|---:|---:|"
        );
        for f in &t.folds {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                f.repo,
                f.instances,
                label(f.chosen),
                pct(loo::objective(&f.default)),
                pct(loo::objective(&f.held_out))
            );
        }
        md.push('\n');
    }
    worth_markdown(md, vs);
    if !vs.failed.is_empty() {
        let _ = writeln!(md, "Left out ({}):\n", vs.failed.len());
        for (id, why) in &vs.failed {
            let _ = writeln!(md, "- {id}: {why}");
        }
        md.push('\n');
    }
}

/// What each constant is worth: the in-sample objective of each one-knob setting
/// against the defaults, largest change first.
fn worth_markdown(md: &mut String, vs: &VariantScores) {
    if vs.settings.len() < 2 || vs.rows.is_empty() {
        let _ = writeln!(md, "No tuned constants.\n");
        return;
    }
    let all: Vec<&Scored> = vs.rows.iter().collect();
    let base = loo::objective(&loo::means(&all, 0));
    let mut moves: Vec<(&str, f64)> = (1..vs.settings.len())
        .map(|i| {
            (
                vs.settings[i].label.as_str(),
                loo::objective(&loo::means(&all, i)) - base,
            )
        })
        .collect();
    moves.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let unmoved = moves.iter().filter(|m| m.1.abs() < 1e-9).count();
    let _ = writeln!(
        md,
        "What each constant is worth in sample (objective change when it alone moves; \
         {unmoved} of {} settings change nothing):\n",
        moves.len()
    );
    let _ = writeln!(md, "| setting | Δ objective |\n|---|---:|");
    for (label, d) in moves.iter().filter(|m| m.1.abs() >= 1e-9) {
        let _ = writeln!(md, "| {label} | {:+.1} |", d * 100.0);
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::knobs::{Knob, Knobs};
    use crate::run::tune::grid::Setting;

    const K: Knob = Knob::weight("k", 1.0, "");

    fn setting(v: Option<f64>) -> Setting {
        let mut knobs = Knobs::default();
        if let Some(v) = v {
            knobs.set(&K, v);
        }
        Setting {
            label: knobs.label(),
            knobs,
        }
    }

    #[test]
    fn tables_hold_every_score_and_the_held_out_figure() {
        let row = |repo: &str, a: f64, b: f64| Scored {
            instance: format!("{repo}-1"),
            repo: repo.into(),
            by_setting: vec![[Some(a); 7], [Some(b); 7]],
        };
        let vs = VariantScores {
            name: "v".into(),
            settings: vec![setting(None), setting(Some(0.0))],
            rows: vec![
                row("o/a", 1.0, 0.0),
                row("o/b", 0.0, 1.0),
                row("o/c", 0.0, 1.0),
            ],
            failed: vec![("o/d-1".into(), "server did not start".into())],
        };
        let dir = tempfile::tempdir().unwrap();
        let md = write_all(dir.path(), "ds", &[vs]).unwrap();
        let settings = std::fs::read_to_string(dir.path().join("settings.csv")).unwrap();
        assert_eq!(settings.lines().count(), 1 + 2, "{settings}");
        assert!(settings.starts_with("variant,setting,instances,file@1,"));
        let loo = std::fs::read_to_string(dir.path().join("loo.csv")).unwrap();
        // Held out a, the others choose k=0 (which fails a); held out b or c, the
        // others tie and keep the defaults (which fail b and c): 0 of 3.
        assert!(loo.contains("v,held-out,*,per fold,3,0.0,"), "{loo}");
        assert!(loo.contains("v,in-sample-best,*,k=0,3,66.7,"), "{loo}");
        assert!(
            md.contains("| leave-one-repository-out | chosen per fold | 0.0 |"),
            "{md}"
        );
        assert!(md.contains("| o/a | 1 | k=0 | 100.0 | 0.0 |"), "{md}");
        assert!(md.contains("| k=0 | +33.3 |"), "{md}");
        assert!(md.contains("- o/d-1: server did not start"), "{md}");
    }
}
