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

use std::sync::OnceLock;

use tree_sitter::Node;

use crate::tree::{Kind, child_iter, kind, named_children, preorder, text};

/// Why CPython 3.11's `ast.parse` would reject `src` (parsed into `root`), naming the
/// first problem and its line; `None` when it accepts it.
pub fn rejection(root: Node<'_>, src: &str) -> Option<String> {
    let mut check = Checker::new(root, src);
    if !check.rejected() {
        preorder(root, |node| check.visit(node, kind(node)));
    }
    check.finish(root)
}

/// [`rejection`] one node at a time, for a consumer that walks the whole tree anyway
/// (the graph builder): one traversal then serves both, where calling [`rejection`]
/// would cost a second one.
///
/// Feed [`Checker::visit`] the nodes in pre-order, descending wherever it returns
/// true (it returns false for string contents and once the verdict is known), then
/// call [`Checker::finish`]: the verdict, reason included, is [`rejection`]'s.
///
/// ```
/// use navbench_python::reject::Checker;
/// use navbench_python::tree::{kind, parse_tree, preorder};
///
/// let src = "print 'python 2'\n";
/// let tree = parse_tree(src);
/// let mut check = Checker::new(tree.root_node(), src);
/// preorder(tree.root_node(), |n| check.visit(n, kind(n)));
/// assert_eq!(check.finish(tree.root_node()).as_deref(), Some("Python 2 print statement at line 1"));
/// ```
pub struct Checker<'s> {
    src: &'s str,
    /// The verdict known before any node is visited (tree errors, a NUL byte).
    early: Option<String>,
    /// Every byte is plain ASCII: no character between tokens can be invalid.
    plain_ascii: bool,
    /// The first node CPython rejects, with its 0-based row.
    found: Option<(&'static str, usize)>,
    /// The first invalid character between tokens.
    invalid: Option<String>,
    /// Quote delimiters of enclosing strings (empty for non-f-strings), as
    /// (string end byte, quote).
    quotes: Vec<(usize, &'s str)>,
    /// Rows where a logical line starts (for the tab/space consistency check).
    logical_rows: Vec<usize>,
    /// Tokens cover the source up to here (gap checks).
    covered_to: usize,
    /// Inside a format spec the literal text is an invisible token: no gap checks
    /// before this byte.
    exempt_to: usize,
}

impl<'s> Checker<'s> {
    /// A check of `src`, parsed into `root`. The problems that need no walk (tree-sitter
    /// errors, a NUL byte) are decided here.
    pub fn new(root: Node<'_>, src: &'s str) -> Checker<'s> {
        let plain_ascii = is_plain_ascii(src);
        let early = error_message(root).or_else(|| {
            (!plain_ascii && src.contains('\0')).then(|| "source contains a NUL byte".into())
        });
        Checker {
            early,
            ..Checker::blank(src, plain_ascii)
        }
    }

    /// A check with nothing decided yet.
    fn blank(src: &'s str, plain_ascii: bool) -> Checker<'s> {
        Checker {
            src,
            early: None,
            plain_ascii,
            found: None,
            invalid: None,
            quotes: Vec::new(),
            logical_rows: Vec::new(),
            covered_to: 0,
            exempt_to: 0,
        }
    }

    /// Whether the source is rejected already (the rest of a walk cannot change it).
    pub fn rejected(&self) -> bool {
        self.early.is_some() || self.invalid.is_some() || self.found.is_some()
    }

    /// Checks `node`, of kind `k` (visited in pre-order); returns whether its children
    /// need checking.
    pub fn visit(&mut self, node: Node<'_>, k: Kind) -> bool {
        if self.rejected() {
            return false;
        }
        if !self.plain_ascii && !self.gap_before(node, k) {
            return false;
        }
        while self
            .quotes
            .last()
            .is_some_and(|&(end, _)| node.start_byte() >= end)
        {
            self.quotes.pop();
        }
        let src = self.src;
        if starts_logical_line(node, src.as_bytes()) {
            self.logical_rows.push(node.start_position().row);
        }
        let quote = self
            .quotes
            .last()
            .map(|&(_, q)| q)
            .filter(|q| !q.is_empty());
        if let Some(reason) = node_rejection(node, k, src, quote) {
            self.found = Some((reason, node.start_position().row));
            return false;
        }
        match k {
            Kind::String => self.quotes.push((node.end_byte(), "")),
            Kind::StringStart => {
                let t = text(node, src);
                if let Some(top) = self.quotes.last_mut() {
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
    }

    /// The gap check of [`invalid_character`] for one node: false when the text
    /// between the last token and this one holds a character Python refuses.
    fn gap_before(&mut self, node: Node<'_>, k: Kind) -> bool {
        if k == Kind::Other && node.kind() == "format_specifier" {
            self.exempt_to = self.exempt_to.max(node.end_byte());
        }
        // Leaves (and string contents, whose escape children do not cover them)
        // are tokens; whatever lies between two tokens must be Python whitespace.
        if k != Kind::StringContent && node.child_count() != 0 {
            return true;
        }
        let start = node.start_byte();
        if start > self.covered_to
            && start > self.exempt_to
            && let Some(bad) = self
                .src
                .get(self.covered_to..start)
                .and_then(invalid_gap_char)
        {
            self.invalid = Some(format!(
                "invalid character U+{:04X} at line {}",
                bad as u32,
                line_of(self.src, self.covered_to)
            ));
            return false;
        }
        self.covered_to = self.covered_to.max(node.end_byte());
        true
    }

    /// The verdict, once every node [`Checker::visit`] asked for was visited:
    /// [`rejection`]'s, reason included.
    pub fn finish(self, root: Node<'_>) -> Option<String> {
        if let Some(reason) = self.early.or(self.invalid) {
            return Some(reason);
        }
        if let Some((reason, row)) = self.found {
            // An invalid character anywhere takes precedence, as in `rejection`'s
            // order of checks; the walk stopped here, so look for one in all of it.
            if !self.plain_ascii
                && let Some(invalid) = invalid_character(root, self.src)
            {
                return Some(invalid);
            }
            return Some(format!("{reason} at line {}", row + 1));
        }
        if !self.plain_ascii
            && let Some(bad) = self.src.get(self.covered_to..).and_then(invalid_gap_char)
        {
            return Some(format!("invalid character U+{:04X} at the end", bad as u32));
        }
        let mut rows = self.logical_rows;
        rows.sort_unstable();
        rows.dedup();
        indentation_is_inconsistent(&rows, self.src.as_bytes())
            .then(|| "inconsistent use of tabs and spaces in indentation".to_string())
    }
}

/// The 1-based line of byte `byte` of `src`.
fn line_of(src: &str, byte: usize) -> usize {
    src.as_bytes()[..byte]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
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
/// rejects (a UTF-8 BOM, U+00A0, U+200B, control characters): the first one, over the
/// whole tree. Only needed when the source is not [`is_plain_ascii`] and has no NUL
/// byte ([`Checker::new`] decides those).
fn invalid_character(root: Node<'_>, src: &str) -> Option<String> {
    let mut check = Checker::blank(src, false);
    preorder(root, |node| {
        check.invalid.is_none() && check.gap_before(node, kind(node)) && {
            // Descend wherever `Checker::visit` would (the same nodes are tokens).
            kind(node) != Kind::StringContent
        }
    });
    if check.invalid.is_some() {
        return check.invalid;
    }
    src.get(check.covered_to..)
        .and_then(invalid_gap_char)
        .map(|bad| format!("invalid character U+{:04X} at the end", bad as u32))
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
        Kind::ExceptClause => child_iter(node)
            .any(|c| c.kind() == ",")
            .then_some("Python 2 `except E, e` clause"),
        Kind::ComparisonOperator => child_iter(node)
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
    if !line_starter_table()
        .get(node.kind_id() as usize)
        .copied()
        .unwrap_or(false)
    {
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

/// For every node kind id of the grammar, whether its name is in [`LINE_STARTERS`]
/// (built once: a lookup per node instead of comparing names).
fn line_starter_table() -> &'static [bool] {
    static TABLE: OnceLock<Vec<bool>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        (0..lang.node_kind_count())
            .map(|id| {
                lang.node_kind_for_id(id as u16)
                    .is_some_and(|name| LINE_STARTERS.contains(&name))
            })
            .collect()
    })
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
    let prefix = string_prefix(text(start));
    if prefix.contains(['r', 'R']) {
        return false;
    }
    let bytes = prefix.contains(['b', 'B']);
    let mut cursor = string.walk();
    for part in string.named_children(&mut cursor) {
        // Only an escape can be invalid: most contents have none.
        if part.kind() != "string_content" || !text(part).contains('\\') {
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

    /// `rejection` as three separate checks in their order of precedence: tree
    /// errors, invalid characters over the whole file, then the node checks.
    fn checked_in_turn(root: Node<'_>, src: &str) -> Option<String> {
        if let Some(reason) = error_message(root) {
            return Some(reason);
        }
        if !is_plain_ascii(src) {
            if src.contains('\0') {
                return Some("source contains a NUL byte".into());
            }
            if let Some(reason) = invalid_character(root, src) {
                return Some(reason);
            }
        }
        let mut nodes_only = Checker::blank(src, true);
        preorder(root, |n| nodes_only.visit(n, kind(n)));
        nodes_only.finish(root)
    }

    #[test]
    fn one_walk_gives_the_verdict_of_the_checks_in_turn() {
        for src in [
            "x = 1\n",
            "print 'x'\n",
            // A node problem first, an invalid character after it: the character wins.
            "print 'x'\nx =\u{a0}1\n",
            "x =\u{a0}1\nprint 'x'\n",
            "s = '\u{e9}'\nprint 'x'\n",
            "s = f'{x:\u{a0}>3}'\n",
            "s = '\u{e9}'\nx = 1 \u{200b}",
            "s = '\u{e9}'\nif x:\n\ty = 1\n        z = 2\n",
            "s = '\u{e9}'\ndef f(:\n",
            "s = '\u{e9}'\x00\n",
            "# \u{e9}\nraise E, 'm'\n",
            "print 'x'\n\u{feff}y = 1\n",
            "\u{feff}print 'x'\n",
        ] {
            let root = parse_tree(src);
            let root = root.root_node();
            assert_eq!(rejection(root, src), checked_in_turn(root, src), "{src:?}");
        }
        // The gap check reports the line where the gap starts (after `'x'`).
        let src = "print 'x'\n\u{feff}y = 1\n";
        assert_eq!(
            rejection(parse_tree(src).root_node(), src).as_deref(),
            Some("invalid character U+FEFF at line 1")
        );
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
