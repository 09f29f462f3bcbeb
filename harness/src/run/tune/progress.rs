//! A tuning run's progress on disk, so a run killed part-way goes on where it stopped.
//!
//! - `tune.json` ([`Manifest`]) says what the output directory tunes: the dataset (name,
//!   content fingerprint of the instances selected, their count) and, per variant, its
//!   knobs' defaults and the settings tried. A rerun into the same `--out` must ask for
//!   the same; otherwise it is refused before any work, naming what differs, since its
//!   scores could not be pooled with the ones recorded.
//! - `scores.csv` ([`ScoresFile`]) gets one row per instance × variant × setting,
//!   appended and synced as soon as the setting is scored (the run directory's
//!   crash-safe appender, `record::output::append`: a row torn by a kill is cut off on
//!   open). On a rerun, an instance × variant with a row for every setting is done: its
//!   rows are read back and it is not played again; one with only some rows is played
//!   again, its old rows replaced by the new attempt's. Rows are in playing order, so a
//!   run resumed after a kill writes the same file as one that was never stopped.
//!
//! An instance left out (no tree, no server, no index) has no rows and is tried again
//! by the next run.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::grid::Setting;
use super::loo::{Accs, COLUMNS, Scored};
use crate::data::dataset::Instance;
use crate::policy::Trial;
use crate::policy::knobs::Knob;
use crate::record::output::append::{AppendCsv, Pair, encode};

/// The manifest's file name in the output directory.
pub const MANIFEST: &str = "tune.json";
/// The scores' file name in the output directory.
pub const SCORES: &str = "scores.csv";

/// What a tuning output directory tunes (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Dataset name (`dev`, or the file's stem).
    pub dataset: String,
    /// [`crate::run::shard::dataset_fingerprint`] of the instances tuned on (after
    /// `--instances` and `--limit`).
    pub dataset_fingerprint: String,
    pub instances: usize,
    pub variants: Vec<VariantGrid>,
}

/// One variant's knobs and settings, as a manifest records them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantGrid {
    pub name: String,
    /// Each knob's shipped value, `name=value`.
    pub defaults: Vec<String>,
    /// The settings' labels, in playing order.
    pub settings: Vec<String>,
}

impl VariantGrid {
    pub fn new(name: &str, knobs: &[Knob], settings: &[Setting]) -> VariantGrid {
        VariantGrid {
            name: name.to_string(),
            defaults: knobs
                .iter()
                .map(|k| format!("{}={}", k.name, k.default))
                .collect(),
            settings: settings.iter().map(|s| s.label.clone()).collect(),
        }
    }
}

impl Manifest {
    pub fn new(dataset: &str, instances: &[Instance], variants: Vec<VariantGrid>) -> Manifest {
        Manifest {
            dataset: dataset.to_string(),
            dataset_fingerprint: crate::run::shard::dataset_fingerprint(instances),
            instances: instances.len(),
            variants,
        }
    }

    /// Every way `self` (this run) differs from `earlier` (the recorded one), one
    /// sentence each; empty when the run may go on.
    pub fn differences(&self, earlier: &Manifest) -> Vec<String> {
        let mut out = Vec::new();
        if self.dataset != earlier.dataset
            || self.dataset_fingerprint != earlier.dataset_fingerprint
            || self.instances != earlier.instances
        {
            out.push(format!(
                "the dataset differs: it tuned '{}' ({} instances, {}), this run asks for '{}' ({} instances, {})",
                earlier.dataset,
                earlier.instances,
                earlier.dataset_fingerprint,
                self.dataset,
                self.instances,
                self.dataset_fingerprint
            ));
        }
        let names =
            |m: &Manifest| -> Vec<String> { m.variants.iter().map(|v| v.name.clone()).collect() };
        if names(self) != names(earlier) {
            out.push(format!(
                "the variants differ: it tuned {}, this run asks for {}",
                names(earlier).join(","),
                names(self).join(",")
            ));
        }
        for v in &self.variants {
            let Some(e) = earlier.variants.iter().find(|e| e.name == v.name) else {
                continue;
            };
            if v.defaults != e.defaults {
                out.push(format!(
                    "{}'s shipped constants differ: {} then, {} now",
                    v.name,
                    only_in(&e.defaults, &v.defaults),
                    only_in(&v.defaults, &e.defaults)
                ));
            }
            if v.settings != e.settings {
                out.push(format!(
                    "{}'s grid differs: settings only in the recorded run: {}; only in this one: {}",
                    v.name,
                    only_in(&e.settings, &v.settings),
                    only_in(&v.settings, &e.settings)
                ));
            }
        }
        out
    }

    /// Records `self` in `dir`, or checks it against the manifest already there: a
    /// directory holding another run's scores is refused (see the module doc), as is
    /// one with `scores.csv` but no manifest (from before runs could resume).
    pub fn record_or_check(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(MANIFEST);
        if !path.exists() {
            if dir.join(SCORES).exists() {
                anyhow::bail!(
                    "{} holds scores.csv but no {MANIFEST}, so what it tuned is unknown; pass a new --out",
                    dir.display()
                );
            }
            let text = serde_json::to_string_pretty(self)?;
            return crate::record::output::append::write_atomic(&path, text.as_bytes())
                .with_context(|| {
                    format!("cannot write {}; pass a writable --out", path.display())
                });
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let earlier: Manifest = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a navbench tune manifest; pass a new --out",
                path.display()
            )
        })?;
        let diffs = self.differences(&earlier);
        if !diffs.is_empty() {
            anyhow::bail!(
                "{} holds another tuning run, so this one cannot resume it: {}. Pass a new --out, or the same dataset, selection, variants and grid",
                dir.display(),
                diffs.join("; ")
            );
        }
        Ok(())
    }
}

/// The entries of `a` not in `b`, comma-separated (`none` when there are none).
fn only_in(a: &[String], b: &[String]) -> String {
    let v: Vec<&str> = a
        .iter()
        .filter(|x| !b.contains(x))
        .map(String::as_str)
        .collect();
    match v.is_empty() {
        true => "none".to_string(),
        false => v.join(", "),
    }
}

/// `scores.csv`, appended row by row (see the module doc).
pub struct ScoresFile {
    csv: AppendCsv,
    /// Instance × variant pairs recorded whole by an earlier run, with their scores.
    done: HashMap<Pair, Scored>,
}

/// `scores.csv`'s header.
fn header() -> Vec<String> {
    let mut h: Vec<String> = ["variant", "instance_id", "repo", "setting"]
        .map(String::from)
        .to_vec();
    h.extend(COLUMNS.map(String::from));
    h
}

impl ScoresFile {
    /// Opens (creating) `dir/scores.csv` and reads back what earlier runs recorded;
    /// `grids` are this run's variants, whose settings say when a pair is whole.
    pub fn open(dir: &Path, grids: &[VariantGrid]) -> anyhow::Result<ScoresFile> {
        let path = dir.join(SCORES);
        let (mut csv, _) = AppendCsv::open(&path, &header())
            .with_context(|| format!("cannot open {}; pass a writable --out", path.display()))?;
        let rows = read_rows(&path)?;
        let mut done = HashMap::new();
        let mut partial = HashSet::new();
        for ((instance, variant, trial), (repo, by_label)) in rows {
            let pair = (instance.clone(), variant.clone(), trial);
            let settings = grids.iter().find(|g| g.name == variant);
            let whole = settings.and_then(|g| {
                g.settings
                    .iter()
                    .map(|l| by_label.get(l).copied())
                    .collect::<Option<Vec<Accs>>>()
            });
            match whole {
                Some(by_setting) if by_label.len() == by_setting.len() => {
                    done.insert(
                        pair,
                        Scored {
                            instance,
                            repo,
                            by_setting,
                        },
                    );
                }
                _ => {
                    partial.insert(pair);
                }
            }
        }
        csv.set_replaceable(partial);
        Ok(ScoresFile { csv, done })
    }

    /// The scores an earlier run recorded whole for `instance` × `variant`.
    pub fn recorded(&self, instance: &str, variant: &str) -> Option<&Scored> {
        self.done
            .get(&(instance.to_string(), variant.to_string(), Trial::FIRST))
    }

    /// Appends and syncs one setting's row (replacing an earlier attempt's rows of the
    /// pair on its first row).
    pub fn append(
        &mut self,
        variant: &str,
        inst: &Instance,
        setting: &str,
        accs: &Accs,
    ) -> anyhow::Result<()> {
        let mut row = vec![
            variant.to_string(),
            inst.instance_id.clone(),
            inst.repo.clone(),
            setting.to_string(),
        ];
        row.extend(accs.iter().map(|a| a.map(pct).unwrap_or_default()));
        let pair = (inst.instance_id.clone(), variant.to_string(), Trial::FIRST);
        self.csv
            .append_pair(&pair, &encode([row])?)
            .with_context(|| format!("cannot append to {}", self.csv.path().display()))
    }

    /// Removes the rows of `instance` × `variant` written by this attempt (its server
    /// failed part-way: not a score).
    pub fn discard(&mut self, instance: &str, variant: &str) -> anyhow::Result<()> {
        let pair = (instance.to_string(), variant.to_string(), Trial::FIRST);
        self.csv
            .remove_pair(&pair)
            .with_context(|| format!("cannot rewrite {}", self.csv.path().display()))
    }

    pub fn path(&self) -> PathBuf {
        self.csv.path().to_path_buf()
    }
}

/// A fraction as a percentage with one decimal, as the tables have it.
pub fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

/// Per pair in `scores.csv`: its repository and accuracies by setting label.
type Recorded = HashMap<Pair, (String, HashMap<String, Accs>)>;

/// Reads `scores.csv` back (its torn last row already cut off).
fn read_rows(path: &Path) -> anyhow::Result<Recorded> {
    let bad = |what: &str| {
        anyhow::anyhow!(
            "{} is not a navbench tune scores.csv ({what}); pass a new --out",
            path.display()
        )
    };
    let mut rdr =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let head: Vec<String> = rdr.headers()?.iter().map(String::from).collect();
    if head != header() {
        return Err(bad("its columns differ"));
    }
    let mut out: Recorded = HashMap::new();
    for rec in rdr.records() {
        let rec = rec.with_context(|| format!("cannot read {}", path.display()))?;
        let cell = |i: usize| rec.get(i).unwrap_or_default().to_string();
        let mut accs: Accs = [None; 7];
        for (c, slot) in accs.iter_mut().enumerate() {
            let text = cell(4 + c);
            if !text.is_empty() {
                let x: f64 = text.parse().map_err(|_| bad("an accuracy is no number"))?;
                *slot = Some(x / 100.0);
            }
        }
        let entry = out
            .entry((cell(1), cell(0), Trial::FIRST))
            .or_insert_with(|| (cell(2), HashMap::new()));
        entry.1.insert(cell(3), accs);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::knobs::Knobs;

    const A: Knob = Knob::weight("a", 1.0, "");

    fn grid(labels: &[&str]) -> VariantGrid {
        VariantGrid {
            name: "v".into(),
            defaults: vec!["a=1".into()],
            settings: labels.iter().map(|l| l.to_string()).collect(),
        }
    }

    fn inst(id: &str) -> Instance {
        Instance {
            instance_id: id.into(),
            repo: "o/r".into(),
            ..Instance::default()
        }
    }

    #[test]
    fn a_rerun_asking_for_something_else_is_refused_naming_the_difference() {
        let dir = tempfile::tempdir().unwrap();
        let settings = [Setting {
            label: "default".into(),
            knobs: Knobs::default(),
        }];
        let m = Manifest::new(
            "ds",
            &[inst("a")],
            vec![VariantGrid::new("v", &[A], &settings)],
        );
        m.record_or_check(dir.path()).unwrap();
        m.record_or_check(dir.path()).unwrap();
        let mut other = m.clone();
        other.variants[0].settings.push("a=2".into());
        let e = other.record_or_check(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("v's grid differs") && e.contains("only in this one: a=2"),
            "{e}"
        );
        let other = Manifest::new("ds", &[inst("b")], m.variants.clone());
        let e = other.record_or_check(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("the dataset differs: it tuned 'ds' (1 instances"),
            "{e}"
        );
        let mut other = m.clone();
        other.variants[0].defaults = vec!["a=3".into()];
        let e = other.record_or_check(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("shipped constants differ: a=1 then, a=3 now"),
            "{e}"
        );
    }

    #[test]
    fn whole_pairs_are_read_back_and_a_partial_one_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let g = [grid(&["default", "a=0"])];
        let one: Accs = [Some(1.0), None, Some(0.0), None, None, None, Some(1.0)];
        {
            let mut f = ScoresFile::open(dir.path(), &g).unwrap();
            f.append("v", &inst("x"), "default", &one).unwrap();
            f.append("v", &inst("x"), "a=0", &one).unwrap();
            // Killed after y's first setting.
            f.append("v", &inst("y"), "default", &one).unwrap();
        }
        let mut f = ScoresFile::open(dir.path(), &g).unwrap();
        let x = f.recorded("x", "v").unwrap();
        assert_eq!(
            (x.repo.as_str(), x.by_setting.clone()),
            ("o/r", vec![one, one])
        );
        assert!(f.recorded("y", "v").is_none());
        f.append("v", &inst("y"), "default", &one).unwrap();
        f.append("v", &inst("y"), "a=0", &one).unwrap();
        let text = std::fs::read_to_string(f.path()).unwrap();
        let ids: Vec<&str> = text.lines().skip(1).map(|l| &l[2..3]).collect();
        assert_eq!(ids, ["x", "x", "y", "y"], "{text}");
        // A pair whose server failed part-way leaves no rows.
        f.append("v", &inst("z"), "default", &one).unwrap();
        f.discard("z", "v").unwrap();
        let text = std::fs::read_to_string(f.path()).unwrap();
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(
            text.contains("v,x,o/r,default,100.0,,0.0,,,,100.0\n"),
            "{text}"
        );
    }

    #[test]
    fn scores_without_a_manifest_or_of_another_shape_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SCORES), "a,b\n").unwrap();
        let m = Manifest::new("ds", &[], vec![]);
        let e = m.record_or_check(dir.path()).unwrap_err().to_string();
        assert!(e.contains("no tune.json"), "{e}");
        let e = ScoresFile::open(dir.path(), &[]).err().unwrap().to_string();
        assert!(e.contains("columns differ"), "{e}");
    }
}
