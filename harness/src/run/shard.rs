//! Stable sharding (`navbench run --shard I/N`) and dataset fingerprints.
//!
//! An instance belongs to shard `I` of `N` when `FNV-1a-64(instance_id) mod N = I − 1`.
//! The assignment depends on the id alone — not on the dataset's order, on the other
//! instances, or on Rust's randomly seeded hasher — so every job of a CI matrix or a
//! cluster's job array computes the same disjoint slices, and adding an instance to a
//! dataset never moves the others. Slices are balanced only on average.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::data::dataset::Instance;

/// FNV-1a, 64 bits: a fixed, documented hash (same value on every platform and release).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The `index`-th (1-based) of `count` disjoint slices of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1 ≤ index ≤ count.
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// True when the instance with this id belongs to this shard.
    pub fn contains(&self, instance_id: &str) -> bool {
        shard_of(instance_id, self.count) == self.index
    }

    /// Keeps the instances of this shard, in their original order.
    pub fn select(&self, instances: &mut Vec<Instance>) {
        instances.retain(|i| self.contains(&i.instance_id));
    }
}

/// The 1-based shard of `count` that `instance_id` belongs to.
pub fn shard_of(instance_id: &str, count: usize) -> usize {
    (fnv1a64(instance_id.as_bytes()) % count.max(1) as u64) as usize + 1
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// Parses `I/N` with 1 ≤ I ≤ N.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "invalid shard '{s}': expected I/N with 1 ≤ I ≤ N, e.g. --shard 2/4 for the second of four"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// A fingerprint of a dataset's content: FNV-1a over every instance's id, repository,
/// base commit, issue text and patch, in id order (so file order does not matter).
/// Runs of the same dataset — whole or sharded — carry the same fingerprint.
pub fn dataset_fingerprint(instances: &[Instance]) -> String {
    let mut sorted: Vec<&Instance> = instances.iter().collect();
    sorted.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
    let mut buf = Vec::new();
    for i in sorted {
        for field in [
            &i.instance_id,
            &i.repo,
            &i.base_commit,
            &i.problem_statement,
            &i.patch,
        ] {
            buf.extend_from_slice(field.as_bytes());
            buf.push(0);
        }
        buf.push(b'\n');
    }
    format!("fnv1a64:{:016x}", fnv1a64(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(id: &str) -> Instance {
        Instance {
            instance_id: id.into(),
            repo: "o/r".into(),
            base_commit: "c".into(),
            problem_statement: "p".into(),
            patch: "d".into(),
            gold: None,
            edit_functions: None,
            locagent_claude35: None,
        }
    }

    #[test]
    fn fnv1a_matches_reference_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parses_and_rejects_shard_specs() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("1/1".parse::<Shard>().unwrap().to_string(), "1/1");
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "", "1/2/3"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("I/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn shards_partition_the_dataset_whatever_its_order() {
        let ids: Vec<String> = (0..200).map(|i| format!("owner__repo-{i}")).collect();
        let forward: Vec<Instance> = ids.iter().map(|i| inst(i)).collect();
        let mut shuffled = forward.clone();
        shuffled.reverse();
        shuffled.rotate_left(37);
        for n in [1, 2, 3, 7] {
            let mut seen: Vec<String> = Vec::new();
            for i in 1..=n {
                let shard = Shard { index: i, count: n };
                let mut a = forward.clone();
                shard.select(&mut a);
                let mut b = shuffled.clone();
                shard.select(&mut b);
                let mut ids_a: Vec<&str> = a.iter().map(|x| x.instance_id.as_str()).collect();
                let mut ids_b: Vec<&str> = b.iter().map(|x| x.instance_id.as_str()).collect();
                ids_a.sort();
                ids_b.sort();
                // Same slice whatever the dataset order.
                assert_eq!(ids_a, ids_b);
                if n > 1 {
                    // Balanced on average: no slice is empty or hugely over-full here.
                    assert!(!a.is_empty() && a.len() < 2 * 200 / n, "{n}: {}", a.len());
                }
                seen.extend(a.into_iter().map(|x| x.instance_id));
            }
            // Disjoint and complete.
            let mut all = seen.clone();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), seen.len(), "shards of {n} overlap");
            let mut want = ids.clone();
            want.sort();
            assert_eq!(all, want, "shards of {n} miss instances");
        }
    }

    #[test]
    fn assignment_is_pinned() {
        // Changing the hash would silently reshuffle every sharded job: these values were
        // computed independently (FNV-1a 64 of the id, mod N, plus one).
        let cases: [(&str, [usize; 4]); 4] = [
            ("django__django-11039", [1, 1, 1, 5]),
            ("mini-001", [1, 2, 1, 5]),
            ("x", [2, 3, 4, 8]),
            ("astropy__astropy-12907", [2, 3, 2, 2]),
        ];
        for (id, want) in cases {
            let got: Vec<usize> = [2, 3, 4, 8].iter().map(|n| shard_of(id, *n)).collect();
            assert_eq!(got, want, "{id}");
        }
    }

    #[test]
    fn fingerprint_ignores_order_and_sees_content() {
        let a = vec![inst("i1"), inst("i2")];
        let b = vec![inst("i2"), inst("i1")];
        assert_eq!(dataset_fingerprint(&a), dataset_fingerprint(&b));
        let mut c = a.clone();
        c[0].patch = "other".into();
        assert_ne!(dataset_fingerprint(&a), dataset_fingerprint(&c));
        assert!(dataset_fingerprint(&a).starts_with("fnv1a64:"));
    }
}
