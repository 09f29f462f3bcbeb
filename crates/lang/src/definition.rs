//! What every front end produces: [`Definition`]s, [`Import`]s and the
//! [`ParsedFile`] that holds them with the syntax verdict and the lines holding code.

use std::ops::Range;

/// What a definition is. Front ends map their languages' constructs onto these
/// (see each front end's module docs for the mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    /// A class (Python, TS/JS, Java classes and records).
    Class,
    /// An interface (TS, Java, Java annotation types, Go interface types).
    Interface,
    /// A struct (Go struct types, Rust structs and unions).
    Struct,
    /// An enum (TS, Java, Rust).
    Enum,
    /// A Rust trait.
    Trait,
    /// Any other named type: TS and Rust type aliases, Go named non-struct,
    /// non-interface types.
    Type,
    /// A Rust `impl` block; its name is the implementing type's, so its methods are
    /// `Type.method`. Not a unit of its own: a line in it outside its methods counts
    /// for the type.
    Impl,
    /// A namespace that only prefixes names: a Rust inline `mod`, a TS `namespace`.
    Module,
    /// A function that is not a method: free functions, functions bound to a
    /// variable (TS/JS), nested functions.
    Function,
    /// A method of a type (or a signature in an interface or trait).
    Method,
    /// A constructor (Java constructors, TS/JS `constructor`, Python `__init__`):
    /// counts as its type for gold, like LocAgent's `merge_init`.
    Constructor,
}

impl DefKind {
    /// Whether this kind is a named type (a class-like unit; not `Impl` or `Module`).
    pub fn is_type(self) -> bool {
        matches!(
            self,
            DefKind::Class
                | DefKind::Interface
                | DefKind::Struct
                | DefKind::Enum
                | DefKind::Trait
                | DefKind::Type
        )
    }

    /// Whether this kind has a body that runs: function, method or constructor.
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            DefKind::Function | DefKind::Method | DefKind::Constructor
        )
    }

    /// Whether code inside a definition of this kind belongs to that type (types and
    /// `impl` blocks: the class-body rule).
    pub fn is_type_body(self) -> bool {
        self.is_type() || self == DefKind::Impl
    }
}

/// One named definition of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// What it is.
    pub kind: DefKind,
    /// The bare name (`method`; for an `impl` block, the type's name).
    pub name: String,
    /// The qualified name as LocAgent-style ids use it (the part after `path:`):
    /// enclosing types, modules and functions joined by `.`: `Type.method`,
    /// `Outer.Inner.m`, `inner.f` (Rust `mod inner`), `outer.nested`. Go methods and
    /// Rust `impl` methods are `Type.method` although they are not inside the type.
    pub qualname: String,
    /// The qualified name of what this definition belongs to (the type of a method,
    /// the function around a nested function); `None` at file level.
    pub container: Option<String>,
    /// Index of the syntactically enclosing definition in the file's list (a Rust
    /// method's `impl` block, a nested function's function); `None` at file level
    /// (Go methods too: they sit at file level).
    pub parent: Option<usize>,
    /// 1-based first line (annotations, decorators and modifiers the grammar puts
    /// inside the definition count; Rust `#[attributes]` do not).
    pub start_line: usize,
    /// 1-based last line, inclusive.
    pub end_line: usize,
    /// Byte span in the source.
    pub span: Range<usize>,
    /// A module-level unit: a type not inside a function, or a function whose only
    /// enclosing definitions are modules. These are LocAgent's "modules".
    pub module_level: bool,
    /// The names this definition inherits from, as written (`Base`, `React.Component`,
    /// `io.Reader`, `fmt::Display`), in source order, distinct: TS/JS `extends` and
    /// `implements`, Java `extends`/`implements` (an interface's `extends` too), Go
    /// embedded struct fields and embedded interfaces, Rust supertraits; for a Rust
    /// `impl Trait for Type` block, the trait (a base of the type the block is named
    /// by). Empty for other kinds and for Python (the graph builder reads Python's
    /// bases itself).
    pub bases: Vec<String>,
    /// The calls made in this definition's own body, nested definitions excluded, as
    /// the callee is written (`helper`, `this.render`, `fmt.Println`, `Foo::new`,
    /// `obj.method`), in order of first occurrence, distinct. Instantiations count as
    /// calls of the type: `new Foo()` (TS/JS, Java), Go composite literals `Foo{…}`,
    /// Rust struct expressions `Foo { … }`, JSX elements `<Button/>` with a capitalised
    /// name. Calls in lambdas, closures and anonymous classes belong to the enclosing
    /// definition; calls in a type's body outside its members (field initializers)
    /// to the type. Macro invocations are not calls. Empty for Python.
    pub calls: Vec<String>,
}

impl Definition {
    /// LocAgent-style node id of this definition in file `path`: `path:qualname`.
    pub fn id(&self, path: &str) -> String {
        format!("{path}:{}", self.qualname)
    }

    /// Whether `line` lies in `[start_line, end_line]`.
    pub fn contains_line(&self, line: usize) -> bool {
        self.start_line <= line && line <= self.end_line
    }
}

/// One imported module path, as the language writes it (`java.util.List`,
/// `./util`, `fmt`, `std::collections::HashMap`, `.pkg.mod` for Python's relative
/// imports), with the lines of the statement that imports it and the names it binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The module path (not resolved to a file).
    pub module: String,
    /// The names the import binds in the file, where the language says so: TS/JS
    /// default, named and namespace imports and `require` bound to a variable or a
    /// destructuring pattern; Java single-type imports (`C` for `import a.b.C;`);
    /// Go imports (the alias, or the path's last element); Rust `use` paths (the last
    /// segment or the `as` alias). Empty for wildcard imports, side-effect imports,
    /// re-exports and Python.
    pub binds: Vec<Binding>,
    /// 1-based first line of the import statement.
    pub start_line: usize,
    /// 1-based last line of the import statement, inclusive.
    pub end_line: usize,
}

/// One name an [`Import`] binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The name the importing file uses (the alias when there is one).
    pub local: String,
    /// The name the module exports it under, when the import names an item of a
    /// module that is written separately from it (TS/JS `import { a as b } from 'm'`:
    /// `Some("a")`; a default import: `Some("default")`). `None` when `local` names
    /// the import's path itself: a namespace import, a `require` bound to a variable,
    /// a Go package, a Java type, a Rust path (whose last segment may be an item or a
    /// module).
    pub imported: Option<String>,
}

impl Binding {
    /// A binding of `local` to the import's path itself.
    pub fn path(local: &str) -> Binding {
        Binding {
            local: local.to_string(),
            imported: None,
        }
    }
}

/// A file reduced to what localization needs, by one parse.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedFile {
    /// Every definition, in source pre-order: a parent precedes its children.
    pub definitions: Vec<Definition>,
    /// Every import, in source order.
    pub imports: Vec<Import>,
    /// Whether the parser had to recover from an error (tree-sitter's `has_error`; for
    /// Python, CPython 3.11's verdict from `navbench-python`).
    pub has_syntax_errors: bool,
    /// `code_lines[n]`: whether 1-based line `n` holds a token that is not a comment
    /// (index 0 is unused). Blank and comment-only lines are `false`.
    pub code_lines: Vec<bool>,
}

impl ParsedFile {
    /// Whether 1-based `line` holds code (not blank, not only a comment).
    pub fn has_code(&self, line: usize) -> bool {
        self.code_lines.get(line).copied().unwrap_or(false)
    }

    /// The definitions whose lines hold `line`, outermost first: the chain of
    /// `parent`s down to the innermost one (the last in source order that holds it).
    pub fn chain_at(&self, line: usize) -> Vec<&Definition> {
        // Pre-order: among those holding the line, a later one is nested in an
        // earlier one or follows it on the same line; take the first top-level hit and
        // walk down through its descendants.
        let mut chain: Vec<&Definition> = Vec::new();
        let mut current: Option<usize> = None;
        for (i, d) in self.definitions.iter().enumerate() {
            if d.parent == current && d.contains_line(line) {
                chain.push(d);
                current = Some(i);
            }
        }
        chain
    }
}
