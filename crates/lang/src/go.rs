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
//! (`fmt`, `github.com/x/y`).

use tree_sitter::Node;

use crate::Language;
use crate::definition::{DefKind, Definition, ParsedFile};
use crate::walk::{self, Grammar, Visit, def_owned as def, field_text, text};

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

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<String>) {
        if node.kind() == "import_spec"
            && let Some(path) = field_text(node, "path", src)
        {
            out.push(path.trim_matches(|c| c == '"' || c == '`').to_string());
        }
    }
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
}
