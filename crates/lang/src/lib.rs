//! navbench's language layer: one front end per language behind one trait, so the
//! harness and the servers ask "which language is this file, what are its
//! definitions" without a `match` on languages.
//!
//! Principal types and functions, by module:
//! - [`Language`] (here): a front end — its name, its file extensions and
//!   [`Language::parse`], which reads a file into a [`ParsedFile`] in one parse;
//!   [`Language::definitions`], [`Language::imports`] and
//!   [`Language::has_syntax_errors`] are shortcuts.
//! - [`definition`]: what front ends produce — [`Definition`] (a [`DefKind`], the bare
//!   and qualified names as LocAgent ids use them, the container's qualified name,
//!   1-based inclusive lines, byte span, whether it is a module-level unit),
//!   [`Import`] (module path and lines) and [`ParsedFile`] (those, the syntax-error
//!   flag and the lines holding code).
//! - The registry (here): [`languages`] and [`language_for_path`] (by extension).
//! - [`family`]: language families (TS and JS are one) and which of them a
//!   repository is written in ([`family::Families::of`], the 10% rule), with the
//!   per-language test-file convention ([`family::is_test_file`]) it leaves out and
//!   the [`family::Selection`] a tool takes from its user (`auto`, `all`, a list).
//! - Front ends: [`python`] (wraps `navbench-python`, unchanged), [`ecma`]
//!   (TypeScript, TSX, JavaScript with JSX), [`java`], [`go`], [`rust`] (added last,
//!   by the three steps below); each module's docs
//!   say what its definitions include and leave out. The tree-sitter ones share one
//!   walk (`walk`): a front end only says what a node is and what it imports.
//!
//! Data flow:
//! ```text
//! path ─language_for_path→ &dyn Language ─parse(source)→ tree-sitter tree
//!      ─walk (Grammar::classify / Grammar::imports per node)→ ParsedFile
//!        { definitions: [Definition], imports: [Import], has_syntax_errors, code_lines }
//! ```
//!
//! # Qualified names
//! Enclosing types, namespaces and functions joined by `.`, as LocAgent's Python ids
//! are: `Type.method`, `Outer.Inner.m`, `function`, `outer.nested`. Methods declared
//! outside their type's body are attached to the type: Go methods by their receiver
//! (`Type.Method`, pointer receivers too), JS `Type.prototype.m = function` by the
//! assigned object.
//!
//! # Adding a language
//! 1. Add the grammar crate to `[workspace.dependencies]` and to this crate's
//!    `Cargo.toml` (a version whose `tree-sitter-language` works with the workspace's
//!    `tree-sitter`).
//! 2. Write one module: a unit struct implementing [`Language`] (name, extensions,
//!    `parse` = `walk::parse(self, source)`) and the crate-private `Grammar` trait
//!    (`tree_sitter()`, `classify(node, src, scope)` returning a definition, "look
//!    inside" or "nothing below is a definition", and `imports(node, src, out)`), with
//!    its tests; its docs say what it includes and leaves out.
//! 3. Register it: one line in `LANGUAGES` below.
//!
//! # Example
//! ```
//! use navbench_lang::{DefKind, language_for_path};
//!
//! let go = language_for_path("pkg/stack.go").expect("Go has a front end");
//! let file = go.parse("package p\n\ntype Stack struct{ xs []int }\n\nfunc (s *Stack) Push(x int) {\n\ts.xs = append(s.xs, x)\n}\n");
//! assert!(!file.has_syntax_errors);
//! let push = &file.definitions[1];
//! assert_eq!((push.kind, push.qualname.as_str(), push.start_line, push.end_line), (DefKind::Method, "Stack.Push", 5, 7));
//! assert_eq!(push.container.as_deref(), Some("Stack"));
//! assert!(file.definitions[0].module_level && !push.module_level);
//! assert!(language_for_path("README.md").is_none());
//! ```

pub mod definition;
pub mod ecma;
pub mod family;
pub mod go;
pub mod java;
pub mod python;
pub mod rust;
mod walk;

pub use definition::{Binding, DefKind, Definition, Import, ParsedFile};

/// One language's front end. Implementations are unit structs registered in
/// `LANGUAGES`; callers reach them through [`language_for_path`] or [`languages`].
pub trait Language: Sync {
    /// A short lowercase name (`python`, `typescript`, `tsx`, `javascript`, `java`,
    /// `go`, …).
    fn name(&self) -> &'static str;

    /// File extensions without the dot (`["ts", "mts", "cts"]`).
    fn extensions(&self) -> &'static [&'static str];

    /// Reads `source` into its definitions, imports, syntax verdict and code lines,
    /// with one parse. Never fails: invalid source gives what the parser recovered,
    /// with [`ParsedFile::has_syntax_errors`] set.
    fn parse(&self, source: &str) -> ParsedFile;

    /// The file's definitions, in source pre-order.
    fn definitions(&self, source: &str) -> Vec<Definition> {
        self.parse(source).definitions
    }

    /// The file's imports, in source order.
    fn imports(&self, source: &str) -> Vec<Import> {
        self.parse(source).imports
    }

    /// Whether the parser had to recover from a syntax error.
    fn has_syntax_errors(&self, source: &str) -> bool {
        self.parse(source).has_syntax_errors
    }
}

/// Every front end, in the order [`language_for_path`] tries them.
static LANGUAGES: &[&dyn Language] = &[
    &python::Python,
    &ecma::TypeScript,
    &ecma::Tsx,
    &ecma::JavaScript,
    &java::Java,
    &go::Go,
    &rust::Rust,
];

/// Every registered front end.
pub fn languages() -> &'static [&'static dyn Language] {
    LANGUAGES
}

/// The front end for `path`, by its extension (case-sensitive, as compilers and
/// build tools treat it); `None` for a language without one.
pub fn language_for_path(path: &str) -> Option<&'static dyn Language> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = file.rsplit_once('.')?;
    if stem.is_empty() {
        return None; // a dotfile such as `.ts` is not a TypeScript file
    }
    LANGUAGES
        .iter()
        .copied()
        .find(|l| l.extensions().contains(&ext))
}

/// The front end called `name` (see [`Language::name`]).
pub fn language_named(name: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|l| l.name() == name)
}

#[cfg(test)]
mod test_support {
    use crate::{DefKind, ParsedFile};

    /// Kind, qualified name and lines of every definition, in order.
    pub fn outline(file: &ParsedFile) -> Vec<(DefKind, &str, usize, usize)> {
        file.definitions
            .iter()
            .map(|d| (d.kind, d.qualname.as_str(), d.start_line, d.end_line))
            .collect()
    }

    /// The imported module paths, in order.
    pub fn modules_of(file: &ParsedFile) -> Vec<&str> {
        file.imports.iter().map(|i| i.module.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_finds_front_ends_by_extension() {
        let name = |p: &str| language_for_path(p).map(|l| l.name());
        assert_eq!(name("a/b.py"), Some("python"));
        assert_eq!(name("src/x.ts"), Some("typescript"));
        assert_eq!(name("src/App.tsx"), Some("tsx"));
        assert_eq!(name("lib/app.js"), Some("javascript"));
        assert_eq!(name("lib/App.jsx"), Some("javascript"));
        assert_eq!(name("x.mjs"), Some("javascript"));
        assert_eq!(name("src/main/java/A.java"), Some("java"));
        assert_eq!(name("cmd/main.go"), Some("go"));
        assert_eq!(name("src/lib.rs"), Some("rust"));
        assert_eq!(name("README.md"), None);
        assert_eq!(name("Makefile"), None);
        assert_eq!(name("dir.py/file"), None);
        assert_eq!(name(".ts"), None);
        let mut seen = std::collections::HashSet::new();
        for l in languages() {
            assert!(seen.insert(l.name()), "duplicate name {}", l.name());
            for ext in l.extensions() {
                assert_eq!(
                    language_for_path(&format!("f.{ext}")).map(|x| x.name()),
                    Some(l.name())
                );
            }
            assert_eq!(language_named(l.name()).map(|x| x.name()), Some(l.name()));
        }
    }
}
