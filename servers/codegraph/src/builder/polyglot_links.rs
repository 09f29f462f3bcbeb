//! The `imports`, `invokes` and `inherits` edges of non-Python files (what each
//! language resolves and leaves out: [`super::polyglot`]'s docs).
//!
//! Imports are resolved to files per language ([`super::polyglot_paths`]); then every
//! call and base name of an entity is resolved, in this order, stopping at the first
//! step that finds something:
//! 1. `this.m` / `self.m` / `Self::m`: the enclosing type's member `m`;
//! 2. a name whose first segment an import binds: in the imported file(s), the
//!    entity named by the last segment (by the imported name for a bare named
//!    import); an import that resolves to no file of the tree (a package, the JDK, an
//!    external crate) gives nothing and stops;
//! 3. the entity's own file, then (Go, Java) the other files of its package
//!    (directory), then the files its file imports, by the last segment;
//! 4. with `global_import`, every entity of the same language family with that short
//!    name (LocAgent's `global_import`).
//!
//! At each step, a dotted callee whose second-to-last segment names a type
//! (`Foo::new`, `Excluder.create`) keeps only the candidates that are members of a
//! type of that name, and the step finds nothing when none is. Invokes target class
//! and function nodes, inherits class nodes; an entity never invokes itself.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rayon::prelude::*;

use navbench_lang::family::family_of_language;

use super::polyglot::SourceFile;
use super::polyglot_paths::Paths;
use crate::graph::{CodeGraph, Edge, EdgeKind, NodeIndex, NodeKind, short_name};

/// What one file's imports bind, resolved: local name → (files, imported name,
/// whether the import resolved to files of the tree).
pub(crate) struct FileImports {
    files: Vec<NodeIndex>,
    binds: HashMap<String, Bound>,
}

struct Bound {
    files: Vec<NodeIndex>,
    imported: Option<String>,
}

/// Adds the file-level `imports` edges of every non-Python file (each target once)
/// and returns what each file's imports bind, for name resolution.
pub(crate) fn add_file_imports(
    graph: &mut CodeGraph,
    root: &Path,
    sources: &[SourceFile<'_>],
) -> Vec<FileImports> {
    let paths = Paths::new(graph, root);
    let resolved: Vec<FileImports> = sources
        .par_iter()
        .map(|s| {
            let mut out = FileImports {
                files: Vec::new(),
                binds: HashMap::new(),
            };
            for imp in &s.parsed.imports {
                let targets = paths.resolve(s.id, s.lang, &imp.module);
                for b in &imp.binds {
                    out.binds.insert(
                        b.local.clone(),
                        Bound {
                            files: targets.clone(),
                            imported: b.imported.clone(),
                        },
                    );
                }
                push_new(&mut out.files, &targets);
            }
            if s.lang.name() == "rust" {
                let text = graph
                    .node(s.file)
                    .code
                    .as_ref()
                    .map(|c| c.as_str())
                    .unwrap_or("");
                push_new(&mut out.files, &paths.rust_mods(s.id, text));
            }
            out.files.retain(|&f| f != s.file);
            out
        })
        .collect();
    for (s, r) in sources.iter().zip(&resolved) {
        for &t in &r.files {
            graph.add_edge(s.file, t, edge(EdgeKind::Imports));
        }
    }
    resolved
}

/// Adds the `invokes` and `inherits` edges of every non-Python entity (resolved in
/// parallel, added in file and entity order: invokes, then inherits).
pub(crate) fn add_entity_edges(
    graph: &mut CodeGraph,
    sources: &[SourceFile<'_>],
    imports: &[FileImports],
    global_import: bool,
) {
    let edges: Vec<Vec<(NodeIndex, NodeIndex, EdgeKind)>> = {
        let index = Index::new(graph, sources);
        sources
            .par_iter()
            .zip(imports)
            .map(|(s, imps)| {
                let ctx = Ctx {
                    index: &index,
                    file: s,
                    imports: imps,
                    global_import,
                };
                ctx.edges()
            })
            .collect()
    };
    for (s, t, kind) in edges.into_iter().flatten() {
        graph.add_edge(s, t, edge(kind));
    }
}

/// Read-only indexes over the non-Python entities.
struct Index<'g> {
    graph: &'g CodeGraph,
    /// File node → short name → its entities.
    in_file: HashMap<NodeIndex, HashMap<&'g str, Vec<NodeIndex>>>,
    /// (directory, family) → its files (a Go or Java package).
    package: HashMap<(&'g str, &'static str), Vec<NodeIndex>>,
    /// (family, short name) → every entity with it, in node order.
    global: HashMap<(&'static str, &'g str), Vec<NodeIndex>>,
    /// (family, short name) of every type.
    types: HashSet<(&'static str, &'g str)>,
}

impl<'g> Index<'g> {
    fn new(graph: &'g CodeGraph, sources: &[SourceFile<'_>]) -> Index<'g> {
        let mut index = Index {
            graph,
            in_file: HashMap::new(),
            package: HashMap::new(),
            global: HashMap::new(),
            types: HashSet::new(),
        };
        for s in sources {
            let fam = family_of_language(s.lang);
            let file_id = graph.node(s.file).id.as_str();
            let dir = file_id.rsplit_once('/').map_or("/", |(d, _)| d);
            index.package.entry((dir, fam)).or_default().push(s.file);
            let names = index.in_file.entry(s.file).or_default();
            for e in &s.entities {
                let short = short_name(&graph.node(e.node).id);
                names.entry(short).or_default().push(e.node);
                index.global.entry((fam, short)).or_default().push(e.node);
                if e.kind == NodeKind::Class {
                    index.types.insert((fam, short));
                }
            }
        }
        for v in index.global.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        index
    }

    /// The entities of `file` named `name`.
    fn named(&self, file: NodeIndex, name: &str) -> &[NodeIndex] {
        self.in_file
            .get(&file)
            .and_then(|m| m.get(name))
            .map_or(&[], Vec::as_slice)
    }
}

/// Resolution in one file.
struct Ctx<'a, 'g> {
    index: &'a Index<'g>,
    file: &'a SourceFile<'a>,
    imports: &'a FileImports,
    global_import: bool,
}

impl Ctx<'_, '_> {
    fn fam(&self) -> &'static str {
        family_of_language(self.file.lang)
    }

    fn edges(&self) -> Vec<(NodeIndex, NodeIndex, EdgeKind)> {
        let mut out = Vec::new();
        let is_any = |k: NodeKind| k.is_entity();
        let is_class = |k: NodeKind| k == NodeKind::Class;
        for e in &self.file.entities {
            let mut seen = HashSet::new();
            for c in &e.calls {
                for t in self.resolve(c, e.node, e.owner, &is_any) {
                    if t != e.node && seen.insert(t) {
                        out.push((e.node, t, EdgeKind::Invokes));
                    }
                }
            }
            let mut seen = HashSet::new();
            for b in &e.bases {
                for t in self.resolve(b, e.node, e.owner, &is_class) {
                    if t != e.node && seen.insert(t) {
                        out.push((e.node, t, EdgeKind::Inherits));
                    }
                }
            }
        }
        for (ty, traits) in &self.file.foreign_impls {
            let Some(ty) = self.foreign_type(ty) else {
                continue;
            };
            let mut seen = HashSet::new();
            for b in traits {
                for t in self.resolve(b, ty, Some(ty), &is_class) {
                    if t != ty && seen.insert(t) {
                        out.push((ty, t, EdgeKind::Inherits));
                    }
                }
            }
        }
        out
    }

    /// The node of a type an `impl` block in this file names but this file does not
    /// declare: one in the files it imports, or the only one of the family.
    fn foreign_type(&self, name: &str) -> Option<NodeIndex> {
        let class = |&n: &NodeIndex| self.index.graph.node(n).kind == NodeKind::Class;
        let imported: Vec<NodeIndex> = self
            .imports
            .files
            .iter()
            .flat_map(|&f| self.index.named(f, name).iter().copied())
            .filter(class)
            .collect();
        if let [one, ..] = imported.as_slice() {
            return Some(*one);
        }
        let global: Vec<NodeIndex> = self
            .index
            .global
            .get(&(self.fam(), name))
            .into_iter()
            .flatten()
            .copied()
            .filter(class)
            .collect();
        match global.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The nodes `name` (a callee or base as written) refers to from entity `from`
    /// (whose enclosing type is `owner`), keeping nodes whose kind `want` accepts.
    fn resolve(
        &self,
        name: &str,
        from: NodeIndex,
        owner: Option<NodeIndex>,
        want: &dyn Fn(NodeKind) -> bool,
    ) -> Vec<NodeIndex> {
        let segs: Vec<&str> = name.split(['.', ':']).filter(|s| !s.is_empty()).collect();
        let Some(&last) = segs.last() else {
            return Vec::new();
        };
        let graph = self.index.graph;
        let ok = |n: &NodeIndex| want(graph.node(*n).kind) && *n != from;
        // 1. A member of the enclosing type.
        if segs.len() == 2
            && matches!(segs[0], "this" | "self" | "Self")
            && let Some(owner) = owner
            && let Some(n) = graph.index_of(&format!("{}.{last}", graph.node(owner).id))
            && ok(&n)
        {
            return vec![n];
        }
        let prev = (segs.len() >= 2)
            .then(|| segs[segs.len() - 2])
            .filter(|p| !matches!(*p, "this" | "self" | "Self" | "super" | "crate"));
        let pick = |cands: Vec<NodeIndex>| self.prefer(cands, prev);
        // 2. A name an import binds.
        if let Some(bound) = self.imports.binds.get(segs[0]) {
            if bound.files.is_empty() {
                return Vec::new();
            }
            let target = match (segs.len(), bound.imported.as_deref()) {
                (1, Some(n)) if n != "default" => n,
                _ => last,
            };
            let found = pick(self.in_files(&bound.files, target, &ok));
            if !found.is_empty() {
                return found;
            }
        }
        // 3. This file, its package, the files it imports.
        let here = [self.file.file];
        let found = pick(self.in_files(&here, last, &ok));
        if !found.is_empty() {
            return found;
        }
        if matches!(self.file.lang.name(), "go" | "java") {
            let found = pick(self.in_files(self.package(), last, &ok));
            if !found.is_empty() {
                return found;
            }
        }
        let found = pick(self.in_files(&self.imports.files, last, &ok));
        if !found.is_empty() {
            return found;
        }
        // 4. Anywhere in the family.
        if !self.global_import {
            return Vec::new();
        }
        let all: Vec<NodeIndex> = self
            .index
            .global
            .get(&(self.fam(), last))
            .into_iter()
            .flatten()
            .copied()
            .filter(&ok)
            .collect();
        pick(all)
    }

    /// The other files of this file's package (same directory and family).
    fn package(&self) -> &[NodeIndex] {
        let id = self.index.graph.node(self.file.file).id.as_str();
        let dir = id.rsplit_once('/').map_or("/", |(d, _)| d);
        self.index
            .package
            .get(&(dir, self.fam()))
            .map_or(&[], Vec::as_slice)
    }

    /// The entities named `name` in `files`, in node order, those `ok` accepts.
    fn in_files(
        &self,
        files: &[NodeIndex],
        name: &str,
        ok: &dyn Fn(&NodeIndex) -> bool,
    ) -> Vec<NodeIndex> {
        let mut out: Vec<NodeIndex> = files
            .iter()
            .flat_map(|&f| self.index.named(f, name).iter().copied())
            .filter(|n| ok(n))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// `cands`, narrowed to members of a type named `prev` when `prev` names a type
    /// of the family (empty when none is such a member).
    fn prefer(&self, cands: Vec<NodeIndex>, prev: Option<&str>) -> Vec<NodeIndex> {
        let Some(prev) = prev.filter(|p| self.index.types.contains(&(self.fam(), *p))) else {
            return cands;
        };
        let graph = self.index.graph;
        cands
            .into_iter()
            .filter(|&c| {
                let id = &graph.node(c).id;
                let qual = id.rsplit_once(':').map_or(id.as_str(), |(_, q)| q);
                let mut parts = qual.rsplit('.');
                parts.next();
                parts.next() == Some(prev)
            })
            .collect()
    }
}

/// Appends the nodes of `more` not yet in `into`.
fn push_new(into: &mut Vec<NodeIndex>, more: &[NodeIndex]) {
    for &m in more {
        if !into.contains(&m) {
            into.push(m);
        }
    }
}

fn edge(kind: EdgeKind) -> Edge {
    Edge { kind, alias: None }
}
