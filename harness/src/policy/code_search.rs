//! Reading the codegraph server's `search_code` results as an agent reads them: each
//! hit with the terms that found it, where it came from (a definition of the name, or
//! BM25 over entity names or code), and the entities it shows.

use serde_json::Value;

use super::entities::EntityIndex;
use super::is_test_file;
use crate::data::dataset::push_unique;
use std::path::Path;

/// Where a hit came from, read off its `Source:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An entity whose name (or id) is the term: the term names it.
    Name,
    /// BM25 over entity ids, or its fuzzy fallback.
    Bm25Entity,
    /// BM25 over code chunks.
    Bm25Content,
}

/// One result of `search_code` (its `SearchHit` wire shape plus the group's terms).
#[derive(Debug, Clone, PartialEq)]
pub struct CodeHit {
    /// The terms whose results group holds this hit.
    pub terms: Vec<String>,
    /// Graph node id (the file for a code snippet).
    pub id: String,
    /// `file`, `class`, `function` or `directory`.
    pub kind: String,
    /// `complete`, `code_snippet`, `preview` or `fold`.
    pub format: String,
    pub file: String,
    pub start_line: Option<usize>,
    pub end_line: Option<usize>,
    pub origin: Origin,
    /// A BM25 content hit's rank among the call's content hits (1 = best), when the
    /// server reports it (the text groups hits by file and does not show it).
    pub bm25_rank: Option<usize>,
}

impl CodeHit {
    /// True for classes and functions.
    pub fn is_entity(&self) -> bool {
        self.kind == "class" || self.kind == "function"
    }

    /// The entities this hit shows, as graph ids (which LocAgent's module and function
    /// ids are a subset of): the entity itself, or for a code snippet the functions (or
    /// else classes and top-level functions) holding its lines, in line order.
    pub fn entities(&self, index: &mut EntityIndex, root: &Path) -> Vec<String> {
        if self.is_entity() {
            return vec![self.id.clone()];
        }
        let mut out = Vec::new();
        if self.format != "code_snippet" {
            return out;
        }
        if let (Some(start), Some(end)) = (self.start_line, self.end_line) {
            // A chunk is at most a few hundred lines; the cap guards a malformed span.
            for line in start..=end.min(start + MAX_SNIPPET_LINES) {
                let ids = index.ids_at(root, &self.file, line);
                if let Some(id) = ids.function.or(ids.module) {
                    push_unique(&mut out, id);
                }
            }
        }
        out
    }
}

/// Longest span of a code snippet mapped line by line to entities.
const MAX_SNIPPET_LINES: usize = 400;

fn origin_of(source: &str) -> Origin {
    if source.contains("code content") {
        Origin::Bm25Content
    } else if source
        .to_ascii_lowercase()
        .contains("match found for entity name")
    {
        Origin::Name
    } else {
        Origin::Bm25Entity
    }
}

/// The hits of a `search_code` structured result, in display order, test files
/// dropped (LocAgent's tools hide them too). Missing fields make a hit unusable, not
/// an error: the policy goes on with the rest.
pub fn parse(structured: Option<&Value>) -> Vec<CodeHit> {
    let Some(groups) = structured
        .and_then(|v| v.get("groups"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in groups {
        let terms: Vec<String> = g
            .get("terms")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(String::from))
            .collect();
        for h in g
            .get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let n = |k: &str| h.get(k).and_then(Value::as_u64).map(|v| v as usize);
            let hit = CodeHit {
                terms: terms.clone(),
                id: s("id"),
                kind: s("type"),
                format: s("format"),
                file: s("file"),
                start_line: n("start_line"),
                end_line: n("end_line"),
                origin: origin_of(&s("source")),
                bm25_rank: n("bm25_rank"),
            };
            if !hit.file.is_empty() && !hit.id.is_empty() && !is_test_file(&hit.file) {
                out.push(hit);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `search_code` result as the server sends it for two terms (the joint term
    /// added), with a name match, a folded name, a BM25 snippet and a test-file hit.
    fn sample() -> Value {
        json!({"terms": ["from_file", "load", "from_file load"], "content_search": true,
        "groups": [
          {"terms": ["from_file"], "results": [
            {"format": "preview", "id": "src/flask/config.py:Config.from_file", "type": "function",
             "file": "src/flask/config.py", "start_line": 5, "end_line": 9,
             "source": "Match found for entity name `from_file`."}]},
          {"terms": ["load", "from_file load"], "results": [
            {"format": "code_snippet", "id": "src/flask/config.py", "type": "file",
             "file": "src/flask/config.py", "start_line": 3, "end_line": 6,
             "source": "Retrieved code content using keyword search (bm25)."},
            {"format": "fold", "id": "tests/test_config.py:test_load", "type": "function",
             "file": "tests/test_config.py", "start_line": 1, "end_line": 2,
             "source": "Retrieved entity using keyword search (bm25)."},
            {"format": "fold", "id": "src/flask/json/__init__.py:load", "type": "function",
             "file": "src/flask/json/__init__.py", "start_line": 1, "end_line": 2,
             "source": "Retrieved entity using keyword search (bm25)."}]}
        ]})
    }

    #[test]
    fn hits_keep_their_terms_and_origin_and_drop_tests() {
        let hits = parse(Some(&sample()));
        assert_eq!(hits.len(), 3);
        assert_eq!(hits[0].origin, Origin::Name);
        assert_eq!(hits[0].terms, ["from_file"]);
        assert_eq!(hits[1].origin, Origin::Bm25Content);
        assert_eq!(hits[1].terms, ["load", "from_file load"]);
        assert_eq!(hits[2].origin, Origin::Bm25Entity);
        assert!(hits.iter().all(|h| !h.file.starts_with("tests/")));
        assert!(parse(None).is_empty());
        assert!(parse(Some(&json!({"groups": "x"}))).is_empty());
    }

    #[test]
    fn a_snippet_shows_the_entities_holding_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let src = "import os\n\nclass Config:\n    x = 1\n    def from_file(self, f):\n        return load(f)\n\ndef load(f):\n    return f\n";
        std::fs::create_dir_all(dir.path().join("src/flask")).unwrap();
        std::fs::write(dir.path().join("src/flask/config.py"), src).unwrap();
        let hits = parse(Some(&sample()));
        let mut index = EntityIndex::default();
        assert_eq!(
            hits[1].entities(&mut index, dir.path()),
            [
                "src/flask/config.py:Config",
                "src/flask/config.py:Config.from_file"
            ]
        );
        assert_eq!(
            hits[0].entities(&mut index, dir.path()),
            ["src/flask/config.py:Config.from_file"]
        );
    }
}
