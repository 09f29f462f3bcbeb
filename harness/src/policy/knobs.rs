//! The tuned constants of the scripted policies, as data: a [`Knob`] names one
//! constant (its default is the value every `navbench run` uses), and [`Knobs`] holds
//! the values a tuning run tries instead.
//!
//! A policy reads each constant through the task's knobs (`task.knobs.get(&FRAME)`),
//! so `navbench tune` can score other values on the same server session without a
//! rebuild, and every constant a policy was fitted with is listed by its variant
//! ([`crate::variants::Variant::knobs`]): the constants a user must distrust on new
//! repositories are the ones in that list, and `tune` reports how much each moves the
//! figures when it is left out (`0`) or halved and doubled.
//!
//! ```
//! use navbench::policy::knobs::{Knob, KnobKind, Knobs};
//! const FRAME: Knob = Knob::weight("frame", 2.0, "weight of the deepest traceback frame");
//! let mut k = Knobs::default();
//! assert_eq!(k.get(&FRAME), 2.0);
//! k.set(&FRAME, 3.0);
//! assert_eq!(k.get(&FRAME), 3.0);
//! assert_eq!(k.label(), "frame=3");
//! assert_eq!(FRAME.kind, KnobKind::Weight);
//! ```

use std::collections::BTreeMap;

/// What kind of number a knob is: it decides the values a default grid tries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KnobKind {
    /// A weight or share (`0` switches the evidence off).
    Weight,
    /// A count of calls, results or entities (at least 1).
    Count,
    /// A constant on a fixed scale (a cut-off, a fusion constant); tries the values given.
    Listed(&'static [f64]),
}

/// One tuned constant of a policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knob {
    /// Its name in grids and reports (`snake_case`, unique within a variant).
    pub name: &'static str,
    /// The value `navbench run` uses.
    pub default: f64,
    pub kind: KnobKind,
    /// One line on what it weighs or counts.
    pub about: &'static str,
}

impl Knob {
    /// A weight (see [`KnobKind::Weight`]).
    pub const fn weight(name: &'static str, default: f64, about: &'static str) -> Knob {
        Knob {
            name,
            default,
            kind: KnobKind::Weight,
            about,
        }
    }

    /// A constant on a fixed scale (see [`KnobKind::Listed`]), with the values a grid tries.
    pub const fn listed(
        name: &'static str,
        default: f64,
        tries: &'static [f64],
        about: &'static str,
    ) -> Knob {
        Knob {
            name,
            default,
            kind: KnobKind::Listed(tries),
            about,
        }
    }

    /// A count (see [`KnobKind::Count`]).
    pub const fn count(name: &'static str, default: usize, about: &'static str) -> Knob {
        Knob {
            name,
            default: default as f64,
            kind: KnobKind::Count,
            about,
        }
    }

    /// The values a default grid tries besides the default: a weight switched off,
    /// halved and doubled; a count halved and doubled (at least 1); a listed one its
    /// own list. Fixed ratios, not ranges fitted to anything, so the grid itself
    /// carries no tuning.
    pub fn alternatives(&self) -> Vec<f64> {
        let d = self.default;
        let raw = match self.kind {
            KnobKind::Weight => vec![0.0, d / 2.0, d * 2.0],
            KnobKind::Count => vec![(d / 2.0).floor().max(1.0), d * 2.0],
            KnobKind::Listed(tries) => tries.to_vec(),
        };
        let mut out: Vec<f64> = Vec::new();
        for v in raw {
            if v != d && !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }
}

/// Values that replace knobs' defaults; empty (every default) in a normal run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Knobs(BTreeMap<&'static str, f64>);

impl Knobs {
    /// The value of `knob`: the one set here, else its default.
    pub fn get(&self, knob: &Knob) -> f64 {
        self.0.get(knob.name).copied().unwrap_or(knob.default)
    }

    /// The value of a count knob, rounded (never negative).
    pub fn count(&self, knob: &Knob) -> usize {
        self.get(knob).round().max(0.0) as usize
    }

    /// Sets `knob` to `value` (a value equal to the default is dropped, so two ways of
    /// writing the default give one setting).
    pub fn set(&mut self, knob: &Knob, value: f64) {
        if value == knob.default {
            self.0.remove(knob.name);
        } else {
            self.0.insert(knob.name, value);
        }
    }

    /// True when every knob has its default.
    pub fn is_default(&self) -> bool {
        self.0.is_empty()
    }

    /// `default`, or the changed knobs as `name=value,…` (a setting's name in reports).
    pub fn label(&self) -> String {
        if self.0.is_empty() {
            return "default".to_string();
        }
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Knob = Knob::weight("w", 0.6, "a weight");
    const C: Knob = Knob::count("c", 5, "a count");

    #[test]
    fn defaults_hold_until_set_and_setting_the_default_clears() {
        let mut k = Knobs::default();
        assert_eq!((k.get(&W), k.count(&C)), (0.6, 5));
        k.set(&C, 10.0);
        k.set(&W, 0.0);
        assert_eq!((k.get(&W), k.count(&C)), (0.0, 10));
        assert_eq!(k.label(), "c=10,w=0");
        k.set(&C, 5.0);
        k.set(&W, 0.6);
        assert!(k.is_default());
        assert_eq!(k.label(), "default");
    }

    #[test]
    fn alternatives_switch_off_halve_and_double_without_repeating_the_default() {
        assert_eq!(W.alternatives(), vec![0.0, 0.3, 1.2]);
        assert_eq!(C.alternatives(), vec![2.0, 10.0]);
        assert_eq!(Knob::count("one", 1, "").alternatives(), vec![2.0]);
        assert_eq!(
            Knob::weight("zero", 0.0, "").alternatives(),
            Vec::<f64>::new()
        );
        let t = Knob::listed("t", 90.0, &[80.0, 90.0, 101.0], "");
        assert_eq!(t.alternatives(), vec![80.0, 101.0]);
    }
}
