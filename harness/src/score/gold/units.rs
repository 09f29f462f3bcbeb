//! LocAgent's gold rules over a parsed file: which unit a changed line counts for.
//!
//! [`GoldModule::gold_unit_at`] maps a line the way LocAgent's
//! `get_module_from_line_number_with_file_structure` does, with `merge_init=True`
//! (which is how the published SWE-bench Lite gold was made: an edit inside
//! `Blueprint.__init__` is gold function `Blueprint`). The rule, with classes and
//! functions taken in `ast.walk` (breadth-first) order ([`ParsedModule::walk_order`]):
//! 1. For each class, for each *direct* method (a `def` statement directly in the class
//!    body): if the method's `[start_line, end_line]` holds the line, the unit is
//!    `Cls.meth`, or `Cls` when the method is `__init__`. Nested functions inside a method
//!    are part of the method.
//! 2. Otherwise, if the class's range holds the line, the unit is the class itself
//!    (class-level code such as a class attribute, decorators of methods, the blank
//!    lines around a method added to the class, methods of nested classes): LocAgent's
//!    published gold was made with `include_class=True`, so such an edit lists the
//!    class among the edited functions and modules.
//! 3. Then, for each function that is not excluded (below), if its range holds the line
//!    the unit is the function's bare name (outermost function first).
//!
//! A function defined under `if`/`try`/`with`/... at module level is a function like any
//! other (`path:func`, as in LocAgent's graph); a `def` under `if` inside a class body
//! is not a direct method, so its lines count for the class (rule 2).
//!
//! Quirks kept on purpose, because they are what the gold contains:
//! - A function is excluded from step 3 when, at the moment `ast.walk` reaches it, some
//!   class already reached has a direct method with the same name.
//! - Classes local to a function are classes too: a line in `f.Local.m` maps to
//!   `Local.m` (not a graph id), and a line elsewhere in `Local` maps to `Local`.
//! - Decorator lines of a top-level definition belong to no unit (they precede
//!   `start_line`).
//!
//! The line predicates LocAgent skips before mapping (imports, class docstrings with
//! LocAgent's approximate range, module-level assignments) are here too.

use std::collections::HashSet;

use navbench_python::docstring::splitlines_count;
use navbench_python::{Entity, EntityKind, LineRange, ParsedModule, parse_module};

/// What LocAgent's gold rules attribute a line to (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GoldUnit {
    /// A line in a direct method other than `__init__`: `Cls.meth`.
    Method {
        /// The class's bare name.
        class: String,
        /// The method's bare name.
        method: String,
    },
    /// A line in a class's direct `__init__` method, or in the class outside its direct
    /// methods: counted as the class itself.
    Class {
        /// The class's bare name.
        class: String,
    },
    /// A line in a function that is not a direct method: its bare name.
    Function {
        /// The function's bare name (not its qualified name).
        name: String,
    },
}

impl GoldUnit {
    /// The function-level name: `Cls.meth`, `Cls` (for `__init__`) or `func`.
    pub fn function_name(&self) -> String {
        match self {
            GoldUnit::Method { class, method } => format!("{class}.{method}"),
            GoldUnit::Class { class } => class.clone(),
            GoldUnit::Function { name } => name.clone(),
        }
    }

    /// The module-level name: the class for methods and `__init__`, else the function.
    pub fn module_name(&self) -> &str {
        match self {
            GoldUnit::Method { class, .. } | GoldUnit::Class { class } => class,
            GoldUnit::Function { name } => name,
        }
    }
}

/// A parsed file with what the gold rules need precomputed.
#[derive(Debug, Clone)]
pub struct GoldModule {
    /// The file's definitions, lines and syntax verdict.
    pub parsed: ParsedModule,
    /// Class docstrings, with LocAgent's approximate range: from the docstring
    /// statement's first line, as many lines as `ast.get_docstring` (cleaned) has.
    /// Empty docstrings are not listed.
    pub class_docstrings: Vec<LineRange>,
    /// Direct methods (entity indices, source order) per entity; empty for functions.
    direct_methods: Vec<Vec<usize>>,
    /// Classes in walk order.
    gold_classes: Vec<usize>,
    /// Functions in walk order that the gold rules consider (see the module docs).
    gold_functions: Vec<usize>,
}

impl GoldModule {
    /// Parses `source` and precomputes the gold rules' views of it.
    pub fn parse(source: &str) -> GoldModule {
        GoldModule::new(parse_module(source))
    }

    /// The gold rules' views of an already parsed file.
    pub fn new(parsed: ParsedModule) -> GoldModule {
        let entities = &parsed.entities;
        let mut direct_methods = vec![Vec::new(); entities.len()];
        for (i, e) in entities.iter().enumerate() {
            if let Some(p) = e.parent
                && e.kind == EntityKind::Function
                && !e.conditional
                && entities[p].kind == EntityKind::Class
            {
                direct_methods[p].push(i);
            }
        }
        let mut gold_classes = Vec::new();
        let mut gold_functions = Vec::new();
        let mut method_names: HashSet<&str> = HashSet::new();
        for &i in &parsed.walk_order {
            let e = &entities[i];
            match e.kind {
                EntityKind::Class => {
                    gold_classes.push(i);
                    for &m in &direct_methods[i] {
                        method_names.insert(entities[m].name.as_str());
                    }
                }
                EntityKind::Function => {
                    if !method_names.contains(e.name.as_str()) {
                        gold_functions.push(i);
                    }
                }
            }
        }
        let class_docstrings = entities
            .iter()
            .filter(|e| e.kind == EntityKind::Class)
            .filter_map(|e| e.docstring.as_ref())
            .filter(|d| !d.cleaned.is_empty())
            .map(|d| LineRange {
                start: d.line,
                end: d.line + splitlines_count(&d.cleaned).saturating_sub(1),
            })
            .collect();
        GoldModule {
            parsed,
            class_docstrings,
            direct_methods,
            gold_classes,
            gold_functions,
        }
    }

    /// Whether CPython would reject the file (LocAgent then gives up on it).
    pub fn has_syntax_errors(&self) -> bool {
        self.parsed.has_syntax_errors()
    }

    fn entity(&self, index: usize) -> &Entity {
        &self.parsed.entities[index]
    }

    /// The direct methods of entity `index` (a class), in source order.
    fn direct_methods(&self, index: usize) -> impl Iterator<Item = &Entity> {
        self.direct_methods
            .get(index)
            .into_iter()
            .flatten()
            .map(|&m| self.entity(m))
    }

    /// The gold unit (LocAgent's rules, see the module docs) that `line` belongs to.
    pub fn gold_unit_at(&self, line: usize) -> Option<GoldUnit> {
        for &c in &self.gold_classes {
            let class = self.entity(c);
            for m in self.direct_methods(c) {
                if m.contains_line(line) {
                    return Some(if m.name == "__init__" {
                        GoldUnit::Class {
                            class: class.name.clone(),
                        }
                    } else {
                        GoldUnit::Method {
                            class: class.name.clone(),
                            method: m.name.clone(),
                        }
                    });
                }
            }
            if class.contains_line(line) {
                return Some(GoldUnit::Class {
                    class: class.name.clone(),
                });
            }
        }
        self.gold_functions
            .iter()
            .map(|&f| self.entity(f))
            .find(|f| f.contains_line(line))
            .map(|f| GoldUnit::Function {
                name: f.name.clone(),
            })
    }

    /// Whether `unit` exists in this module by LocAgent's `check_moduel_existed`: a
    /// function by bare name among the functions the gold rules consider; a method when
    /// the first class of that name (walk order) has a direct method of that name; an
    /// class unit when any class has that name.
    pub fn gold_unit_exists(&self, unit: &GoldUnit) -> bool {
        match unit {
            GoldUnit::Function { name } => self
                .gold_functions
                .iter()
                .any(|&f| self.entity(f).name == *name),
            GoldUnit::Method { class, method } => self
                .gold_classes
                .iter()
                .find(|&&c| self.entity(c).name == *class)
                .is_some_and(|&c| self.direct_methods(c).any(|m| m.name == *method)),
            GoldUnit::Class { class } => self
                .gold_classes
                .iter()
                .any(|&c| self.entity(c).name == *class),
        }
    }

    /// Whether `line` is part of an import statement.
    pub fn is_import_line(&self, line: usize) -> bool {
        self.parsed.imports.iter().any(|r| r.contains(line))
    }

    /// Whether `line` is in a class docstring range (LocAgent's approximation).
    pub fn is_class_docstring_line(&self, line: usize) -> bool {
        self.class_docstrings.iter().any(|r| r.contains(line))
    }

    /// Whether `line` is part of a module-level assignment statement line.
    pub fn is_top_level_assignment_line(&self, line: usize) -> bool {
        self.parsed
            .top_level_assignments
            .iter()
            .any(|r| r.contains(line))
    }
}

/// What the hunk walk of [`super::derive_gold`] asks of a file's old or new structure:
/// the Python rules ([`GoldModule`]) or the other languages' ([`super::LangModule`]).
pub(super) trait Structure {
    /// Whether the file does not parse (no module or function gold from it).
    fn has_syntax_errors(&self) -> bool;
    /// The unit a changed line with text `content` at `line` counts for, after the
    /// language's skips (blank lines, comments, ...).
    fn unit_for(&self, content: &str, line: usize) -> Option<GoldUnit>;
    /// Whether `unit` exists in this structure (an added line's unit then is edited).
    fn unit_exists(&self, unit: &GoldUnit) -> bool;
    /// Whether this structure declares the type `class` (by the unit's name), so that a
    /// method added to it edits an existing class (the [`super::inserted`] rule).
    fn declares_type(&self, class: &str) -> bool;
}

impl Structure for GoldModule {
    fn has_syntax_errors(&self) -> bool {
        GoldModule::has_syntax_errors(self)
    }

    fn unit_for(&self, content: &str, line: usize) -> Option<GoldUnit> {
        unit_for(content, line, self)
    }

    fn unit_exists(&self, unit: &GoldUnit) -> bool {
        self.gold_unit_exists(unit)
    }

    fn declares_type(&self, class: &str) -> bool {
        self.gold_unit_exists(&GoldUnit::Class {
            class: class.to_string(),
        })
    }
}

/// The unit a changed line counts for, after LocAgent's skips.
fn unit_for(content: &str, line: usize, module: &GoldModule) -> Option<GoldUnit> {
    let text = py_strip(content);
    if text.is_empty()
        || text.starts_with('#')
        || module.is_import_line(line)
        || module.is_class_docstring_line(line)
        || module.is_top_level_assignment_line(line)
    {
        return None;
    }
    module.gold_unit_at(line)
}

/// Python's `str.strip()`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(m: &'a ParsedModule, qualname: &str) -> &'a Entity {
        m.entities
            .iter()
            .find(|e| e.qualname == qualname)
            .unwrap_or_else(|| panic!("no entity {qualname}"))
    }

    #[test]
    fn python_gold_units_follow_locagent_rules() {
        let src = "\
class A:
    x = 1

    def __init__(self):
        def helper():
            pass

    def meth(self):
        return [
            1,
        ]

    class Nested:
        def deep(self):
            pass

    if True:
        def cond(self):
            pass


def meth():
    pass


def outer():
    class Local:
        def lm(self):
            pass
        y = 2
    return 1
";
        let m = GoldModule::parse(src);
        let unit = |line| m.gold_unit_at(line).map(|u| u.function_name());
        assert_eq!(unit(2), Some("A".into()), "class-level code is the class");
        assert_eq!(unit(5), Some("A".into()), "__init__ maps to the class");
        assert_eq!(unit(10), Some("A.meth".into()));
        assert_eq!(
            unit(14),
            Some("A".into()),
            "nested classes count for the outer class"
        );
        assert_eq!(
            unit(18),
            Some("A".into()),
            "conditional methods are class-level code"
        );
        // `meth` is excluded: class `A` (reached first by ast.walk) has a method `meth`.
        assert_eq!(unit(22), None);
        assert_eq!(unit(28), Some("Local.lm".into()));
        assert_eq!(unit(29), Some("Local.lm".into()));
        assert_eq!(
            unit(30),
            Some("Local".into()),
            "class-level code of a local class"
        );
        assert_eq!(unit(31), Some("outer".into()));
        assert_eq!(
            m.gold_unit_at(10).map(|u| u.module_name().to_string()),
            Some("A".into())
        );
        assert!(m.gold_unit_exists(&GoldUnit::Class { class: "A".into() }));
        assert!(m.gold_unit_exists(&GoldUnit::Method {
            class: "A".into(),
            method: "meth".into()
        }));
        assert!(!m.gold_unit_exists(&GoldUnit::Function {
            name: "meth".into()
        }));
        assert!(m.gold_unit_exists(&GoldUnit::Function {
            name: "outer".into()
        }));
        let cond = find(&m.parsed, "A.cond");
        assert!(cond.conditional);
        assert_eq!(cond.parent, Some(0));
    }

    #[test]
    fn python_walk_order_excludes_functions_named_like_earlier_methods() {
        let src = "\
if X:
    def f1(): pass
else:
    def f2(): pass

class C:
    def f1(self): pass
";
        let m = GoldModule::parse(src);
        // Module-level `f1` comes after class `C` defined a method `f1`: excluded.
        assert_eq!(m.gold_unit_at(2), None);
        assert_eq!(
            m.gold_unit_at(4).map(|u| u.function_name()),
            Some("f2".into())
        );
    }

    #[test]
    fn class_docstring_ranges_and_line_predicates() {
        let src = "\
import os, \\
    sys
A = [
    1,
]
B += 1

class K:
    \"\"\"
    Summary.

        detail
    \"\"\"
    def m(self):
        return A


class E:
    (\"one\\n\"
     \"two\\nthree\")


class F:
    f\"not a docstring\"


class G:
    \"\"\"   \"\"\"
";
        let m = GoldModule::parse(src);
        // cleandoc drops the blank first and last lines: 3 lines from line 9; the
        // f-string is no docstring and a blank docstring is not listed.
        assert_eq!(
            m.class_docstrings,
            [
                LineRange { start: 9, end: 11 },
                LineRange { start: 19, end: 21 }
            ]
        );
        assert!(m.is_import_line(2));
        assert!(m.is_class_docstring_line(11));
        assert!(!m.is_class_docstring_line(12));
        assert!(m.is_top_level_assignment_line(4));
        assert!(!m.is_top_level_assignment_line(6), "augmented assignment");
    }
}
