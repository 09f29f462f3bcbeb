//! Source before tests and derived code: the last step of every scripted policy.
//!
//! Someone new to a repository who is asked to fix an issue opens the source a
//! maintainer edits, not the tests that exercise it nor the files made from it. An
//! agent with these tools sees the same signs a person does: a test file's name
//! (`test_*.py`, `*.spec.ts`, `src/test/…`), a path under `dist/`, `build/`,
//! `vendor/`, `third_party/` or `node_modules/`, a `*.min.js` or `*.bundle.js` name,
//! a `// Code generated … DO NOT EDIT.` or `@generated` header, lines thousands of
//! characters long. The same person reads the top-level `docs/`, `examples/` and
//! `benchmarks/` for usage, not as the place to change. [`is_secondary_file`] is that
//! judgement, one rule for every language and repository: the conventions live in
//! `navbench_lang::family` (`is_test_file`, `is_derived_path`, `is_auxiliary_path`,
//! `is_derived_text`); the file's head is read from the checked-out tree, as an agent
//! would glance at it.
//!
//! [`source_first`] applies it to a policy's answer: at every level (files, modules,
//! functions) the entries of secondary files move below the others, each group in the
//! policy's own order, unless the issue names the file (its path, or its file name when
//! no source file in the answer has that name): an issue about a bundle or a test is
//! about that file. The run applies it to every scripted policy's answer
//! (`run::pipeline`, `navbench tune`) over the policy's whole pool before the answer
//! is cut (`fitted::finish`), so a demoted entry gives its place in the top ten to
//! the next source entry; never to an agent's: an agent's ranking is what is
//! measured. `text` also applies it to the files it chooses to read.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use navbench_lang::family::{is_auxiliary_path, is_derived_path, is_derived_text, is_test_file};

use crate::data::dataset::Locations;

/// Bytes of a file's head read for [`is_derived_text`].
const HEAD_BYTES: u64 = 64 * 1024;

/// Whether the file at repo-relative `path` under `root` is a test, derived code, or
/// documentation, examples or benchmarks (see the module docs). A file that cannot be read is judged by its path alone.
pub fn is_secondary_file(root: &Path, path: &str) -> bool {
    if is_test_file(path) || is_derived_path(path) || is_auxiliary_path(path) {
        return true;
    }
    let Ok(file) = std::fs::File::open(root.join(path)) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(HEAD_BYTES).read_to_end(&mut head).is_err() {
        return false;
    }
    is_derived_text(&String::from_utf8_lossy(&head))
}

/// `loc` with the entries of secondary files after the others at each level (see the
/// module docs); `issue` is the issue text.
pub fn source_first(loc: Locations, root: &Path, issue: &str) -> Locations {
    source_first_cached(loc, root, issue, &mut HashMap::new())
}

/// [`source_first`] with the judgements of earlier answers on the same tree
/// (`judged`: path → secondary), so a policy played many times on one tree
/// (`navbench tune`) reads each file's head once.
pub fn source_first_cached(
    loc: Locations,
    root: &Path,
    issue: &str,
    judged: &mut HashMap<String, bool>,
) -> Locations {
    let mut files: Vec<&str> = loc.files.iter().map(String::as_str).collect();
    for id in loc.modules.iter().chain(&loc.functions) {
        let file = file_of(id);
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let secondary: Vec<bool> = files
        .iter()
        .map(|f| {
            *judged
                .entry(f.to_string())
                .or_insert_with(|| is_secondary_file(root, f))
        })
        .collect();
    let source_names: Vec<&str> = files
        .iter()
        .zip(&secondary)
        .filter(|(_, s)| !**s)
        .map(|(f, _)| name_of(f))
        .collect();
    let demoted: Vec<String> = files
        .iter()
        .zip(&secondary)
        .filter(|(f, s)| **s && !named_by(issue, f, &source_names))
        .map(|(f, _)| f.to_string())
        .collect();
    if demoted.is_empty() {
        return loc;
    }
    let reorder = |ids: Vec<String>| -> Vec<String> {
        let (low, mut high): (Vec<String>, Vec<String>) = ids
            .into_iter()
            .partition(|id| demoted.iter().any(|d| d == file_of(id)));
        high.extend(low);
        high
    };
    Locations {
        files: reorder(loc.files),
        modules: reorder(loc.modules),
        functions: reorder(loc.functions),
    }
}

/// The file part of a location id (`path` or `path:Entity`).
fn file_of(id: &str) -> &str {
    id.split(':').next().unwrap_or(id)
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `issue` names `path`: its whole path, or its file name when no source file
/// of the answer (`source_names`) has the same name.
fn named_by(issue: &str, path: &str, source_names: &[&str]) -> bool {
    let name = name_of(path);
    mentions(issue, path) || (!source_names.contains(&name) && mentions(issue, name))
}

/// Whether `text` holds `word` not glued to other path characters.
fn mentions(text: &str, word: &str) -> bool {
    let path_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '/');
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| path_char(c) && c != '/')
            && !after.is_some_and(|c| path_char(c) && c != '.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(list: &[&str]) -> Vec<String> {
        list.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn secondary_files_move_below_source_unless_named() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("lib/core.js", "function f() {\n  return 1;\n}\n");
        write(
            "gen/api.js",
            "// Code generated by a tool. DO NOT EDIT.\nexport {};\n",
        );
        write("lib/util.js", "export const u = 1;\n");
        let loc = Locations {
            files: s(&[
                "dist/core.js",
                "gen/api.js",
                "test/core.spec.js",
                "lib/core.js",
                "lib/util.js",
            ]),
            modules: s(&["dist/core.js:f", "lib/core.js:f"]),
            functions: s(&["vendor/x.js:g", "dist/core.js:f", "lib/core.js:f"]),
        };
        let out = source_first(loc.clone(), dir.path(), "f returns 1 instead of 2");
        assert_eq!(
            out.files,
            [
                "lib/core.js",
                "lib/util.js",
                "dist/core.js",
                "gen/api.js",
                "test/core.spec.js"
            ]
        );
        assert_eq!(out.modules, ["lib/core.js:f", "dist/core.js:f"]);
        assert_eq!(
            out.functions,
            ["lib/core.js:f", "vendor/x.js:g", "dist/core.js:f"]
        );
        // Named by path, or by a file name no source file shares: kept in place.
        let out = source_first(
            loc.clone(),
            dir.path(),
            "The bundle dist/core.js is stale; core.spec.js fails",
        );
        assert_eq!(
            out.files,
            [
                "dist/core.js",
                "test/core.spec.js",
                "lib/core.js",
                "lib/util.js",
                "gen/api.js"
            ]
        );
        // `core.js` alone names the source file too: the bundle still goes down.
        let out = source_first(loc, dir.path(), "core.js throws");
        assert_eq!(out.files[0], "lib/core.js");
    }

    #[test]
    fn top_level_docs_examples_and_benchmarks_move_below_source() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Locations {
            files: s(&[
                "docs/examples/plot_tilt.py",
                "benchmarks/run.py",
                "pvlib/modelchain.py",
            ]),
            modules: s(&["doc/conf.py:setup", "pvlib/modelchain.py:ModelChain"]),
            functions: s(&["examples/demo.py:main", "pvlib/docs/render.py:render"]),
        };
        let out = source_first(loc, dir.path(), "ModelChain ignores the tilt");
        assert_eq!(
            out.files,
            [
                "pvlib/modelchain.py",
                "docs/examples/plot_tilt.py",
                "benchmarks/run.py"
            ]
        );
        assert_eq!(
            out.modules,
            ["pvlib/modelchain.py:ModelChain", "doc/conf.py:setup"]
        );
        // Only the top directory counts: a package's own `docs` module is source.
        assert_eq!(
            out.functions,
            ["pvlib/docs/render.py:render", "examples/demo.py:main"]
        );
    }

    #[test]
    fn mentions_need_word_bounds() {
        assert!(mentions("see `dist/a.js`.", "dist/a.js"));
        assert!(mentions("in a.js, line 3", "a.js"));
        assert!(!mentions("in data.js", "a.js"));
        assert!(!mentions("a.json", "a.js"));
        assert!(mentions("at pkg/a.js:3", "a.js"));
    }
}
