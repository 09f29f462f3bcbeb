//! Language families, and which of them a repository is written in.
//!
//! A **family** groups the front ends whose files belong to one code base: Python;
//! TypeScript and JavaScript together (`ecma`, since they import each other); Java;
//! Go; Rust. [`family_of`] names a file's family by its extension.
//!
//! **A repository's languages** ([`Families::of`]) are the families that hold at
//! least [`MIN_SHARE`] of its source files outside the tests ([`is_test_file`]).
//! Someone new to a repository sees from its listing what it is written in and
//! reads that code, not a vendored minified script or a docs example in another
//! language. One constant, chosen so that a Python project's few JavaScript assets
//! (Django's admin, Sphinx themes: a few percent of their files) stay out while every
//! part of a polyglot monorepo counts. The harness's policies search these families,
//! and the codegraph server builds its graph of them by default: a Python project's
//! graph is then LocAgent's, which reads only `.py` files.
//!
//! [`Selection`] is how a tool takes the choice from its user: `auto` (the rule
//! above), `all`, or a list of families.
//!
//! **Secondary files** are where a fix rarely lands: tests ([`is_test_file`]) and
//! derived code, i.e. build output, bundles, vendored dependencies, minified and
//! generated files ([`is_derived_path`] by the path, [`is_derived_text`] by what the
//! file's first lines show). The harness's scripted policies rank them below source
//! unless the issue names them.
//!
//! ```
//! use navbench_lang::family::{Families, Selection, family_of};
//!
//! assert_eq!(family_of("web/src/App.tsx"), Some("ecma"));
//! let mut files: Vec<String> = (0..30).map(|i| format!("pkg/m{i}.py")).collect();
//! files.push("docs/_static/jquery.js".into());
//! let auto = Selection::Auto.resolve(files.iter().map(String::as_str));
//! assert_eq!(auto.names(), ["python"]);
//! assert!(!auto.contains("docs/_static/jquery.js"));
//! let chosen: Selection = "python,go".parse().expect("two families");
//! assert_eq!(chosen.resolve(files.iter().map(String::as_str)).names(), ["python", "go"]);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::{Language, language_for_path};

/// The smallest share of a repository's source files (outside tests) that makes its
/// family one of the repository's languages.
pub const MIN_SHARE: f64 = 0.10;

/// Each family and the extensions of its files (glob alternatives, in the order
/// globs list them).
const FAMILIES: &[(&str, &[&str])] = &[
    ("python", &["py"]),
    (
        "ecma",
        &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
    ),
    ("java", &["java"]),
    ("go", &["go"]),
    ("rust", &["rs"]),
];

/// The family of a source file, by extension (`None`: not source navbench reads).
pub fn family_of(path: &str) -> Option<&'static str> {
    if path.ends_with(".py") {
        return Some("python");
    }
    let family = family_of_language(language_for_path(path)?);
    FAMILIES.iter().find(|(f, _)| *f == family).map(|(f, _)| *f)
}

/// The family of a front end: its name, but `ecma` for TypeScript, TSX and
/// JavaScript (they import each other, so their names resolve across files).
pub fn family_of_language(lang: &dyn Language) -> &'static str {
    match lang.name() {
        "typescript" | "tsx" | "javascript" => "ecma",
        other => other,
    }
}

/// Every source extension navbench reads (without the dot), family by family: what
/// a pattern for "a path to a source file" alternates over.
pub fn extensions() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|(_, e)| e.iter().copied())
}

/// Whether `path` is a test file by its language's conventions: Python's `test_*.py`,
/// `*_test.py` and `conftest.py`, Go's `*_test.go`, TS/JS `*.test.*` and `*.spec.*`,
/// Java's `*Test.java` and `*Tests.java`, and anything under a `tests`, `test`,
/// `testing` or `__tests__` directory (Rust's integration tests, Maven's `src/test`).
pub fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let ecma = family_of(name) == Some("ecma");
    name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || name.ends_with("_test.go")
        || (ecma && (stem.ends_with(".test") || stem.ends_with(".spec")))
        || (name.ends_with(".java") && (stem.ends_with("Test") || stem.ends_with("Tests")))
        || path
            .split('/')
            .any(|d| matches!(d, "tests" | "test" | "testing" | "__tests__"))
}

/// Directory names that hold build output, bundles or other people's code: a file
/// under one of them (at any depth) is derived ([`is_derived_path`]).
const DERIVED_DIRS: &[&str] = &[
    "dist",
    "build",
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "node_modules",
    "bower_components",
];

/// File name endings of minified, bundled and generated files.
const DERIVED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.mjs",
    ".min.cjs",
    ".bundle.js",
    "-bundle.js",
    ".pb.go",
    "_pb2.py",
    "_pb2_grpc.py",
];

/// Whether `path` is, by its path alone, code a fix does not land in: build output,
/// bundles and vendored dependencies (a `dist`, `build`, `vendor`, `vendored`,
/// `third_party`, `third-party`, `node_modules` or `bower_components` directory
/// anywhere on the path), minified or bundled scripts (`*.min.js`, `*.bundle.js`)
/// and generated protocol buffers (`*.pb.go`, `*_pb2.py`, `*.generated.*`). A
/// maintainer edits the source these are made from; someone new to a repository
/// learns that from its layout, as a test file's name says it is a test.
pub fn is_derived_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    path.split('/')
        .rev()
        .skip(1)
        .any(|d| DERIVED_DIRS.contains(&d))
        || DERIVED_SUFFIXES.iter().any(|s| lower.ends_with(s))
        || lower.contains(".generated.")
}

/// Top-level directories of documentation, examples and benchmarks
/// ([`is_auxiliary_path`]).
const AUXILIARY_DIRS: &[&str] = &[
    "doc",
    "docs",
    "documentation",
    "example",
    "examples",
    "_examples",
    "benchmark",
    "benchmarks",
    "benches",
    "asv_bench",
];

/// Whether `path` lies in a top-level directory of documentation, examples or
/// benchmarks (`doc/`, `docs/`, `examples/`, `benchmarks/`, Rust's `benches/`,
/// `asv_bench/`, …). Their code shows how the project is used or timed; a fix lands in
/// the project itself, which someone new to a repository tells from its top-level
/// layout. Only the first directory counts: `pkg/docs/render.py` is the package's own
/// code, and a file at the top (`examples.py`) is not in a directory at all.
pub fn is_auxiliary_path(path: &str) -> bool {
    match path.split_once('/') {
        Some((top, _)) => AUXILIARY_DIRS.contains(&top),
        None => false,
    }
}

/// Phrases that mark a generated file when they appear in its first lines
/// ([`is_derived_text`]), lower-cased: Go's `// Code generated … DO NOT EDIT.`,
/// Facebook's `@generated`, and the usual wordings of code generators.
const GENERATED_MARKS: &[&str] = &[
    "do not edit",
    "@generated",
    "auto-generated",
    "autogenerated",
    "automatically generated",
    "code generated",
    "file is generated",
    "file was generated",
    "generated file",
];

/// Lines of a file's head searched for [`GENERATED_MARKS`].
const HEADER_LINES: usize = 10;

/// What a bundler writes at the top of a UMD bundle (rollup, webpack, browserify
/// `--standalone`): the AMD branch of the `(function (global, factory) { … })`
/// prologue. Source modules import and export; they do not open by testing which
/// module loader runs them.
const BUNDLE_PROLOGUE: &str = "define.amd";

/// Lines of a file's head searched for [`BUNDLE_PROLOGUE`] (a license banner may
/// come first).
const PROLOGUE_LINES: usize = 30;

/// Mean line length (bytes) above which a file reads as minified or bundled.
const MINIFIED_MEAN_LINE: usize = 200;

/// A single line this long (bytes) makes a file minified whatever the mean.
const MINIFIED_LINE: usize = 10_000;

/// Whether a file's text (or its head: the first tens of kilobytes suffice) says it
/// is generated, bundled or minified: a generator's mark in its first
/// [`HEADER_LINES`] lines, a UMD bundle's prologue in its first [`PROLOGUE_LINES`]
/// (a build's `moment.js` or `locale/*.js` made from `src/`), a mean line length over
/// [`MINIFIED_MEAN_LINE`] bytes, or one line over [`MINIFIED_LINE`] bytes. What a
/// reader sees on opening the file: nobody edits it by hand.
pub fn is_derived_text(text: &str) -> bool {
    let header = text.lines().take(HEADER_LINES).any(|l| {
        let l = l.to_ascii_lowercase();
        GENERATED_MARKS.iter().any(|m| l.contains(m))
    });
    let bundle = text
        .lines()
        .take(PROLOGUE_LINES)
        .any(|l| l.contains(BUNDLE_PROLOGUE));
    let lines = text.lines().count().max(1);
    header
        || bundle
        || text.len() / lines > MINIFIED_MEAN_LINE
        || text.lines().any(|l| l.len() > MINIFIED_LINE)
}

/// A set of families (see the module docs), in [`FAMILIES`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Families {
    families: Vec<&'static str>,
}

impl Families {
    /// The repository's languages: the families of `files` (repository paths)
    /// holding at least [`MIN_SHARE`] of the non-test source files; Python when
    /// there are none.
    pub fn of<'a>(files: impl IntoIterator<Item = &'a str>) -> Families {
        let mut counts: Vec<(&'static str, usize)> =
            FAMILIES.iter().map(|(f, _)| (*f, 0)).collect();
        let mut total = 0usize;
        for f in files.into_iter().filter(|f| !is_test_file(f)) {
            if let Some(fam) = family_of(f) {
                total += 1;
                if let Some(c) = counts.iter_mut().find(|(n, _)| *n == fam) {
                    c.1 += 1;
                }
            }
        }
        let families: Vec<&'static str> = counts
            .into_iter()
            .filter(|(_, n)| *n > 0 && *n as f64 >= MIN_SHARE * total as f64)
            .map(|(f, _)| f)
            .collect();
        if families.is_empty() {
            return Families {
                families: vec!["python"],
            };
        }
        Families { families }
    }

    /// The families with at least one file among `files`, however few: what a set of
    /// files already chosen (a graph's file nodes) holds.
    pub fn present<'a>(files: impl IntoIterator<Item = &'a str>) -> Families {
        let found: Vec<&'static str> = files.into_iter().filter_map(family_of).collect();
        Families {
            families: FAMILIES
                .iter()
                .map(|(f, _)| *f)
                .filter(|f| found.contains(f))
                .collect(),
        }
    }

    /// Every family.
    pub fn all() -> Families {
        Families {
            families: FAMILIES.iter().map(|(f, _)| *f).collect(),
        }
    }

    /// Their names (`python`, `ecma`, `java`, `go`, `rust`), in a fixed order.
    pub fn names(&self) -> &[&'static str] {
        &self.families
    }

    /// Whether `path` is a source file of one of these families.
    pub fn contains(&self, path: &str) -> bool {
        family_of(path).is_some_and(|f| self.families.contains(&f))
    }

    /// A glob matching their source files: `*.py`, or `*.{go,java}` for several.
    pub fn glob(&self) -> String {
        let exts: Vec<&str> = FAMILIES
            .iter()
            .filter(|(f, _)| self.families.contains(f))
            .flat_map(|(_, e)| e.iter().copied())
            .collect();
        match exts.as_slice() {
            [one] => format!("*.{one}"),
            many => format!("*.{{{}}}", many.join(",")),
        }
    }
}

impl fmt::Display for Families {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.families.join(","))
    }
}

/// Which families a tool reads: its users' choice.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    /// The repository's languages ([`Families::of`]).
    #[default]
    Auto,
    /// Every family navbench has a front end for.
    All,
    /// These families.
    Only(Families),
}

impl Selection {
    /// The families chosen for a repository whose files are `files`.
    pub fn resolve<'a>(&self, files: impl IntoIterator<Item = &'a str>) -> Families {
        match self {
            Selection::Auto => Families::of(files),
            Selection::All => Families::all(),
            Selection::Only(f) => f.clone(),
        }
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selection::Auto => f.write_str("auto"),
            Selection::All => f.write_str("all"),
            Selection::Only(families) => families.fmt(f),
        }
    }
}

/// Why a [`Selection`] could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown language `{0}`: give `auto`, `all`, or a comma-separated list of python, ecma (or typescript, javascript), java, go, rust"
)]
pub struct UnknownFamily(pub String);

impl FromStr for Selection {
    type Err = UnknownFamily;

    /// `auto`, `all`, or a comma-separated list of families; `typescript`, `ts`,
    /// `javascript` and `js` name `ecma`.
    fn from_str(s: &str) -> Result<Selection, UnknownFamily> {
        match s.trim() {
            "auto" => return Ok(Selection::Auto),
            "all" => return Ok(Selection::All),
            _ => {}
        }
        let mut wanted = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let name = match part.to_ascii_lowercase().as_str() {
                "typescript" | "ts" | "javascript" | "js" => "ecma".to_string(),
                other => other.to_string(),
            };
            match FAMILIES.iter().find(|(f, _)| *f == name) {
                Some((f, _)) => wanted.push(*f),
                None => return Err(UnknownFamily(part.to_string())),
            }
        }
        if wanted.is_empty() {
            return Err(UnknownFamily(s.to_string()));
        }
        let families = FAMILIES
            .iter()
            .map(|(f, _)| *f)
            .filter(|f| wanted.contains(f))
            .collect();
        Ok(Selection::Only(Families { families }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auxiliary_paths_are_top_level_docs_examples_and_benchmarks() {
        assert!(is_auxiliary_path("doc/conf.py"));
        assert!(is_auxiliary_path(
            "docs/examples/bifacial/plot_pvfactors.py"
        ));
        assert!(is_auxiliary_path("examples/tutorial/flaskr/__init__.py"));
        assert!(is_auxiliary_path("benchmarks/benchmarks/solarposition.py"));
        assert!(is_auxiliary_path("benches/parse.rs"));
        assert!(is_auxiliary_path("_examples/todos/main.go"));
        assert!(!is_auxiliary_path("pkg/docs/render.py"));
        assert!(!is_auxiliary_path("src/examples.rs"));
        assert!(!is_auxiliary_path("examples.py"));
        assert!(!is_auxiliary_path("docs"));
    }

    #[test]
    fn a_python_project_with_a_few_scripts_stays_python() {
        let mut list: Vec<String> = (0..40).map(|i| format!("pkg/m{i}.py")).collect();
        list.push("docs/_static/jquery.js".into());
        list.push("README.md".into());
        let langs = Families::of(list.iter().map(String::as_str));
        assert_eq!(langs.glob(), "*.py");
        assert!(!langs.contains("docs/_static/jquery.js"));
        assert_eq!(Families::of(["README.md"]).glob(), "*.py");
    }

    #[test]
    fn a_polyglot_tree_counts_every_part_and_tests_do_not_count() {
        let langs = Families::of([
            "web/src/cart.ts",
            "web/lib/router.js",
            "sdk/src/main/java/a/Client.java",
            "gateway/queue/queue.go",
            "gateway/queue/queue_test.go",
            "cli/src/main.rs",
        ]);
        assert_eq!(langs.glob(), "*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,java,go,rs}");
        assert!(langs.contains("cli/src/config.rs"));
        assert!(!langs.contains("setup.py"));
        assert_eq!(
            Families::all().glob(),
            "*.{py,ts,tsx,mts,cts,js,jsx,mjs,cjs,java,go,rs}"
        );
        // Every extension has a family, and the registry reads each one.
        for ext in extensions() {
            let path = format!("src/a.{ext}");
            assert!(
                family_of(&path).is_some() && Families::all().contains(&path),
                "{ext}"
            );
        }
        // Python tests alone do not make a Go project a Python one.
        let go = Families::of(["a.go", "b.go", "tests/test_a.py", "tests/test_b.py"]);
        assert_eq!(go.names(), ["go"]);
        // Present: every family with a file, in the fixed order, tests included.
        let present = Families::present(["tests/test_a.py", "a.go", "README.md", "b.go"]);
        assert_eq!(present.names(), ["python", "go"]);
    }

    #[test]
    fn selections_parse_resolve_and_refuse_unknown_names() {
        let files = ["a.py", "b.py", "web/app.js"];
        assert_eq!(Selection::Auto.resolve(files).names(), ["python", "ecma"]);
        assert_eq!(Selection::All.resolve(files), Families::all());
        let ts: Selection = "TypeScript, go".parse().expect("parses");
        assert_eq!(ts.resolve(files).names(), ["ecma", "go"]);
        assert_eq!(ts.to_string(), "ecma,go");
        assert_eq!("auto".parse::<Selection>(), Ok(Selection::Auto));
        let err = "python,cobol".parse::<Selection>().expect_err("cobol");
        assert!(err.to_string().contains("`cobol`"), "{err}");
        assert!(err.to_string().contains("auto"), "{err}");
        assert!("".parse::<Selection>().is_err());
    }

    #[test]
    fn test_files_are_recognized() {
        for p in [
            "tests/test_a.py",
            "pkg/conftest.py",
            "pkg/a_test.py",
            "pkg/testing/a.py",
            "gin/context_test.go",
            "src/types.test.ts",
            "lib/router.spec.js",
            "src/__tests__/util.tsx",
            "gson/src/test/java/com/google/gson/GsonTest.java",
            "extras/src/main/java/x/ParserTests.java",
            "crates/core/tests/feature.rs",
        ] {
            assert!(is_test_file(p), "{p}");
        }
        for p in [
            "pkg/contest.py",
            "pkg/testing_utils_x/a.py",
            "gin/context.go",
            "src/types.ts",
            "lib/test-utils.md",
            "src/main/java/x/Contest.java",
            "src/main/java/x/TestResult.java",
            "crates/core/src/latest.rs",
        ] {
            assert!(!is_test_file(p), "{p}");
        }
    }

    #[test]
    fn derived_files_by_path_and_by_text() {
        for p in [
            "dist/axios.js",
            "packages/core/dist/index.mjs",
            "build/lib/pkg/core.py",
            "vendor/github.com/pkg/errors/errors.go",
            "third_party/six.py",
            "web/node_modules/left-pad/index.js",
            "static/jquery.min.js",
            "app.bundle.js",
            "api/v1/service.pb.go",
            "proto/msg_pb2.py",
            "src/schema.generated.ts",
        ] {
            assert!(is_derived_path(p), "{p}");
        }
        for p in [
            "lib/axios.js",
            "src/build.rs",
            "pkg/vendor.py",
            "distutils/core.py",
            "src/builder/dist.ts",
        ] {
            assert!(!is_derived_path(p), "{p}");
        }
        assert!(is_derived_text(
            "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n"
        ));
        assert!(is_derived_text("/* @generated */\nexport const a = 1;\n"));
        let minified = format!("!function(e){{{}}}();\n", "var a=1;".repeat(60));
        assert!(is_derived_text(&minified));
        let source = "def f():\n    return 1\n\n\nclass Generator:\n    \"\"\"Makes ids.\"\"\"\n";
        assert!(!is_derived_text(source));
        let one_long = format!("X = 1\n{}\n", "y = 2\n".repeat(400) + &"#".repeat(1500));
        assert!(!is_derived_text(&one_long));
        // A UMD bundle a build made from `src/`, under its license banner; the module
        // it was made from, and a hand-written loader check at a file's end, are not.
        let umd = "//! lib.js\n//! license : MIT\n\n;(function (global, factory) {\n    typeof exports === 'object' && typeof module !== 'undefined' ? module.exports = factory() :\n    typeof define === 'function' && define.amd ? define(factory) :\n    global.lib = factory()\n}(this, (function () { 'use strict';\n    function hooks() {}\n})));\n";
        assert!(is_derived_text(umd));
        assert!(!is_derived_text(
            "//! lib.js\nimport { hooks } from './lib/utils/hooks';\nexport default hooks;\n"
        ));
        let tail = format!(
            "function lib() {{}}\n{}if (typeof define === 'function' && define.amd) define(lib);\n",
            "lib.x = 1;\n".repeat(40)
        );
        assert!(!is_derived_text(&tail));
    }
}
