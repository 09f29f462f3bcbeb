//! Tests of the non-Python graph on a small polyglot tree.

use std::fs;
use std::path::Path;

use navbench_lang::family::{Families, Selection};

use crate::builder::{BuildOptions, build_graph_with};
use crate::graph::{CodeGraph, EdgeKind, EdgeRef, NodeKind};

/// A polyglot tree: TS/TSX, JS, Java, Go, Rust and a Python file.
pub(crate) const FILES: &[(&str, &str)] = &[
    (
        "web/src/widget.ts",
        "export interface Drawable { draw(): void }\n\
         export class Widget implements Drawable {\n  draw() { paint(); }\n}\n\
         export function paint() { return 1; }\n",
    ),
    (
        "web/src/app.tsx",
        "import { Widget as W } from './widget';\nimport React from 'react';\n\n\
         export class App extends W {\n  render() {\n    this.draw();\n    return <Panel />;\n  }\n\
           draw() { helper(); }\n}\n\nfunction Panel() { return new W(); }\nconst helper = () => 0;\n",
    ),
    (
        "web/lib/old.js",
        "var w = require('../src/widget');\nfunction Old() {}\n\
         Old.prototype.run = function () { return w.paint(); };\n",
    ),
    (
        "java/src/main/java/com/ex/Base.java",
        "package com.ex;\n\npublic abstract class Base {\n  protected void init() {}\n}\n",
    ),
    (
        "java/src/main/java/com/ex/app/Impl.java",
        "package com.ex.app;\n\nimport com.ex.Base;\nimport java.util.List;\n\n\
         public class Impl extends Base implements Runnable {\n  public Impl() { init(); }\n\
           public void run() { new Base() {}; List.of(); helper(); }\n\
           private static void helper() {}\n}\n",
    ),
    ("go.mod", "module example.com/m\n\ngo 1.22\n"),
    (
        "pkg/stack/stack.go",
        "package stack\n\ntype Base struct{}\n\ntype Stack struct {\n\tBase\n\titems []int\n}\n\n\
         func New() *Stack { return &Stack{} }\n\n\
         func (s *Stack) Push(x int) { s.items = append(s.items, x); s.grow() }\n",
    ),
    (
        "pkg/stack/grow.go",
        "package stack\n\nfunc (s *Stack) grow() {}\n",
    ),
    (
        "cmd/main.go",
        "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/pkg/stack\"\n)\n\n\
         func main() {\n\ts := stack.New()\n\ts.Push(1)\n\tfmt.Println(s)\n}\n",
    ),
    (
        "rs/Cargo.toml",
        "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\n",
    ),
    (
        "rs/src/lib.rs",
        "mod shape;\nuse crate::shape::Circle;\n\npub fn area() -> f64 {\n    Circle::new(1.0).area()\n}\n",
    ),
    (
        "rs/src/shape.rs",
        "pub trait Shape { fn area(&self) -> f64; }\n\npub struct Circle { r: f64 }\n\n\
         impl Circle {\n    pub fn new(r: f64) -> Self { Circle { r } }\n}\n\n\
         impl Shape for Circle {\n    fn area(&self) -> f64 { self.r * Self::pi() }\n}\n\n\
         impl Circle {\n    fn pi() -> f64 { 3.14 }\n}\n",
    ),
    ("tool.py", "def area():\n    pass\n"),
];

/// Writes [`FILES`] under `root`.
pub(crate) fn write_tree(root: &Path) {
    for (path, text) in FILES {
        let p = root.join(path);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).expect("mkdir");
        }
        fs::write(p, text).expect("write");
    }
}

/// The targets of `source`'s edges of `kind`, sorted.
fn targets(g: &CodeGraph, source: &str, kind: EdgeKind) -> Vec<String> {
    let ix = g
        .index_of(source)
        .unwrap_or_else(|| panic!("no node {source}"));
    let mut out: Vec<String> = g
        .out_edges(ix)
        .iter()
        .filter(|e| e.weight().kind == kind)
        .map(|e| g.node(e.target()).id.clone())
        .collect();
    out.sort();
    out
}

/// [`FILES`]' graph with every language: `tool.py` is under 10% of the tree's
/// source files, which `auto` would leave out.
fn built() -> (tempfile::TempDir, CodeGraph) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path());
    let options = BuildOptions {
        languages: Selection::All,
        ..BuildOptions::default()
    };
    let (g, report) = build_graph_with(dir.path(), &options).expect("build");
    assert_eq!(report.languages, Families::all().names());
    (dir, g)
}

#[test]
fn nodes_and_contains_of_every_language() {
    let (_dir, g) = built();
    let kind = |id: &str| g.node_by_id(id).map(|n| n.kind);
    for (id, k) in [
        ("web/src/app.tsx", NodeKind::File),
        ("web/src/app.tsx:App", NodeKind::Class),
        ("web/src/app.tsx:App.render", NodeKind::Function),
        ("web/src/widget.ts:Drawable", NodeKind::Class),
        ("web/lib/old.js:Old.run", NodeKind::Function),
        (
            "java/src/main/java/com/ex/app/Impl.java:Impl.Impl",
            NodeKind::Function,
        ),
        ("pkg/stack/stack.go:Stack.Push", NodeKind::Function),
        ("pkg/stack/grow.go:Stack.grow", NodeKind::Function),
        ("rs/src/shape.rs:Circle.new", NodeKind::Function),
        ("rs/src/shape.rs:Shape.area", NodeKind::Function),
        ("rs/src/shape.rs:Circle.area", NodeKind::Function),
        ("tool.py:area", NodeKind::Function),
    ] {
        assert_eq!(kind(id), Some(k), "{id}");
    }
    assert_eq!(kind("go.mod"), None);
    assert_eq!(
        targets(&g, "pkg/stack/stack.go:Stack", EdgeKind::Contains),
        ["pkg/stack/stack.go:Stack.Push"]
    );
    assert_eq!(
        targets(&g, "pkg/stack/grow.go", EdgeKind::Contains),
        ["pkg/stack/grow.go:Stack.grow"],
        "a method whose type is in another file belongs to its file"
    );
    assert_eq!(
        targets(&g, "rs/src/shape.rs:Circle", EdgeKind::Contains),
        [
            "rs/src/shape.rs:Circle.area",
            "rs/src/shape.rs:Circle.new",
            "rs/src/shape.rs:Circle.pi"
        ]
    );
    assert_eq!(
        targets(&g, "web", EdgeKind::Contains),
        ["web/lib", "web/src"]
    );
}

#[test]
fn imports_per_language() {
    let (_dir, g) = built();
    assert_eq!(
        targets(&g, "web/src/app.tsx", EdgeKind::Imports),
        ["web/src/widget.ts"]
    );
    assert_eq!(
        targets(&g, "web/lib/old.js", EdgeKind::Imports),
        ["web/src/widget.ts"]
    );
    assert_eq!(
        targets(
            &g,
            "java/src/main/java/com/ex/app/Impl.java",
            EdgeKind::Imports
        ),
        ["java/src/main/java/com/ex/Base.java"]
    );
    assert_eq!(
        targets(&g, "cmd/main.go", EdgeKind::Imports),
        ["pkg/stack/grow.go", "pkg/stack/stack.go"]
    );
    assert_eq!(
        targets(&g, "rs/src/lib.rs", EdgeKind::Imports),
        ["rs/src/shape.rs"]
    );
}

#[test]
fn inherits_and_invokes_per_language() {
    let (_dir, g) = built();
    let inh = |id: &str| targets(&g, id, EdgeKind::Inherits);
    let inv = |id: &str| targets(&g, id, EdgeKind::Invokes);
    assert_eq!(inh("web/src/app.tsx:App"), ["web/src/widget.ts:Widget"]);
    assert_eq!(
        inh("web/src/widget.ts:Widget"),
        ["web/src/widget.ts:Drawable"]
    );
    assert_eq!(
        inv("web/src/app.tsx:App.render"),
        ["web/src/app.tsx:App.draw", "web/src/app.tsx:Panel"]
    );
    assert_eq!(inv("web/src/app.tsx:App.draw"), ["web/src/app.tsx:helper"]);
    assert_eq!(inv("web/src/app.tsx:Panel"), ["web/src/widget.ts:Widget"]);
    assert_eq!(inv("web/lib/old.js:Old.run"), ["web/src/widget.ts:paint"]);
    let java = "java/src/main/java/com/ex/app/Impl.java";
    assert_eq!(
        inh(&format!("{java}:Impl")),
        ["java/src/main/java/com/ex/Base.java:Base"]
    );
    assert_eq!(
        inv(&format!("{java}:Impl.Impl")),
        ["java/src/main/java/com/ex/Base.java:Base.init"]
    );
    assert_eq!(
        inv(&format!("{java}:Impl.run")),
        [
            "java/src/main/java/com/ex/Base.java:Base".to_string(),
            format!("{java}:Impl.helper")
        ],
        "`List.of` names an external import: no edge"
    );
    assert_eq!(inh("pkg/stack/stack.go:Stack"), ["pkg/stack/stack.go:Base"]);
    assert_eq!(
        inv("pkg/stack/stack.go:Stack.Push"),
        ["pkg/stack/grow.go:Stack.grow"]
    );
    assert_eq!(
        inv("cmd/main.go:main"),
        ["pkg/stack/stack.go:New", "pkg/stack/stack.go:Stack.Push"]
    );
    assert_eq!(inh("rs/src/shape.rs:Circle"), ["rs/src/shape.rs:Shape"]);
    assert_eq!(
        inv("rs/src/lib.rs:area"),
        [
            "rs/src/shape.rs:Circle.area",
            "rs/src/shape.rs:Circle.new",
            "rs/src/shape.rs:Shape.area"
        ],
        "`.area()` on a call's result: every `area` of the imported file"
    );
    assert_eq!(
        inv("rs/src/shape.rs:Circle.area"),
        ["rs/src/shape.rs:Circle.pi"]
    );
    assert_eq!(
        inv("rs/src/shape.rs:Circle.new"),
        ["rs/src/shape.rs:Circle"]
    );
    assert!(
        inv("tool.py:area").is_empty(),
        "Python resolution does not see other languages"
    );
}
