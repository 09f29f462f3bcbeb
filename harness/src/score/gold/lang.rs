//! The gold rules for files in languages other than Python, over the definitions of
//! their `navbench-lang` front end: the same shape as LocAgent's Python rules
//! ([`super::units`]), stated on types, methods and functions instead of `class` and
//! `def`.
//!
//! [`LangModule::gold_unit_at`] maps a line through the chain of definitions that hold
//! it, outermost first ([`navbench_lang::ParsedFile::chain_at`]):
//! 1. Namespaces (Rust `mod`, TS `namespace`) only prefix names: skipped.
//! 2. The first callable on the chain decides: a method gives `Type.method` (the
//!    method's container, e.g. `Outer.Inner.m`, `Stack.Push` for a Go method with a
//!    pointer receiver, `Wrapper.fmt` for a Rust trait impl), a constructor gives its
//!    type (Python's `__init__` under `merge_init`), a function gives its qualified name
//!    (`function`, `inner.f` in a Rust `mod inner`). Everything nested in it — nested
//!    functions, closures, local types — belongs to it.
//! 3. A line inside a type (or a Rust `impl` block) but in none of its methods — a
//!    field, an associated const, an enum variant, a method's decorator in TS — counts
//!    for the innermost such type: the class-body rule, as LocAgent's published gold
//!    (`include_class=True`) has it.
//! 4. A line outside every definition (imports, package-level code) has no unit, and
//!    neither has a line holding no code (blank, comment only): LocAgent skips blank
//!    and `#` lines in Python.
//!
//! The [`super::inserted`] rule holds here too: a method added to a type the file
//! declares at the base commit edits that type. "Declares" is [`Structure::declares_type`]:
//! a type or Rust `impl` block of that qualified name in the file (`Outer.Inner` for a
//! Java inner class, `Cart` for a Go receiver type declared by a `type Cart struct` of
//! the same file, `Cart` for a Rust `impl Cart` block or `struct Cart`). A Go method
//! added in a file that only holds other methods of a type declared elsewhere in the
//! package edits nothing: `path:Type` names no definition of that file.
//!
//! Not carried over from Python: the `ast.walk` quirks (a function named like an
//! earlier class's method is not excluded here) and the class-docstring and
//! module-level assignment skips (the lines are outside every unit anyway or are
//! comments).

use navbench_lang::{DefKind, Language, ParsedFile};

use super::units::{GoldUnit, Structure};

/// A file of a language with a `navbench-lang` front end, parsed for the gold rules.
#[derive(Debug, Clone)]
pub struct LangModule {
    /// The front end's reading of the file.
    pub parsed: ParsedFile,
}

impl LangModule {
    /// Parses `source` with `language`.
    pub fn parse(language: &dyn Language, source: &str) -> LangModule {
        LangModule {
            parsed: language.parse(source),
        }
    }

    /// The gold unit `line` belongs to (see the module docs).
    pub fn gold_unit_at(&self, line: usize) -> Option<GoldUnit> {
        let mut in_type: Option<&str> = None;
        for def in self.parsed.chain_at(line) {
            match def.kind {
                DefKind::Module => {}
                DefKind::Method => {
                    return Some(match def.container.as_deref() {
                        Some(class) => GoldUnit::Method {
                            class: class.to_string(),
                            method: def.name.clone(),
                        },
                        None => GoldUnit::Function {
                            name: def.qualname.clone(),
                        },
                    });
                }
                DefKind::Constructor => {
                    let class = def.container.clone().unwrap_or_else(|| def.name.clone());
                    return Some(GoldUnit::Class { class });
                }
                DefKind::Function => {
                    return Some(GoldUnit::Function {
                        name: def.qualname.clone(),
                    });
                }
                kind if kind.is_type_body() => in_type = Some(&def.qualname),
                _ => {}
            }
        }
        in_type.map(|class| GoldUnit::Class {
            class: class.to_string(),
        })
    }

    /// Whether `unit` exists in this file: a function when a function of that
    /// qualified name does; a method when a method (or signature) of that name does
    /// in that type; a type when a type or `impl` block of that name does, or a
    /// constructor or method declared for it (a Go method whose type lives in
    /// another file of the package).
    pub fn gold_unit_exists(&self, unit: &GoldUnit) -> bool {
        let defs = &self.parsed.definitions;
        match unit {
            GoldUnit::Function { name } => defs
                .iter()
                .any(|d| d.kind == DefKind::Function && d.qualname == *name),
            GoldUnit::Method { class, method } => defs.iter().any(|d| {
                d.kind == DefKind::Method
                    && d.container.as_deref() == Some(class)
                    && d.name == *method
            }),
            GoldUnit::Class { class } => defs.iter().any(|d| {
                (d.kind.is_type_body() && d.qualname == *class)
                    || (matches!(d.kind, DefKind::Method | DefKind::Constructor)
                        && d.container.as_deref() == Some(class))
            }),
        }
    }
}

impl Structure for LangModule {
    fn has_syntax_errors(&self) -> bool {
        self.parsed.has_syntax_errors
    }

    fn unit_for(&self, _content: &str, line: usize) -> Option<GoldUnit> {
        if !self.parsed.has_code(line) {
            return None;
        }
        self.gold_unit_at(line)
    }

    fn unit_exists(&self, unit: &GoldUnit) -> bool {
        self.gold_unit_exists(unit)
    }

    fn declares_type(&self, class: &str) -> bool {
        self.parsed
            .definitions
            .iter()
            .any(|d| d.kind.is_type_body() && d.qualname == class)
    }
}

#[cfg(test)]
mod tests;
