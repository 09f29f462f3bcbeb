//! Tests of the chunker for TypeScript/JavaScript, Java, Go and Rust.

use crate::chunk::{Chunk, ChunkKind, MAX_CLASS_LINES, chunk_file, is_indexable};

/// (kind, name, first line, last line) of every chunk, in order.
fn outline(chunks: &[Chunk]) -> Vec<(ChunkKind, String, usize, usize)> {
    chunks
        .iter()
        .map(|c| {
            (
                c.kind,
                c.name.clone().unwrap_or_default(),
                c.start_line,
                c.end_line,
            )
        })
        .collect()
}

fn row(
    kind: ChunkKind,
    name: &str,
    first: usize,
    last: usize,
) -> (ChunkKind, String, usize, usize) {
    (kind, name.to_string(), first, last)
}

fn by_name<'a>(chunks: &'a [Chunk], name: &str) -> &'a Chunk {
    chunks
        .iter()
        .find(|c| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no chunk {name}: {chunks:#?}"))
}

const TS: &str = r#"import { Request, Response } from './http';
import * as path from 'path';

export const DEFAULT_TIMEOUT = 30;

/** Fetches things. */
export class Client extends Base {
  private retries = 3;

  constructor(private base: string) {
    super();
  }

  /** Sends a request. */
  async send(req: Request): Promise<Response> {
    return this.retry(() => fetch(path.join(this.base, req.url)));
  }

  private retry<T>(f: () => T): T {
    return f();
  }
}

export function getHTTPResponse(url: string): Response {
  return new Client(url).send({ url } as Request);
}

console.log("loaded");
"#;

#[test]
fn typescript_classes_methods_functions_and_module_code() {
    let chunks = chunk_file("src/client.ts", TS);
    assert_eq!(
        outline(&chunks),
        [
            row(ChunkKind::Module, "", 1, 4),
            row(ChunkKind::Class, "Client", 6, 22),
            row(ChunkKind::Method, "Client.constructor", 10, 12),
            row(ChunkKind::Method, "Client.send", 14, 17),
            row(ChunkKind::Method, "Client.retry", 19, 21),
            row(ChunkKind::Function, "getHTTPResponse", 24, 26),
            row(ChunkKind::Module, "", 28, 28),
        ]
    );
    let send = by_name(&chunks, "Client.send");
    assert!(
        send.content
            .starts_with("export class Client extends Base {\n  /** Sends a request. */\n"),
        "{}",
        send.content
    );
    assert_eq!(send.id, "src/client.ts:14-17");
    // Imports whose bound names the chunk mentions, as module paths.
    assert_eq!(send.meta.imports_used, ["./http", "path"]);
    assert_eq!(
        by_name(&chunks, "getHTTPResponse").meta.imports_used,
        ["./http"]
    );
    assert!(send.meta.calls.is_empty() && send.meta.types.is_empty());
    assert_eq!(send.meta.complexity, 4);
    // The module chunk holding the imports does not count them as uses.
    assert!(chunks[0].meta.imports_used.is_empty());
    // A short class is shown whole.
    assert!(by_name(&chunks, "Client").content.contains("return f();"));
}

#[test]
fn go_methods_belong_to_their_receiver_type() {
    let src = "package stack

import (
\t\"errors\"
\t\"fmt\"
)

// ErrEmpty is returned by Pop on an empty stack.
var ErrEmpty = errors.New(\"empty\")

// Stack is a LIFO stack.
type Stack struct {
\titems []int
}

// Push adds x.
func (s *Stack) Push(x int) {
\ts.items = append(s.items, x)
}

func (s *Stack) empty() bool { return len(s.items) == 0 }

func New() *Stack { fmt.Println(\"new\"); return &Stack{} }
";
    let chunks = chunk_file("stack/stack.go", src);
    assert_eq!(
        outline(&chunks),
        [
            row(ChunkKind::Module, "", 1, 9),
            row(ChunkKind::Class, "Stack", 11, 14),
            row(ChunkKind::Method, "Stack.Push", 16, 19),
            row(ChunkKind::Method, "Stack.empty", 21, 21),
            row(ChunkKind::Function, "New", 23, 23),
        ]
    );
    let push = by_name(&chunks, "Stack.Push");
    assert!(
        push.content
            .starts_with("type Stack struct {\n// Push adds x.\nfunc (s *Stack) Push"),
        "{}",
        push.content
    );
    assert_eq!(chunks[0].meta.imports_used, ["errors"]);
    assert_eq!(by_name(&chunks, "New").meta.imports_used, ["fmt"]);
}

#[test]
fn rust_impl_blocks_and_trait_impls() {
    let src = "use std::fmt;

/// A wrapper.
#[derive(Debug)]
pub struct Wrapper {
    inner: u32,
}

impl Wrapper {
    pub fn new(inner: u32) -> Self {
        Wrapper { inner }
    }

    fn double(&self) -> u32 {
        self.inner * 2
    }
}

impl fmt::Display for Wrapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, \"{}\", self.double())
    }
}

pub trait Shape {
    fn area(&self) -> f64;
}

fn main() {}
";
    let chunks = chunk_file("src/lib.rs", src);
    assert_eq!(
        outline(&chunks),
        [
            row(ChunkKind::Module, "", 1, 1),
            row(ChunkKind::Class, "Wrapper", 3, 7),
            row(ChunkKind::Class, "Wrapper", 9, 17),
            row(ChunkKind::Method, "Wrapper.new", 10, 12),
            row(ChunkKind::Method, "Wrapper.double", 14, 16),
            row(ChunkKind::Class, "Wrapper", 19, 23),
            row(ChunkKind::Method, "Wrapper.fmt", 20, 22),
            row(ChunkKind::Class, "Shape", 25, 27),
            row(ChunkKind::Method, "Shape.area", 26, 26),
            row(ChunkKind::Function, "main", 29, 29),
        ]
    );
    let fmt = by_name(&chunks, "Wrapper.fmt");
    assert!(
        fmt.content
            .starts_with("impl fmt::Display for Wrapper {\n    fn fmt("),
        "{}",
        fmt.content
    );
    assert_eq!(fmt.meta.imports_used, ["std::fmt"]);
    let new = by_name(&chunks, "Wrapper.new");
    assert!(
        new.content.starts_with("impl Wrapper {\n"),
        "{}",
        new.content
    );
    // Doc comments and attributes above an item belong to its chunk.
    assert!(
        chunks[1]
            .content
            .starts_with("/// A wrapper.\n#[derive(Debug)]\npub struct")
    );
    // Ids stay unique although three chunks are named Wrapper.
    let ids: std::collections::HashSet<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), chunks.len());
}

#[test]
fn long_java_class_becomes_an_outline_spanning_the_class() {
    let mut src = String::from(
        "package com.example;

import java.util.List;
import java.util.ArrayList;

/** Holds names. */
public class Registry {
    private final List<String> names = new ArrayList<>();

    public Registry() {
    }

    /** Adds one. */
    public void add(String name) {
        names.add(name);
    }
",
    );
    for i in 0..20 {
        src.push_str(&format!(
            "\n    public int size{i}() {{\n        return names.size() + {i};\n    }}\n"
        ));
    }
    src.push_str("}\n");
    let lines = src.lines().count();
    let chunks = chunk_file("src/main/java/com/example/Registry.java", &src);
    let class = by_name(&chunks, "Registry");
    assert_eq!(
        (class.kind, class.start_line, class.end_line),
        (ChunkKind::Class, 6, lines)
    );
    let text = &class.content;
    assert!(
        text.starts_with("/** Holds names. */\npublic class Registry {\n"),
        "{text}"
    );
    assert!(
        text.contains("    private final List<String> names"),
        "{text}"
    );
    assert!(
        text.contains("    public void add(String name) {\n        ...\n"),
        "{text}"
    );
    assert!(!text.contains("names.add(name)"), "{text}");
    assert!(text.lines().count() <= MAX_CLASS_LINES + 2, "{text}");
    assert!(
        text.ends_with("    ...\n}") || text.ends_with("\n}"),
        "{text}"
    );
    let add = by_name(&chunks, "Registry.add");
    assert_eq!((add.kind, add.start_line), (ChunkKind::Method, 13));
    assert!(
        add.content
            .starts_with("public class Registry {\n    /** Adds one. */")
    );
    assert_eq!(
        by_name(&chunks, "Registry.Registry").kind,
        ChunkKind::Method
    );
    assert_eq!(
        chunks
            .iter()
            .filter(|c| c.kind == ChunkKind::Method)
            .count(),
        22
    );
    assert_eq!(chunks[0].kind, ChunkKind::Module);
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 4));
}

#[test]
fn javascript_prototype_methods_and_jsx_tsx_files() {
    let src = "'use strict';
var debug = require('debug')('app');

function Router(options) {
  this.stack = [];
}

Router.prototype.handle = function handle(req, res) {
  debug('handle');
  return this.stack.length;
};

module.exports = Router;
";
    let chunks = chunk_file("lib/router.js", src);
    assert_eq!(
        outline(&chunks),
        [
            row(ChunkKind::Module, "", 1, 2),
            row(ChunkKind::Function, "Router", 4, 6),
            row(ChunkKind::Method, "Router.handle", 8, 11),
            row(ChunkKind::Module, "", 13, 13),
        ]
    );
    assert_eq!(
        by_name(&chunks, "Router.handle").meta.imports_used,
        ["debug"]
    );
    let tsx = "export function App({ title }: Props) {\n  return <h1>{title}</h1>;\n}\n";
    let chunks = chunk_file("src/App.tsx", tsx);
    assert_eq!(outline(&chunks), [row(ChunkKind::Function, "App", 1, 3)]);
    let jsx = "const Button = (props) => <button>{props.label}</button>;\n";
    let chunks = chunk_file("src/Button.jsx", jsx);
    assert_eq!(outline(&chunks), [row(ChunkKind::Function, "Button", 1, 1)]);
}

#[test]
fn the_new_languages_are_indexable_and_odd_files_give_sane_chunks() {
    for p in [
        "a.ts",
        "a.tsx",
        "a.mts",
        "a.cts",
        "a.js",
        "a.jsx",
        "a.mjs",
        "a.cjs",
        "A.java",
        "a.go",
        "a.rs",
        "a.py",
        "README.md",
    ] {
        assert!(is_indexable(p), "{p}");
    }
    assert!(!is_indexable("a.c") && !is_indexable(".ts") && !is_indexable("Makefile"));
    assert!(chunk_file("a.go", "").is_empty());
    assert!(chunk_file("a.rs", "\n\n  \n").is_empty());
    // Broken source still gives chunks covering what the parser recovered.
    let chunks = chunk_file("a.ts", "function f( {\n  return 1;\n}\nclass {\n");
    assert!(!chunks.is_empty());
    for c in &chunks {
        assert!(
            c.start_line >= 1 && c.start_line <= c.end_line && c.end_line <= 4,
            "{c:?}"
        );
    }
    // Module code longer than the limit is split.
    let long: String = (0..150).map(|i| format!("const x{i} = {i};\n")).collect();
    let chunks = chunk_file("consts.js", &long);
    assert!(chunks.len() >= 3, "{}", chunks.len());
    assert!(
        chunks
            .iter()
            .all(|c| c.end_line + 1 - c.start_line <= crate::chunk::MAX_MODULE_LINES)
    );
}

#[test]
fn a_long_doc_comment_is_cut_in_an_outline_but_kept_in_the_span() {
    let mut src: String = (0..30)
        .map(|i| format!("/// Line {i} of the docs.\n"))
        .collect();
    src.push_str("pub enum Big {\n");
    for i in 0..70 {
        src.push_str(&format!("    Variant{i},\n"));
    }
    src.push_str("}\n");
    let chunks = chunk_file("src/big.rs", &src);
    assert_eq!(outline(&chunks), [row(ChunkKind::Class, "Big", 1, 102)]);
    let text = &chunks[0].content;
    assert!(text.starts_with("/// Line 0 of the docs.\n"), "{text}");
    assert!(
        text.contains("/// Line 11 of the docs.\n...\npub enum Big {\n    Variant0,"),
        "{text}"
    );
    assert!(!text.contains("Line 12 "), "{text}");
    assert!(text.lines().count() <= MAX_CLASS_LINES + 2, "{text}");
    assert!(text.ends_with("    ...\n}"), "{text}");
}

#[test]
fn minified_bundles_are_not_chunked() {
    let line: String = (0..200)
        .map(|i| format!("function f{i}(a){{return a+{i}}}"))
        .collect();
    assert!(chunk_file("dist/app.min.js", &format!("{line}\n")).is_empty());
    assert!(!chunk_file("src/app.js", "function f(a) {\n  return a;\n}\n").is_empty());
}
