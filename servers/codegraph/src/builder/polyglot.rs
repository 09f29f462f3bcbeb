//! The graph of the files in languages other than Python: TypeScript/TSX,
//! JavaScript/JSX, Java, Go and Rust, read with `navbench-lang`'s front ends in one
//! parse per file, modelled on what LocAgent builds for Python.
//!
//! Which languages a build reads is its [`super::BuildOptions::languages`]: by default
//! the repository's own (`navbench_lang::family`: each family holding at least 10% of
//! the non-test source files), so a Python project that ships some JavaScript (Django's
//! admin, a Sphinx theme) gets LocAgent's `.py`-only graph.
//!
//! # What the graph models, per language
//!
//! Everywhere: a file node per source file the walk yields (its code the whole text);
//! a class node per named type ([`navbench_lang::DefKind::is_type`]: classes,
//! interfaces, structs, enums, traits, type aliases, Go named types); a function node
//! per function, method and constructor, nested functions included (`outer.inner`, as
//! LocAgent does for Python); `contains` edges file → top-level entity → member or
//! nested entity; node ids `path/to/file.ts:Type.method` as for Python. A
//! definition whose qualified name repeats in one file (TS overload signatures, a
//! Rust method in two `impl` blocks) is one node holding the last one's code, its
//! calls and bases merged. Then ([`super::polyglot_links`]): `imports` edges from a
//! file to the files it imports where that is decidable, `inherits` edges from a
//! type to the types it extends or implements, `invokes` edges from an entity to
//! what it calls, names resolved to nodes as LocAgent does (same file first, then
//! imported names, then, with `global_import`, any entity of the same language
//! family with that short name).
//!
//! - **TypeScript / JavaScript** (`.ts`, `.tsx`, `.js`, `.jsx`, `.mjs`, …; one
//!   family): classes (class expressions bound to a variable too), interfaces, enums,
//!   type aliases; functions, arrow functions and function expressions bound to a
//!   variable, methods, constructors (`Type.constructor`), `Type.prototype.m =
//!   function` as `Type.m`. `namespace X` is no node: its members are `X.f`, contained
//!   by the file. Imports: relative specifiers (`./x` → `x.ts`, `x.tsx`, `x.js`,
//!   `x.jsx`, … or `x/index.*`; `./x.js` also to `x.ts`), through `import`,
//!   `export … from` and `require`. Left out: npm packages and path aliases
//!   (`@/x`, `tsconfig` `paths`), methods of object literals, callbacks, re-exports
//!   (a name imported through a barrel file is found by the global fallback), dynamic
//!   dispatch (`obj.m()` goes to every `m` the fallback finds), decorators.
//! - **Java**: classes, records, interfaces, annotation types, enums (nested ones as
//!   `Outer.Inner`), methods, constructors (`Type.Type`). Imports: `import a.b.C`
//!   → the file `…/a/b/C.java` under any source root (a nested type's import to its
//!   outer type's file), `import a.b.*` → every file of that package's directory;
//!   files of the same package (directory) are in scope without import. Left out:
//!   the JDK and other jars, anonymous classes and lambdas (their code belongs to the
//!   enclosing method), overloads (one node per name: `Type.m` holds the last
//!   overload), static imports of members, dynamic dispatch.
//! - **Go**: struct, interface and other named types; functions; methods attached to
//!   their receiver's type (`Type.Method`, contained by the type's node when the
//!   type is declared in the same file, by the file otherwise); interface method
//!   signatures. Imports: a path under the module path of the root's `go.mod` → every
//!   non-test `.go` file of that directory; files of the same directory (package) are
//!   in scope without import. Bases: embedded struct fields and embedded interfaces.
//!   Left out: the standard library and other modules, nested `go.mod` modules,
//!   function literals, implicit interface satisfaction, build tags (every file is
//!   read).
//! - **Rust**: structs, unions, enums, traits, type aliases; functions; methods of
//!   `impl` blocks and traits as `Type.method` (an `impl` is no node: its methods are
//!   contained by the type's node when the type is declared in the same file, by the
//!   file otherwise); items of inline `mod x { … }` as `x.item`. Imports: `mod x;` →
//!   `x.rs` or `x/mod.rs` beside the declaring module; `use crate::a::b::C`,
//!   `self::…`, `super::…` and paths starting with the name of a crate of the tree
//!   (a `Cargo.toml` `[package]`) → the file of the longest module prefix that
//!   exists. Bases: `impl Trait for Type` makes `Trait` a base of `Type`;
//!   supertraits. Left out: external crates and the standard library, macros
//!   (`macro_rules!` definitions, what macros expand to, calls inside macro
//!   arguments), `#[path]` attributes, `#[cfg]` (every item is read), trait method
//!   dispatch through generics (`T::m()` goes to every `m` the fallback finds),
//!   re-exports (`pub use`).
//!
//! Calls (`invokes`) are read from each entity's own body, nested definitions
//! excluded (a class's own calls are those of its field initializers); `this.m()`,
//! `self.m()`, `Self::m()` go first to the enclosing type's method `m`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use navbench_lang::{DefKind, Language, ParsedFile};

use crate::graph::{Code, CodeGraph, Edge, EdgeKind, Node, NodeIndex, NodeKind};

/// A non-Python file's graph facts, kept from node assembly for the edge steps.
pub(crate) struct SourceFile<'o> {
    /// The file's node.
    pub file: NodeIndex,
    /// Its id (repo-relative path).
    pub id: &'o str,
    /// Its front end.
    pub lang: &'static dyn Language,
    /// What the front end read.
    pub parsed: &'o ParsedFile,
    /// Its class and function nodes, each once, in first-definition order.
    pub entities: Vec<Entity>,
    /// `impl Trait for Type` blocks whose type has no node in this file: the type's
    /// name and the traits.
    pub foreign_impls: Vec<(String, Vec<String>)>,
}

/// One class or function node of a non-Python file and the names it uses.
pub(crate) struct Entity {
    /// The node.
    pub node: NodeIndex,
    /// Its kind.
    pub kind: NodeKind,
    /// The innermost type node enclosing it (a method's type), for `this.m()`.
    pub owner: Option<NodeIndex>,
    /// The callees, as written, distinct.
    pub calls: Vec<String>,
    /// The bases, as written, distinct.
    pub bases: Vec<String>,
}

/// Adds the class and function nodes of one non-Python file and the `contains` edges
/// from its directory to it and from it down to them.
pub(crate) fn add_file<'o>(
    graph: &mut CodeGraph,
    id: &'o str,
    dir: &str,
    file: NodeIndex,
    text: &Arc<str>,
    lang: &'static dyn Language,
    parsed: &'o ParsedFile,
) -> SourceFile<'o> {
    let defs = &parsed.definitions;
    // Pass 1: a node per type and callable (the last definition of a name wins).
    let mut node_of: Vec<Option<NodeIndex>> = vec![None; defs.len()];
    for (i, d) in defs.iter().enumerate() {
        let kind = match d.kind {
            k if k.is_type() => NodeKind::Class,
            k if k.is_callable() => NodeKind::Function,
            _ => continue,
        };
        let range = d.span.clone();
        let code = if text.get(range.clone()).is_some() {
            Code::new(text.clone(), range)
        } else {
            Code::new(text.clone(), 0..0)
        };
        node_of[i] = Some(graph.upsert_node(Node {
            id: d.id(id),
            kind,
            lines: Some((to_u32(d.start_line), to_u32(d.end_line))),
            code: Some(code),
        }));
    }
    if let Some(d) = graph.index_of(dir) {
        graph.add_edge(d, file, contains());
    }
    // Pass 2: contains edges and the facts of each node, merged over its definitions.
    let mut out = SourceFile {
        file,
        id,
        lang,
        parsed,
        entities: Vec::new(),
        foreign_impls: Vec::new(),
    };
    let mut linked: HashSet<(NodeIndex, NodeIndex)> = HashSet::new();
    let mut slots: HashMap<NodeIndex, usize> = HashMap::new();
    for (i, d) in defs.iter().enumerate() {
        let Some(node) = node_of[i] else {
            if d.kind == DefKind::Impl && !d.bases.is_empty() {
                let ty = graph
                    .index_of(&d.id(id))
                    .filter(|&t| graph.node(t).kind == NodeKind::Class);
                match ty {
                    Some(ty) => merge(
                        &mut entity_of(&mut out, &mut slots, graph, ty, Some(ty)).bases,
                        &d.bases,
                    ),
                    None => out.foreign_impls.push((d.name.clone(), d.bases.clone())),
                }
            }
            continue;
        };
        let parent = enclosing_node(graph, id, parsed, &node_of, i).unwrap_or(file);
        if linked.insert((parent, node)) {
            graph.add_edge(parent, node, contains());
        }
        let owner = match graph.node(node).kind {
            NodeKind::Class => Some(node),
            _ => enclosing_type(graph, id, parsed, i),
        };
        let e = entity_of(&mut out, &mut slots, graph, node, owner);
        merge(&mut e.calls, &d.calls);
        merge(&mut e.bases, &d.bases);
    }
    out
}

/// The entity record of `node` in `file`, made on first use (`slots`: node → its
/// position in `file.entities`).
fn entity_of<'f>(
    file: &'f mut SourceFile<'_>,
    slots: &mut HashMap<NodeIndex, usize>,
    graph: &CodeGraph,
    node: NodeIndex,
    owner: Option<NodeIndex>,
) -> &'f mut Entity {
    let pos = *slots.entry(node).or_insert_with(|| {
        file.entities.push(Entity {
            node,
            kind: graph.node(node).kind,
            owner,
            calls: Vec::new(),
            bases: Vec::new(),
        });
        file.entities.len() - 1
    });
    &mut file.entities[pos]
}

/// Appends the names of `more` not yet in `into`.
fn merge(into: &mut Vec<String>, more: &[String]) {
    for m in more {
        if !into.contains(m) {
            into.push(m.clone());
        }
    }
}

/// The node that contains definition `i`: its nearest enclosing definition that is a
/// node; for a member of an `impl` block or a Go method, its type's node when the
/// type is declared in this file. `None`: the file.
fn enclosing_node(
    graph: &CodeGraph,
    file_id: &str,
    parsed: &ParsedFile,
    node_of: &[Option<NodeIndex>],
    i: usize,
) -> Option<NodeIndex> {
    let defs = &parsed.definitions;
    let mut cur = defs[i].parent;
    while let Some(p) = cur {
        if let Some(n) = node_of[p] {
            return Some(n);
        }
        if defs[p].kind == DefKind::Impl
            && let Some(ty) = graph.index_of(&defs[p].id(file_id))
        {
            return Some(ty);
        }
        cur = defs[p].parent;
    }
    // A Go method sits at file level, attached to its receiver's type by name.
    let container = defs[i].container.as_deref()?;
    graph
        .index_of(&format!("{file_id}:{container}"))
        .filter(|&n| graph.node(n).kind == NodeKind::Class)
}

/// The type node whose member definition `i` is (directly or through nested
/// functions), for `this.m()` / `self.m()`: the first enclosing container that is a
/// class node of this file.
fn enclosing_type(
    graph: &CodeGraph,
    file_id: &str,
    parsed: &ParsedFile,
    i: usize,
) -> Option<NodeIndex> {
    let defs = &parsed.definitions;
    let mut cur = Some(i);
    while let Some(c) = cur {
        if let Some(container) = defs[c].container.as_deref()
            && let Some(n) = graph.index_of(&format!("{file_id}:{container}"))
            && graph.node(n).kind == NodeKind::Class
        {
            return Some(n);
        }
        cur = defs[c].parent;
    }
    None
}

fn contains() -> Edge {
    Edge {
        kind: EdgeKind::Contains,
        alias: None,
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "polyglot_tests.rs"]
pub(crate) mod tests;
