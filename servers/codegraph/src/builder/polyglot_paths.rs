//! Resolving a non-Python import to the files of the tree it names, per language
//! (the rules are listed in [`super::polyglot`]'s docs). Only file nodes of the
//! graph are targets; an import that names none (a package, the JDK, an external
//! crate, a path alias) resolves to nothing and gets no edge.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use navbench_lang::Language;
use navbench_lang::family::family_of_language;
use regex::Regex;

use crate::graph::{CodeGraph, NodeIndex, NodeKind};

/// Extensions a relative TS/JS specifier may leave out, in the order tried.
const ECMA_EXTS: [&str; 8] = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts"];

/// `mod name;` (an out-of-line module declaration) at the start of a line.
static MOD_DECL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(?:r#)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*;",
    )
    .ok()
});

/// The file index and project facts imports are resolved against.
pub(crate) struct Paths<'g> {
    graph: &'g CodeGraph,
    /// Directory id (`/` for the root) → the file nodes directly in it.
    dirs: HashMap<&'g str, Vec<NodeIndex>>,
    /// File name → the file nodes with that name.
    names: HashMap<&'g str, Vec<NodeIndex>>,
    /// The module path in the root's `go.mod`.
    go_module: Option<String>,
    /// The crates of the tree: (name as code writes it, module root directory, root
    /// file id).
    crates: Vec<(String, String, String)>,
}

impl<'g> Paths<'g> {
    /// Indexes the file nodes of `graph` and reads `go.mod` and the `Cargo.toml`s
    /// of the tree at `root`.
    pub(crate) fn new(graph: &'g CodeGraph, root: &Path) -> Paths<'g> {
        let mut dirs: HashMap<&'g str, Vec<NodeIndex>> = HashMap::new();
        let mut names: HashMap<&'g str, Vec<NodeIndex>> = HashMap::new();
        let mut dir_ids: Vec<&str> = vec![""];
        for ix in graph.node_indices() {
            let node = graph.node(ix);
            match node.kind {
                NodeKind::File => {
                    let (dir, name) = node.id.rsplit_once('/').unwrap_or(("/", &node.id));
                    dirs.entry(dir).or_default().push(ix);
                    names.entry(name).or_default().push(ix);
                }
                NodeKind::Directory if node.id != "/" => dir_ids.push(&node.id),
                _ => {}
            }
        }
        let go_module = std::fs::read_to_string(root.join("go.mod"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.trim().strip_prefix("module "))
                    .map(|m| m.trim().trim_matches('"').to_string())
            });
        let crates = dir_ids
            .iter()
            .filter_map(|d| {
                let manifest = std::fs::read_to_string(root.join(d).join("Cargo.toml")).ok()?;
                Some(cargo_crates(d, &manifest))
            })
            .flatten()
            .collect();
        Paths {
            graph,
            dirs,
            names,
            go_module,
            crates,
        }
    }

    fn file(&self, id: &str) -> Option<NodeIndex> {
        self.graph
            .index_of(id)
            .filter(|&n| self.graph.node(n).kind == NodeKind::File)
    }

    /// The files `module`, imported by file `from` in `lang`, names.
    pub(crate) fn resolve(&self, from: &str, lang: &dyn Language, module: &str) -> Vec<NodeIndex> {
        match family_of_language(lang) {
            "ecma" => self.ecma(from, module).into_iter().collect(),
            "java" => self.java(module),
            "go" => self.go(module),
            "rust" => self.rust(from, module).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// A relative specifier: the file itself, with an extension added, or the
    /// directory's `index` file; `./x.js` also names `x.ts` (TypeScript's ESM style).
    fn ecma(&self, from: &str, module: &str) -> Option<NodeIndex> {
        if !module.starts_with("./") && !module.starts_with("../") && module != "." {
            return None;
        }
        let base = from.rsplit_once('/').map_or("", |(d, _)| d);
        let path = normalize(base, module)?;
        let mut tries = vec![path.clone()];
        for js in [".js", ".jsx", ".mjs", ".cjs"] {
            if let Some(stem) = path.strip_suffix(js) {
                tries.extend(["ts", "tsx", "mts", "cts"].map(|e| format!("{stem}.{e}")));
            }
        }
        tries.extend(ECMA_EXTS.map(|e| format!("{path}.{e}")));
        let index = if path.is_empty() {
            "index".to_string()
        } else {
            format!("{path}/index")
        };
        tries.extend(ECMA_EXTS.map(|e| format!("{index}.{e}")));
        tries.iter().find_map(|t| self.file(t))
    }

    /// `a.b.C` → `…/a/b/C.java` (or `…/a/b.java` for a nested type or a static
    /// member); `a.b.*` → every Java file of a directory ending in `a/b`.
    fn java(&self, module: &str) -> Vec<NodeIndex> {
        let segs: Vec<&str> = module.split('.').collect();
        if let Some((&"*", pkg)) = segs.split_last() {
            let suffix = pkg.join("/");
            let mut out: Vec<NodeIndex> = self
                .dirs
                .iter()
                .filter(|(d, _)| **d == suffix || d.ends_with(&format!("/{suffix}")))
                .flat_map(|(_, files)| files.iter().copied())
                .filter(|&f| self.graph.node(f).id.ends_with(".java"))
                .collect();
            out.sort_unstable();
            return out;
        }
        for k in (2..=segs.len()).rev() {
            let rel = format!("{}.java", segs[..k].join("/"));
            let name = segs[k - 1];
            let found: Vec<NodeIndex> = self
                .names
                .get(format!("{name}.java").as_str())
                .into_iter()
                .flatten()
                .copied()
                .filter(|&f| {
                    let id = &self.graph.node(f).id;
                    *id == rel || id.ends_with(&format!("/{rel}"))
                })
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// A path under the root's module path → the non-test `.go` files of its
    /// directory.
    fn go(&self, module: &str) -> Vec<NodeIndex> {
        let Some(root) = &self.go_module else {
            return Vec::new();
        };
        let dir = if module == root {
            "/"
        } else {
            match module
                .strip_prefix(root.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                Some(rel) => rel,
                None => return Vec::new(),
            }
        };
        self.dirs
            .get(dir)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&f| {
                let id = &self.graph.node(f).id;
                id.ends_with(".go") && !id.ends_with("_test.go")
            })
            .collect()
    }

    /// `crate::…`, `self::…`, `super::…` and `<crate of the tree>::…` → the file of
    /// the longest module prefix that exists (the crate root for an item of it).
    fn rust(&self, from: &str, module: &str) -> Option<NodeIndex> {
        let segs: Vec<&str> = module.split("::").collect();
        let (base, fallback, rest): (String, Option<String>, &[&str]) = match segs.first()? {
            &"crate" => {
                let (_, dir, root) = self.crate_of(from)?;
                (dir.clone(), Some(root.clone()), &segs[1..])
            }
            &"self" => (module_dir(from), Some(from.to_string()), &segs[1..]),
            &"super" => {
                let dir = module_dir(from);
                let parent = dir.rsplit_once('/').map_or("", |(p, _)| p).to_string();
                (parent, None, &segs[1..])
            }
            first => {
                let (_, dir, root) = self.crates.iter().find(|(n, _, _)| n == first)?;
                (dir.clone(), Some(root.clone()), &segs[1..])
            }
        };
        for k in (1..=rest.len()).rev() {
            let stem = join_path(&base, &rest[..k].join("/"));
            for t in [format!("{stem}.rs"), format!("{stem}/mod.rs")] {
                if let Some(f) = self.file(&t) {
                    return Some(f);
                }
            }
        }
        fallback.and_then(|f| self.file(&f))
    }

    /// The crate whose module root directory holds file `from` (the deepest one).
    fn crate_of(&self, from: &str) -> Option<&(String, String, String)> {
        self.crates
            .iter()
            .filter(|(_, dir, _)| dir.is_empty() || from.starts_with(&format!("{dir}/")))
            .rev() // a library before a binary of the same directory
            .max_by_key(|(_, dir, _)| dir.len())
    }

    /// The files the `mod x;` declarations of Rust file `from` (text `text`) name:
    /// `x.rs` or `x/mod.rs` in the declaring module's directory.
    pub(crate) fn rust_mods(&self, from: &str, text: &str) -> Vec<NodeIndex> {
        let Some(re) = MOD_DECL.as_ref() else {
            return Vec::new();
        };
        let dir = module_dir(from);
        re.captures_iter(text)
            .filter_map(|c| {
                let name = c.get(1)?.as_str();
                let stem = join_path(&dir, name);
                self.file(&format!("{stem}.rs"))
                    .or_else(|| self.file(&format!("{stem}/mod.rs")))
            })
            .collect()
    }
}

/// The directory a Rust file's child modules live in: its own for `lib.rs`,
/// `main.rs` and `mod.rs`, `dir/name` for `dir/name.rs`.
fn module_dir(file: &str) -> String {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    match name {
        "lib.rs" | "main.rs" | "mod.rs" => dir.to_string(),
        _ => join_path(dir, name.strip_suffix(".rs").unwrap_or(name)),
    }
}

/// `base/rel`, or `rel` at the root.
fn join_path(base: &str, rel: &str) -> String {
    if base.is_empty() {
        rel.to_string()
    } else {
        format!("{base}/{rel}")
    }
}

/// `rel` (a `./`/`../` specifier) joined to directory `base`, `.` and `..` applied;
/// `None` if it leaves the tree.
fn normalize(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The crates a `Cargo.toml` in directory `dir` (`""` at the root) declares: its
/// `[package]` (or `[lib]`) name with `-` as `_`, the directory of its library or
/// else binary root file, and that file.
fn cargo_crates(dir: &str, manifest: &str) -> Vec<(String, String, String)> {
    let (mut section, mut name, mut lib_name) = ("", None, None);
    let (mut lib_path, mut bin_path) = (None, None);
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_string();
        match (section, key.trim()) {
            ("[package]", "name") => name = Some(value),
            ("[lib]", "name") => lib_name = Some(value),
            ("[lib]", "path") => lib_path = Some(value),
            ("[[bin]]", "path") if bin_path.is_none() => bin_path = Some(value),
            _ => {}
        }
    }
    let Some(name) = lib_name.or(name) else {
        return Vec::new();
    };
    let root = lib_path
        .or(bin_path)
        .unwrap_or_else(|| "src/lib.rs".to_string());
    let root = join_path(dir, root.trim_start_matches("./"));
    let mut out = vec![(name.replace('-', "_"), module_dir(&root), root.clone())];
    if root.ends_with("src/lib.rs") {
        // A package may have a binary beside its library.
        let main = format!("{}/main.rs", module_dir(&root));
        out.push((name.replace('-', "_"), module_dir(&main), main));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_and_module_dirs() {
        assert_eq!(normalize("src/a", "../b/c").as_deref(), Some("src/b/c"));
        assert_eq!(normalize("", "./x").as_deref(), Some("x"));
        assert_eq!(normalize("", "../x"), None);
        assert_eq!(module_dir("src/lib.rs"), "src");
        assert_eq!(module_dir("src/search.rs"), "src/search");
        assert_eq!(module_dir("src/a/mod.rs"), "src/a");
        let crates = cargo_crates(
            "crates/searcher",
            "[package]\nname = \"grep-searcher\"\n[dependencies]\nname = \"x\"\n",
        );
        assert_eq!(
            crates[0],
            (
                "grep_searcher".to_string(),
                "crates/searcher/src".to_string(),
                "crates/searcher/src/lib.rs".to_string()
            )
        );
        let bin = cargo_crates(
            "",
            "[package]\nname = \"ripgrep\"\n[[bin]]\npath = \"crates/core/main.rs\"\n",
        );
        assert_eq!(bin[0].1, "crates/core");
    }
}
