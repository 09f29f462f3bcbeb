//! Which languages a repository is written in, and how a line of each declares a
//! name: what an agent sees at a glance from a file listing and from a grep hit.
//!
//! **Repository languages** come from `navbench_lang::family`, re-exported here: an
//! agent new to a repository looks at its listing and knows what it is written in;
//! it searches that code, not a vendored minified script or a docs example in
//! another language. The script follows it with [`Families::of`] (the language
//! families holding at least [`MIN_SHARE`] of the source files outside the tests),
//! and [`Families::glob`] turns them into the glob the `text` tools take. The
//! codegraph server builds its graph by the same rule, so a policy and the graph it
//! walks agree on what the repository is written in.
//!
//! **Definition lines.** [`is_definition`] says whether a grep hit's line declares
//! the term rather than uses it: Python's `def`/`class`; elsewhere a declaring
//! keyword before the name (`function`, `class`, `interface`, `type`, `func` with an
//! optional Go receiver, `fn`, `struct`, `enum`, `trait`, `impl`), or a
//! method header: the name followed by `(`, the line opening a block (`{`), and
//! nothing before the name but modifiers and a return type (Java, TypeScript
//! class members).

pub use navbench_lang::family::{Families, MIN_SHARE, family_of};

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
