//! Which languages a repository is written in, and how a line of each declares a
//! name: what an agent sees at a glance from a file listing and from a grep hit.
//!
//! **Repository languages.** An agent new to a repository looks at its listing and
//! knows what it is written in; it searches that code, not a vendored minified
//! script or a docs example in another language. The script follows it: the
//! languages of a repository are the language families (Python; TypeScript and
//! JavaScript together, since they import each other; Java; Go; Rust) that hold at
//! least [`MIN_SHARE`] of its source files outside the tests. One constant, chosen so
//! that a Python project's few JavaScript assets (Django's admin, Sphinx themes: a few
//! percent of their files) stay out while every part of a polyglot monorepo counts.
//! [`Languages::glob`] turns them into the glob the `text` tools take.
//!
//! **Definition lines.** [`is_definition`] says whether a grep hit's line declares
//! the term rather than uses it: Python's `def`/`class`; elsewhere a declaring
//! keyword before the name (`function`, `class`, `interface`, `type`, `func` with an
//! optional Go receiver, `fn`, `struct`, `enum`, `trait`, `impl`), or a
//! method header: the name followed by `(`, the line opening a block (`{`), and
//! nothing before the name but modifiers and a return type (Java, TypeScript
//! class members).

use navbench_lang::language_for_path;

use super::is_test_file;

/// The smallest share of a repository's source files (outside tests) that makes its
/// language one the policies search.
pub const MIN_SHARE: f64 = 0.10;

/// A language family and the glob alternatives of its file extensions.
const FAMILIES: &[(&str, &[&str])] = &[
    ("python", &["py"]),
    (
        "ecma",
        &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
    ),
    ("java", &["java"]),
    ("go", &["go"]),
    ("rust", &["rs"]),
];

/// The family of a source file, by extension (`None`: not source navbench reads).
pub fn family_of(path: &str) -> Option<&'static str> {
    if path.ends_with(".py") {
        return Some("python");
    }
    let lang = language_for_path(path)?;
    Some(match lang.name() {
        "typescript" | "tsx" | "javascript" => "ecma",
        other => FAMILIES.iter().find(|(f, _)| *f == other)?.0,
    })
}

/// The language families a repository is written in (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Languages {
    families: Vec<&'static str>,
}

impl Languages {
    /// The families of `files` (repository paths) holding at least [`MIN_SHARE`] of
    /// the non-test source files; Python when there are none.
    pub fn of(files: &[String]) -> Languages {
        let mut counts: Vec<(&'static str, usize)> =
            FAMILIES.iter().map(|(f, _)| (*f, 0)).collect();
        let mut total = 0usize;
        for f in files.iter().filter(|f| !is_test_file(f)) {
            if let Some(fam) = family_of(f) {
                total += 1;
                if let Some(c) = counts.iter_mut().find(|(n, _)| *n == fam) {
                    c.1 += 1;
                }
            }
        }
        let families: Vec<&'static str> = counts
            .into_iter()
            .filter(|(_, n)| *n > 0 && *n as f64 >= MIN_SHARE * total as f64)
            .map(|(f, _)| f)
            .collect();
        if families.is_empty() {
            return Languages {
                families: vec!["python"],
            };
        }
        Languages { families }
    }

    /// Every family: what the first listing of a repository asks for, before its
    /// languages are known.
    pub fn all() -> Languages {
        Languages {
            families: FAMILIES.iter().map(|(f, _)| *f).collect(),
        }
    }

    /// Whether `path` is a source file of one of these languages.
    pub fn contains(&self, path: &str) -> bool {
        family_of(path).is_some_and(|f| self.families.contains(&f))
    }

    /// A glob matching their source files: `*.py`, or `*.{go,java}` for several.
    pub fn glob(&self) -> String {
        let exts: Vec<&str> = FAMILIES
            .iter()
            .filter(|(f, _)| self.families.contains(f))
            .flat_map(|(_, e)| e.iter().copied())
            .collect();
        match exts.as_slice() {
            [one] => format!("*.{one}"),
            many => format!("*.{{{}}}", many.join(",")),
        }
    }
}

/// Keywords that declare the name after them.
const DECLARING: &[&str] = &[
    "function",
    "class",
    "interface",
    "type",
    "func",
    "fn",
    "struct",
    "enum",
    "trait",
    "impl",
    "def",
    "record",
];

/// Statements that open a block without declaring anything.
const CONTROL: &[&str] = &[
    "if", "for", "while", "switch", "match", "return", "new", "else", "catch", "await", "throw",
    "do", "try", "loop", "go", "defer",
];

/// Whether the grep hit `line` of file `path` declares `term` (see the module docs).
pub fn is_definition(path: &str, line: &str, term: &str) -> bool {
    let t = line.trim_start();
    if path.ends_with(".py") {
        for kw in ["def ", "async def ", "class "] {
            if let Some(rest) = t.strip_prefix(kw) {
                return rest.starts_with(term) && rest[term.len()..].starts_with(['(', ':']);
            }
        }
        return false;
    }
    let mut from = 0;
    while let Some(i) = t[from..].find(term).map(|i| i + from) {
        from = i + term.len();
        let before = &t[..i];
        let after = &t[i + term.len()..];
        let bounded_left = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
        let bounded_right =
            !after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
        if !(bounded_left && bounded_right) {
            continue;
        }
        if declared_by_keyword(before) || method_header(before, after) {
            return true;
        }
    }
    false
}

/// `… function `, `… func (r *T) `, `… struct ` right before the name.
fn declared_by_keyword(before: &str) -> bool {
    let mut b = before.trim_end();
    // A Go receiver `(r *T)` sits between `func` and the name.
    if b.ends_with(')')
        && let Some(open) = b.rfind('(')
    {
        let head = b[..open].trim_end();
        if head.ends_with("func") {
            b = head;
        }
    }
    let b = b.trim_end_matches(['*', '&']).trim_end();
    let last = b.rsplit(|c: char| c.is_whitespace()).next().unwrap_or("");
    b.len() < before.len() && DECLARING.contains(&last)
}

/// `public long nextDelay(int attempt) {`, `  add(item: Item): void {`: the name
/// opens a parameter list, the line opens a block, and what precedes the name is
/// modifiers and a type (no assignment, call, member access or control keyword).
fn method_header(before: &str, after: &str) -> bool {
    let after = after.trim_start();
    if !after.starts_with('(') || !after.trim_end().ends_with('{') {
        return false;
    }
    if before.contains(['=', '(', '.', ';', '"', '\'']) {
        return false;
    }
    let first = before.split_whitespace().next().unwrap_or("");
    !CONTROL.contains(&first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_python_project_with_a_few_scripts_stays_python() {
        let mut list: Vec<String> = (0..40).map(|i| format!("pkg/m{i}.py")).collect();
        list.push("docs/_static/jquery.js".into());
        list.push("README.md".into());
        let langs = Languages::of(&list);
        assert_eq!(langs.glob(), "*.py");
        assert!(!langs.contains("docs/_static/jquery.js"));
        assert_eq!(Languages::of(&files(&["README.md"])).glob(), "*.py");
    }

    #[test]
    fn a_polyglot_tree_searches_every_part() {
        let langs = Languages::of(&files(&[
            "web/src/cart.ts",
            "web/lib/router.js",
            "sdk/src/main/java/a/Client.java",
            "gateway/queue/queue.go",
            "gateway/queue/queue_test.go",
            "cli/src/main.rs",
        ]));
        assert_eq!(langs.glob(), "*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,java,go,rs}");
        assert!(langs.contains("cli/src/config.rs"));
        assert!(!langs.contains("setup.py"));
        // The first listing asks for every source extension navbench reads.
        assert_eq!(
            Languages::all().glob(),
            "*.{py,ts,tsx,mts,cts,js,jsx,mjs,cjs,java,go,rs}"
        );
    }

    #[test]
    fn definition_lines_per_language() {
        // (file, line, term, declares it)
        let cases = [
            ("a.py", "    def apply(self):", "apply", true),
            ("a.py", "class Cart(Base):", "Cart", true),
            ("a.py", "    def apply_all(self):", "apply", false),
            ("a.py", "x = apply(1)", "apply", false),
            (
                "a.ts",
                "export function parseCoupon(text: string) {",
                "parseCoupon",
                true,
            ),
            ("a.ts", "export class CouponBook {", "CouponBook", true),
            ("a.ts", "  subtotalCents(): number {", "subtotalCents", true),
            (
                "a.ts",
                "  private async load(id: string): Promise<void> {",
                "load",
                true,
            ),
            ("a.ts", "export type Coupon = {", "Coupon", true),
            (
                "a.ts",
                "    const c = parseCoupon(printed, expires);",
                "parseCoupon",
                false,
            ),
            (
                "a.ts",
                "    if (subtotalCents(x)) {",
                "subtotalCents",
                false,
            ),
            (
                "A.java",
                "    public long nextDelay(int attempt) {",
                "nextDelay",
                true,
            ),
            (
                "A.java",
                "public final class RetryPolicy {",
                "RetryPolicy",
                true,
            ),
            (
                "A.java",
                "        long d = policy.nextDelay(attempt);",
                "nextDelay",
                false,
            ),
            (
                "A.java",
                "        return nextDelay(attempt) {",
                "nextDelay",
                false,
            ),
            (
                "a.go",
                "func (q *Queue) Pop() (m Message, ok bool) {",
                "Pop",
                true,
            ),
            ("a.go", "func New(capacity int) *Queue {", "New", true),
            ("a.go", "type Limiter struct {", "Limiter", true),
            ("a.go", "\tm, ok := s.queueFor(topic).Pop()", "Pop", false),
            ("a.go", "\tq := New(1024)", "New", false),
            (
                "a.rs",
                "pub fn parse_duration(t: &str) -> Result<Duration, E> {",
                "parse_duration",
                true,
            ),
            ("a.rs", "impl Config {", "Config", true),
            ("a.rs", "pub struct Config {", "Config", true),
            (
                "a.rs",
                "    let d = parse_duration(&v)?;",
                "parse_duration",
                false,
            ),
            (
                "a.rs",
                "pub fn parse_durations(text: &str) {",
                "parse_duration",
                false,
            ),
        ];
        for (p, line, term, want) in cases {
            assert_eq!(is_definition(p, line, term), want, "{p}: {line}");
        }
    }
}
