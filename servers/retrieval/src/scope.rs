//! `get_implementation`: an entity's chunk plus, by scope, the code it leans on.
//!
//! - [`Scope::Minimal`]: the entity only.
//! - [`Scope::Logical`]: + same-file functions, methods and classes named in the
//!   entity's `calls` (`helper()`, `self._merge()` → the same class's `_merge` first),
//!   at most [`LOGICAL_CAP`].
//! - [`Scope::Dependencies`]: logical, + cross-file callees (a bare call `f()` resolved to
//!   functions or classes named `f` elsewhere, an attribute call `mod.f()` whose `mod`
//!   is an import) and the imported entities the chunk uses (`from .utils import f` →
//!   `f` in a file whose path ends like the module), at most [`DEPENDENCIES_CAP`].
//!
//! Expansion is one level deep (no transitive closure), deduplicated by chunk id and
//! never includes the entity itself, so cycles cannot loop. When the entity has no
//! calls and no imports, a wider scope falls back to minimal and says so.
//!
//! The list above is Python's. Entities of TypeScript/JavaScript, Java, Go and Rust
//! files have no call facts; their scopes (all three, in every one of these
//! languages) are built from names instead — logical: the entity and its type
//! context (a method's class/interface/struct, a Go receiver's type, a Rust type's
//! struct and `impl` blocks); dependencies: plus the indexed definitions its text
//! names (same-type methods, top-level functions and types) — see `code`.

use std::collections::HashSet;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::chunk::{Chunk, ChunkKind, code_language};
use crate::index::RepoIndex;

mod code;

/// Related chunks kept for [`Scope::Logical`].
pub const LOGICAL_CAP: usize = 20;
/// Related chunks kept for [`Scope::Dependencies`].
pub const DEPENDENCIES_CAP: usize = 30;
/// Cross-file candidates taken per called name (common names match many files).
const PER_NAME: usize = 3;

/// How much related code `get_implementation` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The entity only.
    #[default]
    Minimal,
    /// The entity and the same-file helpers it calls.
    Logical,
    /// Logical, plus cross-file callees and imported entities.
    Dependencies,
}

/// An unknown scope name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid scope '{0}'; must be one of: minimal, logical, dependencies")]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "minimal" => Ok(Scope::Minimal),
            "logical" => Ok(Scope::Logical),
            "dependencies" => Ok(Scope::Dependencies),
            _ => Err(UnknownScope(s.to_string())),
        }
    }
}

/// Why `get_implementation` found nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// The name is empty.
    #[error(
        "entity_name is empty; pass a function, class or method name such as 'parse_url', 'Session' or 'Session.send'"
    )]
    EmptyName,
    /// No function, class or method has that name.
    #[error("no function, class or method named '{name}' is indexed{}", suggestion_text(.suggestions))]
    NotFound {
        /// The name as given.
        name: String,
        /// Similar indexed names (qualified, with their file), best first.
        suggestions: Vec<String>,
    },
}

fn suggestion_text(s: &[String]) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}?", s.join(", "))
    }
}

/// One matching entity and its related chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implementation<'a> {
    /// The entity's chunk.
    pub entity: &'a Chunk,
    /// Related chunks with why: `"same-file helper"`, `"callee"` or `"imported"`.
    pub related: Vec<(&'a Chunk, &'static str)>,
    /// A wider scope was asked but the entity has no calls or imports.
    pub fell_back: bool,
}

fn is_entity(c: &Chunk) -> bool {
    matches!(
        c.kind,
        ChunkKind::Function | ChunkKind::Method | ChunkKind::Class
    )
}

fn last_segment(s: &str) -> &str {
    s.rsplit('.').next().unwrap_or(s)
}

/// Entities named by `entity_name`: `func`, `Class`, `Class.method`, optionally
/// prefixed by a path (`pkg/mod.py:Class.method`; a path suffix is enough). Exact
/// qualified names win; otherwise a trailing-name match (`method` → `Class.method`).
pub fn implementation<'a>(
    index: &'a RepoIndex,
    entity_name: &str,
    scope: Scope,
) -> Result<Vec<Implementation<'a>>, ScopeError> {
    let name = entity_name.trim();
    if name.is_empty() {
        return Err(ScopeError::EmptyName);
    }
    let (path, qual) = match name.rsplit_once(':') {
        Some((p, q)) => (Some(p.trim_start_matches("./")), q),
        None => (None, name),
    };
    let chunks = index.chunks();
    let in_path =
        |c: &Chunk| path.is_none_or(|p| c.file == p || c.file.ends_with(&format!("/{p}")));
    let mut found: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| is_entity(c) && in_path(c) && c.name.as_deref() == Some(qual))
        .collect();
    if found.is_empty() {
        let suffix = format!(".{qual}");
        found = chunks
            .iter()
            .filter(|c| is_entity(c) && in_path(c))
            .filter(|c| c.name.as_deref().is_some_and(|n| n.ends_with(&suffix)))
            .collect();
    }
    if found.is_empty() {
        return Err(ScopeError::NotFound {
            name: name.to_string(),
            suggestions: suggestions(chunks, qual),
        });
    }
    Ok(found
        .into_iter()
        .map(|entity| expand(chunks, entity, scope))
        .collect())
}

fn expand<'a>(chunks: &'a [Chunk], entity: &'a Chunk, scope: Scope) -> Implementation<'a> {
    let meta = &entity.meta;
    if scope == Scope::Minimal {
        return Implementation {
            entity,
            related: Vec::new(),
            fell_back: false,
        };
    }
    if code_language(&entity.file).is_some() {
        return code::expand(chunks, entity, scope);
    }
    if meta.calls.is_empty() && meta.imports_used.is_empty() {
        return Implementation {
            entity,
            related: Vec::new(),
            fell_back: true,
        };
    }
    let cap = if scope == Scope::Logical {
        LOGICAL_CAP
    } else {
        DEPENDENCIES_CAP
    };
    let mut seen: HashSet<&str> = HashSet::from([entity.id.as_str()]);
    let mut related: Vec<(&Chunk, &'static str)> = Vec::new();
    let mut add =
        |c: &'a Chunk, why: &'static str, related: &mut Vec<(&'a Chunk, &'static str)>| {
            if related.len() < cap && seen.insert(c.id.as_str()) {
                related.push((c, why));
            }
        };
    let own_class = own_class(entity);
    let same_file: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| c.file == entity.file && is_entity(c))
        .collect();
    // Import bindings as the chunk uses them: bound name (last segment) → dotted path.
    let imported = |first: &str| {
        meta.imports_used
            .iter()
            .find(|p| last_segment(p) == first)
            .map(String::as_str)
    };
    // Cross-file candidates: (callee name, full import path when known).
    let mut cross: Vec<(String, Option<String>)> = Vec::new();
    for call in &meta.calls {
        let (receiver, callee) = match call.rsplit_once('.') {
            Some((r, c)) => (Some(r), c),
            None => (None, call.as_str()),
        };
        let local = local_callees(&same_file, own_class.as_deref(), receiver, callee);
        let found_local = !local.is_empty();
        for c in local {
            add(c, "same-file helper", &mut related);
        }
        if scope == Scope::Dependencies && !found_local {
            match receiver {
                None => cross.push((callee.to_string(), imported(callee).map(str::to_string))),
                Some(r) if !matches!(r, "self" | "cls") => {
                    let first = r.split('.').next().unwrap_or(r);
                    if let Some(module) = imported(first) {
                        // `mod.f()` with `mod` imported: `f` in that module.
                        let path = format!("{module}{}.{callee}", &r[first.len()..]);
                        cross.push((callee.to_string(), Some(path)));
                    }
                }
                _ => {}
            }
        }
    }
    if scope == Scope::Dependencies {
        for (callee, path) in &cross {
            for c in resolve(chunks, entity, callee, path.as_deref()) {
                add(c, "callee", &mut related);
            }
        }
        for path in &meta.imports_used {
            for c in resolve(chunks, entity, last_segment(path), Some(path)) {
                add(c, "imported", &mut related);
            }
        }
    }
    Implementation {
        entity,
        related,
        fell_back: false,
    }
}

/// The class an entity belongs to (for `self.x()` calls): a method's class, a class
/// itself.
fn own_class(entity: &Chunk) -> Option<String> {
    match entity.kind {
        ChunkKind::Method => entity
            .name
            .as_deref()
            .and_then(|n| n.rsplit_once('.'))
            .map(|(c, _)| c.to_string()),
        ChunkKind::Class => entity.name.clone(),
        _ => None,
    }
}

/// The same-file entities a call reaches: `self.f()` / `cls.f()` the own class's `f`,
/// a bare `f()` a top-level function or class `f`; calls on other receivers none.
fn local_callees<'a>(
    same_file: &[&'a Chunk],
    own_class: Option<&str>,
    receiver: Option<&str>,
    callee: &str,
) -> Vec<&'a Chunk> {
    match receiver {
        Some("self" | "cls") => {
            let want = format!("{}.{callee}", own_class.unwrap_or(""));
            same_file
                .iter()
                .copied()
                .filter(|c| c.name.as_deref() == Some(want.as_str()))
                .collect()
        }
        Some(_) => Vec::new(),
        None => same_file
            .iter()
            .copied()
            .filter(|c| {
                c.name.as_deref() == Some(callee)
                    && matches!(c.kind, ChunkKind::Function | ChunkKind::Class)
            })
            .collect(),
    }
}

/// Top-level functions/classes (or, for a dotted import path, the entity in the module
/// the path names) called `name` in other files, at most [`PER_NAME`].
fn resolve<'a>(
    chunks: &'a [Chunk],
    entity: &Chunk,
    name: &str,
    import_path: Option<&str>,
) -> Vec<&'a Chunk> {
    let candidates = chunks.iter().filter(|c| {
        c.file != entity.file
            && matches!(c.kind, ChunkKind::Function | ChunkKind::Class)
            && c.name.as_deref() == Some(name)
    });
    match import_path {
        Some(path) => {
            // `pkg.utils.f` / `.utils.f` → module path `pkg/utils` / `utils`.
            let module = path.strip_suffix(name).unwrap_or(path);
            let module = module.trim_matches('.').replace('.', "/");
            let mut v: Vec<&Chunk> = candidates
                .filter(|c| {
                    module.is_empty()
                        || c.file.ends_with(&format!("{module}.py"))
                        || c.file.ends_with(&format!("{module}/__init__.py"))
                })
                .take(PER_NAME)
                .collect();
            if v.is_empty() {
                // Re-exports (`from pkg import f` where f lives in pkg/sub.py).
                let head = module.split('/').next().unwrap_or("");
                v = chunks
                    .iter()
                    .filter(|c| {
                        c.file != entity.file
                            && matches!(c.kind, ChunkKind::Function | ChunkKind::Class)
                            && c.name.as_deref() == Some(name)
                            && (head.is_empty()
                                || c.file.starts_with(&format!("{head}/"))
                                || c.file.contains(&format!("/{head}/")))
                    })
                    .take(PER_NAME)
                    .collect();
            }
            v
        }
        None => candidates.take(PER_NAME).collect(),
    }
}

/// Up to five indexed entity names close to `qual` (substring, then edit distance).
fn suggestions(chunks: &[Chunk], qual: &str) -> Vec<String> {
    let q = qual.to_ascii_lowercase();
    let mut scored: Vec<(usize, String)> = chunks
        .iter()
        .filter(|c| is_entity(c))
        .filter_map(|c| {
            let n = c.name.as_deref()?;
            let ln = n.to_ascii_lowercase();
            let last = last_segment(&ln).to_string();
            let d = if ln.contains(&q) || q.contains(&last) {
                0
            } else {
                levenshtein(&q, &last).min(levenshtein(&q, &ln))
            };
            (d <= 3.max(q.len() / 3)).then(|| (d, format!("{}:{n}", c.file)))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, s)| s).collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::index::FileFilter;
    use crate::model::{Embedder, write_tiny_model};

    fn fixture() -> (Vec<tempfile::TempDir>, RepoIndex) {
        let model = tempfile::tempdir().unwrap();
        write_tiny_model(model.path(), 5).unwrap();
        let e = Embedder::load(model.path()).unwrap();
        let repo = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = repo.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        w(
            "pkg/parser.py",
            "from .utils import validate\nfrom . import helpers\nimport pkg.tree as tree\n\n\n\
def parse_ast(src):\n    nodes = _extract_nodes(src)\n    validate(nodes)\n    helpers.clean(nodes)\n    tree.build(nodes)\n    return parse_ast(nodes)\n\n\n\
def _extract_nodes(src):\n    return parse_ast(src)\n\n\n\
def lonely():\n    return 1\n\n\n\
class Parser:\n    def run(self):\n        return self._step()\n\n    def _step(self):\n        return Node()\n",
        );
        w("pkg/utils.py", "def validate(x):\n    return x\n");
        w("pkg/helpers.py", "def clean(x):\n    return x\n");
        w("pkg/tree.py", "def build(x):\n    return x\n");
        w("pkg/nodes.py", "class Node:\n    pass\n");
        let store = tempfile::tempdir().unwrap();
        let (idx, _) =
            RepoIndex::build(repo.path(), &FileFilter::default(), &e, store.path()).unwrap();
        (vec![model, repo, store], idx)
    }

    fn names(imp: &Implementation) -> Vec<(String, &'static str)> {
        imp.related
            .iter()
            .map(|(c, why)| {
                (
                    format!("{}:{}", c.file, c.name.as_deref().unwrap_or("")),
                    *why,
                )
            })
            .collect()
    }

    #[test]
    fn minimal_is_the_entity_only() {
        let (_d, idx) = fixture();
        let r = implementation(&idx, "parse_ast", Scope::Minimal).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].entity.name.as_deref(), Some("parse_ast"));
        assert!(r[0].related.is_empty() && !r[0].fell_back);
    }

    #[test]
    fn logical_adds_same_file_helpers_without_cycles() {
        let (_d, idx) = fixture();
        let r = implementation(&idx, "parse_ast", Scope::Logical).unwrap();
        assert_eq!(
            names(&r[0]),
            [(
                "pkg/parser.py:_extract_nodes".to_string(),
                "same-file helper"
            )]
        );
        let r = implementation(&idx, "pkg/parser.py:Parser.run", Scope::Logical).unwrap();
        assert_eq!(
            names(&r[0]),
            [("pkg/parser.py:Parser._step".to_string(), "same-file helper")]
        );
    }

    #[test]
    fn dependencies_add_callees_and_imports() {
        let (_d, idx) = fixture();
        let r = implementation(&idx, "parse_ast", Scope::Dependencies).unwrap();
        let got = names(&r[0]);
        assert!(
            got.contains(&(
                "pkg/parser.py:_extract_nodes".to_string(),
                "same-file helper"
            )),
            "{got:?}"
        );
        assert!(
            got.contains(&("pkg/utils.py:validate".to_string(), "callee")),
            "{got:?}"
        );
        assert!(
            got.contains(&("pkg/helpers.py:clean".to_string(), "callee")),
            "{got:?}"
        );
        assert!(
            got.contains(&("pkg/tree.py:build".to_string(), "callee")),
            "{got:?}"
        );
        let ids: HashSet<&str> = r[0].related.iter().map(|(c, _)| c.id.as_str()).collect();
        assert_eq!(ids.len(), r[0].related.len());
        assert!(!ids.contains(r[0].entity.id.as_str()));
        let r = implementation(&idx, "Parser._step", Scope::Dependencies).unwrap();
        assert_eq!(names(&r[0]), [("pkg/nodes.py:Node".to_string(), "callee")]);
    }

    #[test]
    fn no_metadata_falls_back_to_minimal() {
        let (_d, idx) = fixture();
        let r = implementation(&idx, "lonely", Scope::Dependencies).unwrap();
        assert!(r[0].fell_back && r[0].related.is_empty());
    }

    #[test]
    fn method_name_alone_and_unknown_names() {
        let (_d, idx) = fixture();
        let r = implementation(&idx, "_step", Scope::Minimal).unwrap();
        assert_eq!(r[0].entity.name.as_deref(), Some("Parser._step"));
        match implementation(&idx, "parse_astt", Scope::Minimal) {
            Err(ScopeError::NotFound { suggestions, .. }) => {
                assert_eq!(
                    suggestions.first().map(String::as_str),
                    Some("pkg/parser.py:parse_ast")
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            implementation(&idx, " ", Scope::Minimal).unwrap_err(),
            ScopeError::EmptyName
        );
        let err = implementation(&idx, "other.py:parse_ast", Scope::Minimal).unwrap_err();
        assert!(err.to_string().contains("other.py:parse_ast"), "{err}");
    }

    #[test]
    fn scope_names_parse() {
        assert_eq!("Logical".parse::<Scope>(), Ok(Scope::Logical));
        assert!(
            "all"
                .parse::<Scope>()
                .unwrap_err()
                .to_string()
                .contains("minimal, logical, dependencies")
        );
        assert_eq!(
            serde_json::to_string(&Scope::Dependencies).unwrap(),
            "\"dependencies\""
        );
    }
}
