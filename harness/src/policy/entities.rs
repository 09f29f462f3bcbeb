//! Mapping a line of a Python file to the LocAgent ids a localization answer uses:
//! the function id (`path:Class.method`, `path:func`; a class's `__init__` is the class
//! id) and the module id (`path:Class`, `path:func`).

use std::collections::HashMap;
use std::path::Path;

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

/// Parsed files of one checked-out tree, parsed on first use.
#[derive(Default)]
pub struct EntityIndex {
    files: HashMap<String, Option<ParsedModule>>,
}

impl EntityIndex {
    /// The parsed module of `rel` under `root` (None when unreadable).
    pub fn module(&mut self, root: &Path, rel: &str) -> Option<&ParsedModule> {
        self.files
            .entry(rel.to_string())
            .or_insert_with(|| {
                std::fs::read_to_string(root.join(rel))
                    .ok()
                    .map(|src| parse_module(&src))
            })
            .as_ref()
    }

    /// The ids of the entity `rel:qualname` (a graph node id's parts), mapped like a
    /// line inside it: a method's function id, `Cls.__init__` → `Cls`, a nested function
    /// → its outermost function. Empty when the file has no such entity.
    pub fn ids_of(&mut self, root: &Path, rel: &str, qualname: &str) -> LineIds {
        let Some(m) = self.module(root, rel) else {
            return LineIds::default();
        };
        match m.entities.iter().find(|e| e.qualname == qualname) {
            Some(e) => ids_in(m, rel, e.start_line),
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
        match self.module(root, rel) {
            Some(m) => ids_in(m, rel, line),
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

/// LocAgent ids for `line` of the file `rel` parsed as `m`.
pub fn ids_in(m: &ParsedModule, rel: &str, line: usize) -> LineIds {
    let c = chain(m, line);
    let Some(top) = c.first() else {
        return LineIds::default();
    };
    let module = Some(format!("{rel}:{}", top.name));
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

/// Every function id defined in `m` with its short name and line span, for matching
/// definitions by name.
pub fn definitions(m: &ParsedModule, rel: &str) -> Vec<(String, String, usize, usize)> {
    m.entities
        .iter()
        .map(|e| {
            let ids = ids_in(m, rel, e.start_line);
            (
                ids.function.or(ids.module).unwrap_or_default(),
                e.name.clone(),
                e.start_line,
                e.end_line,
            )
        })
        .filter(|(id, ..)| !id.is_empty())
        .collect()
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
}
