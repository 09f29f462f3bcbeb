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
//! 'm'`, `import x = require('m')` and `require('m')` calls.

use tree_sitter::Node;

use crate::Language;
use crate::definition::{DefKind, Definition, ParsedFile};
use crate::walk::{self, Found, Grammar, Visit, def, field_text, parent_kind, text};

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

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<String>) {
        imports(node, src, out);
    }
}

impl Grammar for Tsx {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_typescript::LANGUAGE_TSX.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        classify(node, src, scope)
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<String>) {
        imports(node, src, out);
    }
}

impl Grammar for JavaScript {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_javascript::LANGUAGE.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        classify(node, src, scope)
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<String>) {
        imports(node, src, out);
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

fn imports(node: Node<'_>, src: &str, out: &mut Vec<String>) {
    match node.kind() {
        "import_statement" | "export_statement" => {
            if let Some(source) = field_text(node, "source", src) {
                out.push(unquote(source));
            }
        }
        "import_require_clause" => {
            if let Some(source) = field_text(node, "source", src) {
                out.push(unquote(source));
            }
        }
        "call_expression" => {
            let callee = node.child_by_field_name("function");
            if callee.is_some_and(|f| f.kind() == "identifier" && text(f, src) == "require") {
                let first = node
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string");
                if let Some(arg) = first {
                    out.push(unquote(text(arg, src)));
                }
            }
        }
        _ => {}
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
}
