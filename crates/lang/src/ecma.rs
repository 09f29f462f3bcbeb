//! TypeScript (`.ts`, `.mts`, `.cts`), TSX (`.tsx`) and JavaScript with JSX (`.js`,
//! `.jsx`, `.mjs`, `.cjs`): three grammars, one set of rules (the JavaScript grammar's
//! node kinds are a subset of TypeScript's).
//!
//! Definitions:
//! - classes (`class`, `abstract class`, a class expression bound to a variable),
//!   interfaces, enums and type aliases (TS), named by their declaration or binding;
//! - functions: `function` declarations (generators, TS overload signatures and
//!   `declare function` too), and arrow functions / function expressions bound to a
//!   `const`/`let`/`var` (named by the binding) or exported as `export default`
//!   (named `default`);
//! - methods: `method_definition`s in a class body (`constructor` is a
//!   [`DefKind::Constructor`]; getters and setters are methods named by their
//!   property), class fields whose value is an arrow function or function
//!   expression, and method signatures of interfaces and abstract classes;
//! - `Type.prototype.m = function …` and `obj.m = function …` statements: methods of
//!   `Type` / `obj`;
//! - `namespace X { … }`: a [`DefKind::Module`] prefixing its members (`X.f`).
//!
//! Left out: methods of object literals (`{ m() {} }`, `{ m: () => … }`: their code
//! belongs to whatever encloses the literal), callbacks passed as arguments
//! and immediately invoked function expressions are not definitions (their code
//! belongs to whatever encloses them). Imports: `import … from 'm'`, `export … from
//! 'm'`, `import x = require('m')` and `require('m')` calls; their bindings: default
//! imports (`imported` = `default`), named imports (`{ a as b }`), namespace imports,
//! `require` bound to a variable or destructured (`const { a: b } = require('m')`).
//! Re-exports bind nothing.
//!
//! Bases: `extends` (a class's superclass expression as written, `React.Component`)
//! and `implements` of classes, `extends` of interfaces, without type arguments.
//! Calls: call expressions (`f`, `this.render`, `obj.a.b`; a call of a call's result
//! by its last property only; `require` and dynamic `import()` are imports, not
//! calls), `new Foo()` as a call of `Foo`, and JSX elements whose name is capitalised
//! or dotted (`<Button/>`, `<Foo.Bar>`: components) as calls of the component.

use tree_sitter::Node;

use crate::Language;
use crate::definition::{Binding, DefKind, Definition, Import, ParsedFile};
use crate::walk::{self, Found, Grammar, Visit, def, dotted, field_text, parent_kind, text};

/// The TypeScript front end (`.ts`, `.mts`, `.cts`).
pub struct TypeScript;

/// The TSX front end (`.tsx`): TypeScript with JSX.
pub struct Tsx;

/// The JavaScript front end, JSX included (`.js`, `.jsx`, `.mjs`, `.cjs`).
pub struct JavaScript;

impl Language for TypeScript {
    fn name(&self) -> &'static str {
        "typescript"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["ts", "mts", "cts"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        walk::parse(self, source)
    }
}

impl Language for Tsx {
    fn name(&self) -> &'static str {
        "tsx"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["tsx"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        walk::parse(self, source)
    }
}

impl Language for JavaScript {
    fn name(&self) -> &'static str {
        "javascript"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["js", "jsx", "mjs", "cjs"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        walk::parse(self, source)
    }
}

impl Grammar for TypeScript {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        classify(node, src, scope)
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        imports(node, src, out);
    }

    fn bases(&self, node: Node<'_>, src: &str) -> Vec<String> {
        bases(node, src)
    }

    fn call(&self, node: Node<'_>, src: &str) -> Option<String> {
        call(node, src)
    }
}

impl Grammar for Tsx {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_typescript::LANGUAGE_TSX.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        classify(node, src, scope)
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        imports(node, src, out);
    }

    fn bases(&self, node: Node<'_>, src: &str) -> Vec<String> {
        bases(node, src)
    }

    fn call(&self, node: Node<'_>, src: &str) -> Option<String> {
        call(node, src)
    }
}

impl Grammar for JavaScript {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_javascript::LANGUAGE.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        classify(node, src, scope)
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        imports(node, src, out);
    }

    fn bases(&self, node: Node<'_>, src: &str) -> Vec<String> {
        bases(node, src)
    }

    fn call(&self, node: Node<'_>, src: &str) -> Option<String> {
        call(node, src)
    }
}

/// Node kinds whose value is a function.
fn is_function_value(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function"
            | "function_expression"
            | "function"
            | "generator_function"
            | "generator_function_declaration"
    )
}

/// Node kinds of class expressions.
fn is_class_value(kind: &str) -> bool {
    matches!(kind, "class" | "abstract_class")
}

/// A declaration named by its `name` field.
fn named(node: Node<'_>, src: &str, kind: DefKind) -> Visit {
    match field_text(node, "name", src) {
        Some(name) => def(kind, name),
        None => Visit::Descend,
    }
}

/// Whether `node` (a member) sits directly in a class or interface body.
fn in_type_body(node: Node<'_>) -> bool {
    match parent_kind(node) {
        "class_body" | "interface_body" => true,
        "object_type" => node
            .parent()
            .and_then(|p| p.parent())
            .is_some_and(|g| g.kind() == "interface_declaration"),
        _ => false,
    }
}

fn classify(node: Node<'_>, src: &str, _scope: Option<&Definition>) -> Visit {
    match node.kind() {
        "class_declaration" | "abstract_class_declaration" => named(node, src, DefKind::Class),
        "interface_declaration" => named(node, src, DefKind::Interface),
        "enum_declaration" => named(node, src, DefKind::Enum),
        "type_alias_declaration" => named(node, src, DefKind::Type),
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            named(node, src, DefKind::Function)
        }
        "internal_module" => named(node, src, DefKind::Module),
        "method_definition" | "method_signature" | "abstract_method_signature"
            if in_type_body(node) =>
        {
            match field_text(node, "name", src) {
                Some("constructor") => def(DefKind::Constructor, "constructor"),
                Some(name) => def(DefKind::Method, name),
                None => Visit::Descend,
            }
        }
        "public_field_definition" | "field_definition" if in_type_body(node) => {
            let value = node.child_by_field_name("value").map(|v| v.kind());
            let name = field_text(node, "name", src).or_else(|| field_text(node, "property", src));
            match (value, name) {
                (Some(v), Some(name)) if is_function_value(v) => def(DefKind::Method, name),
                _ => Visit::Descend,
            }
        }
        "variable_declarator" => bound_value(node, src),
        "export_statement" => {
            // `export default function () {}` / `export default () => …`: named `default`.
            match node.child_by_field_name("value").map(|v| v.kind()) {
                Some(v) if is_function_value(v) => def(DefKind::Function, "default"),
                Some(v) if is_class_value(v) => def(DefKind::Class, "default"),
                _ => Visit::Descend,
            }
        }
        "assignment_expression" if parent_kind(node) == "expression_statement" => {
            assigned_method(node, src)
        }
        _ => Visit::Descend,
    }
}

/// `const f = () => …`, `let g = function () {}`, `var C = class {}`: named by the
/// binding (a destructuring pattern names nothing).
fn bound_value(node: Node<'_>, src: &str) -> Visit {
    let Some(name) = node.child_by_field_name("name") else {
        return Visit::Descend;
    };
    if name.kind() != "identifier" {
        return Visit::Descend;
    }
    match node.child_by_field_name("value").map(|v| v.kind()) {
        Some(v) if is_function_value(v) => def(DefKind::Function, text(name, src)),
        Some(v) if is_class_value(v) => def(DefKind::Class, text(name, src)),
        _ => Visit::Descend,
    }
}

/// `Type.prototype.m = function …` → method `m` of `Type`; `obj.m = () => …` → method
/// `m` of `obj`; `exports.f = function …` / `module.exports.f = …` → function `f`.
fn assigned_method(node: Node<'_>, src: &str) -> Visit {
    let (Some(left), Some(right)) = (
        node.child_by_field_name("left"),
        node.child_by_field_name("right"),
    ) else {
        return Visit::Descend;
    };
    if left.kind() != "member_expression" || !is_function_value(right.kind()) {
        return Visit::Descend;
    }
    let (Some(object), Some(property)) = (
        field_text(left, "object", src),
        field_text(left, "property", src),
    ) else {
        return Visit::Descend;
    };
    let owner = object.strip_suffix(".prototype").unwrap_or(object);
    let simple = !owner.is_empty()
        && owner.split('.').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        });
    if !simple {
        return Visit::Descend;
    }
    if matches!(owner, "exports" | "module.exports") {
        return def(DefKind::Function, property);
    }
    if owner == "module" {
        return Visit::Descend; // `module.exports = function …`: an anonymous export
    }
    Visit::Def(Found {
        kind: DefKind::Method,
        name: property.to_string(),
        owner: Some(owner.to_string()),
    })
}

/// The module a string literal names, quotes removed.
fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .to_string()
}

fn imports(node: Node<'_>, src: &str, out: &mut Vec<Import>) {
    match node.kind() {
        "import_statement" | "export_statement" => {
            if let Some(source) = field_text(node, "source", src) {
                let mut binds = Vec::new();
                if node.kind() == "import_statement" {
                    import_bindings(node, src, &mut binds);
                }
                out.push(walk::import(unquote(source), binds));
            }
        }
        "import_require_clause" => {
            if let Some(source) = field_text(node, "source", src) {
                let binds = node
                    .named_child(0)
                    .filter(|n| n.kind() == "identifier")
                    .map(|n| Binding::path(text(n, src)));
                out.push(walk::import(unquote(source), binds.into_iter().collect()));
            }
        }
        "call_expression" if is_require(node, src) => {
            let first = node
                .child_by_field_name("arguments")
                .and_then(|a| a.named_child(0))
                .filter(|a| a.kind() == "string");
            if let Some(arg) = first {
                out.push(walk::import(
                    unquote(text(arg, src)),
                    require_bindings(node, src),
                ));
            }
        }
        _ => {}
    }
}

/// Whether `node` (a call) is `require(…)`.
fn is_require(node: Node<'_>, src: &str) -> bool {
    node.child_by_field_name("function")
        .is_some_and(|f| f.kind() == "identifier" && text(f, src) == "require")
}

/// The names an `import` statement's clause binds.
fn import_bindings(stmt: Node<'_>, src: &str, out: &mut Vec<Binding>) {
    let mut cursor = stmt.walk();
    let Some(clause) = stmt
        .named_children(&mut cursor)
        .find(|c| c.kind() == "import_clause")
    else {
        return;
    };
    let mut cursor = clause.walk();
    for part in clause.named_children(&mut cursor) {
        match part.kind() {
            "identifier" => out.push(Binding {
                local: text(part, src).to_string(),
                imported: Some("default".to_string()),
            }),
            "namespace_import" => {
                if let Some(id) = part.named_child(0) {
                    out.push(Binding::path(text(id, src)));
                }
            }
            "named_imports" => {
                let mut c = part.walk();
                for spec in part.named_children(&mut c) {
                    let Some(name) = field_text(spec, "name", src) else {
                        continue;
                    };
                    let name = unquote(name);
                    let local = field_text(spec, "alias", src).map_or(name.clone(), str::to_string);
                    out.push(Binding {
                        local,
                        imported: Some(name),
                    });
                }
            }
            _ => {}
        }
    }
}

/// The names a `require(…)` call binds: the variable it initialises, or the
/// properties a destructuring pattern takes from it.
fn require_bindings(call: Node<'_>, src: &str) -> Vec<Binding> {
    let Some(decl) = call.parent().filter(|p| p.kind() == "variable_declarator") else {
        return Vec::new();
    };
    let Some(name) = decl.child_by_field_name("name") else {
        return Vec::new();
    };
    match name.kind() {
        "identifier" => vec![Binding::path(text(name, src))],
        "object_pattern" => {
            let mut cursor = name.walk();
            name.named_children(&mut cursor)
                .filter_map(|p| match p.kind() {
                    "shorthand_property_identifier_pattern" => {
                        let n = text(p, src).to_string();
                        Some(Binding {
                            local: n.clone(),
                            imported: Some(n),
                        })
                    }
                    "pair_pattern" => Some(Binding {
                        local: field_text(p, "value", src)?.to_string(),
                        imported: Some(field_text(p, "key", src)?.to_string()),
                    }),
                    _ => None,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Leaf kinds of the names [`dotted`] reads in TS/JS.
const LEAVES: &[&str] = &[
    "identifier",
    "type_identifier",
    "property_identifier",
    "private_property_identifier",
    "this",
    "super",
];

/// What a class or interface definition inherits from (see the module docs).
fn bases(node: Node<'_>, src: &str) -> Vec<String> {
    let class = match node.kind() {
        "variable_declarator" | "export_statement" => node.child_by_field_name("value"),
        _ => Some(node),
    };
    let mut out = Vec::new();
    if let Some(class) = class {
        heritage(class, src, &mut out);
    }
    out
}

/// Appends the type names in `node`'s heritage clauses.
fn heritage(node: Node<'_>, src: &str, out: &mut Vec<String>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "class_heritage" | "extends_clause" | "implements_clause" | "extends_type_clause" => {
                let mut c = child.walk();
                for ty in child.named_children(&mut c) {
                    match ty.kind() {
                        "type_arguments" => {}
                        "extends_clause" | "implements_clause" => {
                            heritage(child, src, out);
                            break;
                        }
                        _ => out.extend(dotted(ty, src, LEAVES)),
                    }
                }
            }
            _ => {}
        }
    }
}

/// The callee of a call, instantiation or component element (see the module docs).
fn call(node: Node<'_>, src: &str) -> Option<String> {
    match node.kind() {
        "call_expression" if !is_require(node, src) => {
            let f = node.child_by_field_name("function")?;
            match f.kind() {
                "import" => None,
                "call_expression" => None,
                _ => dotted(f, src, LEAVES),
            }
        }
        "new_expression" => dotted(node.child_by_field_name("constructor")?, src, LEAVES),
        "jsx_opening_element" | "jsx_self_closing_element" => {
            let name = node.child_by_field_name("name")?;
            let component = name.kind() == "member_expression"
                || text(name, src).starts_with(|c: char| c.is_ascii_uppercase());
            component.then(|| dotted(name, src, LEAVES)).flatten()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{modules_of, outline};

    #[test]
    fn typescript_classes_interfaces_functions_and_bound_arrows() {
        let src = "\
import { a } from './a';
export * from \"./b\";
import fs = require('fs');

export interface Shape {
  area(): number;
}

export enum Color { Red, Green }

type Id = string;

export abstract class Base implements Shape {
  abstract area(): number;
  protected name = 'base';
}

export class Circle extends Base {
  // radius in metres
  constructor(private r: number) {
    super();
  }

  area(): number {
    const sq = (x: number) => x * x;
    return Math.PI * sq(this.r);
  }

  onClick = () => {
    this.r += 1;
  };

  get diameter() { return this.r * 2; }
}

export function make(r: number): Circle {
  function check() { return r > 0; }
  return new Circle(r);
}

export const helper = async (x: number) => {
  return x;
};

const obj = { m() { return 1; } };

namespace Geo {
  export function dist() { return 0; }
}

export default function () {}
";
        let file = TypeScript.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Interface, "Shape", 5, 7),
                (DefKind::Method, "Shape.area", 6, 6),
                (DefKind::Enum, "Color", 9, 9),
                (DefKind::Type, "Id", 11, 11),
                (DefKind::Class, "Base", 13, 16),
                (DefKind::Method, "Base.area", 14, 14),
                (DefKind::Class, "Circle", 18, 34),
                (DefKind::Constructor, "Circle.constructor", 20, 22),
                (DefKind::Method, "Circle.area", 24, 27),
                (DefKind::Function, "Circle.area.sq", 25, 25),
                (DefKind::Method, "Circle.onClick", 29, 31),
                (DefKind::Method, "Circle.diameter", 33, 33),
                (DefKind::Function, "make", 36, 39),
                (DefKind::Function, "make.check", 37, 37),
                (DefKind::Function, "helper", 41, 43),
                (DefKind::Module, "Geo", 47, 49),
                (DefKind::Function, "Geo.dist", 48, 48),
                (DefKind::Function, "default", 51, 51),
            ]
        );
        assert_eq!(modules_of(&file), ["./a", "./b", "fs"]);
        let make = &file.definitions[12];
        assert!(make.module_level && !file.definitions[13].module_level);
        assert!(
            file.definitions[16].module_level,
            "a function in a namespace"
        );
        assert_eq!(&src[make.span.clone()][..15], "function make(r");
        assert!(!file.has_code(19), "a comment-only line");
        assert!(!file.has_code(4), "a blank line");
        assert!(file.has_code(20));
    }

    #[test]
    fn tsx_and_jsx_components() {
        let tsx = "\
import React from 'react';

export const Button = ({ label }: { label: string }) => {
  const onClick = () => alert(label);
  return <button onClick={onClick}>{label}</button>;
};

export class Panel extends React.Component<Props> {
  render() {
    return <div className=\"panel\">{this.props.children}</div>;
  }
}
";
        let file = Tsx.parse(tsx);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Function, "Button", 3, 6),
                (DefKind::Function, "Button.onClick", 4, 4),
                (DefKind::Class, "Panel", 8, 12),
                (DefKind::Method, "Panel.render", 9, 11),
            ]
        );
        let jsx = tsx
            .replace(": { label: string }", "")
            .replace("<Props>", "");
        let file = JavaScript.parse(&jsx);
        assert!(!file.has_syntax_errors);
        assert_eq!(outline(&file).len(), 4);
        assert_eq!(modules_of(&file), ["react"]);
        assert!(
            TypeScript.parse(tsx).has_syntax_errors,
            "JSX is not plain TypeScript"
        );
    }

    #[test]
    fn javascript_prototype_assignments_commonjs_and_minified_code() {
        let src = "\
'use strict';
var path = require('path');

function Router(opts) {
  this.opts = opts;
}

Router.prototype.route = function route(p) {
  return path.join(p);
};

app.listen = function () {
  return this;
};

exports.create = function (o) { return new Router(o); };

module.exports = function () {};
";
        let file = JavaScript.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Function, "Router", 4, 6),
                (DefKind::Method, "Router.route", 8, 10),
                (DefKind::Method, "app.listen", 12, 14),
                (DefKind::Function, "create", 16, 16),
            ]
        );
        assert_eq!(file.definitions[1].container.as_deref(), Some("Router"));
        assert_eq!(modules_of(&file), ["path"]);

        let min =
            "var a=require(\"x\");function f(n){return n+1}class K{m(){return f(2)}}const g=()=>0;";
        let file = JavaScript.parse(min);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Function, "f", 1, 1),
                (DefKind::Class, "K", 1, 1),
                (DefKind::Method, "K.m", 1, 1),
                (DefKind::Function, "g", 1, 1),
            ]
        );
        let k = &file.definitions[1];
        assert_eq!(&min[k.span.clone()], "class K{m(){return f(2)}}");
        assert_eq!(modules_of(&file), ["x"]);
        assert!(JavaScript.parse("function (").has_syntax_errors);
    }

    /// A binding as the tests compare it: local name, imported name.
    type Bound<'a> = (&'a str, Option<&'a str>);

    #[test]
    fn ecma_bases_calls_and_import_bindings() {
        let src = "\
import React, { Component as C, useState } from 'react';
import * as path from './path';
import './side-effect';
export { x } from './x';
const { a, b: bee } = require('./ab');
const util = require('util');

interface Named extends Base, ns.Other<T> {}

export class Panel extends React.Component<Props> implements Named, Api {
  state = make();

  render() {
    const h = () => this.helper(1);
    function inner() { notMine(); }
    new Widget(path.join('a'), util.format());
    fetch().then(done);
    return <Layout.Main><Button onClick={h} /><div /></Layout.Main>;
  }
}

var K = class extends Panel {};
";
        let file = Tsx.parse(src);
        assert!(!file.has_syntax_errors);
        let by_name = |q: &str| {
            file.definitions
                .iter()
                .find(|d| d.qualname == q)
                .unwrap_or_else(|| panic!("{q}"))
        };
        assert_eq!(by_name("Named").bases, ["Base", "ns.Other"]);
        assert_eq!(by_name("Panel").bases, ["React.Component", "Named", "Api"]);
        assert_eq!(by_name("Panel").calls, ["make"]);
        assert_eq!(by_name("K").bases, ["Panel"]);
        assert_eq!(
            by_name("Panel.render").calls,
            [
                "Widget",
                "path.join",
                "util.format",
                "then",
                "fetch",
                "Layout.Main",
                "Button"
            ]
        );
        assert_eq!(by_name("Panel.render.h").calls, ["this.helper"]);
        assert_eq!(by_name("Panel.render.inner").calls, ["notMine"]);
        let imports: Vec<(&str, Vec<Bound<'_>>)> = file
            .imports
            .iter()
            .map(|i| {
                let binds = i
                    .binds
                    .iter()
                    .map(|b| (b.local.as_str(), b.imported.as_deref()))
                    .collect();
                (i.module.as_str(), binds)
            })
            .collect();
        assert_eq!(
            imports,
            [
                (
                    "react",
                    vec![
                        ("React", Some("default")),
                        ("C", Some("Component")),
                        ("useState", Some("useState"))
                    ]
                ),
                ("./path", vec![("path", None)]),
                ("./side-effect", vec![]),
                ("./x", vec![]),
                ("./ab", vec![("a", Some("a")), ("bee", Some("b"))]),
                ("util", vec![("util", None)]),
            ]
        );
    }
}
