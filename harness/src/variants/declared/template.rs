//! Argument templates: strings with `{field}` placeholders filled from the instance
//! (`{problem_statement}`, `{identifier}`, …) or from the launch (`{root}`, `{cache}`,
//! `{install}`). `{{` and `}}` stand for literal braces (a regex's `\d{{2}}`).
//!
//! Which fields exist depends on where the template is: [`LAUNCH_FIELDS`] in
//! `[server]`, [`step_fields`] in a step (plus the item fields of its `for_each`).
//! A template naming any other field is refused before the run, by
//! [`super::validate`].

use std::collections::BTreeMap;

use serde_json::Value;

/// Fields of `[server]` templates.
/// `port` is a free loopback port, picked per launch, for a server over HTTP.
pub const LAUNCH_FIELDS: &[&str] = &["root", "cache", "install", "port"];

/// Fields of every step and setup call.
pub const BASE_FIELDS: &[&str] = &[
    "root",
    "problem_statement",
    "identifiers",
    "identifiers_regex",
];

/// The `for_each` values and the item fields each adds.
pub const FOR_EACH: &[(&str, &[&str])] = &[
    ("identifiers", &["identifier", "identifier_regex"]),
    ("words", &["word", "word_regex"]),
    ("paths", &["path", "path_name"]),
    ("frames", &["frame_path", "frame_line", "frame_func"]),
];

/// Fields a step with `for_each` (or none) may name.
pub fn step_fields(for_each: Option<&str>) -> Vec<&'static str> {
    let mut out = BASE_FIELDS.to_vec();
    if let Some((_, extra)) = FOR_EACH.iter().find(|(k, _)| Some(*k) == for_each) {
        out.extend_from_slice(extra);
    }
    out
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Lit(String),
    Field(String),
}

/// A parsed template string.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Part>);

impl Template {
    /// Parses `s`; the error says which brace is unbalanced.
    pub fn parse(s: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|p| p.1) == Some('{') => {
                    chars.next();
                    lit.push('{');
                }
                '}' if chars.peek().map(|p| p.1) == Some('}') => {
                    chars.next();
                    lit.push('}');
                }
                '{' => {
                    let rest = &s[i + 1..];
                    let Some(end) = rest.find('}') else {
                        return Err(format!(
                            "'{{' at offset {i} of \"{s}\" is never closed; write '{{{{' for a literal brace"
                        ));
                    };
                    if !lit.is_empty() {
                        parts.push(Part::Lit(std::mem::take(&mut lit)));
                    }
                    parts.push(Part::Field(rest[..end].trim().to_string()));
                    for _ in 0..=rest[..end].chars().count() {
                        chars.next();
                    }
                }
                '}' => {
                    return Err(format!(
                        "'}}' at offset {i} of \"{s}\" closes nothing; write '}}}}' for a literal brace"
                    ));
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(Template(parts))
    }

    /// The fields the template names, in order.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Part::Field(f) => Some(f.as_str()),
            Part::Lit(_) => None,
        })
    }

    /// The text with every field replaced; a field missing from `values` is an error
    /// (validation makes that impossible for a loaded file).
    pub fn render(&self, values: &BTreeMap<&str, String>) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Field(f) => match values.get(f.as_str()) {
                    Some(v) => out.push_str(v),
                    None => return Err(format!("template field {{{f}}} has no value here")),
                },
            }
        }
        Ok(out)
    }
}

/// Every string inside `v` (values of tables and arrays, not keys).
pub fn strings_in(v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::String(s) => out.push(s.clone()),
        toml::Value::Array(a) => a.iter().for_each(|x| strings_in(x, out)),
        toml::Value::Table(t) => t.values().for_each(|x| strings_in(x, out)),
        _ => {}
    }
}

/// `args` as JSON with every string rendered as a template over `values`.
pub fn render_args(args: &toml::Table, values: &BTreeMap<&str, String>) -> Result<Value, String> {
    fn conv(v: &toml::Value, values: &BTreeMap<&str, String>) -> Result<Value, String> {
        Ok(match v {
            toml::Value::String(s) => Value::String(Template::parse(s)?.render(values)?),
            toml::Value::Integer(i) => Value::from(*i),
            toml::Value::Float(f) => Value::from(*f),
            toml::Value::Boolean(b) => Value::Bool(*b),
            toml::Value::Datetime(d) => Value::String(d.to_string()),
            toml::Value::Array(a) => Value::Array(
                a.iter()
                    .map(|x| conv(x, values))
                    .collect::<Result<_, _>>()?,
            ),
            toml::Value::Table(t) => Value::Object(
                t.iter()
                    .map(|(k, x)| Ok((k.clone(), conv(x, values)?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }
    conv(&toml::Value::Table(args.clone()), values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> BTreeMap<&'static str, String> {
        BTreeMap::from([
            ("identifier", "merge_setting".to_string()),
            ("root", "/w".to_string()),
        ])
    }

    #[test]
    fn renders_fields_and_escaped_braces() {
        let t = Template::parse(r"\b{identifier}\b \d{{2}}").unwrap();
        assert_eq!(t.fields().collect::<Vec<_>>(), ["identifier"]);
        assert_eq!(t.render(&vals()).unwrap(), r"\bmerge_setting\b \d{2}");
        assert_eq!(
            Template::parse("{ root }/x")
                .unwrap()
                .render(&vals())
                .unwrap(),
            "/w/x"
        );
    }

    #[test]
    fn unbalanced_braces_and_missing_values_are_errors() {
        let e = Template::parse("a{b").unwrap_err();
        assert!(e.contains("never closed") && e.contains("'{{'"), "{e}");
        let e = Template::parse("a}b").unwrap_err();
        assert!(e.contains("closes nothing"), "{e}");
        let e = Template::parse("{nope}")
            .unwrap()
            .render(&vals())
            .unwrap_err();
        assert!(e.contains("{nope}"), "{e}");
    }

    #[test]
    fn args_render_recursively_and_keep_types() {
        let args: toml::Table =
            toml::from_str("pattern = '{identifier}'\nmax = 3\nlist = ['{root}', true]").unwrap();
        let v = render_args(&args, &vals()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"pattern": "merge_setting", "max": 3, "list": ["/w", true]})
        );
    }

    #[test]
    fn step_fields_follow_for_each() {
        assert!(step_fields(Some("frames")).contains(&"frame_line"));
        assert!(!step_fields(None).contains(&"identifier"));
        assert!(step_fields(Some("identifiers")).contains(&"identifier_regex"));
    }
}
