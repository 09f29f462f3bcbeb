//! `navbench gold`: derives each instance's gold locations from its patch and, where
//! the dataset ships gold of its own, measures how often the two agree per level.

use std::io::Write;

use serde::Serialize;

use crate::checkout::RepoCache;
use crate::data::dataset::{Dataset, Locations};
use crate::score::gold;

/// One instance's derivation, as `navbench gold` prints it (one JSON line each).
#[derive(Debug, Clone, Serialize)]
pub struct GoldLine {
    pub instance_id: String,
    pub repo: String,
    pub base_commit: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<Locations>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added_functions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `Some(true)` when the dataset's own gold equals ours at every level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agrees: Option<bool>,
}

/// Exact-match agreement counts per level over the instances that carry dataset gold.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Agreement {
    pub compared: usize,
    pub files: usize,
    pub modules: usize,
    pub functions: usize,
    /// Instances that differ at some level, with a short description.
    pub differing: Vec<String>,
}

fn same_set(a: &[String], b: &[String]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort();
    a.dedup();
    b.sort();
    b.dedup();
    a == b
}

/// Derives gold for every instance (reading files at the base commit from the mirror)
/// and compares with the dataset's gold where present.
pub fn derive_all(ds: &Dataset, cache: &RepoCache) -> (Vec<GoldLine>, Agreement) {
    let mut lines = Vec::new();
    let mut agr = Agreement::default();
    for inst in &ds.instances {
        let mut line = GoldLine {
            instance_id: inst.instance_id.clone(),
            repo: inst.repo.clone(),
            base_commit: inst.base_commit.clone(),
            gold: None,
            added_functions: Vec::new(),
            error: None,
            agrees: None,
        };
        let derived = cache
            .mirror(&inst.repo, &inst.base_commit)
            .map_err(|e| e.to_string())
            .and_then(|m| {
                let read = |p: &str| cache.read_file_at(&m, &inst.base_commit, p);
                gold::derive_gold(&inst.patch, &read).map_err(|e| e.to_string())
            });
        match derived {
            Ok(d) => {
                if let Some(want) = inst.dataset_gold() {
                    let f = same_set(&want.files, &d.locations.files);
                    let m = same_set(&want.modules, &d.locations.modules);
                    let u = same_set(&want.functions, &d.locations.functions);
                    agr.compared += 1;
                    agr.files += f as usize;
                    agr.modules += m as usize;
                    agr.functions += u as usize;
                    line.agrees = Some(f && m && u);
                    if !(f && m && u) {
                        agr.differing.push(format!(
                            "{}: dataset {:?} vs derived {:?}",
                            inst.instance_id, want.functions, d.locations.functions
                        ));
                    }
                }
                line.added_functions = d.added_functions;
                line.gold = Some(d.locations);
            }
            Err(e) => {
                if inst.dataset_gold().is_some() {
                    agr.compared += 1;
                    agr.differing
                        .push(format!("{}: not derived: {e}", inst.instance_id));
                }
                line.error = Some(e);
            }
        }
        lines.push(line);
    }
    (lines, agr)
}

/// Prints the lines as JSONL to `out` and the agreement to `err`.
pub fn print(
    lines: &[GoldLine],
    agr: &Agreement,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    for l in lines {
        writeln!(out, "{}", serde_json::to_string(l).unwrap_or_default())?;
    }
    let no_fn = lines
        .iter()
        .filter(|l| l.gold.as_ref().is_some_and(|g| g.functions.is_empty()))
        .count();
    let failed = lines.iter().filter(|l| l.error.is_some()).count();
    writeln!(
        err,
        "derived gold for {} of {} instance(s); {} with no edited function (left out of scores); {} failed",
        lines.len() - failed,
        lines.len(),
        no_fn,
        failed
    )?;
    if agr.compared > 0 {
        let pct = |n: usize| 100.0 * n as f64 / agr.compared as f64;
        writeln!(
            err,
            "agreement with the dataset's gold on {} instance(s): files {:.1}% ({}), modules {:.1}% ({}), functions {:.1}% ({})",
            agr.compared,
            pct(agr.files),
            agr.files,
            pct(agr.modules),
            agr.modules,
            pct(agr.functions),
            agr.functions
        )?;
        for d in &agr.differing {
            writeln!(err, "  differs: {d}")?;
        }
    }
    Ok(())
}
