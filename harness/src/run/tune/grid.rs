//! The settings a tuning run tries for one variant: the defaults, then each knob moved
//! alone to each of its alternative values ([`Knob::alternatives`], or the values
//! `--grid` gives). One knob at a time keeps the grid linear in the number of
//! constants (20 for codegraph) and says what each constant is worth on its own.

use crate::policy::knobs::{Knob, Knobs};

/// One setting of a variant's knobs, named as reports show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// `default`, or `name=value` of the one knob moved.
    pub label: String,
    pub knobs: Knobs,
}

/// Values given on the command line for some knobs: `name=v1,v2;name=v3`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GridOverrides(Vec<(String, Vec<f64>)>);

impl std::str::FromStr for GridOverrides {
    type Err = String;

    /// Parses `name=v1,v2;name=v3` (spaces allowed); an empty string is no override.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, values) = part.split_once('=').ok_or_else(|| {
                format!("--grid: '{part}' is not name=v1,v2 (e.g. frame=1,2,4;link=0,0.3)")
            })?;
            let mut vs = Vec::new();
            for v in values.split(',').map(str::trim) {
                let x: f64 = v.parse().map_err(|_| {
                    format!("--grid: '{v}' in '{part}' is not a number (e.g. frame=1,2,4)")
                })?;
                if !x.is_finite() || x < 0.0 {
                    return Err(format!(
                        "--grid: '{v}' in '{part}' must be a finite number ≥ 0"
                    ));
                }
                vs.push(x);
            }
            out.push((name.trim().to_string(), vs));
        }
        Ok(GridOverrides(out))
    }
}

impl GridOverrides {
    /// Refuses names that are no knob of any of `variants` (each with its knobs).
    pub fn check(&self, variants: &[(&str, &[Knob])]) -> anyhow::Result<()> {
        for (name, _) in &self.0 {
            if !variants
                .iter()
                .any(|(_, ks)| ks.iter().any(|k| k.name == name))
            {
                let known: Vec<String> = variants
                    .iter()
                    .map(|(v, ks)| {
                        let names: Vec<&str> = ks.iter().map(|k| k.name).collect();
                        match names.is_empty() {
                            true => format!("{v}: none"),
                            false => format!("{v}: {}", names.join(", ")),
                        }
                    })
                    .collect();
                anyhow::bail!(
                    "--grid names '{name}', which no selected variant has; knobs are {}",
                    known.join("; ")
                );
            }
        }
        Ok(())
    }

    fn values_for(&self, knob: &Knob) -> Option<&[f64]> {
        self.0
            .iter()
            .find(|(n, _)| n == knob.name)
            .map(|(_, v)| v.as_slice())
    }
}

/// The settings tried for a variant with `knobs`: the defaults first (so a tie between
/// settings keeps the shipped constants), then one knob at a time.
pub fn settings(knobs: &[Knob], overrides: &GridOverrides) -> Vec<Setting> {
    let mut out = vec![Setting {
        label: "default".to_string(),
        knobs: Knobs::default(),
    }];
    for knob in knobs {
        let values = match overrides.values_for(knob) {
            Some(v) => v.to_vec(),
            None => knob.alternatives(),
        };
        for v in values {
            let mut k = Knobs::default();
            k.set(knob, v);
            if k.is_default() || out.iter().any(|s| s.knobs == k) {
                continue;
            }
            out.push(Setting {
                label: k.label(),
                knobs: k,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Knob = Knob::weight("a", 1.0, "");
    const B: Knob = Knob::count("b", 4, "");

    #[test]
    fn default_first_then_one_knob_at_a_time() {
        let s = settings(&[A, B], &GridOverrides::default());
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["default", "a=0", "a=0.5", "a=2", "b=2", "b=8"]);
        assert_eq!(s[2].knobs.get(&A), 0.5);
        assert_eq!(s[2].knobs.count(&B), 4);
    }

    #[test]
    fn overrides_replace_a_knobs_values_and_drop_the_default() {
        let g: GridOverrides = "a = 1, 3 ; ".parse().unwrap();
        let labels: Vec<String> = settings(&[A, B], &g).into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["default", "a=3", "b=2", "b=8"]);
    }

    #[test]
    fn bad_grids_say_what_to_write() {
        let e = "frame".parse::<GridOverrides>().unwrap_err();
        assert!(e.contains("name=v1,v2"), "{e}");
        let e = "frame=x".parse::<GridOverrides>().unwrap_err();
        assert!(e.contains("not a number"), "{e}");
        let e = "frame=-1".parse::<GridOverrides>().unwrap_err();
        assert!(e.contains("≥ 0"), "{e}");
        let g: GridOverrides = "nosuch=1".parse().unwrap();
        let e = g.check(&[("v", &[A, B]), ("bm25", &[])]).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("'nosuch'") && msg.contains("v: a, b; bm25: none"),
            "{msg}"
        );
        assert!(g.check(&[]).is_err());
        let ok: GridOverrides = "b=3".parse().unwrap();
        assert!(ok.check(&[("v", &[A, B])]).is_ok());
    }
}
