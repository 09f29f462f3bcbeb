//! Reading an agent's final answer — the built-in loop's last message and an
//! `--agent-cmd` command's stdout alike — into the ranking the scorer reads: one
//! location per line, best first. The task prompt ([`super::prompt`]) asks for
//! `path`, `path:Class`, `path:Class.method` and `path:function`; models also answer
//! in the forms their tools print, and each is read the same, whatever the variant:
//!
//! | form | example | names |
//! |---|---|---|
//! | file | `pkg/money.py` | the file |
//! | entity | `pkg/money.py:Money.allocate` | the class or function |
//! | entity, Rust/C++ style | `pkg/money.py::Money::allocate` | same |
//! | entity, called | `pkg/money.py:Money.allocate()`, `pkg/money.py:parse(s)` | same |
//! | line (text's `grep`) | `pkg/money.py:12` or `pkg/money.py:12:    return r` | the file and the innermost entity holding line 12 |
//! | lines (codegraph, retrieval) | `pkg/money.py:5-8`, `[pkg/money.py:5-8]`, `pkg/money.py#L5-L8` | the file and the innermost entity holding lines 5 to 8 |
//! | bare call | `Money.allocate()`, `parse()` | the one file of the tree that defines it |
//!
//! Around a location a line may carry a quote mark (`>`), a list marker (`-`, `*`,
//! `+`, `•`, `1.`, `1)`), backticks, bold (`**…**`), brackets, trailing punctuation
//! and a comment after whitespace. An absolute path under the tree's root, or under
//! the virtual root [`VIRTUAL_ROOT`] the built-in agent is shown, is made relative.
//!
//! Every line is one of three things ([`Answer`]): a location (counted in
//! `answer_lines`), a line that looks like a location but cannot be read (a path
//! leaving the tree, a line range that is not one, a bare call the tree defines
//! nowhere or in several files: counted in `answer_dropped`, and listed in the
//! transcript), or prose (ignored). A name after a path is looked up in the checked-out
//! tree ([`EntityIndex`]) so the ids are LocAgent's (a method's module is its class; a
//! class is its own function-level id, as the scripted policies answer); an entity the
//! tree does not have is kept as named, so the scorer finds no gold there.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::data::dataset::{Locations, push_unique};
use crate::policy::entities::{EntityIndex, LineIds};

/// The root the built-in agent sees instead of the checkout's absolute path, in its
/// task prompt and in tool results (see [`super::roots`]); answers under it are made
/// relative like answers under the real root.
pub const VIRTUAL_ROOT: &str = "/repo";

/// A path with an extension at the start of a token, and what follows it.
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<path>[A-Za-z0-9_./\\-]*[A-Za-z0-9_-]\.(?P<ext>[A-Za-z][A-Za-z0-9]*))(?P<rest>.*)$",
    )
    .unwrap_or_else(|e| panic!("the path pattern is a constant that compiles: {e}"))
});

/// A qualified name: identifiers joined by `.` or `::`.
static QUALNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*$")
        .unwrap_or_else(|e| panic!("the name pattern is a constant that compiles: {e}"))
});

/// A line or a line range after a path: `:12`, `:12:text`, `:5-8`, `#L5`, `#L5-L8`.
static LINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?::|#L)(?P<start>\d+)(?:-L?(?P<end>\d+))?(?::.*)?$")
        .unwrap_or_else(|e| panic!("the line pattern is a constant that compiles: {e}"))
});

/// A call's arguments (`(s, t)`), which may hold spaces.
static CALL_ARGS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\([^()]*\)")
        .unwrap_or_else(|e| panic!("the arguments pattern is a constant that compiles: {e}"))
});

/// A leading list marker.
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-*+•]|\d+[.)])\s+")
        .unwrap_or_else(|e| panic!("the marker pattern is a constant that compiles: {e}"))
});

/// Extensions read as files even without a directory: every source extension a front
/// end reads, and the text files a fix may touch. A dotted name with another
/// "extension" (`Money.allocate`) is a name, not a file.
const PLAIN_EXTENSIONS: [&str; 16] = [
    "cfg", "ini", "toml", "txt", "rst", "md", "json", "yaml", "yml", "html", "css", "c", "h", "cc",
    "cpp", "pyi",
];

/// One location the answer named, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Relative to the tree's root; empty for a bare call (`Money.allocate()`), whose
    /// file [`to_locations`] looks up.
    pub path: String,
    /// The `Class`, `Class.method` or `function` named after the path, if any.
    pub qualname: Option<String>,
    /// The 1-based first and last line named (`path:12`, `path:5-8`), if any.
    pub lines: Option<(usize, usize)>,
}

impl Named {
    /// The location as the transcript shows it (`path`, `path:Name`, `path:5-8`,
    /// `Name()`).
    pub fn display(&self) -> String {
        match (&self.qualname, self.lines) {
            (Some(q), _) if self.path.is_empty() => format!("{q}()"),
            (Some(q), _) => format!("{}:{q}", self.path),
            (None, Some((a, b))) if a == b => format!("{}:{a}", self.path),
            (None, Some((a, b))) => format!("{}:{a}-{b}", self.path),
            (None, None) => self.path.clone(),
        }
    }
}

/// Everything read from one answer (see the module doc).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The locations, in order, duplicates removed.
    pub named: Vec<Named>,
    /// The ranking the scorer reads.
    pub locations: Locations,
    /// Lines that named a location (`instances.csv`'s `answer_lines`).
    pub lines: usize,
    /// Lines that looked like a location but could not be read (`answer_dropped`).
    pub dropped: usize,
    /// Those lines, trimmed, for the transcript.
    pub dropped_lines: Vec<String>,
}

/// Reads `text` against the tree at `root` (see the module doc).
pub fn read(text: &str, root: &Path) -> Answer {
    let (hits, mut dropped_lines) = scan(text, root);
    let named = distinct(&hits);
    let (locations, unresolved) = resolve(&named, root);
    let (found, lost): (Vec<Named>, Vec<Named>) =
        hits.into_iter().partition(|n| !unresolved.contains(n));
    dropped_lines.extend(lost.iter().map(Named::display));
    Answer {
        named: distinct(&found),
        lines: found.len(),
        dropped: dropped_lines.len(),
        dropped_lines,
        locations,
    }
}

/// The locations `text` names, best first (see the module doc); a bare call's file is
/// not looked up yet ([`to_locations`] does).
pub fn parse_lines(text: &str, root: &Path) -> Vec<Named> {
    distinct(&scan(text, root).0)
}

/// `hits` without repeats, in first-seen order.
fn distinct(hits: &[Named]) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    for h in hits {
        if !out.contains(h) {
            out.push(h.clone());
        }
    }
    out
}

/// The answer as the ranking the scorer reads: files, modules and functions in the
/// order the answer first names them (see the module doc).
pub fn to_locations(named: &[Named], root: &Path) -> Locations {
    resolve(named, root).0
}

/// One line of an answer.
#[derive(Debug, PartialEq)]
enum Line {
    Location(Named),
    Dropped,
    Prose,
}

/// The location each location line of `text` names (repeats kept), and the lines that
/// looked like a location but were not.
fn scan(text: &str, root: &Path) -> (Vec<Named>, Vec<String>) {
    let real = root.to_string_lossy().trim_end_matches('/').to_string();
    let roots = [real.as_str(), VIRTUAL_ROOT];
    let (mut hits, mut dropped) = (Vec::new(), Vec::new());
    for raw in text.lines() {
        match read_line(raw, &roots) {
            Line::Location(n) => hits.push(n),
            Line::Dropped => dropped.push(raw.trim().to_string()),
            Line::Prose => {}
        }
    }
    (hits, dropped)
}

/// The first token of `raw` with markers, emphasis and punctuation taken off.
fn token(raw: &str) -> String {
    let mut line = raw.trim();
    while let Some(rest) = line.strip_prefix('>') {
        line = rest.trim_start();
    }
    let line = MARKER.replace(line, "");
    let line = CALL_ARGS.replace_all(&line, "()");
    // Emphasis may wrap the location or parts of it (`**a.py**:f`, `` `a.py`:`f` ``).
    let line = line.trim_start_matches(['*', '_', '`', '"', '\'', '[']);
    let first = line.split_whitespace().next().unwrap_or("");
    let mut t = first.replace("**", "").replace('`', "");
    loop {
        let cut = t
            .trim_start_matches(['*', '"', '\'', '['])
            .trim_end_matches(['*', '"', '\'', ']', ',', ';', '.', ':'])
            .to_string();
        if cut == t {
            return t;
        }
        t = cut;
    }
}

/// Reads one line (see the module doc).
fn read_line(raw: &str, roots: &[&str]) -> Line {
    let mut t = token(raw);
    if t.contains("://") {
        return Line::Prose;
    }
    let absolute = t.starts_with('/');
    for r in roots {
        if let Some(rest) = t.strip_prefix(r)
            && rest.starts_with('/')
        {
            t = rest.to_string();
            break;
        }
    }
    let t = t.trim_start_matches("./").trim_start_matches('/');
    let Some(c) = PATH.captures(t) else {
        return bare_call(t);
    };
    let (path, ext, rest) = (&c["path"], &c["ext"], &c["rest"]);
    let is_file = path.contains('/')
        || path.contains('\\')
        || absolute
        || PLAIN_EXTENSIONS.contains(&ext)
        || navbench_lang::family::extensions().any(|e| e == ext);
    if !is_file {
        return bare_call(t);
    }
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches("./").to_string();
    if path.starts_with("../") || path.contains("/../") {
        return Line::Dropped;
    }
    let named = |qualname: Option<String>, lines: Option<(usize, usize)>| {
        Line::Location(Named {
            path: path.clone(),
            qualname,
            lines,
        })
    };
    if rest.is_empty() {
        return named(None, None);
    }
    if let Some(l) = LINES.captures(rest) {
        let start: usize = l["start"].parse().unwrap_or(0);
        let end: usize = l
            .name("end")
            .map_or(Some(start), |e| e.as_str().parse().ok())
            .unwrap_or(0);
        if start == 0 || end < start {
            return Line::Dropped;
        }
        return named(None, Some((start, end)));
    }
    let qual = rest
        .strip_prefix("::")
        .or_else(|| rest.strip_prefix(':'))
        .map(without_call);
    match qual {
        Some(q) if QUALNAME.is_match(q) => named(Some(q.replace("::", ".")), None),
        _ => Line::Dropped,
    }
}

/// `name(args)` → `name`.
fn without_call(s: &str) -> &str {
    match s.find('(') {
        Some(i) if s.ends_with(')') => &s[..i],
        _ => s,
    }
}

/// A token without a file: `Name()` / `A.b()` / `A::b()` is a bare call; anything
/// else is prose.
fn bare_call(t: &str) -> Line {
    if !t.ends_with(')') {
        return Line::Prose;
    }
    let q = without_call(t);
    if q.len() < t.len() && QUALNAME.is_match(q) {
        Line::Location(Named {
            path: String::new(),
            qualname: Some(q.replace("::", ".")),
            lines: None,
        })
    } else {
        Line::Prose
    }
}

/// The ranking `named` gives against the tree at `root`, and the bare calls that name
/// no single definition in it.
fn resolve(named: &[Named], root: &Path) -> (Locations, Vec<Named>) {
    let mut index = EntityIndex::default();
    let mut defs: Option<Vec<(String, String)>> = None;
    let mut loc = Locations::default();
    let mut unresolved = Vec::new();
    for n in named {
        let mut path = n.path.clone();
        if path.is_empty() {
            let Some(q) = &n.qualname else { continue };
            let all = defs.get_or_insert_with(|| definitions(root, &mut index));
            match defining_file(all, q) {
                Some(p) => path = p,
                None => {
                    unresolved.push(n.clone());
                    continue;
                }
            }
        }
        push_unique(&mut loc.files, path.clone());
        let ids = match (&n.qualname, n.lines) {
            (Some(qual), _) => {
                let ids = index.answer_ids_of(root, &path, qual);
                let first = qual.split('.').next().unwrap_or(qual);
                // An entity the tree does not have is kept as named: the scorer simply
                // finds no gold there, and the answer's order is not disturbed.
                LineIds {
                    module: Some(ids.module.unwrap_or_else(|| format!("{path}:{first}"))),
                    function: Some(ids.function.unwrap_or_else(|| format!("{path}:{qual}"))),
                    short_name: None,
                }
            }
            (None, Some((a, b))) => range_ids(&mut index, root, &path, a, b),
            (None, None) => LineIds::default(),
        };
        if let Some(m) = ids.module {
            push_unique(&mut loc.modules, m);
        }
        if let Some(f) = ids.function {
            push_unique(&mut loc.functions, f);
        }
    }
    (loc, unresolved)
}

/// The innermost entity holding lines `a` to `b` of `rel`: the function both ends are
/// in; else the class (or function) both are under, as a function-level answer too
/// (LocAgent names a class for edits in its body); else none (module-level code).
fn range_ids(index: &mut EntityIndex, root: &Path, rel: &str, a: usize, b: usize) -> LineIds {
    let (first, last) = (index.ids_at(root, rel, a), index.ids_at(root, rel, b));
    if first.function.is_some() && first.function == last.function {
        return first;
    }
    if first.module.is_some() && first.module == last.module {
        return LineIds {
            function: first.module.clone(),
            module: first.module,
            short_name: None,
        };
    }
    LineIds::default()
}

/// Every definition of the tree's source files, as (file, qualified name), files in
/// path order; hidden directories are skipped.
fn definitions(root: &Path, index: &mut EntityIndex) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(p),
                Ok(t) if t.is_file() => {
                    if let Ok(rel) = p.strip_prefix(root) {
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        if navbench_lang::family::family_of(&rel).is_some() {
                            files.push(rel);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .flat_map(|f| {
            index
                .entities(root, &f)
                .into_iter()
                .map(move |e| (f.clone(), e.qualname))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The one file defining `qual`: among all files, else among non-test files; `None`
/// when no file or several do.
fn defining_file(defs: &[(String, String)], qual: &str) -> Option<String> {
    let mut files: Vec<&String> = defs
        .iter()
        .filter(|(_, q)| q == qual)
        .map(|(f, _)| f)
        .collect();
    files.dedup();
    if files.len() > 1 {
        files.retain(|f| !crate::policy::is_test_file(f));
    }
    match files.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
