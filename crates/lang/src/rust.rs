//! Rust (`.rs`).
//!
//! Definitions: free functions; structs and unions ([`DefKind::Struct`]), enums,
//! traits, type aliases ([`DefKind::Type`]); `impl Type` and `impl Trait for Type`
//! blocks ([`DefKind::Impl`], named by the type's base name: `impl<T> fmt::Display
//! for Wrapper<T>` is `Wrapper`), whose methods are `Type.method`; trait default
//! methods and required method signatures, `Trait.method`; inline `mod inner { … }`
//! blocks ([`DefKind::Module`]) prefix what they hold (`inner.f`,
//! `inner.Type.method`). Items inside a function body are prefixed by it and belong
//! to it; closures are not definitions.
//!
//! Left out: macros — `macro_rules!` definitions and whatever a macro invocation
//! expands to (items written inside `some_macro! { … }` are token trees to the
//! parser); associated types and consts (their lines count for the type through its
//! `impl` or trait); `const`/`static` items. Lines start at the item's keyword or
//! visibility: `#[attributes]` and doc comments above an item are not part of it.
//! Imports: each path of a `use` tree, groups expanded (`use a::{b, c::d}` gives
//! `a::b` and `a::c::d`; `use a::{self}` gives `a`), binding its last segment or its
//! `as` alias (globs bind nothing), and `extern crate` names. `mod x;` declarations
//! are not imports here (the graph builder reads them from the file's text).
//!
//! Bases: the trait of an `impl Trait for Type` block (on the [`DefKind::Impl`]
//! definition: a base of `Type`), a trait's supertraits. Calls: call expressions
//! (`helper`, `Foo::new`, `self.render`, `obj.method`, `f::<T>` as `f`) and struct
//! expressions (`Foo { … }` calls `Foo`); macro invocations are not calls, and
//! neither is what a macro's tokens hold (`println!("{}", f())` does not call `f`).

use tree_sitter::Node;

use crate::Language;
use crate::definition::{Binding, DefKind, Definition, Import, ParsedFile};
use crate::walk::{self, Grammar, Visit, def, dotted, field_text, text};

/// The Rust front end.
pub struct Rust;

impl Language for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["rs"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        walk::parse(self, source)
    }
}

/// The base name of an `impl`'s type: `Foo` for `Foo`, `Foo<T>`, `a::b::Foo`, `&Foo`,
/// `&mut Foo<T>`; the type's text without spaces for anything else (`[T; 2]`).
fn impl_type_name(ty: Node<'_>, src: &str) -> String {
    let mut node = ty;
    loop {
        match node.kind() {
            "type_identifier" | "primitive_type" | "identifier" => {
                return text(node, src).to_string();
            }
            "generic_type" | "reference_type" | "pointer_type" => {
                match node.child_by_field_name("type") {
                    Some(inner) => node = inner,
                    None => break,
                }
            }
            "scoped_type_identifier" => match node.child_by_field_name("name") {
                Some(inner) => node = inner,
                None => break,
            },
            _ => break,
        }
    }
    text(node, src).split_whitespace().collect()
}

impl Grammar for Rust {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_rust::LANGUAGE.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        let in_type = scope.is_some_and(|s| matches!(s.kind, DefKind::Impl | DefKind::Trait));
        let kind = match node.kind() {
            "function_item" | "function_signature_item" if in_type => DefKind::Method,
            "function_item" | "function_signature_item" => DefKind::Function,
            "struct_item" | "union_item" => DefKind::Struct,
            "enum_item" => DefKind::Enum,
            "trait_item" => DefKind::Trait,
            // `type Output = …;` in an impl is an associated type, not a definition.
            "type_item" if !in_type => DefKind::Type,
            "mod_item" if node.child_by_field_name("body").is_some() => DefKind::Module,
            "impl_item" => {
                return match node.child_by_field_name("type") {
                    Some(ty) => def(DefKind::Impl, &impl_type_name(ty, src)),
                    None => Visit::Descend,
                };
            }
            // Items a macro writes are not parsed as items; its definition neither.
            "macro_definition" => return Visit::Opaque,
            _ => return Visit::Descend,
        };
        match field_text(node, "name", src) {
            Some(name) => def(kind, name),
            None => Visit::Descend,
        }
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        match node.kind() {
            "use_declaration" => {
                let mut paths = Vec::new();
                if let Some(tree) = node.child_by_field_name("argument") {
                    use_paths(tree, src, "", None, &mut paths);
                }
                out.extend(paths.into_iter().map(|(path, alias)| {
                    let path = path.strip_suffix("::self").unwrap_or(&path).to_string();
                    let local = alias.or_else(|| {
                        let last = path.rsplit("::").next().unwrap_or(&path);
                        (last != "*" && !last.is_empty()).then(|| last.to_string())
                    });
                    walk::import(path, local.iter().map(|l| Binding::path(l)).collect())
                }));
            }
            "extern_crate_declaration" => {
                if let Some(name) = field_text(node, "name", src) {
                    let local = field_text(node, "alias", src).unwrap_or(name);
                    out.push(walk::import(name.to_string(), vec![Binding::path(local)]));
                }
            }
            _ => {}
        }
    }

    fn bases(&self, node: Node<'_>, src: &str) -> Vec<String> {
        match node.kind() {
            "impl_item" => node
                .child_by_field_name("trait")
                .and_then(|t| dotted(t, src, LEAVES))
                .into_iter()
                .collect(),
            "trait_item" => {
                let Some(bounds) = node.child_by_field_name("bounds") else {
                    return Vec::new();
                };
                let mut cursor = bounds.walk();
                bounds
                    .named_children(&mut cursor)
                    .filter_map(|b| dotted(b, src, LEAVES))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn call(&self, node: Node<'_>, src: &str) -> Option<String> {
        match node.kind() {
            "call_expression" => dotted(node.child_by_field_name("function")?, src, LEAVES),
            "struct_expression" => dotted(node.child_by_field_name("name")?, src, LEAVES),
            _ => None,
        }
    }
}

/// Leaf kinds of the names [`dotted`] reads in Rust.
const LEAVES: &[&str] = &[
    "identifier",
    "type_identifier",
    "field_identifier",
    "primitive_type",
    "self",
    "crate",
    "super",
];

/// Appends the paths of a `use` tree under `prefix` (`a::` …), groups expanded, each
/// with its `as` alias.
fn use_paths(
    node: Node<'_>,
    src: &str,
    prefix: &str,
    alias: Option<String>,
    out: &mut Vec<(String, Option<String>)>,
) {
    match node.kind() {
        "scoped_use_list" => {
            let path = field_text(node, "path", src).unwrap_or("");
            let inner = if path.is_empty() {
                prefix.to_string()
            } else {
                format!("{prefix}{path}::")
            };
            if let Some(list) = node.child_by_field_name("list") {
                use_paths(list, src, &inner, None, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                use_paths(child, src, prefix, None, out);
            }
        }
        "use_as_clause" => {
            if let Some(path) = node.child_by_field_name("path") {
                let alias = field_text(node, "alias", src).map(str::to_string);
                use_paths(path, src, prefix, alias, out);
            }
        }
        _ if node.kind().ends_with("comment") => {}
        _ => {
            let path: String = text(node, src).split_whitespace().collect();
            if !path.is_empty() {
                out.push((format!("{prefix}{path}"), alias));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{modules_of, outline};

    #[test]
    fn rust_impls_attach_methods_to_types_and_mods_prefix() {
        let src = "\
use std::collections::{HashMap, hash_map::Entry as E};
use crate::util::*;
extern crate serde;

/// A wrapper.
#[derive(Debug)]
pub struct Wrapper<T> {
    inner: T,
}

impl<T> Wrapper<T> {
    const LIMIT: usize = 3;

    pub fn new(inner: T) -> Self {
        let double = |x: usize| x * 2;
        fn helper() -> usize { 1 }
        Wrapper { inner }
    }
}

impl<T: std::fmt::Debug> std::fmt::Display for Wrapper<T> {
    type Error = ();
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, \"{:?}\", self.inner)
    }
}

pub trait Shape {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!(\"{}\", self.area())
    }
}

enum Color { Red, Green }
union Bits { i: u32, f: f32 }
type Map = HashMap<String, u32>;

macro_rules! make {
    () => { fn generated() {} };
}

mod inner {
    pub fn f() {}
    impl super::Wrapper<u8> {
        fn byte(&self) {}
    }
}

fn free() {}
";
        let file = Rust.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Struct, "Wrapper", 7, 9),
                (DefKind::Impl, "Wrapper", 11, 19),
                (DefKind::Method, "Wrapper.new", 14, 18),
                (DefKind::Function, "Wrapper.new.helper", 16, 16),
                (DefKind::Impl, "Wrapper", 21, 26),
                (DefKind::Method, "Wrapper.fmt", 23, 25),
                (DefKind::Trait, "Shape", 28, 33),
                (DefKind::Method, "Shape.area", 29, 29),
                (DefKind::Method, "Shape.describe", 30, 32),
                (DefKind::Enum, "Color", 35, 35),
                (DefKind::Struct, "Bits", 36, 36),
                (DefKind::Type, "Map", 37, 37),
                (DefKind::Module, "inner", 43, 48),
                (DefKind::Function, "inner.f", 44, 44),
                (DefKind::Impl, "inner.Wrapper", 45, 47),
                (DefKind::Method, "inner.Wrapper.byte", 46, 46),
                (DefKind::Function, "free", 50, 50),
            ]
        );
        let fmt = &file.definitions[5];
        assert_eq!(
            (fmt.container.as_deref(), fmt.parent),
            (Some("Wrapper"), Some(4))
        );
        assert!(file.definitions[13].module_level, "a function in a mod");
        assert!(
            !file.definitions[3].module_level,
            "a function in a function"
        );
        assert!(
            !file.definitions[1].module_level,
            "an impl block is not a unit"
        );
        assert_eq!(
            modules_of(&file),
            [
                "std::collections::HashMap",
                "std::collections::hash_map::Entry",
                "crate::util::*",
                "serde"
            ]
        );
        assert!(
            !file.has_code(5) && file.has_code(6),
            "doc comment vs attribute"
        );
        assert!(Rust.parse("fn f( {}").has_syntax_errors);
    }

    #[test]
    fn rust_bases_calls_and_use_bindings() {
        let src = "\
use std::collections::{self, HashMap as Map};
use crate::searcher::Searcher;
use grep::*;

pub trait Sink: Clone + fmt::Debug {}

impl<T> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = Searcher::new();
        self.render(f);
        helper::<u8>(1);
        println!(\"{}\", not_a_call());
        Point { x: 1 }
    }
}
";
        let file = Rust.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(file.definitions[0].bases, ["Clone", "fmt::Debug"]);
        let imp = &file.definitions[1];
        assert_eq!(
            (imp.kind, imp.bases.as_slice()),
            (DefKind::Impl, &["fmt::Display".to_string()][..])
        );
        assert_eq!(
            file.definitions[2].calls,
            ["Searcher::new", "self.render", "helper", "Point"]
        );
        let imports: Vec<(&str, Vec<&str>)> = file
            .imports
            .iter()
            .map(|i| {
                (
                    i.module.as_str(),
                    i.binds.iter().map(|b| b.local.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            imports,
            [
                ("std::collections", vec!["collections"]),
                ("std::collections::HashMap", vec!["Map"]),
                ("crate::searcher::Searcher", vec!["Searcher"]),
                ("grep::*", vec![]),
            ]
        );
    }
}
