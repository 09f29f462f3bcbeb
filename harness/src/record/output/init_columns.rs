//! The columns that split a row's `init_ms` into its parts ([`COLUMNS`]):
//! fingerprint, parse, graph, text index, vectors, write — as the server's indexing
//! calls report them in their result's `_meta` (`timings_ms`, see the servers'
//! `navbench_server_support::timings`; a declared server may report them in its
//! structured result instead). A row whose server reports none (the text
//! variant, a declared server that does not) leaves them empty.
//!
//! Parts a server runs concurrently each count their own wall time, so the parts can
//! sum to more than `init_ms`; what they leave out of `init_ms` is the call's own
//! overhead (arguments, answering, the transport).

use serde_json::Value;

/// The parts, in file order, as named in a server's `timings_ms`.
const PARTS: [&str; 6] = ["fingerprint", "parse", "graph", "text", "vectors", "write"];

/// The init-part columns, in file order (`init_{part}_ms`).
pub const COLUMNS: [&str; 6] = [
    "init_fingerprint_ms",
    "init_parse_ms",
    "init_graph_ms",
    "init_text_ms",
    "init_vectors_ms",
    "init_write_ms",
];

/// Milliseconds per part of a row's indexing calls, in [`COLUMNS`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InitParts(pub [f64; 6]);

impl InitParts {
    /// The parts an indexing call's structured result reports (`timings_ms`: an
    /// object of `{part}_ms` numbers; unknown keys are ignored, missing ones are 0);
    /// `None` when it reports none.
    pub fn from_result(structured: &Value) -> Option<InitParts> {
        InitParts::from_object(structured.as_object()?)
    }

    /// [`InitParts::from_result`] on a JSON object: a result's `_meta` or its
    /// structured content.
    pub fn from_object(object: &serde_json::Map<String, Value>) -> Option<InitParts> {
        let t = object.get("timings_ms")?.as_object()?;
        let mut parts = [0.0; 6];
        for (slot, name) in parts.iter_mut().zip(PARTS) {
            *slot = t
                .get(&format!("{name}_ms"))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
        }
        Some(InitParts(parts))
    }

    /// The sum of `self` and `other`, part by part (a variant with several indexing
    /// calls).
    pub fn plus(self, other: InitParts) -> InitParts {
        let mut sum = self.0;
        for (s, o) in sum.iter_mut().zip(other.0) {
            *s += o;
        }
        InitParts(sum)
    }

    /// Milliseconds of `part` (`fingerprint`, `parse`, …; 0 when unknown).
    pub fn ms(&self, part: &str) -> f64 {
        PARTS
            .iter()
            .position(|p| *p == part)
            .map_or(0.0, |i| self.0[i])
    }
}

/// The cells of `parts` (all empty when the server reported none).
pub fn cells(parts: Option<&InitParts>) -> Vec<String> {
    match parts {
        None => vec![String::new(); COLUMNS.len()],
        Some(p) => p.0.iter().map(|x| format!("{x:.3}")).collect(),
    }
}

/// The parts read back from a row's cells by column name; `None` when the row has
/// none (empty cells, or a file written before these columns existed).
pub fn read(get: impl Fn(&str) -> String) -> Option<InitParts> {
    let mut parts = [0.0; 6];
    for (slot, c) in parts.iter_mut().zip(COLUMNS) {
        *slot = get(c).parse().ok()?;
    }
    Some(InitParts(parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_parts_come_from_timings_ms_and_read_back() {
        let result = serde_json::json!({
            "documents": 3,
            "timings_ms": {"fingerprint_ms": 1.5, "parse_ms": 20.0, "text_ms": 4.25, "other_ms": 9.0}
        });
        let p = InitParts::from_result(&result).unwrap();
        assert_eq!(p.0, [1.5, 20.0, 0.0, 4.25, 0.0, 0.0]);
        assert_eq!(p.plus(p).ms("parse"), 40.0);
        assert_eq!(p.ms("nothing"), 0.0);
        assert!(InitParts::from_result(&serde_json::json!({"documents": 3})).is_none());
        let c = cells(Some(&p));
        let get = |name: &str| {
            COLUMNS
                .iter()
                .position(|x| *x == name)
                .map(|i| c[i].clone())
                .unwrap_or_default()
        };
        assert_eq!(read(get), Some(p));
        let empty = cells(None);
        assert!(empty.iter().all(String::is_empty));
        assert_eq!(read(|_| String::new()), None);
    }
}
