//! Java (`.java`).
//!
//! Definitions: classes and records ([`DefKind::Class`]), interfaces and annotation
//! types ([`DefKind::Interface`]), enums, methods (abstract and interface methods
//! too) and constructors (compact record constructors too). A constructor is a
//! [`DefKind::Constructor`] named like its class: for gold it counts as the class, as
//! Python's `__init__` does under LocAgent's `merge_init`. Nested and inner types are
//! prefixed by their outer types (`Outer.Inner.m`); types local to a method are
//! prefixed by it (`Outer.m.Local`) and their code belongs to the method.
//!
//! Left out: anonymous classes (`new Runnable() { … }`) and enum constants with
//! bodies: their methods are not definitions, their code belongs to whatever
//! encloses them (a method, or the type for a field initializer); lambdas. Imports:
//! `import a.b.C;`, `import a.b.*;`, `import static a.B.m;` give `a.b.C`, `a.b.*`,
//! `a.B.m`; single imports bind their last name (`C`, `m`), wildcards nothing.
//!
//! Bases: `extends` and `implements` of classes, records and enums, an interface's
//! `extends`, by the type's name without type arguments (`Base`, `java.io.Closeable`).
//! Calls: method invocations (`helper`, `this.render`, `list.add`, `Outer.util`) and
//! instance creations (`new Foo<>()` calls `Foo`); `this(…)`/`super(…)` constructor
//! calls and method references (`Foo::bar`) are not read.

use tree_sitter::Node;

use crate::Language;
use crate::definition::{Binding, DefKind, Definition, Import, ParsedFile};
use crate::walk::{self, Grammar, Visit, def, dotted, field_text, parent_kind, text};

/// The Java front end.
pub struct Java;

impl Language for Java {
    fn name(&self) -> &'static str {
        "java"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["java"]
    }

    fn parse(&self, source: &str) -> ParsedFile {
        walk::parse(self, source)
    }
}

impl Grammar for Java {
    fn tree_sitter(&self) -> tree_sitter::Language {
        tree_sitter_java::LANGUAGE.into()
    }

    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit {
        let kind = match node.kind() {
            "class_declaration" | "record_declaration" => DefKind::Class,
            "interface_declaration" | "annotation_type_declaration" => DefKind::Interface,
            "enum_declaration" => DefKind::Enum,
            "method_declaration" => match scope {
                Some(s) if s.kind.is_type() => DefKind::Method,
                _ => DefKind::Function,
            },
            "constructor_declaration" | "compact_constructor_declaration" => {
                let name = field_text(node, "name", src)
                    .or(scope.map(|s| s.name.as_str()))
                    .unwrap_or("<init>");
                return def(DefKind::Constructor, name);
            }
            // The body of an anonymous class or of an enum constant.
            "class_body"
                if matches!(
                    parent_kind(node),
                    "object_creation_expression" | "enum_constant"
                ) =>
            {
                return Visit::Opaque;
            }
            _ => return Visit::Descend,
        };
        match field_text(node, "name", src) {
            Some(name) => def(kind, name),
            None => Visit::Descend,
        }
    }

    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>) {
        if node.kind() != "import_declaration" {
            return;
        }
        let mut path = String::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "scoped_identifier" | "identifier" => path.push_str(text(child, src)),
                "asterisk" => path.push_str(".*"),
                _ => {}
            }
        }
        path.retain(|c| !c.is_whitespace());
        if !path.is_empty() {
            let binds = match path.rsplit('.').next() {
                Some(last) if last != "*" => vec![Binding::path(last)],
                _ => Vec::new(),
            };
            out.push(walk::import(path, binds));
        }
    }

    fn bases(&self, node: Node<'_>, src: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cursor = node.walk();
        for clause in node.named_children(&mut cursor) {
            if !matches!(
                clause.kind(),
                "superclass" | "super_interfaces" | "extends_interfaces"
            ) {
                continue;
            }
            let mut c = clause.walk();
            for child in clause.named_children(&mut c) {
                if child.kind() == "type_list" {
                    let mut l = child.walk();
                    out.extend(
                        child
                            .named_children(&mut l)
                            .filter_map(|t| type_name(t, src)),
                    );
                } else {
                    out.extend(type_name(child, src));
                }
            }
        }
        out
    }

    fn call(&self, node: Node<'_>, src: &str) -> Option<String> {
        match node.kind() {
            "method_invocation" => {
                let name = field_text(node, "name", src)?;
                match node
                    .child_by_field_name("object")
                    .and_then(|o| dotted(o, src, &["identifier", "this", "super"]))
                {
                    Some(object) => Some(format!("{object}.{name}")),
                    None => Some(name.to_string()),
                }
            }
            "object_creation_expression" => type_name(node.child_by_field_name("type")?, src),
            _ => None,
        }
    }
}

/// A type's name without type arguments or annotations: `Foo`, `a.b.Foo`, `Map` for
/// `Map<K, V>`; `None` for anything else (arrays, primitives).
fn type_name(ty: Node<'_>, src: &str) -> Option<String> {
    match ty.kind() {
        "type_identifier" => Some(text(ty, src).to_string()),
        "scoped_type_identifier" => {
            let mut cursor = ty.walk();
            let parts: Vec<String> = ty
                .named_children(&mut cursor)
                .filter_map(|p| type_name(p, src))
                .collect();
            (!parts.is_empty()).then(|| parts.join("."))
        }
        "generic_type" => type_name(ty.named_child(0)?, src),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{modules_of, outline};

    #[test]
    fn java_nested_classes_constructors_records_and_anonymous_classes() {
        let src = "\
package com.example;

import java.util.List;
import java.util.*;
import static java.lang.Math.max;

/** A cache. */
public class Cache<K, V> {
    private int size = 0;

    public Cache(int size) {
        this.size = size;
    }

    @Override
    public String toString() {
        Runnable r = new Runnable() {
            public void run() { }
        };
        return \"\";
    }

    static class Entry {
        void touch() {
            class Local { void m() {} }
        }
    }

    interface Listener {
        void onEvict(Object key);
    }

    enum Mode { LRU, FIFO { int weight() { return 1; } } }

    record Pair(int a, int b) {
        Pair {
            if (a > b) throw new IllegalArgumentException();
        }
    }
}
";
        let file = Java.parse(src);
        assert!(!file.has_syntax_errors);
        assert_eq!(
            outline(&file),
            [
                (DefKind::Class, "Cache", 8, 40),
                (DefKind::Constructor, "Cache.Cache", 11, 13),
                (DefKind::Method, "Cache.toString", 15, 21),
                (DefKind::Class, "Cache.Entry", 23, 27),
                (DefKind::Method, "Cache.Entry.touch", 24, 26),
                (DefKind::Class, "Cache.Entry.touch.Local", 25, 25),
                (DefKind::Method, "Cache.Entry.touch.Local.m", 25, 25),
                (DefKind::Interface, "Cache.Listener", 29, 31),
                (DefKind::Method, "Cache.Listener.onEvict", 30, 30),
                (DefKind::Enum, "Cache.Mode", 33, 33),
                (DefKind::Class, "Cache.Pair", 35, 39),
                (DefKind::Constructor, "Cache.Pair.Pair", 36, 38),
            ]
        );
        let entry = &file.definitions[3];
        assert!(entry.module_level, "a nested type is a type");
        assert_eq!(entry.container.as_deref(), Some("Cache"));
        assert!(
            !file.definitions[5].module_level,
            "a class local to a method"
        );
        assert_eq!(
            modules_of(&file),
            ["java.util.List", "java.util.*", "java.lang.Math.max"]
        );
        assert!(!file.has_code(7), "a Javadoc line");
        assert!(Java.parse("class A { void m( }").has_syntax_errors);
    }

    #[test]
    fn java_bases_calls_and_import_bindings() {
        let src = "\
import com.google.gson.internal.Excluder;
import java.util.*;

public final class Gson extends Base<String> implements java.io.Closeable, Api {
    private final Excluder excluder = Excluder.create();

    public Gson() {
        this(Excluder.DEFAULT);
        init();
    }

    public String toJson(Object src) {
        StringWriter writer = new StringWriter();
        this.toJson(src, writer);
        Runnable r = new Runnable() { public void run() { inAnon(); } };
        list.stream().map(x -> convert(x));
        return writer.toString();
    }
}

interface Api extends Closeable, Flushable {}
";
        let file = Java.parse(src);
        assert!(!file.has_syntax_errors);
        let gson = &file.definitions[0];
        assert_eq!(gson.bases, ["Base", "java.io.Closeable", "Api"]);
        assert_eq!(gson.calls, ["Excluder.create"]);
        assert_eq!(file.definitions[1].calls, ["init"]);
        assert_eq!(
            file.definitions[2].calls,
            [
                "StringWriter",
                "this.toJson",
                "Runnable",
                "inAnon",
                "map",
                "list.stream",
                "convert",
                "writer.toString"
            ]
        );
        assert_eq!(file.definitions[3].bases, ["Closeable", "Flushable"]);
        let binds: Vec<usize> = file.imports.iter().map(|i| i.binds.len()).collect();
        assert_eq!(binds, [1, 0]);
        assert_eq!(file.imports[0].binds[0].local, "Excluder");
    }
}
