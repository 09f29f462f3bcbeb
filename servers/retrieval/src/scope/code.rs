//! `get_implementation`'s wider scopes for TypeScript/JavaScript, Java, Go and Rust
//! entities. Their chunks carry no call facts (the front ends give none), so the
//! scopes lean on what the chunks do say: qualified names and the identifiers in the
//! text.
//!
//! - [`Scope::Logical`]: the entity plus its type context: for a method, every type
//!   chunk named by its container — the class, interface or struct it is declared in
//!   or on (a Go receiver's type, a JS `Type.prototype` assignment's type), and for
//!   Rust every `impl` block of that type as well as the struct/enum/trait itself, in
//!   any file of the same language; for a type, its other chunks of the same name (a
//!   Rust struct's `impl` blocks, or an `impl`'s struct). A free function has no type
//!   context. Long types appear as their outline (header and member signatures).
//! - [`Scope::Dependencies`]: logical, plus the indexed definitions the entity's text
//!   names: an identifier that is a method of its own type (`this.helper()`,
//!   `self.helper()`, `s.helper()` on a Go receiver, a bare `helper()` in a Java
//!   class) gives that method; an identifier not written as a member (`x.name`,
//!   `x::name`) that is a top-level function or type elsewhere gives it, this file's
//!   first, then files an import of the entity names, then others (at most
//!   [`PER_NAME`] in other files).
//!
//! Only definitions in the same language family count (TS, TSX and JS are one
//! family). Identifiers are read from the whole chunk text, comments and strings
//! included. When nothing is found, the result falls back to minimal and says so.

use std::collections::HashSet;

use super::{DEPENDENCIES_CAP, Implementation, LOGICAL_CAP, PER_NAME, Scope};
use crate::chunk::{Chunk, ChunkKind, code_language};

/// The language family of a file: `ecma` for TypeScript, TSX and JavaScript, else the
/// front end's name; `None` for files no front end other than Python's reads.
fn family(file: &str) -> Option<&'static str> {
    code_language(file).map(navbench_lang::family::family_of_language)
}

/// Whether the chunk is a named type (or `impl` block) chunk.
fn is_type(c: &Chunk) -> bool {
    c.kind == ChunkKind::Class
}

/// Expands a non-Python entity by `scope` (not [`Scope::Minimal`], which the caller
/// answers); see the module docs.
pub(super) fn expand<'a>(
    chunks: &'a [Chunk],
    entity: &'a Chunk,
    scope: Scope,
) -> Implementation<'a> {
    let fam = family(&entity.file);
    let same_family: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| c.name.is_some() && family(&c.file) == fam)
        .collect();
    let name = entity.name.as_deref().unwrap_or("");
    let own_type: Option<&str> = match entity.kind {
        ChunkKind::Method => name.rsplit_once('.').map(|(t, _)| t),
        ChunkKind::Class => Some(name),
        _ => None,
    };
    let cap = if scope == Scope::Logical {
        LOGICAL_CAP
    } else {
        DEPENDENCIES_CAP
    };
    let mut seen: HashSet<&str> = HashSet::from([entity.id.as_str()]);
    let mut related: Vec<(&'a Chunk, &'static str)> = Vec::new();
    let mut add =
        |c: &'a Chunk, why: &'static str, related: &mut Vec<(&'a Chunk, &'static str)>| {
            if related.len() < cap && seen.insert(c.id.as_str()) {
                related.push((c, why));
            }
        };
    if let Some(t) = own_type {
        for c in type_context(&same_family, entity, fam, t) {
            add(c, "type context", &mut related);
        }
    }
    if scope == Scope::Dependencies {
        let bare = name.rsplit('.').next().unwrap_or(name);
        for (ident, member) in references(&entity.content) {
            if ident == bare || Some(ident) == own_type {
                continue;
            }
            // A type's chunk already shows its methods (in full or as signatures).
            if let Some(t) = own_type.filter(|_| entity.kind == ChunkKind::Method) {
                let want = format!("{t}.{ident}");
                let methods = same_file_first(&same_family, entity, |c| {
                    c.kind == ChunkKind::Method && c.name.as_deref() == Some(want.as_str())
                });
                for c in methods {
                    add(c, "same-type method", &mut related);
                }
            }
            if member {
                continue;
            }
            for (c, why) in top_level_named(&same_family, entity, ident) {
                add(c, why, &mut related);
            }
        }
    }
    let fell_back = related.is_empty();
    Implementation {
        entity,
        related,
        fell_back,
    }
}

/// The type chunks named `ty`: all in the entity's file; from other files at most
/// [`PER_NAME`], and only for Go and Rust (whose methods and `impl` blocks often sit
/// in another file than their type) or when the entity's file has none.
fn type_context<'a>(
    chunks: &[&'a Chunk],
    entity: &Chunk,
    fam: Option<&str>,
    ty: &str,
) -> Vec<&'a Chunk> {
    let (local, other): (Vec<&Chunk>, Vec<&Chunk>) = chunks
        .iter()
        .copied()
        .filter(|c| is_type(c) && c.name.as_deref() == Some(ty))
        .partition(|c| c.file == entity.file);
    let elsewhere = local.is_empty() || matches!(fam, Some("go" | "rust"));
    let take = if elsewhere { PER_NAME } else { 0 };
    local
        .into_iter()
        .chain(other.into_iter().take(take))
        .collect()
}

/// The chunks `keep` selects, those in the entity's file first.
fn same_file_first<'a>(
    chunks: &[&'a Chunk],
    entity: &Chunk,
    keep: impl Fn(&Chunk) -> bool,
) -> Vec<&'a Chunk> {
    let mut out: Vec<&Chunk> = chunks.iter().copied().filter(|c| keep(c)).collect();
    out.sort_by_key(|c| c.file != entity.file);
    out
}

/// Top-level functions and types named `ident` (file-level chunks whose qualified name
/// is the bare name), with why: this file's all, then at most [`PER_NAME`] from other
/// files, those whose path an import of the entity names first (`imported`).
fn top_level_named<'a>(
    chunks: &[&'a Chunk],
    entity: &Chunk,
    ident: &str,
) -> Vec<(&'a Chunk, &'static str)> {
    let named = chunks.iter().copied().filter(|c| {
        c.name.as_deref() == Some(ident) && matches!(c.kind, ChunkKind::Function | ChunkKind::Class)
    });
    let (local, other): (Vec<&Chunk>, Vec<&Chunk>) = named.partition(|c| c.file == entity.file);
    let imported = |c: &Chunk| {
        entity.meta.imports_used.iter().any(|m| {
            let stem = import_stem(m);
            !stem.is_empty() && c.file.split(['/', '.']).any(|part| part == stem)
        })
    };
    let (mut via_import, rest): (Vec<&Chunk>, Vec<&Chunk>) =
        other.into_iter().partition(|c| imported(c));
    via_import.truncate(PER_NAME);
    let room = PER_NAME - via_import.len();
    local
        .into_iter()
        .map(|c| (c, "referenced"))
        .chain(via_import.into_iter().map(|c| (c, "imported")))
        .chain(rest.into_iter().take(room).map(|c| (c, "referenced")))
        .collect()
}

/// The last segment of an import path (`./lib/router` → `router`, `net/http` →
/// `http`, `java.util.List` → `List`, `crate::search::Searcher` → `Searcher`), which
/// a file path holding it tends to contain.
fn import_stem(module: &str) -> &str {
    module
        .rsplit(['/', '.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

/// The identifiers of `text`, first occurrences in order, each with whether it is
/// written as a member (right after `.` or `::`: `x.name`, `Self::name`). An
/// identifier seen both ways counts as not a member.
fn references(text: &str) -> Vec<(&str, bool)> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out: Vec<(&str, bool)> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (is_ident(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                let word = &text[s..i];
                if word.starts_with(|c: char| c.is_ascii_digit()) {
                    continue;
                }
                let member = text[..s].ends_with('.') || text[..s].ends_with("::");
                match out.iter_mut().find(|(w, _)| *w == word) {
                    Some(entry) => entry.1 &= member,
                    None => out.push((word, member)),
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
