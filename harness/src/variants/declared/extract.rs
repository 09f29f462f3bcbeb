//! Extractors: one tool response → ranked [`Location`]s (a file path, and optionally a
//! line or a symbol defined in that file), in the order the server gave them.
//!
//! Two kinds, as the declaration says:
//! - pointers into `structuredContent` (or into the text parsed as JSON, for servers
//!   that return JSON as text): `items` is a JSON pointer where a `*` segment walks
//!   every element of an array or value of an object (`/results/*`), then `path`,
//!   `line` and `symbol` are pointers relative to each item;
//! - a regex over the text content with named groups `path` and optional `line` or
//!   `symbol`, one location per match.

use regex::Regex;
use serde_json::Value;

/// Where a response points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// As the server wrote it (absolute or relative to the root); the policy
    /// normalizes it.
    pub path: String,
    pub line: Option<usize>,
    pub symbol: Option<String>,
}

/// A compiled extractor.
#[derive(Debug, Clone)]
pub enum Extractor {
    Pointer {
        items: Vec<String>,
        path: String,
        line: Option<String>,
        symbol: Option<String>,
    },
    Regex(Regex),
}

/// Splits a pointer into unescaped segments (`~1` is `/`, `~0` is `~`); the error says
/// what a pointer must look like.
pub fn segments(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!(
            "pointer \"{pointer}\" must start with '/' (e.g. \"/results/*\"), or be \"\" for the whole value"
        ));
    };
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// Every value `segs` reaches from `v` (`*` fans out).
fn walk<'v>(v: &'v Value, segs: &[String]) -> Vec<&'v Value> {
    let Some((first, rest)) = segs.split_first() else {
        return vec![v];
    };
    let next: Vec<&Value> = match (first.as_str(), v) {
        ("*", Value::Array(a)) => a.iter().collect(),
        ("*", Value::Object(o)) => o.values().collect(),
        (key, Value::Object(o)) => o.get(key).into_iter().collect(),
        (key, Value::Array(a)) => key
            .parse::<usize>()
            .ok()
            .and_then(|i| a.get(i))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    next.into_iter().flat_map(|n| walk(n, rest)).collect()
}

/// The first value `pointer` reaches inside `item`.
fn pick<'v>(item: &'v Value, pointer: &str) -> Option<&'v Value> {
    let segs = segments(pointer).ok()?;
    walk(item, &segs).into_iter().next()
}

fn as_line(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().map(|n| n as usize),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n| *n > 0)
}

impl Extractor {
    /// Locations in one response, in the server's order.
    pub fn extract(&self, structured: Option<&Value>, text: &str) -> Vec<Location> {
        match self {
            Extractor::Pointer {
                items,
                path,
                line,
                symbol,
            } => {
                let parsed;
                let root = match structured {
                    Some(v) => v,
                    None => match serde_json::from_str::<Value>(text) {
                        Ok(v) => {
                            parsed = v;
                            &parsed
                        }
                        Err(_) => return Vec::new(),
                    },
                };
                walk(root, items)
                    .into_iter()
                    .filter_map(|item| {
                        let p = pick(item, path)?.as_str()?.to_string();
                        Some(Location {
                            path: p,
                            line: line
                                .as_deref()
                                .and_then(|l| pick(item, l))
                                .and_then(as_line),
                            symbol: symbol
                                .as_deref()
                                .and_then(|s| pick(item, s))
                                .and_then(Value::as_str)
                                .map(str::to_string),
                        })
                    })
                    .collect()
            }
            Extractor::Regex(re) => re
                .captures_iter(text)
                .filter_map(|c| {
                    Some(Location {
                        path: c.name("path")?.as_str().trim().to_string(),
                        line: c.name("line").and_then(|m| m.as_str().parse().ok()),
                        symbol: c.name("symbol").map(|m| m.as_str().to_string()),
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pointer(items: &str, path: &str, line: Option<&str>, symbol: Option<&str>) -> Extractor {
        Extractor::Pointer {
            items: segments(items).unwrap(),
            path: path.into(),
            line: line.map(Into::into),
            symbol: symbol.map(Into::into),
        }
    }

    #[test]
    fn pointers_walk_arrays_and_objects() {
        let v = json!({"results": [
            {"file": "a.py", "line": 3},
            {"file": "b.py", "line": "7"},
            {"nofile": 1},
        ]});
        let e = pointer("/results/*", "/file", Some("/line"), None);
        let got = e.extract(Some(&v), "");
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[1],
            Location {
                path: "b.py".into(),
                line: Some(7),
                symbol: None
            }
        );

        let by_file = json!({"files": {"x": {"path": "x.py", "symbols": {"name": "f"}}}});
        let e = pointer("/files/*", "/path", None, Some("/symbols/name"));
        assert_eq!(
            e.extract(Some(&by_file), "")[0].symbol.as_deref(),
            Some("f")
        );

        let list = json!(["a.py", "b.py"]);
        let e = pointer("/*", "", None, None);
        assert_eq!(e.extract(Some(&list), "").len(), 2);
    }

    #[test]
    fn text_that_is_json_is_read_as_structured() {
        let e = pointer("/matches/*", "/path", None, None);
        let got = e.extract(None, r#"{"matches": [{"path": "z.py"}]}"#);
        assert_eq!(got[0].path, "z.py");
        assert!(e.extract(None, "not json").is_empty());
    }

    #[test]
    fn regex_yields_path_line_and_symbol() {
        let re = Regex::new(r"(?m)^(?P<path>\S+\.py):(?P<line>\d+):(?P<symbol>\w+)?").unwrap();
        let got = Extractor::Regex(re).extract(None, "pkg/a.py:12:run\nnoise\npkg/b.py:4:\n");
        assert_eq!(
            got,
            vec![
                Location {
                    path: "pkg/a.py".into(),
                    line: Some(12),
                    symbol: Some("run".into())
                },
                Location {
                    path: "pkg/b.py".into(),
                    line: Some(4),
                    symbol: None
                },
            ]
        );
    }

    #[test]
    fn pointers_must_start_with_a_slash() {
        assert!(
            segments("results")
                .unwrap_err()
                .contains("must start with '/'")
        );
        assert_eq!(segments("/a~1b/~0c").unwrap(), ["a/b", "~c"]);
    }
}
