//! Where a run's time goes: the phases of one instance × variant, as columns of
//! `instances.csv`, totals in `run.json`, and the table `navbench run` prints last.
//!
//! An instance is prepared once (mirror fetch and tree write: `checkout`; gold
//! derivation from the patch: `gold`) and then measured once per variant (server
//! `start` up to `initialize`, the variant's indexing calls: `init`, the rest of the
//! `policy`, and `score`). The per-instance phases are written on each of its rows
//! (so a row is complete on its own) and counted once per instance in the totals.
//!
//! ```
//! use navbench::run::phases::{PhaseTotals, Phases};
//! let a = Phases { checkout_ms: 100.0, start_ms: 20.0, policy_ms: 30.0, ..Phases::default() };
//! let b = Phases { checkout_ms: 100.0, start_ms: 10.0, ..Phases::default() };
//! let t = PhaseTotals::from_rows([("i1", &a), ("i1", &b)]);
//! assert_eq!(t.ms("checkout"), 100.0); // one instance, counted once
//! assert_eq!(t.ms("start"), 30.0);
//! ```

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

/// Milliseconds spent in each phase of one instance × variant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    /// Mirror fetch and tree write (shared by the instance's variants).
    pub checkout_ms: f64,
    /// Gold derivation from the patch (shared by the instance's variants).
    pub gold_ms: f64,
    /// Server process spawn up to a finished `initialize`.
    pub start_ms: f64,
    /// The variant's indexing calls (`Variant::setup_tools`).
    pub init_ms: f64,
    /// The rest of the policy: its tool calls and its own ranking.
    pub policy_ms: f64,
    /// Server shutdown and scoring against gold.
    pub score_ms: f64,
}

/// Phase names in run order; the column of phase `p` is `{p}_ms`.
pub const PHASES: [&str; 6] = ["checkout", "gold", "start", "init", "policy", "score"];

/// Phases measured once per instance (the rest once per instance × variant).
const PER_INSTANCE: [&str; 2] = ["checkout", "gold"];

impl Phases {
    /// The `instances.csv` columns, in [`PHASES`] order.
    pub fn columns() -> Vec<String> {
        PHASES.iter().map(|p| format!("{p}_ms")).collect()
    }

    /// Values in [`Phases::columns`] order.
    pub fn values(&self) -> [f64; 6] {
        [
            self.checkout_ms,
            self.gold_ms,
            self.start_ms,
            self.init_ms,
            self.policy_ms,
            self.score_ms,
        ]
    }

    /// Builds phases from values in [`Phases::columns`] order (missing ones are 0).
    pub fn from_values(v: &[f64]) -> Phases {
        let at = |i: usize| v.get(i).copied().unwrap_or(0.0);
        Phases {
            checkout_ms: at(0),
            gold_ms: at(1),
            start_ms: at(2),
            init_ms: at(3),
            policy_ms: at(4),
            score_ms: at(5),
        }
    }

    fn get(&self, phase: &str) -> f64 {
        PHASES
            .iter()
            .position(|p| *p == phase)
            .map_or(0.0, |i| self.values()[i])
    }
}

/// Phase totals of a run (per-instance phases counted once per instance).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseTotals {
    /// Phase name → total milliseconds.
    pub ms: BTreeMap<String, f64>,
    /// Instances whose rows were counted.
    pub instances: usize,
}

impl PhaseTotals {
    /// Sums `(instance_id, phases)` rows.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = (&'a str, &'a Phases)>) -> PhaseTotals {
        let mut ms: BTreeMap<String, f64> = PHASES.iter().map(|p| (p.to_string(), 0.0)).collect();
        let mut seen = HashSet::new();
        for (id, ph) in rows {
            let first = seen.insert(id.to_string());
            for p in PHASES {
                if first || !PER_INSTANCE.contains(&p) {
                    *ms.entry(p.to_string()).or_default() += ph.get(p);
                }
            }
        }
        PhaseTotals {
            ms,
            instances: seen.len(),
        }
    }

    /// Total milliseconds of `phase` (0 when unknown).
    pub fn ms(&self, phase: &str) -> f64 {
        self.ms.get(phase).copied().unwrap_or(0.0)
    }

    /// "Where the time went": each phase's total, share and mean per instance, and
    /// the run's wall time (smaller than the sum when `--jobs` overlaps instances).
    pub fn table(&self, wall_ms: f64) -> String {
        let sum: f64 = self.ms.values().sum();
        let per = self.instances.max(1) as f64;
        let mut out = format!(
            "{:<9} {:>10} {:>6} {:>12}\n",
            "phase", "total_s", "share", "per_inst_s"
        );
        for p in PHASES {
            let t = self.ms(p);
            let share = if sum > 0.0 { 100.0 * t / sum } else { 0.0 };
            out.push_str(&format!(
                "{:<9} {:>10.1} {:>5.1}% {:>12.2}\n",
                p,
                t / 1000.0,
                share,
                t / 1000.0 / per
            ));
        }
        out.push_str(&format!(
            "{:<9} {:>10.1}  (wall; phases sum to {:.1} s over {} instance(s))\n",
            "run",
            wall_ms / 1000.0,
            sum / 1000.0,
            self.instances
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_column_order() {
        let p = Phases {
            checkout_ms: 1.0,
            gold_ms: 2.0,
            start_ms: 3.0,
            init_ms: 4.0,
            policy_ms: 5.0,
            score_ms: 6.0,
        };
        assert_eq!(Phases::from_values(&p.values()), p);
        assert_eq!(Phases::columns()[3], "init_ms");
        assert_eq!(Phases::from_values(&[7.0]).checkout_ms, 7.0);
    }

    #[test]
    fn per_instance_phases_count_once_and_the_table_names_every_phase() {
        let a = Phases {
            checkout_ms: 1000.0,
            gold_ms: 500.0,
            policy_ms: 2000.0,
            ..Phases::default()
        };
        let t = PhaseTotals::from_rows([("x", &a), ("x", &a), ("y", &a)]);
        assert_eq!(t.instances, 2);
        assert_eq!(t.ms("checkout"), 2000.0);
        assert_eq!(t.ms("gold"), 1000.0);
        assert_eq!(t.ms("policy"), 6000.0);
        let table = t.table(4000.0);
        for p in PHASES {
            assert!(table.contains(p), "{table}");
        }
        assert!(table.contains("66.7%"), "{table}");
    }
}
