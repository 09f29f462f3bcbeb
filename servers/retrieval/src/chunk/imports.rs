//! Which names the imports of a TypeScript/JavaScript, Java, Go or Rust file bind, so
//! a chunk's `imports_used` lists the imports whose names it mentions, and the
//! identifier scan that finds those mentions.
//!
//! The front end gives each import's module path and lines
//! ([`navbench_lang::Import`]); the bound name is read from them:
//! - Java: the path's last segment (`java.util.List` → `List`; `a.b.*` binds nothing
//!   nameable);
//! - Go: the alias written before the path (`str "strings"`), else the path's last
//!   segment without a major-version suffix (`net/http` → `http`,
//!   `github.com/x/y/v2` → `y`, `gopkg.in/yaml.v3` → `yaml`); `_` and `.` bind nothing;
//! - Rust: the path's last segment (`std::collections::HashMap` → `HashMap`,
//!   `a::b::self` → `b`; globs bind nothing);
//! - TS/JS: the identifiers of the statement outside its string literals and keywords
//!   (`import React, { useState as useS } from 'react'` → `React`, `useState`,
//!   `useS`; `const { a, b } = require('m')` → `a`, `b`; `import './polyfill'`
//!   nothing), else, for a `require` inside another statement, the module's last path
//!   segment (`module.exports = require('./lib/express')` → `express`).
//!
//! A mention is an identifier token anywhere in the chunk's lines (strings and
//! comments included): cheap, and a false positive only adds an import to a list.

use navbench_lang::Import;

/// Keywords an ECMAScript import or `require` statement uses around the names it binds.
const ECMA_WORDS: &[&str] = &[
    "import", "export", "from", "as", "type", "typeof", "require", "const", "let", "var", "default",
];

/// The identifier tokens of `text` (runs of letters, digits, `_` and `$` that do not
/// start with a digit), in order.
pub(crate) fn identifiers(text: &str) -> Vec<&str> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.split(|c: char| !is_ident(c))
        .filter(|t| t.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .collect()
}

/// (bound name, module path as the front end gives it) for each import of a file in
/// the language `lang` (a [`navbench_lang::Language::name`]); `lines` are the file's.
pub(super) fn bindings(lang: &str, imports: &[Import], lines: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for import in imports {
        let statement = lines
            .get(import.start_line.saturating_sub(1)..import.end_line.min(lines.len()))
            .map(|l| l.join("\n"))
            .unwrap_or_default();
        let names: Vec<String> = match lang {
            "java" => last_segment(&import.module, ".").into_iter().collect(),
            "go" => go_name(&import.module, &statement).into_iter().collect(),
            "rust" => rust_name(&import.module).into_iter().collect(),
            _ => ecma_names(&import.module, &statement),
        };
        out.extend(names.into_iter().map(|n| (n, import.module.clone())));
    }
    out
}

/// The last `sep`-separated segment of `path`, unless it is a glob or empty.
fn last_segment(path: &str, sep: &str) -> Option<String> {
    let last = path.rsplit(sep).next().unwrap_or(path).trim();
    (!last.is_empty() && last != "*").then(|| last.to_string())
}

/// The package name a Go import binds (see the module docs).
fn go_name(path: &str, statement: &str) -> Option<String> {
    // The spec's text before the quoted path: an alias, `_` or `.`.
    let before = statement
        .split(['"', '`'])
        .next()
        .unwrap_or("")
        .trim()
        .trim_start_matches("import")
        .trim()
        .trim_start_matches('(')
        .trim();
    match before {
        "_" | "." => return None,
        alias if !alias.is_empty() && identifiers(alias) == [alias] => {
            return Some(alias.to_string());
        }
        _ => {}
    }
    let is_major =
        |s: &str| s.len() > 1 && s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit());
    let mut segments = path.rsplit('/');
    let mut last = segments.next()?;
    if is_major(last) {
        last = segments.next()?;
    }
    let last = match last.rsplit_once('.') {
        Some((stem, version)) if is_major(version) => stem,
        _ => last,
    };
    (!last.is_empty()).then(|| last.to_string())
}

/// The name a Rust `use` path binds (see the module docs).
fn rust_name(path: &str) -> Option<String> {
    let mut segments = path.rsplit("::");
    let last = segments.next()?;
    match last {
        "self" => segments.next().map(str::to_string),
        _ => last_segment(last, "::"),
    }
}

/// The names an ECMAScript import binds (see the module docs).
fn ecma_names(module: &str, statement: &str) -> Vec<String> {
    let trimmed = statement.trim_start();
    let declared = if trimmed.starts_with("import") || trimmed.starts_with("export") {
        // Names before the first string literal (the module).
        statement.split(['\'', '"', '`']).next().unwrap_or("")
    } else if ["const", "let", "var"]
        .iter()
        .any(|k| trimmed.starts_with(k))
    {
        statement.split('=').next().unwrap_or("")
    } else {
        ""
    };
    let names: Vec<String> = identifiers(declared)
        .into_iter()
        .filter(|w| !ECMA_WORDS.contains(w))
        .map(str::to_string)
        .collect();
    if !names.is_empty() || trimmed.starts_with("export") || trimmed.starts_with("import") {
        return names; // `import './polyfill'` binds nothing
    }
    let base = module
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(module);
    let base = base.split('.').next().unwrap_or(base);
    identifiers(base)
        .into_iter()
        .take(1)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(module: &str, line: usize) -> Import {
        Import {
            module: module.to_string(),
            start_line: line,
            end_line: line,
            binds: Vec::new(),
        }
    }

    #[test]
    fn bound_names_per_language() {
        let lines = ["import java.util.List;", "import java.util.*;"];
        let got = bindings(
            "java",
            &[import("java.util.List", 1), import("java.util.*", 2)],
            &lines,
        );
        assert_eq!(got, [("List".to_string(), "java.util.List".to_string())]);

        let lines = [
            "\"net/http\"",
            "str \"strings\"",
            "_ \"embed\"",
            "\"github.com/x/y/v2\"",
            "\"gopkg.in/yaml.v3\"",
        ];
        let mods = [
            "net/http",
            "strings",
            "embed",
            "github.com/x/y/v2",
            "gopkg.in/yaml.v3",
        ];
        let imports: Vec<Import> = mods
            .iter()
            .enumerate()
            .map(|(i, m)| import(m, i + 1))
            .collect();
        let names: Vec<String> = bindings("go", &imports, &lines)
            .into_iter()
            .map(|b| b.0)
            .collect();
        assert_eq!(names, ["http", "str", "y", "yaml"]);

        let lines = ["use std::collections::HashMap;", "use a::b::{self, *};"];
        let imports = [
            import("std::collections::HashMap", 1),
            import("a::b::self", 2),
            import("a::b::*", 2),
        ];
        let names: Vec<String> = bindings("rust", &imports, &lines)
            .into_iter()
            .map(|b| b.0)
            .collect();
        assert_eq!(names, ["HashMap", "b"]);

        let lines = [
            "import React, { useState as useS } from 'react';",
            "const { a, b } = require('./lib/m');",
            "module.exports = require('./lib/express');",
            "export * from './all';",
            "import './side-effect.css';",
        ];
        let imports = [
            import("react", 1),
            import("./lib/m", 2),
            import("./lib/express", 3),
            import("./all", 4),
            import("./side-effect.css", 5),
        ];
        let names: Vec<String> = bindings("typescript", &imports, &lines)
            .into_iter()
            .map(|b| b.0)
            .collect();
        assert_eq!(names, ["React", "useState", "useS", "a", "b", "express"]);
    }

    #[test]
    fn identifiers_skip_numbers_and_punctuation() {
        assert_eq!(
            identifiers("let $x = foo_bar(1, 2e3) + obj.y9;"),
            ["let", "$x", "foo_bar", "obj", "y9"]
        );
    }
}
