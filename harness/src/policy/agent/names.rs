//! [`ToolNames`]: the server's tool names as the model may see them.
//!
//! Chat Completions endpoints accept function names matching `^[A-Za-z0-9_-]{1,64}$`
//! only (OpenAI refuses the whole request otherwise), while an MCP server may name a
//! tool `search.code` or longer. A valid name is offered as it is; any other is mapped
//! to a safe one (each invalid character becomes `_`, cut to fit, and a short hash of
//! the original name added when that would collide) and mapped back when the model
//! calls it. The mapping depends only on the set of names, not their order, so every
//! turn and every replay offers the same names.

use std::collections::{BTreeMap, BTreeSet};

/// The longest function name endpoints accept.
pub const MAX_LEN: usize = 64;

/// True for a name every endpoint accepts as it is.
pub fn is_safe(name: &str) -> bool {
    (1..=MAX_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The two-way mapping of one server's tool names (see the module doc).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolNames {
    to_safe: BTreeMap<String, String>,
    to_original: BTreeMap<String, String>,
}

impl ToolNames {
    /// The mapping of `names` (stable, collision-free).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> ToolNames {
        let all: BTreeSet<&str> = names.into_iter().collect();
        let mut map = ToolNames::default();
        // Valid names first: they keep their names whatever else the server offers.
        for n in all.iter().filter(|n| is_safe(n)) {
            map.insert(n, n.to_string());
        }
        for n in all.iter().filter(|n| !is_safe(n)) {
            let mut cleaned: String = n
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if cleaned.is_empty() {
                cleaned.push('_');
            }
            let hash = format!("{:08x}", xxhash_rust::xxh3::xxh3_64(n.as_bytes()) as u32);
            let mut candidate = cut(&cleaned, MAX_LEN);
            let mut round = 0u32;
            while map.to_original.contains_key(&candidate) {
                round += 1;
                let suffix = if round == 1 {
                    format!("_{hash}")
                } else {
                    format!("_{hash}{round}")
                };
                candidate = format!("{}{suffix}", cut(&cleaned, MAX_LEN - suffix.len()));
            }
            map.insert(n, candidate);
        }
        map
    }

    fn insert(&mut self, original: &str, safe: String) {
        self.to_original.insert(safe.clone(), original.to_string());
        self.to_safe.insert(original.to_string(), safe);
    }

    /// The name the model sees for the server's `original`.
    pub fn safe<'a>(&'a self, original: &'a str) -> &'a str {
        self.to_safe.get(original).map_or(original, String::as_str)
    }

    /// The server's name of what the model called `safe`; `None` for no offered tool.
    pub fn original(&self, safe: &str) -> Option<&str> {
        self.to_original.get(safe).map(String::as_str)
    }

    /// The names the model sees, sorted.
    pub fn offered(&self) -> Vec<&str> {
        self.to_original.keys().map(String::as_str).collect()
    }
}

/// The first `max` bytes of the ASCII string `s`.
fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_stay_and_others_are_mapped_both_ways() {
        let long = "x".repeat(80);
        let names = [
            "grep",
            "search.code",
            "search_code",
            "ns/read file",
            long.as_str(),
        ];
        let m = ToolNames::new(names);
        assert_eq!(m.safe("grep"), "grep");
        assert_eq!(m.safe("search_code"), "search_code");
        // search.code would become search_code, which is taken.
        let dotted = m.safe("search.code");
        assert!(is_safe(dotted) && dotted != "search_code", "{dotted}");
        assert_eq!(m.original(dotted), Some("search.code"));
        assert_eq!(m.safe("ns/read file"), "ns_read_file");
        assert_eq!(m.safe(&long).len(), MAX_LEN);
        for n in names {
            assert!(is_safe(m.safe(n)), "{n}");
            assert_eq!(m.original(m.safe(n)), Some(n));
        }
        assert_eq!(m.original("nosuch"), None);
    }

    #[test]
    fn the_mapping_does_not_depend_on_the_order() {
        let a = ToolNames::new(["a.b", "a_b", "a:b", "c"]);
        let b = ToolNames::new(["c", "a:b", "a_b", "a.b"]);
        assert_eq!(a, b);
        assert_eq!(a.offered().len(), 4);
    }
}
