//! Score accumulation with deterministic ordering, shared by the policies.

use std::collections::HashMap;

/// Scores keyed by location id. [`Scores::ranked`] sorts by score, then by the order in
/// which ids were first seen (a policy adds evidence in a fixed order), then by id, so
/// rankings never depend on hashing.
#[derive(Debug, Default, Clone)]
pub struct Scores {
    map: HashMap<String, (f64, usize)>,
}

impl Scores {
    /// Adds `score` to `id`.
    pub fn add(&mut self, id: &str, score: f64) {
        let next = self.map.len();
        self.map.entry(id.to_string()).or_insert((0.0, next)).0 += score;
    }

    /// Current score of `id` (0 if unseen).
    pub fn get(&self, id: &str) -> f64 {
        self.map.get(id).map_or(0.0, |v| v.0)
    }

    /// Multiplies `id`'s score by `factor` if present.
    pub fn scale(&mut self, id: &str, factor: f64) {
        if let Some(v) = self.map.get_mut(id) {
            v.0 *= factor;
        }
    }

    /// Ids with a positive score, best first.
    pub fn ranked(&self) -> Vec<String> {
        let mut v: Vec<(&String, &(f64, usize))> =
            self.map.iter().filter(|(_, s)| s.0 > 0.0).collect();
        v.sort_by(|a, b| {
            b.1.0
                .total_cmp(&a.1.0)
                .then(a.1.1.cmp(&b.1.1))
                .then(a.0.cmp(b.0))
        });
        v.into_iter().map(|(k, _)| k.clone()).collect()
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing was scored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Reciprocal rank fusion of several rankings: `Σ w / (k + rank)`, rank from 1.
pub fn rrf(rankings: &[(&[String], f64)], k: f64) -> Vec<String> {
    let mut s = Scores::default();
    for (ranking, weight) in rankings {
        for (i, id) in ranking.iter().enumerate() {
            s.add(id, weight / (k + (i + 1) as f64));
        }
    }
    s.ranked()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_first_seen() {
        let mut s = Scores::default();
        s.add("b", 1.0);
        s.add("a", 1.0);
        s.add("c", 2.0);
        s.add("z", 0.0);
        assert_eq!(s.ranked(), vec!["c", "b", "a"]);
    }

    #[test]
    fn rrf_fuses() {
        let a = vec!["x".to_string(), "y".to_string()];
        let b = vec!["y".to_string(), "z".to_string()];
        assert_eq!(rrf(&[(&a, 1.0), (&b, 1.0)], 60.0), vec!["y", "x", "z"]);
    }
}
