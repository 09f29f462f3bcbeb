//! The per-function corpus of the paper's BM25 baseline: one document per function and
//! per method, in the CoRNStack / SweRank format that LocAgent's evaluation reads back
//! (`evaluation/eval_metric.py`, the `docs` key).
//!
//! That format comes from SweRank's `find_py_or_non_dict_with_path` over an
//! Agentless-style `parse_python_file` structure; reproduced here:
//! - Files: every `*.py` under the root (hidden directories too, `.git` aside; symlinked
//!   directories are not entered), read as strict UTF-8 with universal newlines; a file
//!   that does not decode or that CPython's `ast.parse` rejects gives no document.
//!   Test files are left out by [`TestFilter`].
//! - Methods: the direct `def`s of every class anywhere in the file (nested and local
//!   classes too): id `path.py/Class/method` (the class's bare name), text
//!   `id + "\n" + "class Class:" + source`, the `class` line glued to the method's first
//!   line as SweRank writes it. One departure: a class nested directly in other
//!   classes is named with them, `path.py/Outer.Inner/method`, where SweRank writes
//!   `Inner` alone, an id that reads back as `path.py:Inner.method`, which no gold
//!   ever holds (LocAgent's gold counts a nested class's lines for the outer class);
//!   the read-back (`navbench`'s bm25 variant) turns the dotted class into gold's id.
//! - Functions: every other `def` in `ast.walk` order (nested functions included) whose
//!   name is not, when the walk reaches it, the name of a direct method of a class
//!   reached earlier: id `path.py/name` (the bare name), text `id + "\n" + source`.
//! - Source: the file's lines from the `def` line (decorators left out) to `ast`'s end,
//!   split as Python's `str.splitlines` splits (form feeds and the other Unicode line
//!   breaks too, which can shift a document's lines as they shift SweRank's).
//! - Duplicate ids (a property's getter and setter, two nested `wrapper`s) are one
//!   document: at the first one's position, with the last one's text (a dict).
//! - No class or module documents.
//!
//! The other languages navbench reads (TS/JS, Java, Go, Rust; [`lang_documents`]) get
//! the same shape from their `navbench-lang` definitions, since no published corpus
//! exists for them: a method of a type is `path/Type/name`, the type by its
//! qualified name as gold names it (`Outer.Inner` for a Java inner class, `ns.Cart`
//! in a TS namespace, `inner.Cart` in a Rust `mod`; Go methods by receiver, Rust
//! methods by `impl` type); a constructor (Java, TS/JS `constructor`) is `path/Type`,
//! which reads back as the type, gold's id for an edit in a constructor (a Python
//! `__init__` keeps the paper's `path.py/Class/__init__`); a module-level function `path/qualname`
//! (`inner.parse`), a nested function or closure bound to a name `path/name`, text
//! `id + "\n" + source`, and a file the parser had to recover from still counts.
//!
//! Deliberate differences: `async def`s are functions and methods here (SweRank's copy
//! of `parse_python_file` drops them, LocAgent's own keeps them); paths are
//! repo-relative for root-level files too (SweRank prefixes those with the checkout's
//! directory name).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use navbench_lang::family::family_of;
use navbench_lang::{DefKind, Language, language_for_path};
use navbench_python::{Entity, EntityKind, parse_module, universal_newlines};

/// Which files are tests, left out of the corpus (SweRank's `'test' in path` check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TestFilter {
    /// `test` anywhere in the lower-cased repo-relative path (SweRank's rule).
    #[default]
    Path,
    /// `test` in the lower-cased file name only: SweRank's exception for a repository
    /// whose own source lives under a directory named like a test (pytest's
    /// `src/_pytest`), where the path rule would leave almost nothing.
    FileName,
}

impl TestFilter {
    /// Parses the tool argument (`path` or `file_name`).
    pub fn parse(value: &str) -> Option<TestFilter> {
        match value {
            "path" => Some(TestFilter::Path),
            "file_name" => Some(TestFilter::FileName),
            _ => None,
        }
    }

    /// The argument's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TestFilter::Path => "path",
            TestFilter::FileName => "file_name",
        }
    }

    /// Whether the file at repo-relative `rel` is a test file.
    pub fn is_test(self, rel: &str) -> bool {
        let checked = match self {
            TestFilter::Path => rel,
            TestFilter::FileName => rel.rsplit('/').next().unwrap_or(rel),
        };
        checked.to_lowercase().contains("test")
    }
}

/// One document: a function or a method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDoc {
    /// SweRank's document id: `path.py/Class/method` or `path.py/function`.
    pub id: String,
    /// Repo-relative path of the file.
    pub file: String,
    /// First line of the definition the text comes from (the `def` line).
    pub start_line: usize,
    /// Its last line (`ast`'s `end_lineno`).
    pub end_line: usize,
    /// The indexed text.
    pub text: String,
}

/// Python's `str.splitlines()` on text whose `\r` were already translated: splits on
/// `\n`, `\x0b`, `\x0c`, `\x1c`-`\x1e`, `\x85`, U+2028 and U+2029; no trailing empty line.
pub fn py_splitlines(text: &str) -> Vec<&str> {
    let is_break = |c: char| {
        matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        )
    };
    if text.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = text.split(is_break).collect();
    if text.ends_with(is_break) {
        lines.pop();
    }
    lines
}

/// The documents of one file (`rel`, its text already in universal newlines), in
/// SweRank's order: functions, then each class's methods; `None` when CPython would
/// reject the file.
pub fn file_documents(rel: &str, text: &str) -> Option<Vec<FunctionDoc>> {
    if !rel.ends_with(".py") {
        return language_for_path(rel).map(|l| lang_documents(rel, text, l));
    }
    let module = parse_module(text);
    if module.has_syntax_errors() {
        return None;
    }
    let entities = &module.entities;
    let lines = py_splitlines(text);
    let mut methods: Vec<Vec<usize>> = vec![Vec::new(); entities.len()];
    for (i, e) in entities.iter().enumerate() {
        if let Some(p) = e.parent
            && e.kind == EntityKind::Function
            && !e.conditional
            && entities.get(p).is_some_and(|c| c.kind == EntityKind::Class)
        {
            methods[p].push(i);
        }
    }
    let mut method_names: HashSet<&str> = HashSet::new();
    let mut functions: Vec<usize> = Vec::new();
    let mut classes: Vec<usize> = Vec::new();
    for &i in &module.walk_order {
        let e = &entities[i];
        match e.kind {
            EntityKind::Class => {
                classes.push(i);
                method_names.extend(methods[i].iter().map(|&m| entities[m].name.as_str()));
            }
            EntityKind::Function if !method_names.contains(e.name.as_str()) => functions.push(i),
            EntityKind::Function => {}
        }
    }
    let mut docs = DocList::default();
    for &f in &functions {
        let e = &entities[f];
        let id = format!("{rel}/{}", e.name);
        let text = format!("{id}\n{}", source_of(&lines, e));
        docs.insert(id, rel, e, text);
    }
    for &c in &classes {
        let class = &entities[c];
        let owner = class_path(entities, c);
        for &m in &methods[c] {
            let e = &entities[m];
            let id = format!("{rel}/{owner}/{}", e.name);
            let text = format!("{id}\nclass {}:{}", class.name, source_of(&lines, e));
            docs.insert(id, rel, e, text);
        }
    }
    Some(docs.docs)
}

/// The class part of a method's id for class `c`: its bare name, or, for a class
/// nested directly in other classes, the enclosing classes' names and its own joined
/// by `.` (`Cart.Line`), so that the id keeps the outer class (see the module docs).
fn class_path(entities: &[Entity], c: usize) -> String {
    let mut names = vec![entities[c].name.as_str()];
    let mut at = entities[c].parent;
    while let Some(p) = at.filter(|&p| entities[p].kind == EntityKind::Class) {
        names.push(&entities[p].name);
        at = entities[p].parent;
    }
    names.reverse();
    names.join(".")
}

/// The documents of a file in another language (see the module docs), in source
/// order.
pub fn lang_documents(rel: &str, text: &str, language: &dyn Language) -> Vec<FunctionDoc> {
    let parsed = language.parse(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut docs = DocList::default();
    for d in parsed.definitions.iter().filter(|d| d.kind.is_callable()) {
        let owner = match d.kind {
            DefKind::Method | DefKind::Constructor => d.container.as_deref(),
            _ => None,
        };
        // The type's qualified name (`Outer.Inner`, `inner.Cart` in a Rust `mod`) and a
        // module-level function's (`inner.parse`): the ids gold gives them. Nested
        // functions keep their bare name, as in the Python corpus.
        let id = match owner {
            // A constructor is its type in gold (as `__init__` is under LocAgent's
            // `merge_init`): `path/Type` reads back as `path:Type`.
            Some(t) if d.kind == DefKind::Constructor => format!("{rel}/{t}"),
            Some(t) => format!("{rel}/{t}/{}", d.name),
            None if d.module_level => format!("{rel}/{}", d.qualname),
            None => format!("{rel}/{}", d.name),
        };
        let end = d.end_line.min(lines.len());
        let start = d.start_line.saturating_sub(1).min(end);
        let text = format!("{id}\n{}", lines[start..end].join("\n"));
        docs.insert_lines(id, rel, (d.start_line, d.end_line), text);
    }
    docs.docs
}

/// The definition's lines, `lines[start_line - 1 .. end_line]` as Python slices them.
fn source_of(lines: &[&str], e: &Entity) -> String {
    let end = e.end_line.min(lines.len());
    let start = e.start_line.saturating_sub(1).min(end);
    lines[start..end].join("\n")
}

/// Documents by id, in first-insertion order, the last insertion's text winning.
#[derive(Default)]
struct DocList {
    docs: Vec<FunctionDoc>,
    at: HashMap<String, usize>,
}

impl DocList {
    fn insert(&mut self, id: String, rel: &str, e: &Entity, text: String) {
        self.insert_lines(id, rel, (e.start_line, e.end_line), text);
    }

    fn insert_lines(
        &mut self,
        id: String,
        rel: &str,
        (start_line, end_line): (usize, usize),
        text: String,
    ) {
        let doc = FunctionDoc {
            id: id.clone(),
            file: rel.to_string(),
            start_line,
            end_line,
            text,
        };
        match self.at.get(&id) {
            Some(&i) => self.docs[i] = doc,
            None => {
                self.at.insert(id, self.docs.len());
                self.docs.push(doc);
            }
        }
    }
}

/// A source file of the tree (Python, or a language with a `navbench-lang` front end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Repo-relative, `/`-separated path.
    pub rel: String,
    /// Path on disk.
    pub abs: PathBuf,
}

/// Every source file under `root` (`*.py` and the files a `navbench-lang` front end
/// reads), sorted by relative path: hidden directories included, `.git` skipped,
/// symlinked directories not entered (as `os.walk`), symlinks to files kept.
pub fn source_files(root: &Path) -> std::io::Result<Vec<SourceFile>> {
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if name != ".git" {
                    stack.push((entry.path(), rel));
                }
            } else if family_of(&name).is_some()
                && (kind.is_file() || std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()))
            {
                out.push(SourceFile {
                    rel,
                    abs: entry.path(),
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// Reads a file as SweRank does (`open(path, "r")`: strict UTF-8, universal
/// newlines); `None` when it does not decode.
pub fn read_source(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    Some(universal_newlines(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_corpus_splitlines_matches_python() {
        assert_eq!(py_splitlines("a\nb\n"), ["a", "b"]);
        assert_eq!(py_splitlines("a\n\nb"), ["a", "", "b"]);
        assert_eq!(py_splitlines("a\x0cb\n"), ["a", "b"]);
        assert!(py_splitlines("").is_empty());
    }

    #[test]
    fn functions_corpus_test_filters() {
        assert!(TestFilter::Path.is_test("pkg/tests/util.py"));
        assert!(TestFilter::Path.is_test("src/_pytest/python.py"));
        assert!(TestFilter::Path.is_test("pkg/Testing.py"));
        assert!(!TestFilter::Path.is_test("pkg/core.py"));
        assert!(!TestFilter::FileName.is_test("src/_pytest/python.py"));
        assert!(TestFilter::FileName.is_test("testing/test_foo.py"));
        assert_eq!(TestFilter::parse("file_name"), Some(TestFilter::FileName));
        assert_eq!(TestFilter::parse("all"), None);
    }
}
