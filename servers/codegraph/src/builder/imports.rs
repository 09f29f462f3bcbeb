//! Import records and their resolution (`find_imports`, `resolve_module`,
//! `add_imports`; SPEC.md §1.4).
//!
//! Resolution is against the repository root only (no `sys.path`), checks the
//! FILESYSTEM (`os.path.isfile`, following symlinks) and then requires the
//! resolved path to be a graph node.

use rustc_hash::FxHashMap as HashMap;
use std::path::{Path, PathBuf};

use crate::graph::{CodeGraph, NodeIndex};

/// One import record, as `find_imports` builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImportStmt {
    /// `import a.b as c, d`: one `(module, alias)` per name.
    Import(Vec<(String, Option<String>)>),
    /// `from M import x as y, z` or `from M import *`. `module` is absolute
    /// (relative imports already anchored at the importing file, see
    /// [`relative_module`]).
    From {
        /// The module, e.g. `pkg.sub`; may be empty (root-level `from . import x`).
        module: String,
        /// The imported names.
        names: FromNames,
    },
}

/// The names of a `from` import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FromNames {
    /// `from M import *`.
    Star,
    /// `(name, alias)` pairs.
    Names(Vec<(String, Option<String>)>),
}

/// The module name the original computes for a relative import: split the
/// file's repo-relative path (file name included) on `/`, drop the last `level`
/// parts (or all, if there are fewer), join with `.`, append `module` if given.
/// So `pkg/sub/m.py` + `from . import x` gives `pkg.sub`, and a root-level
/// `from . import x` gives `""`.
pub(crate) fn relative_module(file_id: &str, level: usize, module: Option<&str>) -> String {
    let parts: Vec<&str> = file_id.split('/').collect();
    let keep = if parts.len() >= level {
        &parts[..parts.len() - level]
    } else {
        &[][..]
    };
    let mut all: Vec<&str> = keep.to_vec();
    if let Some(m) = module.filter(|m| !m.is_empty()) {
        all.push(m);
    }
    all.join(".")
}

/// Resolves module names to repo-relative paths, caching filesystem checks.
pub(crate) struct Resolver {
    root: PathBuf,
    cache: HashMap<String, Option<String>>,
}

impl Resolver {
    /// A resolver for the repository at `root`.
    pub(crate) fn new(root: &Path) -> Resolver {
        Resolver {
            root: root.to_path_buf(),
            cache: HashMap::default(),
        }
    }

    /// `resolve_module`: `<root>/<a/b>.py` if it is a file, else
    /// `<root>/<a/b>/__init__.py` if it is a file; returned repo-relative.
    ///
    /// A name starting with `.` (only `'' + '.x'` from a root-level `from . import x`)
    /// makes the original join an absolute path (`/x.py`); we treat such paths as
    /// absent rather than look at the machine's filesystem root.
    pub(crate) fn resolve(&mut self, module: &str) -> Option<String> {
        if let Some(hit) = self.cache.get(module) {
            return hit.clone();
        }
        let stem = module.replace('.', "/");
        let resolved = if stem.starts_with('/') {
            None
        } else {
            let as_file = format!("{stem}.py");
            let as_pkg = if stem.is_empty() {
                "__init__.py".to_string()
            } else {
                format!("{stem}/__init__.py")
            };
            [as_file, as_pkg]
                .into_iter()
                .find(|rel| self.root.join(rel).is_file())
        };
        self.cache.insert(module.to_string(), resolved.clone());
        resolved
    }

    /// `add_imports` for one source node: the `(target, alias)` import edges the
    /// records produce, in order (duplicates kept).
    pub(crate) fn edges(
        &mut self,
        graph: &CodeGraph,
        imports: &[ImportStmt],
    ) -> Vec<(NodeIndex, Option<String>)> {
        let mut out = Vec::new();
        for imp in imports {
            match imp {
                ImportStmt::Import(names) => {
                    for (module, alias) in names {
                        if let Some(t) = self.resolve(module).and_then(|p| graph.index_of(&p)) {
                            out.push((t, alias.clone()));
                        }
                    }
                }
                ImportStmt::From {
                    module,
                    names: FromNames::Star,
                } => {
                    if let Some(t) = self.resolve(module).and_then(|p| graph.index_of(&p)) {
                        out.push((t, None));
                    }
                }
                ImportStmt::From {
                    module,
                    names: FromNames::Names(names),
                } => {
                    for (name, alias) in names {
                        if let Some(sub) = self.resolve(&format!("{module}.{name}")) {
                            // A submodule: no fallback even if it is not a node.
                            if let Some(t) = graph.index_of(&sub) {
                                out.push((t, alias.clone()));
                            }
                        } else if let Some(file) = self.resolve(module) {
                            if let Some(t) = graph.index_of(&format!("{file}:{name}")) {
                                out.push((t, alias.clone()));
                            } else if let Some(t) = graph.index_of(&file) {
                                out.push((t, alias.clone()));
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_modules() {
        assert_eq!(relative_module("pkg/sub/m.py", 1, None), "pkg.sub");
        assert_eq!(relative_module("pkg/sub/m.py", 2, Some("a")), "pkg.a");
        assert_eq!(relative_module("pkg/__init__.py", 1, None), "pkg");
        assert_eq!(relative_module("m.py", 1, None), "");
        assert_eq!(relative_module("m.py", 1, Some("x")), "x");
        assert_eq!(relative_module("m.py", 3, Some("x")), "x");
        assert_eq!(relative_module("docs/v1.0/conf.py", 1, None), "docs.v1.0");
    }
}
