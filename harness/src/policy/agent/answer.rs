//! Reading an agent's final answer: one location per line, best first, in the form the
//! task prompt asks for ([`super::prompt`]):
//!
//! - `path/to/file.py` — a file;
//! - `path/to/file.py:Class` — a class;
//! - `path/to/file.py:Class.method` or `path/to/file.py:function` — a function.
//!
//! Other lines are ignored; list markers, numbering, backticks and a trailing comment
//! around a location are tolerated, as models add them. A function's file and class
//! count for the file and module rankings, in the order they first appear. Whether
//! `path:Name` names a class or a function is looked up in the checked-out tree
//! ([`EntityIndex`]), so the ids are LocAgent's (a method's module is its class; a
//! class is its own function-level id, as the scripted policies answer).

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::data::dataset::{Locations, push_unique};
use crate::policy::entities::EntityIndex;

/// A location line: an optional list marker, a relative path with an extension, and an
/// optional `:Qualified.name`.
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-*+•]|\d+[.)])?\s*`?(?P<path>[A-Za-z0-9_./\\-]*[A-Za-z0-9_-]\.[A-Za-z][A-Za-z0-9]*)(?::(?P<qual>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*))?`?(?:\s.*)?$",
    )
    .unwrap_or_else(|e| panic!("the location pattern is a constant that compiles: {e}"))
});

/// One location the answer named, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub path: String,
    /// The `Class`, `Class.method` or `function` after the colon, if any.
    pub qualname: Option<String>,
}

/// The locations `text` names, best first (see the module doc). `workdir` is stripped
/// from absolute paths, as agents often echo the root they were given.
pub fn parse_lines(text: &str, workdir: &Path) -> Vec<Named> {
    let root = workdir.to_string_lossy().trim_end_matches('/').to_string();
    let mut out = Vec::new();
    for raw in text.lines() {
        let line = raw.trim().trim_start_matches('>').trim();
        let line = line.strip_prefix(&root).unwrap_or(line);
        let line = line.trim_start_matches('/');
        let Some(c) = LOCATION.captures(line) else {
            continue;
        };
        let path = c["path"].replace('\\', "/");
        let path = path.trim_start_matches("./").to_string();
        if path.starts_with("../") || path.contains("/../") || path.contains("://") {
            continue;
        }
        let named = Named {
            path,
            qualname: c.name("qual").map(|q| q.as_str().to_string()),
        };
        if !out.contains(&named) {
            out.push(named);
        }
    }
    out
}

/// The answer as the ranking the scorer reads: files, modules and functions in the
/// order the answer first names them (see the module doc).
pub fn to_locations(named: &[Named], workdir: &Path) -> Locations {
    let mut index = EntityIndex::default();
    let mut loc = Locations::default();
    for n in named {
        push_unique(&mut loc.files, n.path.clone());
        let Some(qual) = &n.qualname else { continue };
        let ids = index.answer_ids_of(workdir, &n.path, qual);
        let first = qual.split('.').next().unwrap_or(qual);
        let module = ids.module.unwrap_or_else(|| format!("{}:{first}", n.path));
        push_unique(&mut loc.modules, module);
        // An entity the tree does not have is kept as named: the scorer simply finds
        // no gold there, and the answer's order is not disturbed.
        let function = ids.function.unwrap_or_else(|| format!("{}:{qual}", n.path));
        push_unique(&mut loc.functions, function);
    }
    loc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(
            dir.path().join("pkg/money.py"),
            "class Money:\n    def __init__(self, a):\n        self.a = a\n\n    def allocate(self, r):\n        def share(x):\n            return x\n        return r\n\n\ndef parse(s):\n    return Money(s)\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn locations_are_read_in_order_with_markers_and_noise_ignored() {
        let text = "Here is what I found:\n\n1. `pkg/money.py:Money.allocate`\n- pkg/money.py:parse  (builds Money)\n* pkg/money.py\npkg/money.py:Money.allocate\nThe bug is in allocate.\n";
        let named = parse_lines(text, Path::new("/w"));
        let got: Vec<(&str, Option<&str>)> = named
            .iter()
            .map(|n| (n.path.as_str(), n.qualname.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("pkg/money.py", Some("Money.allocate")),
                ("pkg/money.py", Some("parse")),
                ("pkg/money.py", None),
            ]
        );
    }

    #[test]
    fn absolute_paths_under_the_tree_are_made_relative() {
        let named = parse_lines(
            "/w/t/pkg/a.py:f\n./pkg/b.py\n../etc/passwd\n",
            Path::new("/w/t"),
        );
        let paths: Vec<&str> = named.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(paths, ["pkg/a.py", "pkg/b.py"]);
    }

    #[test]
    fn ids_follow_locagent_from_the_tree() {
        let dir = tree();
        let named = parse_lines(
            "pkg/money.py:Money.allocate\npkg/money.py:parse\npkg/money.py:Money\npkg/money.py:Money.__init__\npkg/other.py:Gone.f\n",
            dir.path(),
        );
        let loc = to_locations(&named, dir.path());
        assert_eq!(loc.files, ["pkg/money.py", "pkg/other.py"]);
        assert_eq!(
            loc.modules,
            [
                "pkg/money.py:Money",
                "pkg/money.py:parse",
                "pkg/other.py:Gone"
            ]
        );
        assert_eq!(
            loc.functions,
            [
                "pkg/money.py:Money.allocate",
                "pkg/money.py:parse",
                "pkg/money.py:Money",
                "pkg/other.py:Gone.f"
            ]
        );
    }

    #[test]
    fn prose_alone_gives_no_location() {
        let named = parse_lines(
            "I could not find it. Maybe look at the money module?\n1.2\nshopkeep 0.9.3",
            Path::new("/w"),
        );
        assert!(named.is_empty());
    }
}
