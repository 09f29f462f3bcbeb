//! Fitted rankers: a linear model, fitted with leave-one-repository-out by
//! `navbench tune --fit`, that reorders a scripted policy's answer instead of its
//! hand-set order.
//!
//! Data flow: a variant that lists the [`knob`] `fitted` answers a longer list
//! ([`POOL_LEN`] per level); the run (`run::pipeline`, `navbench tune`) hands it to
//! [`finish`], which moves tests and derived code last ([`crate::policy::secondary`])
//! and, with the knob on, computes each candidate's [`features`], scores it with the variant's
//! [`Model`] (one weight vector per level) and keeps the best [`ANSWER_LEN`]. The
//! weights live in this folder as data (`<variant>.json`, with their provenance:
//! the data, the command, the date and the navbench commit they were fitted with),
//! compiled into the binary; [`Model::load`] reads another file (a refit) with an
//! actionable error when it is missing or does not fit this navbench.
//!
//! The knob stays a knob so both orders remain measurable: `navbench tune` tries
//! `fitted=0` and `fitted=1`, and its default per variant says which one runs.

pub mod features;

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::data::dataset::Locations;
use crate::policy::knobs::Knob;
use crate::policy::{Task, secondary};
use crate::variants::Variant;

/// Entries per level of a run's answer.
pub const ANSWER_LEN: usize = 10;
/// Entries per level a policy answers when its fitted ranker is on: the candidates
/// the model may bring into the answer.
pub const POOL_LEN: usize = 50;

/// The knob that switches a variant's fitted ranker on (`1`) or off (`0`), with the
/// variant's default.
pub const fn knob(default: f64) -> Knob {
    Knob::listed(
        "fitted",
        default,
        &[0.0, 1.0],
        "1: a model fitted leave-one-repository-out reorders the answer (policy/fitted)",
    )
}

fn is_on(task: &Task<'_>, knob: &Knob) -> bool {
    task.knobs.get(knob) >= 0.5
}

/// The variant's `fitted` knob, when it has one.
pub fn knob_of(variant: &dyn Variant) -> Option<&'static Knob> {
    variant.knobs().iter().find(|k| k.name == "fitted")
}

/// The last steps of a scripted policy's answer (`run::pipeline`, `navbench tune`):
/// tests and derived code move last ([`secondary::source_first`]), then, when the
/// variant's `fitted` knob is on in `task`, its fitted model reorders the whole pool
/// ([`POOL_LEN`]); the answer is cut to the variant's `answer_len` per level
/// ([`ANSWER_LEN`], or a declared variant's `[fusion] answer_len`). With the knob off,
/// the answer is the hand-weighted order's top source entries: secondary entries
/// move below the whole pool's source before the cut (an answer with none is the
/// hand-weighted top ten as before). A variant without the knob (bm25, a declared
/// one) gets the same source-first step and cut.
pub fn finish(variant: &dyn Variant, loc: Locations, task: &Task<'_>) -> anyhow::Result<Locations> {
    finish_cached(variant, loc, task, &mut HashMap::new())
}

/// [`finish`] with the test/derived judgements of earlier answers on the same tree
/// (`judged`, see [`secondary::source_first_cached`]): `navbench tune` plays a policy
/// many times on one tree and reads each file's head once.
pub fn finish_cached(
    variant: &dyn Variant,
    loc: Locations,
    task: &Task<'_>,
    judged: &mut HashMap<String, bool>,
) -> anyhow::Result<Locations> {
    let issue = &task.instance.problem_statement;
    // Source first over the whole pool, then the cut: a bundle or a test in the top
    // ten gives its place to the next source entry instead of only moving down inside
    // the ten.
    let loc = secondary::source_first_cached(loc, task.workdir, issue, judged);
    let n = variant.answer_len();
    match knob_of(variant) {
        Some(knob) if is_on(task, knob) => {
            let model = builtin(variant.name())?;
            Ok(cut(model.rerank(loc, task.workdir, issue), n))
        }
        _ => Ok(cut(loc, n)),
    }
}

/// `loc` with at most `n` entries per level.
pub fn cut(mut loc: Locations, n: usize) -> Locations {
    loc.files.truncate(n);
    loc.modules.truncate(n);
    loc.functions.truncate(n);
    loc
}

/// The shipped models, by variant.
const BUILTIN: &[(&str, &str)] = &[
    ("codegraph", include_str!("codegraph.json")),
    ("retrieval-static", include_str!("retrieval-static.json")),
    ("text", include_str!("text.json")),
];

/// The shipped model of `variant`.
pub fn builtin(variant: &str) -> anyhow::Result<Model> {
    let (_, text) = BUILTIN.iter().find(|(v, _)| *v == variant).with_context(|| {
        format!(
            "no fitted ranker ships for variant '{variant}': fit one with `navbench tune --features` \
             then `navbench tune --fit` (docs/tune.md) and add it to policy/fitted"
        )
    })?;
    Model::parse(text, &format!("policy/fitted/{variant}.json"))
}

/// Where a model came from (written by `navbench tune --fit`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// The feature tables fitted on (`features.csv` of `navbench tune --features`).
    pub data: Vec<String>,
    pub command: String,
    pub date: String,
    pub navbench_commit: String,
    pub instances: usize,
    pub repositories: usize,
}

/// One variant's fitted ranker: a weight per feature and level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Model {
    pub variant: String,
    pub provenance: Provenance,
    /// The features' names, as [`features::NAMES`] when fitted.
    pub features: Vec<String>,
    pub file: Vec<f64>,
    pub module: Vec<f64>,
    pub function: Vec<f64>,
}

impl Model {
    /// Reads a model file (`origin` names it in errors).
    pub fn load(path: &Path) -> anyhow::Result<Model> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "cannot read the fitted ranker {}: write it with `navbench tune --fit` (docs/tune.md)",
                path.display()
            )
        })?;
        Model::parse(&text, &path.display().to_string())
    }

    /// Parses a model and checks it matches this navbench's features.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Model> {
        let m: Model = serde_json::from_str(text).with_context(|| {
            format!("the fitted ranker {origin} is not a model file; refit it with `navbench tune --fit` (docs/tune.md)")
        })?;
        if m.features != features::NAMES {
            anyhow::bail!(
                "the fitted ranker {origin} was fitted on features [{}], but this navbench computes [{}]: refit it with `navbench tune --features` then `--fit` (docs/tune.md)",
                m.features.join(", "),
                features::NAMES.join(", ")
            );
        }
        for (level, w) in [
            ("file", &m.file),
            ("module", &m.module),
            ("function", &m.function),
        ] {
            if w.len() != features::N || w.iter().any(|x| !x.is_finite()) {
                anyhow::bail!(
                    "the fitted ranker {origin} has {} {level} weight(s) (or a non-finite one); it needs {} finite numbers: refit it with `navbench tune --fit`",
                    w.len(),
                    features::N
                );
            }
        }
        Ok(m)
    }

    /// The weights of level `i` (0 files, 1 modules, 2 functions).
    pub fn weights(&self, i: usize) -> &[f64] {
        match i {
            0 => &self.file,
            1 => &self.module,
            _ => &self.function,
        }
    }

    /// `loc` reordered by score at every level (ties keep the answer's order).
    pub fn rerank(&self, loc: Locations, root: &Path, issue: &str) -> Locations {
        let issue = features::IssueWords::new(issue);
        let levels = features::rows(&loc, root, &issue);
        let order = |i: usize| -> Vec<String> { order_by(self.weights(i), &levels[i]) };
        Locations {
            files: order(0),
            modules: order(1),
            functions: order(2),
        }
    }
}

/// The ids of `rows` by descending `w · x`, ties in the rows' order.
pub fn order_by(w: &[f64], rows: &features::LevelRows) -> Vec<String> {
    let mut scored: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .map(|(i, (_, x))| (i, dot(w, x)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(i, _)| rows[i].0.clone()).collect()
}

/// `w · x`.
pub fn dot(w: &[f64], x: &[f64]) -> f64 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_models_load() {
        for (v, _) in BUILTIN {
            let m = builtin(v).unwrap();
            assert_eq!(&m.variant, v);
        }
        let e = builtin("bm25").unwrap_err().to_string();
        assert!(e.contains("navbench tune --fit"), "{e}");
    }

    #[test]
    fn missing_or_corrupt_model_files_say_how_to_refit() {
        let dir = tempfile::tempdir().unwrap();
        let e = format!(
            "{:#}",
            Model::load(&dir.path().join("nope.json")).unwrap_err()
        );
        assert!(
            e.contains("nope.json") && e.contains("navbench tune --fit"),
            "{e}"
        );
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{\"variant\": 3").unwrap();
        let e = format!("{:#}", Model::load(&bad).unwrap_err());
        assert!(e.contains("not a model file"), "{e}");
        let mut m = builtin("text").unwrap();
        m.features.pop();
        let e = Model::parse(&serde_json::to_string(&m).unwrap(), "x.json").unwrap_err();
        assert!(e.to_string().contains("refit"), "{e}");
        let mut m = builtin("text").unwrap();
        m.file.pop();
        let e = Model::parse(&serde_json::to_string(&m).unwrap(), "x.json").unwrap_err();
        assert!(e.to_string().contains("file weight"), "{e}");
    }

    #[test]
    fn rerank_orders_by_weights_and_keeps_ties_in_order() {
        let rr = features::NAMES.iter().position(|n| *n == "rr").unwrap();
        let named = features::NAMES
            .iter()
            .position(|n| *n == "file_named")
            .unwrap();
        let mut w = vec![0.0; features::N];
        w[rr] = 1.0;
        w[named] = 5.0;
        let m = Model {
            variant: "t".into(),
            provenance: Provenance::default(),
            features: features::NAMES.iter().map(|s| s.to_string()).collect(),
            file: w.clone(),
            module: vec![0.0; features::N],
            function: w,
        };
        let loc = Locations {
            files: vec!["a.py".into(), "b.py".into(), "c.py".into()],
            modules: vec!["a.py:A".into(), "b.py:B".into()],
            functions: vec![],
        };
        let dir = tempfile::tempdir().unwrap();
        let out = m.rerank(loc, dir.path(), "c.py fails");
        assert_eq!(out.files, ["c.py", "a.py", "b.py"]);
        assert_eq!(out.modules, ["a.py:A", "b.py:B"]);
    }
}

/// The knob-off answer: secondary entries leave the top ten for the pool's next
/// source entries.
#[cfg(test)]
mod source_first_tests {
    use super::*;
    use crate::data::dataset::Instance;
    use crate::policy::Trial;
    use crate::policy::knobs::Knobs;

    #[test]
    fn secondary_entries_give_their_places_to_the_pools_source() {
        let dir = tempfile::tempdir().unwrap();
        // Twelve ranked files: two bundles and a test among the first ten, source
        // files at 11 and 12; a UMD bundle outside `dist/` is judged by its head.
        std::fs::write(
            dir.path().join("lib.js"),
            ";(function (global, factory) {\n  typeof define === 'function' && define.amd ? define(factory) : global.lib = factory()\n}(this, function () {}));\n",
        )
        .unwrap();
        let mut files: Vec<String> = (1..=12).map(|i| format!("src/m{i}.js")).collect();
        files[1] = "dist/lib.js".into();
        files[4] = "lib.js".into();
        files[6] = "test/m.spec.js".into();
        let functions: Vec<String> = files.iter().map(|f| format!("{f}:f")).collect();
        let loc = Locations {
            files: files.clone(),
            modules: functions.clone(),
            functions,
        };
        let instance = Instance {
            problem_statement: "m1 breaks".into(),
            ..Instance::default()
        };
        let knobs = Knobs::default();
        let task = Task {
            instance: &instance,
            workdir: dir.path(),
            knobs: &knobs,
            trial: Trial::FIRST,
        };
        let variant = crate::variants::by_name("text").unwrap();
        let out = finish(variant, loc, &task).unwrap();
        let want: Vec<&str> = [1, 3, 4, 6, 8, 9, 10, 11, 12]
            .iter()
            .map(|i| files[i - 1].as_str())
            .chain(["dist/lib.js"])
            .collect();
        assert_eq!(out.files, want);
        assert_eq!(out.functions.len(), ANSWER_LEN);
        assert_eq!(out.functions[7], "src/m11.js:f");
    }
}
