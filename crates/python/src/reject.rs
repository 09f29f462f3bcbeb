//! What CPython 3.11's `ast.parse` rejects although tree-sitter accepts it.
//!
//! tree-sitter is lenient: it recovers from errors, and its Python grammar also
//! accepts Python 2 (`print x`, `exec code`, `except E, e:`, `raise E, msg`, `<>`,
//! `0777`, `10L`, `ur''`, tuple parameters) and Python 3.12 (`type X = ...`,
//! `def f[T]()`, quotes reused inside f-string expressions). [`rejection`] is the one
//! check every consumer uses: tree-sitter errors, characters Python refuses between
//! tokens, those constructs, truncated `\x`/`\u`/`\U`/`\N{` escapes, positional after
//! keyword arguments, empty suites, indented module-level statements and indentation
//! mixing tabs and spaces inconsistently (`TabError`).
//!
//! It merges two checks validated separately: one against LocAgent's graphs (which
//! CPython 3.11 made: files it rejects become orphan file nodes), one against CPython
//! 3.11/3.12 `ast` on 15,281 files of the dev repositories.

use tree_sitter::Node;

use crate::tree::{Kind, children, kind, named_children, preorder, text};

/// Why CPython 3.11's `ast.parse` would reject `src` (parsed into `root`), naming the
/// first problem and its line; `None` when it accepts it.
pub fn rejection(root: Node<'_>, src: &str) -> Option<String> {
    if let Some(reason) = error_message(root) {
        return Some(reason);
    }
    if !is_plain_ascii(src)
        && let Some(reason) = invalid_character(root, src)
    {
        return Some(reason);
    }
    let mut found: Option<(&'static str, usize)> = None;
    // Quote delimiters of enclosing strings (empty for non-f-strings), as
    // (string end byte, quote).
    let mut quotes: Vec<(usize, &str)> = Vec::new();
    let mut logical_rows = Vec::new();
    preorder(root, |node| {
        if found.is_some() {
            return false;
        }
        while quotes
            .last()
            .is_some_and(|&(end, _)| node.start_byte() >= end)
        {
            quotes.pop();
        }
        let k = kind(node);
        if starts_logical_line(node, src.as_bytes()) {
            logical_rows.push(node.start_position().row);
        }
        let quote = quotes.last().map(|&(_, q)| q).filter(|q| !q.is_empty());
        if let Some(reason) = node_rejection(node, k, src, quote) {
            found = Some((reason, node.start_position().row));
            return false;
        }
        match k {
            Kind::String => quotes.push((node.end_byte(), "")),
            Kind::StringStart => {
                let t = text(node, src);
                if let Some(top) = quotes.last_mut() {
                    top.1 = if string_prefix(t).contains(['f', 'F']) {
                        string_quote(t)
                    } else {
                        ""
                    };
                }
            }
            Kind::StringContent => return false,
            _ => {}
        }
        true
    });
    if let Some((reason, row)) = found {
        return Some(format!("{reason} at line {}", row + 1));
    }
    logical_rows.sort_unstable();
    logical_rows.dedup();
    indentation_is_inconsistent(&logical_rows, src.as_bytes())
        .then(|| "inconsistent use of tabs and spaces in indentation".to_string())
}

const VALID_STRING_PREFIXES: [&str; 9] = ["", "r", "u", "f", "b", "br", "rb", "fr", "rf"];

/// If the tree has errors: a message naming the first one.
fn error_message(root: Node<'_>) -> Option<String> {
    if !root.has_error() {
        return None;
    }
    let mut at = None;
    preorder(root, |n| {
        if at.is_some() {
            return false;
        }
        if n.is_error() || n.is_missing() {
            at = Some(n.start_position().row + 1);
            return false;
        }
        n.has_error()
    });
    Some(match at {
        Some(line) => format!("syntax error at line {line}"),
        None => "syntax error".to_string(),
    })
}

/// True if every byte is printable ASCII, tab, newline or form feed: then no
/// character can sit between tokens that Python would refuse but tree-sitter
/// skips as whitespace.
fn is_plain_ascii(src: &str) -> bool {
    src.bytes()
        .all(|b| matches!(b, b' '..=b'~' | b'\t' | b'\n' | b'\r' | b'\x0c'))
}

/// Characters between tokens that tree-sitter treats as whitespace but Python
/// rejects (a UTF-8 BOM, U+00A0, U+200B, control characters, NUL). Only needed
/// when the source is not [`is_plain_ascii`].
fn invalid_character(root: Node<'_>, src: &str) -> Option<String> {
    if src.contains('\0') {
        return Some("source contains a NUL byte".into());
    }
    let mut reason: Option<String> = None;
    let mut covered_to = 0usize;
    // Inside a format spec the literal text is an invisible token: no gap checks.
    let mut exempt_to = 0usize;
    let line_of = |byte: usize| {
        src.as_bytes()[..byte]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    };
    preorder(root, |node| {
        if reason.is_some() {
            return false;
        }
        if node.kind() == "format_specifier" {
            exempt_to = exempt_to.max(node.end_byte());
        }
        // Leaves (and string contents, whose escape children do not cover them)
        // are tokens; whatever lies between two tokens must be Python whitespace.
        let atomic = kind(node) == Kind::StringContent || node.child_count() == 0;
        if atomic {
            let start = node.start_byte();
            if start > covered_to
                && start > exempt_to
                && let Some(bad) = src.get(covered_to..start).and_then(invalid_gap_char)
            {
                reason = Some(format!(
                    "invalid character U+{:04X} at line {}",
                    bad as u32,
                    line_of(covered_to)
                ));
                return false;
            }
            covered_to = covered_to.max(node.end_byte());
        }
        !atomic
    });
    if reason.is_none()
        && let Some(bad) = src.get(covered_to..).and_then(invalid_gap_char)
    {
        reason = Some(format!("invalid character U+{:04X} at the end", bad as u32));
    }
    reason
}

/// The first character of a gap between tokens that Python does not accept as
/// whitespace (space, tab, newline, form feed, backslash-newline continuation).
fn invalid_gap_char(gap: &str) -> Option<char> {
    let mut chars = gap.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\x0c' => {}
            // `\r\n` is a line break (callers have turned lone `\r`s into `\n`).
            '\r' if chars.peek() == Some(&'\n') => {}
            '\\' if chars.peek() == Some(&'\n') => {
                chars.next();
            }
            '\\' if chars.peek() == Some(&'\r') => {
                chars.next();
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            _ => return Some(c),
        }
    }
    None
}

/// Why CPython 3.11's parser rejects this node, if it does. `fstring_quote` is the
/// delimiter of the innermost enclosing f-string, if any.
fn node_rejection(
    node: Node<'_>,
    kind: Kind,
    src: &str,
    fstring_quote: Option<&str>,
) -> Option<&'static str> {
    match kind {
        // `print >>f, x` is also a valid Python 3 expression statement, and so is
        // anything whose first argument starts with `(` (a call of `print`).
        Kind::PrintStatement => (!named_children(node).any(|c| c.kind() == "chevron")
            && !node.child(1).is_some_and(|c| text(c, src).starts_with('(')))
        .then_some("Python 2 print statement"),
        Kind::ExecStatement => Some("Python 2 exec statement"),
        // tree-sitter also reads `type(x).a = b` as a type alias; PEP 695 needs a name.
        Kind::TypeAliasStatement => text(node, src)
            .strip_prefix("type")
            .map(|rest| rest.trim_start_matches([' ', '\t', '\\', '\n']))
            .is_some_and(|rest| rest.starts_with(|c: char| c == '_' || c.is_alphabetic()))
            .then_some("type alias statement (Python 3.12)"),
        Kind::TypeParameter
            if node.parent().is_some_and(|p| {
                matches!(p.kind(), "function_definition" | "class_definition")
            }) =>
        {
            Some("type parameters (Python 3.12)")
        }
        // `except A, e:` (values separated by commas outside parentheses).
        Kind::ExceptClause => children(node)
            .iter()
            .any(|c| c.kind() == ",")
            .then_some("Python 2 `except E, e` clause"),
        Kind::ComparisonOperator => children(node)
            .iter()
            .any(|c| c.kind() == "<>")
            .then_some("Python 2 `<>` operator"),
        Kind::RaiseStatement => named_children(node)
            .any(|c| c.kind() == "expression_list")
            .then_some("Python 2 `raise E, msg`"),
        Kind::Parameters | Kind::LambdaParameters => named_children(node)
            .any(|c| c.kind() == "tuple_pattern")
            .then_some("Python 2 tuple parameter"),
        Kind::DefaultParameter => node
            .child_by_field_name("name")
            .is_some_and(|n| n.kind() == "tuple_pattern")
            .then_some("Python 2 tuple parameter"),
        Kind::Identifier => {
            matches!(text(node, src), "async" | "await").then_some("`async`/`await` used as a name")
        }
        Kind::Integer => invalid_integer(text(node, src)).then_some("Python 2 integer literal"),
        Kind::StringStart => {
            let prefix = string_prefix(text(node, src));
            let valid = VALID_STRING_PREFIXES
                .iter()
                .any(|p| p.eq_ignore_ascii_case(prefix));
            (!valid).then_some("invalid string prefix")
        }
        Kind::String => {
            has_invalid_escape(node, src.as_bytes()).then_some("truncated escape sequence")
        }
        Kind::Interpolation => {
            let expr = node.child_by_field_name("expression")?;
            let et = text(expr, src);
            let quote = fstring_quote.unwrap_or("");
            (et.contains('\\') || (!quote.is_empty() && et.contains(quote)))
                .then_some("f-string expression not valid before Python 3.12")
        }
        Kind::ArgumentList => {
            misordered_arguments(node).then_some("positional argument follows keyword argument")
        }
        // A suite without any statement (`def f():` followed by a dedented line).
        Kind::Block => {
            (!named_children(node).any(|c| !c.is_extra())).then_some("expected an indented block")
        }
        // A statement indented at module level.
        // A form feed resets the indentation count, as in CPython's tokenizer.
        Kind::Module => named_children(node)
            .any(|c| {
                !c.is_extra()
                    && starts_logical_line(c, src.as_bytes())
                    && indentation_before(c, src.as_bytes()) > 0
            })
            .then_some("unexpected indent"),
        _ => None,
    }
}

/// Spaces and tabs between the last line break or form feed and `node`.
fn indentation_before(node: Node<'_>, src: &[u8]) -> usize {
    let start = node.start_byte();
    let from = src[..start]
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\x0c')
        .map_or(0, |i| i + 1);
    start - from
}

/// `f(a=1, b)`, `f(**kw, b)`, `f(**kw, *args)`, or a bare generator that is not the
/// sole argument.
fn misordered_arguments(node: Node<'_>) -> bool {
    let (mut keyword, mut double_star) = (false, false);
    for arg in named_children(node) {
        if arg.is_extra() {
            continue;
        }
        match arg.kind() {
            "keyword_argument" => keyword = true,
            "dictionary_splat" => double_star = true,
            "list_splat" if double_star => return true,
            "list_splat" => {}
            _ if keyword || double_star => return true,
            _ => {}
        }
    }
    false
}

/// The prefix letters of a `string_start` token (`rb` in `rb"""`).
pub fn string_prefix(string_start: &str) -> &str {
    let end = string_start.find(['"', '\'']).unwrap_or(string_start.len());
    &string_start[..end]
}

/// The quote delimiter of a `string_start` token (`"""` in `rb"""`).
pub fn string_quote(string_start: &str) -> &str {
    &string_start[string_prefix(string_start).len()..]
}

/// `10L`, `0777` (a non-zero decimal with a leading zero) are Python 2 only.
fn invalid_integer(t: &str) -> bool {
    let b = t.as_bytes();
    if b.last().is_some_and(|c| matches!(c, b'l' | b'L')) {
        return true;
    }
    if b.len() < 2 || b[0] != b'0' {
        return false;
    }
    if matches!(b[1], b'x' | b'X' | b'o' | b'O' | b'b' | b'B')
        || b.last().is_some_and(|c| matches!(c, b'j' | b'J'))
    {
        return false;
    }
    b.iter().any(|&c| c.is_ascii_digit() && c != b'0')
}

/// Node kinds that begin a logical line when they are the first token on their row.
const LINE_STARTERS: &[&str] = &[
    "future_import_statement",
    "import_statement",
    "import_from_statement",
    "print_statement",
    "assert_statement",
    "expression_statement",
    "return_statement",
    "delete_statement",
    "raise_statement",
    "pass_statement",
    "break_statement",
    "continue_statement",
    "global_statement",
    "nonlocal_statement",
    "exec_statement",
    "type_alias_statement",
    "if_statement",
    "elif_clause",
    "else_clause",
    "for_statement",
    "while_statement",
    "try_statement",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "with_statement",
    "function_definition",
    "class_definition",
    "decorated_definition",
    "decorator",
    "match_statement",
    "case_clause",
];

fn starts_logical_line(node: Node, src: &[u8]) -> bool {
    if !LINE_STARTERS.contains(&node.kind()) {
        return false;
    }
    let start = node.start_byte();
    let line_start = src[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    src[line_start..start]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
}

/// CPython's tokenizer check on indentation: measured with tabs to multiples of 8 and
/// with tabs as 1 column, the two must order every logical line's indentation the same
/// way, else `TabError` (or `IndentationError` for a dedent to no enclosing level).
fn indentation_is_inconsistent(rows: &[usize], src: &[u8]) -> bool {
    let mut line_starts = vec![0usize];
    line_starts.extend(
        src.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1),
    );
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    for &row in rows {
        let Some(&start) = line_starts.get(row) else {
            continue;
        };
        let (mut col, mut alt) = (0usize, 0usize);
        for &b in &src[start..] {
            match b {
                b' ' => {
                    col += 1;
                    alt += 1;
                }
                b'\t' => {
                    col = (col / 8 + 1) * 8;
                    alt += 1;
                }
                b'\x0c' => {
                    col = 0;
                    alt = 0;
                }
                _ => break,
            }
        }
        let &(top_col, top_alt) = stack.last().unwrap_or(&(0, 0));
        if col == top_col {
            if alt != top_alt {
                return true;
            }
        } else if col > top_col {
            if alt <= top_alt {
                return true;
            }
            stack.push((col, alt));
        } else {
            while stack.len() > 1 && stack.last().is_some_and(|&(c, _)| col < c) {
                stack.pop();
            }
            if stack.last() != Some(&(col, alt)) {
                return true;
            }
        }
    }
    false
}

/// Whether a string literal holds an escape that CPython's tokenizer rejects
/// (`"\user"`: truncated `\uXXXX`). Unknown `\N{…}` names are not detected.
fn has_invalid_escape(string: Node, src: &[u8]) -> bool {
    let text = |n: Node| std::str::from_utf8(&src[n.start_byte()..n.end_byte()]).unwrap_or("");
    let Some(start) = string.child(0) else {
        return false;
    };
    let prefix = text(start).to_ascii_lowercase();
    if prefix.contains('r') {
        return false;
    }
    let bytes = prefix.contains('b');
    let mut cursor = string.walk();
    for part in string.named_children(&mut cursor) {
        if part.kind() != "string_content" {
            continue;
        }
        let chars: Vec<char> = text(part).chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '\\' {
                i += 1;
                continue;
            }
            let hex = |n: usize| {
                chars.len() > i + 1 + n
                    && chars[i + 2..i + 2 + n].iter().all(char::is_ascii_hexdigit)
            };
            let ok = match chars.get(i + 1) {
                Some('x') => hex(2),
                Some('u') if !bytes => hex(4),
                Some('U') if !bytes => {
                    hex(8)
                        && u32::from_str_radix(&chars[i + 2..i + 10].iter().collect::<String>(), 16)
                            .is_ok_and(|v| v <= 0x10FFFF)
                }
                Some('N') if !bytes => {
                    chars.get(i + 2) == Some(&'{') && chars[i + 2..].contains(&'}')
                }
                _ => true,
            };
            if !ok {
                return true;
            }
            i += 2;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::parse_tree;

    fn rejects(src: &str) -> bool {
        rejection(parse_tree(src).root_node(), src).is_some()
    }

    #[test]
    fn accepts_python3() {
        for src in [
            "x = 1\n",
            "print('a', file=f)\n",
            "exec('x')\n",
            "def f(a, /, b, *, c):\n    return f'{a!r:>{b}}'\n",
            "async def f():\n    await g()\n    async for x in y:\n        pass\n",
            "match x:\n    case [a, b]:\n        pass\n",
            "x = 0\ny = 00\nz = 0_0\nw = 0777j\nv = 0x1F\n",
            "s = rb'x' + Rb'y' + f\"{x['a']}\" + u'z'\n",
            "\x0cdef f():\n    pass\n",
            "try:\n    pass\nexcept (A, B) as e:\n    pass\n",
            "raise E('m') from None\n",
            "x = 1  # comment with \u{feff} and \u{a0}\n",
            "s = '\u{feff}'\n",
            "t = f'''{x[\"a\"]}'''\n",
            "print >> sys.stderr, 'message'\n",
            "type(x).attr = 1\n",
        ] {
            assert!(!rejects(src), "should accept: {src:?}");
        }
    }

    #[test]
    fn rejects_python2_and_312() {
        for src in [
            "\u{feff}x = 1\n",
            "print 'x'\n",
            "exec 'x' in d\n",
            "try:\n    pass\nexcept E, e:\n    pass\n",
            "if a <> b:\n    pass\n",
            "raise E, 'msg'\n",
            "x = 0777\n",
            "x = 10L\n",
            "s = ur'x'\n",
            "def f(a, (b, c)):\n    pass\n",
            "async = 1\n",
            "type X = int\n",
            "def f[T](x: T) -> T:\n    return x\n",
            "s = f'{x['a']}'\n",
            "s = f'{\"\\n\".join(x)}'\n",
            "def f(:\n",
            "x = 1\x00\n",
            "x =\u{a0}1\n",
        ] {
            assert!(rejects(src), "should reject: {src:?}");
        }
    }

    #[test]
    fn names_the_first_problem_and_its_line() {
        let src = "x = 1\nprint 'a'\nexec 'b'\n";
        assert_eq!(
            rejection(parse_tree(src).root_node(), src).as_deref(),
            Some("Python 2 print statement at line 2")
        );
        let src = "if x:\n\ty = 1\n        z = 2\n";
        assert!(rejection(parse_tree(src).root_node(), src).is_some_and(|r| r.contains("tabs")));
    }
}
