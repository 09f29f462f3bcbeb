//! Candidate search terms from an issue text, the way a developer skims one: code in
//! backticks, dotted names, CamelCase and snake_case identifiers, call sites, file paths
//! and traceback frames.
//!
//! Extraction is deterministic: terms come out ranked by how strongly the text marks
//! them as code (a traceback frame or backticks beat a bare CamelCase word), then by
//! frequency, then alphabetically.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// A frame of a stack trace: Python's `File "path", line N, in func`, or another
/// language's ([`super::frames`]). `line` is 0 when the trace gives none; `func` is
/// empty when it names no function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub path: String,
    pub line: usize,
    pub func: String,
}

/// One identifier to search for, with the strength of the evidence that it is code.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub text: String,
    /// 1.0 for the strongest kind of evidence (traceback function, backticks) down to
    /// 0.5 for a bare snake_case word; the policy multiplies IDF by it.
    pub weight: f64,
    /// Times it occurs in the text.
    pub count: usize,
}

/// What [`extract`] finds in a problem statement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// Source file paths mentioned anywhere (including frames), in order of appearance.
    pub paths: Vec<String>,
    pub frames: Vec<Frame>,
    /// Ranked identifiers (see the module doc).
    pub terms: Vec<Term>,
}

static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"\n]+)", line (\d+), in ([A-Za-z_<][\w>]*)"#).expect("valid regex")
});
/// The head of an IPython traceback frame: `path.py in func(args)`.
static IPYTHON_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*(\S+\.py) in ([A-Za-z_<][\w<>.]*)\(").expect("valid regex")
});
/// IPython's marker of a frame's current line: `---> 144`.
static ARROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*-+> (\d+)").expect("valid regex"));
/// A source file path: a name with the extension of a language navbench reads.
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    let exts: Vec<&str> = navbench_lang::family::extensions().collect();
    Regex::new(&format!(r"[\w./-]*\w\.(?:{})\b", exts.join("|")))
        .expect("valid regex: extensions are letters")
});
static BACKTICK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"`{1,3}([^`]+?)`{1,3}").expect("valid regex"));
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b").expect("valid regex"));
static CALL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Za-z_]\w*)\(").expect("valid regex"));
static CAMEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b_?[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b|\b_?[A-Z]{2,}[a-z]\w*\b|\b[a-z]+[A-Z]\w*\b",
    )
    .expect("valid regex")
});
static SNAKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+_*\b").expect("valid regex")
});
static IDENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").expect("valid regex"));

/// Words that look like identifiers but carry no localization signal: Python keywords,
/// ubiquitous builtins and names, and traceback furniture.
const STOP: &[&str] = &[
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "none",
    "true",
    "false",
    "self",
    "cls",
    "print",
    "len",
    "str",
    "int",
    "float",
    "dict",
    "list",
    "set",
    "tuple",
    "type",
    "object",
    "bool",
    "range",
    "open",
    "super",
    "isinstance",
    "getattr",
    "setattr",
    "hasattr",
    "repr",
    "module",
    "file",
    "line",
    "most",
    "recent",
    "call",
    "last",
    "traceback",
    "python",
    "py",
    "the",
    "this",
    "that",
    "with",
    "when",
    "then",
    "but",
    "not",
    "are",
    "was",
    "has",
    "have",
    "should",
    "would",
    "could",
    "expected",
    "actual",
    "error",
    "value",
    "http",
    "https",
    "www",
    "com",
    "org",
    "github",
    "issue",
    "bug",
    "example",
    "test",
    "tests",
    "main",
    "args",
    "kwargs",
    "init",
    "__init__",
    "__main__",
    "__name__",
    "utf",
    "json",
    "pip",
    "import",
];

fn is_stop(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    word.len() < 3
        || STOP.contains(&lower.as_str())
        || word.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// The traceback frames of `text` with their positions, in order of appearance:
/// CPython's (`File "p.py", line 3, in f`) and IPython's (`p.py in f(args)` followed,
/// before the next frame, by the arrow line `---> 3` marking the line; without an
/// arrow the line is 0, i.e. unknown). Jupyter users paste the latter.
fn frames(text: &str) -> Vec<(usize, Frame)> {
    let mut out: Vec<(usize, Frame)> = FRAME
        .captures_iter(text)
        .filter_map(|c| {
            let pos = c.get(0)?.start();
            let frame = Frame {
                path: c[1].to_string(),
                line: c[2].parse().unwrap_or(0),
                func: c[3].to_string(),
            };
            Some((pos, frame))
        })
        .collect();
    let heads: Vec<(usize, usize, String, String)> = IPYTHON_FRAME
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(0)?;
            Some((m.start(), m.end(), c[1].to_string(), c[2].to_string()))
        })
        .collect();
    for (i, (start, end, path, func)) in heads.iter().enumerate() {
        let stop = heads.get(i + 1).map_or(text.len(), |h| h.0);
        let line = ARROW
            .captures(&text[*end..stop])
            .and_then(|c| c[1].parse().ok())
            .unwrap_or(0);
        let frame = Frame {
            path: path.clone(),
            line,
            func: func.clone(),
        };
        out.push((*start, frame));
    }
    out.extend(super::frames::frames(text));
    out.sort_by_key(|(pos, _)| *pos);
    out
}

/// Whether a [`PATH`] match names a file rather than a product: `Node.js`, `Vue.js`
/// (a capitalized `.js` name without a directory) are how prose names frameworks.
fn is_file_path(p: &str) -> bool {
    let Some(stem) = p.strip_suffix(".js") else {
        return true;
    };
    p.contains('/') || !stem.starts_with(|c: char| c.is_ascii_uppercase())
}

/// The file name without its source extension (`discounts.py` → `discounts`).
fn path_stem(p: &str) -> Option<&str> {
    let file = p.rsplit('/').next()?;
    let (stem, _) = file.rsplit_once('.')?;
    Some(stem)
}

/// Extracts paths, frames and ranked terms from `text`.
pub fn extract(text: &str) -> Extracted {
    let text = &without_trailers(text);
    let mut out = Extracted::default();
    // term -> (best weight, count, first position)
    let mut seen: HashMap<String, (f64, usize, usize)> = HashMap::new();
    let mut add = |word: &str, weight: f64, pos: usize| {
        let word = word.trim_matches('.');
        if is_stop(word) {
            return;
        }
        let e = seen.entry(word.to_string()).or_insert((weight, 0, pos));
        e.0 = e.0.max(weight);
        e.1 += 1;
    };

    for (pos, frame) in frames(text) {
        if !frame.func.is_empty() && !frame.func.starts_with('<') {
            add(&frame.func, 1.0, pos);
        }
        out.frames.push(frame);
    }
    for m in PATH.find_iter(text) {
        let p = m.as_str().trim_start_matches("./").to_string();
        if is_file_path(&p) && !out.paths.contains(&p) {
            out.paths.push(p);
        }
    }
    for c in BACKTICK.captures_iter(text) {
        let span = c.get(1).map_or("", |m| m.as_str());
        let pos = c.get(0).map_or(0, |m| m.start());
        // Short spans are names; long ones are code: take their identifiers.
        for id in IDENT.find_iter(span) {
            let w = if span.len() <= 60 { 1.0 } else { 0.7 };
            add(id.as_str(), w, pos + id.start());
        }
    }
    for m in DOTTED.find_iter(text) {
        let s = m.as_str();
        // Skip file names and version-like or sentence-like fragments.
        if PATH.find(s).is_some_and(|p| p.end() == s.len()) || s.split('.').any(|p| p.is_empty()) {
            continue;
        }
        let parts: Vec<&str> = s.split('.').collect();
        for (i, p) in parts.iter().enumerate() {
            // The last components name the thing; leading ones are usually packages.
            let w = if i + 1 == parts.len() { 0.9 } else { 0.6 };
            add(p, w, m.start());
        }
    }
    for c in CALL.captures_iter(text) {
        add(&c[1], 0.8, c.get(0).map_or(0, |m| m.start()));
    }
    for m in CAMEL.find_iter(text) {
        add(m.as_str(), 0.7, m.start());
    }
    for m in SNAKE.find_iter(text) {
        add(m.as_str(), 0.6, m.start());
    }
    // Path stems are identifiers too (`discounts.py` → `discounts`).
    for p in &out.paths {
        if let Some(stem) = path_stem(p) {
            add(stem, 0.5, 0);
        }
    }

    let mut terms: Vec<(String, (f64, usize, usize))> = seen.into_iter().collect();
    terms.sort_by(|a, b| {
        b.1.0
            .total_cmp(&a.1.0)
            .then(b.1.1.cmp(&a.1.1))
            .then(a.1.2.cmp(&b.1.2))
            .then(a.0.cmp(&b.0))
    });
    out.terms = terms
        .into_iter()
        .map(|(text, (weight, count, _))| Term {
            text,
            weight,
            count,
        })
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(e: &Extracted) -> Vec<&str> {
        e.terms.iter().map(|t| t.text.as_str()).collect()
    }

    #[test]
    fn traceback_frames_paths_and_backticks() {
        let text = r#"Calling `Cart.total()` fails:

Traceback (most recent call last):
  File "app.py", line 3, in <module>
  File "shop/pricing/discounts.py", line 57, in apply_discount
    return compute_rate(order) * 2
ZeroDivisionError: division by zero
"#;
        let e = extract(text);
        assert_eq!(e.frames.len(), 2);
        assert_eq!(e.frames[1].path, "shop/pricing/discounts.py");
        assert_eq!(e.frames[1].line, 57);
        assert_eq!(e.frames[1].func, "apply_discount");
        assert_eq!(e.paths, vec!["app.py", "shop/pricing/discounts.py"]);
        let t = texts(&e);
        // Strongest evidence first: frame functions and backticked names.
        assert!(t[..3].contains(&"apply_discount"), "{t:?}");
        assert!(t[..3].contains(&"Cart"), "{t:?}");
        assert!(t.contains(&"compute_rate"));
        assert!(t.contains(&"ZeroDivisionError"));
        assert!(!t.contains(&"module"));
        assert!(!t.contains(&"line"));
    }

    #[test]
    fn paths_of_every_language_are_found_and_other_files_are_not() {
        let text = "The bug is in web/src/App.tsx and lib/router.mjs (see also \
                    src/main/java/a/Client.java, gin/context.go, crates/core/src/lib.rs \
                    and ./pkg/util.py), not in README.md, config.toml or a.tsxx.";
        assert_eq!(
            extract(text).paths,
            [
                "web/src/App.tsx",
                "lib/router.mjs",
                "src/main/java/a/Client.java",
                "gin/context.go",
                "crates/core/src/lib.rs",
                "pkg/util.py"
            ]
        );
    }

    #[test]
    fn ipython_frames_take_their_line_from_the_arrow() {
        // The shape Jupyter users paste (from a real seaborn report, shortened).
        let text = r#"KeyError                                  Traceback (most recent call last)
~/envs/py3.9/lib/python3.8/site-packages/seaborn/_core.py in _lookup_single(self, key)
    143             # Use a value that's in the original data vector
--> 144             value = self.lookup_table[key]
    145         except KeyError:

<ipython-input-3-46dd21e9c95a> in <module>
----> 4 g.map(sns.scatterplot, hue=iris["species"])

~/envs/py3.9/lib/python3.8/site-packages/seaborn/_core.py in <listcomp>(.0)
     62         if isinstance(key, (list, np.ndarray, pd.Series)):
---> 63             return [self._lookup_single(k, *args, **kwargs) for k in key]

~/envs/py3.9/lib/python3.8/site-packages/seaborn/axisgrid.py in map(self, func, **kwargs)
   1263         row_indices, col_indices = np.indices(self.axes.shape)
"#;
        let e = extract(text);
        let got: Vec<(&str, usize, &str)> = e
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.func.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "~/envs/py3.9/lib/python3.8/site-packages/seaborn/_core.py",
                    144,
                    "_lookup_single"
                ),
                (
                    "~/envs/py3.9/lib/python3.8/site-packages/seaborn/_core.py",
                    63,
                    "<listcomp>"
                ),
                (
                    "~/envs/py3.9/lib/python3.8/site-packages/seaborn/axisgrid.py",
                    0,
                    "map"
                ),
            ]
        );
        let t = texts(&e);
        assert!(
            t.contains(&"_lookup_single") && !t.contains(&"<listcomp>"),
            "{t:?}"
        );
    }

    #[test]
    fn dotted_names_and_camel_case() {
        let e = extract(
            "They are requests.packages.urllib3.exceptions.DecodeError and the HTTPAdapter class.",
        );
        let t = texts(&e);
        assert!(t.contains(&"DecodeError"));
        assert!(
            t.contains(&"HTTPAdapter") || t.contains(&"Adapter"),
            "{t:?}"
        );
        assert!(t.contains(&"urllib3"));
        // The last component of a dotted name outranks its packages.
        let pos = |w: &str| t.iter().position(|x| *x == w).unwrap();
        assert!(pos("DecodeError") < pos("packages"));
    }

    #[test]
    fn deterministic_and_stopword_free() {
        let text = "The `self` and `None` and `x` of parse_config() in setup_logging";
        let a = extract(text);
        assert_eq!(a, extract(text));
        let t = texts(&a);
        assert_eq!(t, vec!["parse_config", "setup_logging"]);
    }
}

/// `text` without commit trailers (`Co-authored-by: Name <mail>`, `Signed-off-by: …`):
/// they name people, not code, and their e-mail domains would pass for dotted names.
fn without_trailers(text: &str) -> String {
    static TRAILER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^[ \t]*[A-Z][\w-]*-by:.*$").expect("valid regex"));
    TRAILER.replace_all(text, "").into_owned()
}

/// Fewer identifiers than this in an issue and its plain words are searched too
/// ([`words_to_search`]).
pub const FEW_IDENTIFIERS: usize = 3;

/// The plain words a search adds for an issue whose extraction `ex` gave fewer than
/// [`FEW_IDENTIFIERS`] identifiers ([`plain_words`]); none otherwise. One rule for the
/// built-in text policy and declared policies (`for_each = "words"`).
pub fn words_to_search(ex: &Extracted, issue: &str) -> Vec<String> {
    if ex.terms.len() < FEW_IDENTIFIERS {
        plain_words(issue)
    } else {
        Vec::new()
    }
}

/// The issue's plain words, for a search that found no identifier to look for: what a
/// developer greps for when a report says only "redirects ignore single-slash
/// locations". Lower-cased words of at least 5 letters, no stop word, trailers and
/// e-mail addresses left out, an `-s`, `-ing` or `-ed` ending cut off when at least 4
/// letters stay (`redirects` → `redirect`, `unboxing` → `unbox`); most frequent first,
/// then in order of appearance.
pub fn plain_words(text: &str) -> Vec<String> {
    static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[\w@.]+").expect("valid regex"));
    let text = without_trailers(text);
    let mut seen: Vec<(String, usize)> = Vec::new();
    for m in WORD.find_iter(&text) {
        let w = m.as_str().trim_matches('.');
        if w.contains('@') || w.contains('.') || !w.chars().all(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        let lower = w.to_ascii_lowercase();
        if lower.len() < 5 || is_stop(&lower) || COMMON.contains(&lower.as_str()) {
            continue;
        }
        let stem = ["ing", "ed", "s"]
            .iter()
            .find_map(|end| lower.strip_suffix(end).filter(|r| r.len() >= 4))
            .unwrap_or(&lower)
            .to_string();
        match seen.iter_mut().find(|(x, _)| *x == stem) {
            Some(e) => e.1 += 1,
            None => seen.push((stem, 1)),
        }
    }
    let mut order: Vec<(usize, (String, usize))> = seen.into_iter().enumerate().collect();
    order.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(&b.0)));
    order.into_iter().map(|(_, (w, _))| w).collect()
}

/// Frequent English words of issues and commit messages that name no code.
const COMMON: &[&str] = &[
    "about",
    "after",
    "again",
    "allow",
    "always",
    "because",
    "before",
    "being",
    "below",
    "better",
    "could",
    "default",
    "doesn",
    "during",
    "error",
    "every",
    "example",
    "fixed",
    "fixes",
    "issue",
    "looks",
    "might",
    "never",
    "other",
    "previously",
    "properly",
    "remove",
    "should",
    "since",
    "still",
    "their",
    "there",
    "these",
    "thing",
    "those",
    "through",
    "under",
    "until",
    "using",
    "value",
    "values",
    "where",
    "which",
    "while",
    "without",
    "would",
    "works",
    "wrong",
];

#[cfg(test)]
mod fallback_tests {
    use super::*;

    #[test]
    fn plain_words_skip_trailers_mail_and_stop_words_and_cut_endings() {
        let text = "Fix boxing and unboxing of annotated primitives\n\nPreviously the \
                    operation did not honor an annotated primitive.\r\n\r\n---------\r\n\r\n\
                    Co-authored-by: Jake Wharton <github@jakewharton.com>";
        let w = plain_words(text);
        assert_eq!(w[..3], ["annotat", "primitive", "boxing"], "{w:?}");
        assert!(w.contains(&"unbox".to_string()), "{w:?}");
        assert!(
            !w.iter().any(|x| x.contains("wharton") || x == "previously"),
            "{w:?}"
        );
        let ex = extract(text);
        assert!(
            ex.terms.iter().all(|t| !t.text.contains("wharton")),
            "{:?}",
            ex.terms
        );
    }
}
