//! Runs of several datasets: each variant beside the untuned `bm25`.
//!
//! `bm25` (the paper's baseline) is tuned on nothing, so how much it loses from one
//! dataset to another is how much harder the second dataset is. A tuned variant that
//! loses more than that lost it to fitting: its rules hold less well on data they were
//! not designed on. [`by_dataset`] gathers file Acc@5 and function Acc@10 per dataset
//! and variant (the variant's own name, whatever its report label); [`section`] writes
//! the table when at least two datasets have `bm25` rows: per dataset each variant's
//! figures, and from the second dataset on the change from the first and that change
//! less `bm25`'s.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::record::output::metric_columns;
use crate::record::run_dir::Run;

/// The reference variant: tuned on nothing.
pub const REFERENCE: &str = "bm25";

/// Mean file Acc@5 and function Acc@10 (fractions) over a variant's scored rows on
/// one dataset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub file5: f64,
    pub function10: f64,
    pub n: usize,
}

/// Per dataset (in the order the runs name them), per variant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ByDataset {
    pub datasets: Vec<String>,
    /// Variants in first-seen order, each with its figures per dataset.
    pub variants: Vec<(String, Vec<Option<Figures>>)>,
}

/// Gathers the figures of `runs` (see the module docs).
pub fn by_dataset(runs: &[Run]) -> ByDataset {
    let columns = metric_columns();
    let at = |name: &str| columns.iter().position(|c| c == name);
    let (Some(file5), Some(function10)) = (at("file_acc_5"), at("function_acc_10")) else {
        return ByDataset::default();
    };
    let mut datasets: Vec<String> = Vec::new();
    let mut order: Vec<String> = Vec::new();
    let mut sums: BTreeMap<(usize, String), (f64, f64, usize)> = BTreeMap::new();
    for run in runs {
        let name = run
            .info
            .as_ref()
            .map_or_else(|| "?".to_string(), |i| i.dataset.clone());
        let d = match datasets.iter().position(|x| *x == name) {
            Some(d) => d,
            None => {
                datasets.push(name);
                datasets.len() - 1
            }
        };
        for row in &run.rows {
            let Some(m) = &row.metrics else { continue };
            if !order.contains(&row.variant) {
                order.push(row.variant.clone());
            }
            let s = sums
                .entry((d, row.variant.clone()))
                .or_insert((0.0, 0.0, 0));
            s.0 += m.get(file5).copied().unwrap_or(0.0);
            s.1 += m.get(function10).copied().unwrap_or(0.0);
            s.2 += 1;
        }
    }
    let variants = order
        .into_iter()
        .map(|v| {
            let per = (0..datasets.len())
                .map(|d| {
                    sums.get(&(d, v.clone())).map(|&(f, g, n)| Figures {
                        file5: f / n as f64,
                        function10: g / n as f64,
                        n,
                    })
                })
                .collect();
            (v, per)
        })
        .collect();
    ByDataset { datasets, variants }
}

/// The markdown section (empty unless two datasets have `bm25` figures).
pub fn section(out: &mut String, data: &ByDataset) {
    let Some(reference) = data
        .variants
        .iter()
        .find(|(v, _)| v == REFERENCE)
        .map(|(_, per)| per)
    else {
        return;
    };
    if data.datasets.len() < 2 || reference.iter().flatten().count() < 2 {
        return;
    }
    out.push_str("## Datasets beside the untuned bm25\n\n");
    out.push_str(
        "`bm25` is tuned on nothing: its change from the first dataset to another is that \
         dataset's difficulty. A variant's change beyond `bm25`'s (the last figure, in points) \
         is what its rules lose (or gain) outside the data they were designed on. \
         File Acc@5 / function Acc@10 in percent; `n` scored instances.\n\n",
    );
    let mut header = vec!["variant".to_string()];
    for (i, d) in data.datasets.iter().enumerate() {
        header.push(format!("{d}: file@5 / fn@10 (n)"));
        if i > 0 {
            header.push(format!("{d}: change / beyond bm25"));
        }
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    let first_ref = reference.first().copied().flatten();
    for (variant, per) in &data.variants {
        let mut cells = vec![variant.clone()];
        let first = per.first().copied().flatten();
        for (i, f) in per.iter().enumerate() {
            cells.push(match f {
                Some(f) => format!(
                    "{:.1} / {:.1} ({})",
                    100.0 * f.file5,
                    100.0 * f.function10,
                    f.n
                ),
                None => "–".into(),
            });
            if i == 0 {
                continue;
            }
            let change = |a: Option<Figures>, b: Option<Figures>| {
                a.zip(b).map(|(a, b)| {
                    (
                        100.0 * (b.file5 - a.file5),
                        100.0 * (b.function10 - a.function10),
                    )
                })
            };
            let own = change(first, *f);
            let bm25 = change(first_ref, reference.get(i).copied().flatten());
            cells.push(match (own, bm25) {
                (Some(o), Some(r)) => format!(
                    "{:+.1} / {:+.1}; {:+.1} / {:+.1}",
                    o.0,
                    o.1,
                    o.0 - r.0,
                    o.1 - r.1
                ),
                (Some(o), None) => format!("{:+.1} / {:+.1}; –", o.0, o.1),
                _ => "–".into(),
            });
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(file5: f64, function10: f64) -> Option<Figures> {
        Some(Figures {
            file5,
            function10,
            n: 10,
        })
    }

    #[test]
    fn each_variant_stands_beside_bm25s_drop() {
        let data = ByDataset {
            datasets: vec!["dev".into(), "tuning".into()],
            variants: vec![
                (
                    "codegraph".into(),
                    vec![figures(0.9, 0.6), figures(0.7, 0.3)],
                ),
                ("bm25".into(), vec![figures(0.8, 0.5), figures(0.7, 0.4)]),
                ("text".into(), vec![figures(0.5, 0.4), None]),
            ],
        };
        let mut out = String::new();
        section(&mut out, &data);
        assert!(out.contains("## Datasets beside the untuned bm25"), "{out}");
        // codegraph: -20 / -30 points, bm25: -10 / -10: beyond bm25 -10 / -20.
        assert!(
            out.contains(
                "| codegraph | 90.0 / 60.0 (10) | 70.0 / 30.0 (10) | -20.0 / -30.0; -10.0 / -20.0 |"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "| bm25 | 80.0 / 50.0 (10) | 70.0 / 40.0 (10) | -10.0 / -10.0; +0.0 / +0.0 |"
            ),
            "{out}"
        );
        assert!(out.contains("| text | 50.0 / 40.0 (10) | – | – |"), "{out}");
        // One dataset, or no bm25: no section.
        let mut none = String::new();
        section(
            &mut none,
            &ByDataset {
                datasets: vec!["dev".into()],
                variants: data.variants.clone(),
            },
        );
        assert!(none.is_empty());
    }
}
