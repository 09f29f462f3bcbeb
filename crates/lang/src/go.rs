//! Go (`.go`).
//!
//! Definitions: functions; named types — struct types ([`DefKind::Struct`]),
//! interface types ([`DefKind::Interface`]), any other named type or alias
//! ([`DefKind::Type`]), each spec of a grouped `type ( … )` on its own; methods,
//! attached to their receiver's type whether the receiver is a value or a pointer, a
//! generic instance or not (`func (s *Stack[T]) Push` is `Stack.Push`), wherever the
//! type is declared; method signatures of interface types (`Reader.Read`). Types
//! declared inside a function are prefixed by it and belong to it.
//!
//! Left out: function literals (`f := func() {}`), which belong to their enclosing
//! function; package-level variables and constants. Imports: each import spec's path
//! (`fmt`, `github.com/x/y`), binding its alias or else the package name guessed from
//! the path (the last element; the one before a `/vN` major version; `yaml` for
//! `gopkg.in/yaml.v3`; `go-` dropped); blank and dot imports bind nothing.
//!
//! Bases: a struct's embedded fields (`io.Reader`, `*Base`) and an interface's
//! embedded interfaces. Calls: call expressions (`f`, `fmt.Println`, `s.items.Push`;
//! generic instantiations `F[T](x)` and calls of call results are not read) and
//! composite literals of named types (`Stack{}`, `pkg.T{}`) as calls of the type.

use tree_sitter::Node;

use crate::Language;
use crate::definition::{Binding, DefKind, Definition, Import, ParsedFile};
use crate::walk::{self, Grammar, Visit, def_owned as def, dotted, field_text, text};

/// The Go front end.
pub struct Go;

impl Language for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["go"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        walk::parse(self, source)
    }
}

/// The base type name of a receiver: the first type identifier in its type (`T`,
/// `*T`, `T[K]`, `*T[K, V]`).
fn receiver_type(method: Node<'_>, src: &str) -> Option<String> {
    let receiver = method.child_by_field_name("receiver")?;
    let param = receiver.named_child(0)?;
    let mut node = param.child_by_field_name("type")?;
    loop {
        match node.kind() {
            "type_identifier" => return Some(text(node, src).to_string()),
            "pointer_type" | "parenthesized_type" => node = node.named_child(0)?,
            "generic_type" => node = node.child_by_field_name("type")?,
            _ => return None,
        }
    }
}

impl Grammar for Go {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_go::LANGUAGE.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, _scope: Option<&Definition>) -> Visit {
        let Some(name) = field_text(node, "name", src) else {
            return Visit::Descend;
        };
        match node.kind() {
            "function_declaration" => def(DefKind::Function, name, None),
            "method_declaration" => match receiver_type(node, src) {
                Some(owner) => def(DefKind::Method, name, Some(owner)),
                None => def(DefKind::Function, name, None),
            },
            "type_spec" | "type_alias" => {
                let kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                    Some("struct_type") => DefKind::Struct,
                    Some("interface_type") => DefKind::Interface,
                    _ => DefKind::Type,
                };
                def(kind, name, None)
            }
            "method_elem" | "method_spec" => def(DefKind::Method, name, None),
            _ => Visit::Descend,
        }
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        if node.kind() == "import_spec"
            && let Some(path) = field_text(node, "path", src)
        {
            let path = path.trim_matches(|c| c == '"' || c == '`').to_string();
            let local = match node.child_by_field_name("name") {
                Some(n) if n.kind() == "package_identifier" => Some(text(n, src).to_string()),
                Some(_) => None, // `_` or `.`
                None => package_name(&path),
            };
            out.push(walk::import(
                path,
                local.iter().map(|l| Binding::path(l)).collect(),
            ));
        }
    }

    fn bases(&self, node: Node<'_>, src: &str) -> Vec<String> {
        let Some(ty) = node.child_by_field_name("type") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut cursor = ty.walk();
        for member in ty.named_children(&mut cursor) {
            let embedded = match member.kind() {
                // A struct's `field_declaration_list`: fields without a name.
                "field_declaration_list" => {
                    let mut c = member.walk();
                    let fields: Vec<Node<'_>> = member
                        .named_children(&mut c)
                        .filter(|f| {
                            f.kind() == "field_declaration"
                                && f.child_by_field_name("name").is_none()
                        })
                        .filter_map(|f| f.child_by_field_name("type"))
                        .collect();
                    out.extend(fields.into_iter().filter_map(|t| type_name(t, src)));
                    continue;
                }
                "type_elem" => member.named_child(0),
                _ => None,
            };
            out.extend(embedded.and_then(|t| type_name(t, src)));
        }
        out
    }

    fn call(&self, node: Node<'_>, src: &str) -> Option<String> {
        match node.kind() {
            "call_expression" => dotted(node.child_by_field_name("function")?, src, LEAVES),
            "composite_literal" => type_name(node.child_by_field_name("type")?, src),
            _ => None,
        }
    }
}

/// Leaf kinds of the names [`dotted`] reads in Go.
const LEAVES: &[&str] = &[
    "identifier",
    "field_identifier",
    "type_identifier",
    "package_identifier",
];

/// The name of a named type (`T`, `pkg.T`, `*T`, `T[K]`); `None` for type literals.
fn type_name(ty: Node<'_>, src: &str) -> Option<String> {
    match ty.kind() {
        "pointer_type" | "parenthesized_type" => type_name(ty.named_child(0)?, src),
        _ => dotted(ty, src, LEAVES),
    }
}

/// The package name an import path binds when it has no alias, by convention: the
/// last element, the one before a `/vN` major version suffix, cut at its first `.`
/// (`gopkg.in/yaml.v3` → `yaml`), without a `go-` prefix.
fn package_name(path: &str) -> Option<String> {
    let mut parts = path.rsplit('/');
    let mut last = parts.next()?;
    let is_version = |p: &str| {
        p.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if is_version(last) {
        last = parts.next()?;
    }
    let last = last.split('.').next().unwrap_or(last);
    let last = last.strip_prefix("go-").unwrap_or(last);
    (!last.is_empty()).then(|| last.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{modules_of, outline};

    #[test]
    fn go_receivers_attach_methods_to_their_types() {
        let src = "\
package stack

import (
\t\"errors\"
\tfmt \"fmt\"
)

// Stack is a stack.
type Stack[T any] struct {
\titems []T
}

type (
\tReader interface {
\t\tRead(p []byte) (int, error)
\t}
\tID = string
\tCount int
)

func New[T any]() *Stack[T] {
\tclean := func() {}
\tclean()
\treturn &Stack[T]{}
}

func (s *Stack[T]) Push(x T) {
\ts.items = append(s.items, x)
}

func (s Stack[T]) Len() int { return len(s.items) }

func (c Count) String() string {
\treturn fmt.Sprint(int(c))
}

var ErrEmpty = errors.New(\"empty\")
";
        let file = Go.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Struct, "Stack", 9, 11),
                (DefKind::Interface, "Reader", 14, 16),
                (DefKind::Method, "Reader.Read", 15, 15),
                (DefKind::Type, "ID", 17, 17),
                (DefKind::Type, "Count", 18, 18),
                (DefKind::Function, "New", 21, 25),
                (DefKind::Method, "Stack.Push", 27, 29),
                (DefKind::Method, "Stack.Len", 31, 31),
                (DefKind::Method, "Count.String", 33, 35),
            ]
        );
        let push = &file.definitions[6];
        assert_eq!(
            (push.container.as_deref(), push.parent),
            (Some("Stack"), None)
        );
        assert!(!push.module_level && file.definitions[5].module_level);
        assert_eq!(modules_of(&file), ["errors", "fmt"]);
        assert!(Go.parse("package p\nfunc f( {\n").has_syntax_errors);
    }

    #[test]
    fn go_bases_calls_and_import_bindings() {
        let src = "\
package web

import (
\t\"fmt\"
\tgin \"github.com/gin-gonic/gin\"
\t\"gopkg.in/yaml.v3\"
\t\"github.com/x/y/v2\"
\t_ \"embed\"
)

type Engine struct {
\tRouterGroup
\t*render.Base
\tname string
}

type ReadCloser interface {
\tio.Reader
\tCloser
\tClose() error
}

func (e *Engine) Run() {
\tfmt.Println(e.name)
\te.RouterGroup.Use(New())
\tr := &Route{path: \"/\"}
\tgo func() { helper() }()
}
";
        let file = Go.parse(src);
        assert!(!file.has_syntax_errors);
        let engine = &file.definitions[0];
        assert_eq!(engine.bases, ["RouterGroup", "render.Base"]);
        assert_eq!(file.definitions[1].bases, ["io.Reader", "Closer"]);
        let run = &file.definitions[3];
        assert_eq!(run.qualname, "Engine.Run");
        assert_eq!(
            run.calls,
            ["fmt.Println", "e.RouterGroup.Use", "New", "Route", "helper"]
        );
        let binds: Vec<Vec<&str>> = file
            .imports
            .iter()
            .map(|i| i.binds.iter().map(|b| b.local.as_str()).collect())
            .collect();
        assert_eq!(
            binds,
            [vec!["fmt"], vec!["gin"], vec!["yaml"], vec!["y"], vec![]]
        );
    }
}
