//! Mapping a line of a source file to the LocAgent ids a localization answer uses:
//! the function id (`path:Class.method`, `path:func`; a class's constructor is the
//! class id) and the module id (`path:Class`, `path:func`).
//!
//! Python files are read with `navbench-python` (LocAgent's own rules); files of the
//! other languages with their `navbench-lang` front end, under the same rules stated on
//! types and callables (as the gold does, `crate::score::gold::lang`): the first callable on
//! the chain of definitions holding the line is the function (a method is
//! `Type.method`, Go and Rust methods by their receiver or `impl` type; a constructor
//! is its type; nested functions and closures belong to the callable around them); a
//! line in a type but in none of its methods (a struct field, an enum variant, a line
//! of a Rust `impl` outside its methods) is the innermost type at both levels, as
//! gold counts it (a Python class line keeps LocAgent's line rule: a module id only,
//! the policies tuned on it unchanged); the module is
//! gold's: the function's type (`Outer.Inner` for a method of a Java inner class) or
//! the function itself, else the innermost type (namespaces such as a Rust `mod` only
//! prefix names). A line in a Python class nested in a top-level class is the outer
//! class at both levels, as LocAgent's gold counts it.

use std::collections::HashMap;
use std::path::Path;

use navbench_lang::{DefKind, ParsedFile, language_for_path};
use navbench_python::{Entity, EntityKind, ParsedModule, parse_module};

/// The ids a line belongs to. `function` is `None` for class-level code outside any
/// method; both are `None` for module-level code.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineIds {
    pub function: Option<String>,
    pub module: Option<String>,
    /// Name of the entity the function id ends with (its short name).
    pub short_name: Option<String>,
}

/// One definition of a file, whatever its language: what policies match names
/// against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntitySpan {
    /// The bare name (`method`).
    pub name: String,
    /// The qualified name, the part after `path:` in a node id (`Type.method`).
    pub qualname: String,
    /// 1-based first and last lines.
    pub start_line: usize,
    pub end_line: usize,
}

/// A parsed source file.
enum SourceFile {
    Python(ParsedModule),
    Other(ParsedFile),
}

impl SourceFile {
    /// Parses `src` as the language of `rel`; `None` for a file no front end reads.
    fn parse(rel: &str, src: &str) -> Option<SourceFile> {
        if rel.ends_with(".py") {
            return Some(SourceFile::Python(parse_module(src)));
        }
        language_for_path(rel).map(|l| SourceFile::Other(l.parse(src)))
    }

    fn spans(&self) -> Vec<EntitySpan> {
        match self {
            SourceFile::Python(m) => m
                .entities
                .iter()
                .map(|e| EntitySpan {
                    name: e.name.clone(),
                    qualname: e.qualname.clone(),
                    start_line: e.start_line,
                    end_line: e.end_line,
                })
                .collect(),
            SourceFile::Other(f) => f
                .definitions
                .iter()
                .filter(|d| !matches!(d.kind, DefKind::Impl | DefKind::Module))
                .map(|d| EntitySpan {
                    name: d.name.clone(),
                    qualname: d.qualname.clone(),
                    start_line: d.start_line,
                    end_line: d.end_line,
                })
                .collect(),
        }
    }

    fn ids_at(&self, rel: &str, line: usize) -> LineIds {
        match self {
            SourceFile::Python(m) => ids_in(m, rel, line),
            SourceFile::Other(f) => lang_ids_in(f, rel, line),
        }
    }
}

/// Parsed files of one checked-out tree, parsed on first use.
#[derive(Default)]
pub struct EntityIndex {
    files: HashMap<String, Option<SourceFile>>,
}

impl EntityIndex {
    /// The parsed file `rel` under `root` (None when unreadable or of no language).
    fn file(&mut self, root: &Path, rel: &str) -> Option<&SourceFile> {
        self.files
            .entry(rel.to_string())
            .or_insert_with(|| {
                std::fs::read_to_string(root.join(rel))
                    .ok()
                    .and_then(|src| SourceFile::parse(rel, &src))
            })
            .as_ref()
    }

    /// The definitions of `rel` under `root`, in source order (empty when the file is
    /// unreadable or of no language with a front end).
    pub fn entities(&mut self, root: &Path, rel: &str) -> Vec<EntitySpan> {
        self.file(root, rel).map(|f| f.spans()).unwrap_or_default()
    }

    /// The ids of the entity `rel:qualname` (a graph node id's parts), mapped like a
    /// line inside it: a method's function id, a constructor → its type, a nested
    /// function → its outermost function. Empty when the file has no such entity.
    pub fn ids_of(&mut self, root: &Path, rel: &str, qualname: &str) -> LineIds {
        let Some(f) = self.file(root, rel) else {
            return LineIds::default();
        };
        match f.spans().into_iter().find(|e| e.qualname == qualname) {
            Some(e) => f.ids_at(rel, e.start_line),
            None => LineIds::default(),
        }
    }

    /// The ids an answer gives for the graph node `rel:qualname`: [`Self::ids_of`],
    /// except that a class is its own function id too. LocAgent's function-level ids
    /// name a class for its `__init__` and for edits in its body outside any method,
    /// so a class found as a whole is a function-level answer as well.
    pub fn answer_ids_of(&mut self, root: &Path, rel: &str, qualname: &str) -> LineIds {
        let mut ids = self.ids_of(root, rel, qualname);
        let own = format!("{rel}:{qualname}");
        if ids.function.is_none() && ids.module.as_deref() == Some(own.as_str()) {
            ids.function = Some(own);
        }
        ids
    }

    /// The ids of line `line` (1-based) of file `rel`.
    pub fn ids_at(&mut self, root: &Path, rel: &str, line: usize) -> LineIds {
        match self.file(root, rel) {
            Some(f) => f.ids_at(rel, line),
            None => LineIds::default(),
        }
    }
}

/// Chain of entities from the top level down to the innermost one holding `line`.
fn chain(m: &ParsedModule, line: usize) -> Vec<&Entity> {
    let mut out = Vec::new();
    let mut cur = m.innermost_at(line);
    while let Some(e) = cur {
        out.push(e);
        cur = e.parent.and_then(|p| m.entities.get(p));
    }
    out.reverse();
    out
}

/// LocAgent ids for `line` of the Python file `rel` parsed as `m`.
pub fn ids_in(m: &ParsedModule, rel: &str, line: usize) -> LineIds {
    let c = chain(m, line);
    let Some(top) = c.first() else {
        return LineIds::default();
    };
    let module = Some(format!("{rel}:{}", top.name));
    // A line in a class nested in a top-level class counts for the outer class, as in
    // LocAgent's gold (its `ast.walk` reaches the outer class first, and the line lies
    // in it but in none of its direct methods).
    if top.kind == EntityKind::Class && c.get(1).is_some_and(|e| e.kind == EntityKind::Class) {
        return LineIds {
            function: module.clone(),
            module,
            short_name: Some(top.name.clone()),
        };
    }
    // Walk down through classes; the first function met is the function answer.
    let mut names: Vec<&str> = Vec::new();
    for e in &c {
        names.push(&e.name);
        if e.kind == EntityKind::Function {
            let is_init = e.name == "__init__" && names.len() > 1;
            if is_init {
                names.pop();
            }
            let short = names.last().map(|s| s.to_string());
            return LineIds {
                function: Some(format!("{rel}:{}", names.join("."))),
                module,
                short_name: short,
            };
        }
    }
    LineIds {
        function: None,
        module,
        short_name: None,
    }
}

/// The same ids for `line` of a file of another language (see the module docs).
pub fn lang_ids_in(f: &ParsedFile, rel: &str, line: usize) -> LineIds {
    let chain: Vec<_> = f
        .chain_at(line)
        .into_iter()
        .filter(|d| d.kind != DefKind::Module)
        .collect();
    if chain.is_empty() {
        return LineIds::default();
    }
    // The module is gold's: the type of the first callable on the chain (a method's or
    // constructor's container: `Outer.Inner` for a Java inner class, the receiver of a
    // Go method, the `impl`'s type), the callable itself when it is a function, or the
    // innermost type holding a line in none of its callables.
    let first_callable = chain.iter().position(|d| d.kind.is_callable());
    let module_name = match first_callable.map(|i| chain[i]) {
        Some(d) if matches!(d.kind, DefKind::Method | DefKind::Constructor) => {
            d.container.clone().unwrap_or_else(|| d.qualname.clone())
        }
        Some(d) => d.qualname.clone(),
        None => chain
            .iter()
            .rev()
            .find(|d| d.kind.is_type_body())
            .unwrap_or(&chain[0])
            .qualname
            .clone(),
    };
    let module = Some(format!("{rel}:{module_name}"));
    for d in &chain {
        let (function, short) = match d.kind {
            DefKind::Function => (d.qualname.clone(), d.name.clone()),
            DefKind::Method => (d.qualname.clone(), d.name.clone()),
            DefKind::Constructor => {
                let class = d.container.clone().unwrap_or_else(|| d.name.clone());
                let short = class.rsplit('.').next().unwrap_or(&class).to_string();
                (class, short)
            }
            _ => continue,
        };
        return LineIds {
            function: Some(format!("{rel}:{function}")),
            module,
            short_name: Some(short),
        };
    }
    // A line in a type but in none of its callables (a struct field, an enum variant,
    // a Java field initializer, a line of a Rust `impl` outside its methods): gold
    // names the type at function level too (`GoldUnit::Class`), so the line answers
    // for it. No short name: the type is not a callable (codegraph weighs a type
    // answered as a function by its own knob).
    LineIds {
        function: module.clone(),
        module,
        short_name: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "\
import os

X = 1

class Cart:
    def __init__(self):
        self.items = []

    @property
    def total(self):
        def helper():
            return 1
        return helper()

def top(a):
    def inner():
        return a
    return inner
";

    #[test]
    fn lines_map_to_locagent_ids() {
        let m = parse_module(SRC);
        let at = |l| ids_in(&m, "p.py", l);
        assert_eq!(at(1), LineIds::default());
        assert_eq!(at(7).function.as_deref(), Some("p.py:Cart"));
        assert_eq!(at(7).module.as_deref(), Some("p.py:Cart"));
        assert_eq!(at(12).function.as_deref(), Some("p.py:Cart.total"));
        assert_eq!(at(17).function.as_deref(), Some("p.py:top"));
        assert_eq!(at(17).module.as_deref(), Some("p.py:top"));
        // Blank line between methods is class-level: module only.
        assert_eq!(at(8).function, None);
        assert_eq!(at(8).module.as_deref(), Some("p.py:Cart"));
    }

    #[test]
    fn a_class_answers_at_function_level_too() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.py"), SRC).unwrap();
        let mut index = EntityIndex::default();
        let cart = index.answer_ids_of(dir.path(), "p.py", "Cart");
        assert_eq!(cart.function.as_deref(), Some("p.py:Cart"));
        assert_eq!(cart.module.as_deref(), Some("p.py:Cart"));
        // Plain `ids_of` keeps LocAgent's line rule: a class line has no function.
        assert_eq!(index.ids_of(dir.path(), "p.py", "Cart").function, None);
        let total = index.answer_ids_of(dir.path(), "p.py", "Cart.total");
        assert_eq!(total.function.as_deref(), Some("p.py:Cart.total"));
        let helper = index.answer_ids_of(dir.path(), "p.py", "Cart.total.helper");
        assert_eq!(helper.function.as_deref(), Some("p.py:Cart.total"));
        assert_eq!(
            index.answer_ids_of(dir.path(), "p.py", "Nope"),
            LineIds::default()
        );
    }

    #[test]
    fn nested_types_get_gold_ids() {
        // Python: a class nested in a class counts for the outer class (gold's rule).
        let py =
            "class Ledger:\n    class Entry:\n        def settle(self):\n            return 1\n";
        let ids = ids_in(&parse_module(py), "l.py", 4);
        assert_eq!(ids.function.as_deref(), Some("l.py:Ledger"));
        assert_eq!(ids.module.as_deref(), Some("l.py:Ledger"));
        // Java: the inner class's method, module the inner class (as gold names them).
        let java = "class Outer {\n    static class Inner {\n        int m() {\n            return 1;\n        }\n    }\n}\n";
        let f = language_for_path("Outer.java").unwrap().parse(java);
        let ids = lang_ids_in(&f, "Outer.java", 4);
        assert_eq!(ids.function.as_deref(), Some("Outer.java:Outer.Inner.m"));
        assert_eq!(ids.module.as_deref(), Some("Outer.java:Outer.Inner"));
        // Rust: a method of an `impl` inside a `mod`.
        let rs = "mod books {\n    pub struct B;\n    impl B {\n        pub fn merge(&self) -> u8 {\n            1\n        }\n    }\n}\n";
        let f = language_for_path("b.rs").unwrap().parse(rs);
        let ids = lang_ids_in(&f, "b.rs", 5);
        assert_eq!(ids.function.as_deref(), Some("b.rs:books.B.merge"));
        assert_eq!(ids.module.as_deref(), Some("b.rs:books.B"));
    }
}

/// Every line of a fixture per language, mapped by the policies' rule and by gold's:
/// the two give the same function and module ids (the ids a variant answers are ids
/// gold can hold), for each shape the front ends read.
#[cfg(test)]
mod gold_agreement {
    use super::*;
    use crate::score::gold::LangModule;

    const GO: &str = "\
package p

type Stack[T any] struct {
\titems []T
\tlimit int
}

type Reader interface {
\tRead(p []byte) (int, error)
\tio.Closer
}

type Count int

func (s *Stack[T]) Push(x T) {
\tclean := func() { s.items = nil }
\tclean()
}

func (c Count) String() string {
\treturn \"\"
}

func New() *Stack[int] {
\ttype local struct{ n int }
\treturn &Stack[int]{}
}
";

    const JAVA: &str = "\
package p;

public class Cache<K> {
    private int size = 0;

    public Cache(int size) {
        this.size = size;
    }

    int get() {
        Runnable r = new Runnable() {
            public void run() { size++; }
        };
        return size;
    }

    static class Entry {
        int weight = 1;
        Entry() { weight = 2; }
        void touch() {
            weight++;
        }
    }

    interface Listener {
        void onEvict(Object key);
        default void clear() {
            onEvict(null);
        }
    }

    enum Mode {
        LRU,
        FIFO { int w() { return 1; } };
        int code() { return 0; }
    }

    record Pair(int a, int b) {
        Pair {
            a = b;
        }
    }
}
";

    const RUST: &str = "\
pub struct Wrapper<T> {
    inner: T,
}

impl<T> Wrapper<T> {
    const LIMIT: usize = 3;

    pub fn new(inner: T) -> Self {
        let double = |x: usize| x * 2;
        Wrapper { inner }
    }
}

impl<T: Clone> Clone for Wrapper<T> {
    fn clone(&self) -> Self {
        Wrapper { inner: self.inner.clone() }
    }
}

pub trait Shape {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        String::new()
    }
}

pub enum Color {
    Red,
    Green,
}

mod inner {
    pub struct B;
    impl B {
        pub fn merge(&self) -> u8 {
            1
        }
    }
    pub fn free() {}
}
";

    const TS: &str = "\
export class Cart {
  private items: string[] = [];
  total = () => {
    return this.items.length;
  };
  constructor(private owner: string) {
    this.items = [];
  }
  add(item: string): this;
  add(item: number): this;
  add(item: any): this {
    this.items.push(item);
    return this;
  }
  static Line = class {
    qty = 1;
  };
}

export interface Options {
  limit: number;
  render(x: string): string;
}

export namespace util {
  export function clamp(n: number): number {
    return n;
  }
  export class Box {
    open() {
      return 1;
    }
  }
}

export type Id = string | number;

export default function main(): void {
  const helper = () => 1;
  helper();
}
";

    const JS: &str = "\
function Parser(opts) {
  this.opts = opts;
}

Parser.prototype.parse = function (src) {
  return src;
};

const api = {
  get(x) {
    return x;
  },
};

export const lex = (src) => {
  return src.split(' ');
};

module.exports.render = function (x) {
  return x;
};

class Renderer {
  code = (text) => text;
  heading(text) {
    return text;
  }
}
";

    /// Checks every code line of `source` (file `rel`).
    fn agree(rel: &str, source: &str) {
        let language = language_for_path(rel).unwrap();
        let gold = LangModule::parse(language, source);
        let parsed = language.parse(source);
        assert!(!parsed.has_syntax_errors, "{rel} parses");
        for line in 1..=source.lines().count() {
            if !parsed.has_code(line) {
                continue;
            }
            let ours = lang_ids_in(&parsed, rel, line);
            let unit = gold.gold_unit_at(line);
            let want_function = unit
                .as_ref()
                .map(|u| format!("{rel}:{}", u.function_name()));
            let want_module = unit.as_ref().map(|u| format!("{rel}:{}", u.module_name()));
            assert_eq!(ours.function, want_function, "{rel} line {line} function");
            assert_eq!(ours.module, want_module, "{rel} line {line} module");
        }
    }

    #[test]
    fn policy_ids_equal_gold_ids_on_every_line_in_every_language() {
        agree("pkg/stack.go", GO);
        agree("src/main/java/p/Cache.java", JAVA);
        agree("src/wrapper.rs", RUST);
        agree("src/cart.ts", TS);
        agree("lib/parser.js", JS);
    }

    #[test]
    fn type_body_lines_answer_for_the_type() {
        let at = |rel: &str, src: &str, line: usize| {
            let f = language_for_path(rel).unwrap().parse(src);
            lang_ids_in(&f, rel, line).function
        };
        // A Go struct field, a Rust enum variant and an associated const, a Java inner
        // class's field and an enum constant, a TS interface member: the type.
        assert_eq!(at("s.go", GO, 4).as_deref(), Some("s.go:Stack"));
        assert_eq!(at("w.rs", RUST, 29).as_deref(), Some("w.rs:Color"));
        assert_eq!(at("w.rs", RUST, 6).as_deref(), Some("w.rs:Wrapper"));
        assert_eq!(
            at("C.java", JAVA, 18).as_deref(),
            Some("C.java:Cache.Entry")
        );
        assert_eq!(at("C.java", JAVA, 34).as_deref(), Some("C.java:Cache.Mode"));
        assert_eq!(at("c.ts", TS, 21).as_deref(), Some("c.ts:Options"));
        // Nested types keep their outer types; a method of a Rust `impl` in a `mod`.
        assert_eq!(
            at("C.java", JAVA, 21).as_deref(),
            Some("C.java:Cache.Entry.touch")
        );
        assert_eq!(
            at("C.java", JAVA, 19).as_deref(),
            Some("C.java:Cache.Entry")
        );
        assert_eq!(at("w.rs", RUST, 37).as_deref(), Some("w.rs:inner.B.merge"));
        assert_eq!(at("c.ts", TS, 31).as_deref(), Some("c.ts:util.Box.open"));
        assert_eq!(at("s.go", GO, 16).as_deref(), Some("s.go:Stack.Push"));
        // JS: a prototype method, a class field holding an arrow function.
        assert_eq!(at("p.js", JS, 6).as_deref(), Some("p.js:Parser.parse"));
        assert_eq!(at("p.js", JS, 24).as_deref(), Some("p.js:Renderer.code"));
    }
}
