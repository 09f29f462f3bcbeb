//! Reproducing what CPython's `ast` does with a tree-sitter tree: which sources
//! `ast.parse` rejects, where a node ends (`end_lineno`), and the small
//! normalisations `ast` applies (parentheses vanish, identifiers are plain names).
//!
//! tree-sitter is lenient: it recovers from errors and its Python grammar accepts
//! Python 2 constructs (`print x`, `exec code`, `except E, e:`, `<>`, `0777`, `10L`,
//! tuple parameters) and Python 3.12 syntax. The original ran under CPython 3.11,
//! where every one of these makes `ast.parse` raise, and the file then becomes an
//! orphan file node (spec §1.2 step 4). [`rejection`] detects those cases.

use std::sync::OnceLock;

use tree_sitter::Node;

/// Visits `root` and its descendants in pre-order without recursion (deep
/// expression chains must not overflow the stack). `visit` returns whether to
/// descend into the node's children.
pub(crate) fn preorder<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = root.walk();
    let mut descend = visit(root);
    loop {
        if descend && cursor.goto_first_child() {
            descend = visit(cursor.node());
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                descend = visit(cursor.node());
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The text of a node.
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// All children of `node` (in linear time: `Node::child(i)` is O(i)).
pub(crate) fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Named children of `node` that are not comments.
pub(crate) fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    children(node)
        .into_iter()
        .filter(|c| c.is_named() && c.kind() != "comment")
}

/// Strips parentheses the way `ast` does: `(f)` is just `f`.
pub(crate) fn unparenthesize(mut node: Node<'_>) -> Node<'_> {
    while node.kind() == "parenthesized_expression" {
        match named_children(node).next() {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// The name `ast` would report for a `Name` or `Attribute` expression: the
/// identifier, or the attribute's `.attr`. `None` for every other shape.
pub(crate) fn name_or_attr<'s>(expr: Node<'_>, src: &'s str) -> Option<&'s str> {
    let expr = unparenthesize(expr);
    match expr.kind() {
        "identifier" => Some(text(expr, src)),
        "attribute" => expr.child_by_field_name("attribute").map(|a| text(a, src)),
        _ => None,
    }
}

/// For a `call` node: the callee name LocAgent records (`Name.id` or
/// `Attribute.attr`), or `None` for subscripts, calls of calls, lambdas, ...
pub(crate) fn call_name<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    call.child_by_field_name("function")
        .and_then(|f| name_or_attr(f, src))
}

/// For a `call` node whose callee is a plain `Name` (after removing parentheses):
/// that name.
pub(crate) fn call_plain_name<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    let f = unparenthesize(call.child_by_field_name("function")?);
    (f.kind() == "identifier").then(|| text(f, src))
}

/// The byte offset and 0-based row where `ast` ends this node: the end of its last
/// token that is not a comment. tree-sitter lets a block swallow trailing comments,
/// `ast`'s `end_lineno`/`end_col_offset` never include them.
pub(crate) fn ast_end(node: Node<'_>) -> (usize, usize) {
    let mut cur = node;
    'down: loop {
        for child in children(cur).into_iter().rev() {
            if matches!(child.kind(), "comment" | "line_continuation")
                || child.start_byte() == child.end_byte()
            {
                continue;
            }
            cur = child;
            continue 'down;
        }
        return (cur.end_byte(), cur.end_position().row);
    }
}

/// True for `async def` (tree-sitter puts the `async` keyword inside
/// `function_definition`).
pub(crate) fn is_async_def(def: Node<'_>) -> bool {
    def.child(0).is_some_and(|c| c.kind() == "async")
}

/// The node kinds the extraction distinguishes; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Other,
    Module,
    Block,
    FunctionDefinition,
    ClassDefinition,
    DecoratedDefinition,
    Call,
    ImportStatement,
    ImportFromStatement,
    FutureImportStatement,
    IfStatement,
    ElifClause,
    ElseClause,
    ExceptClause,
    ExceptGroupClause,
    CaseClause,
    MatchStatement,
    PrintStatement,
    ExecStatement,
    TypeAliasStatement,
    TypeParameter,
    ComparisonOperator,
    RaiseStatement,
    Parameters,
    LambdaParameters,
    DefaultParameter,
    Identifier,
    Integer,
    String,
    StringStart,
    StringContent,
    Interpolation,
}

impl Kind {
    /// True for import statements.
    pub(crate) fn is_import(self) -> bool {
        matches!(
            self,
            Kind::ImportStatement | Kind::ImportFromStatement | Kind::FutureImportStatement
        )
    }
}

/// `Kind` of every node kind id of the Python grammar, built once.
fn kind_table() -> &'static [Kind] {
    static TABLE: OnceLock<Vec<Kind>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        (0..lang.node_kind_count())
            .map(|id| {
                let id = id as u16;
                if !lang.node_kind_is_named(id) {
                    return Kind::Other;
                }
                match lang.node_kind_for_id(id).unwrap_or("") {
                    "module" => Kind::Module,
                    "block" => Kind::Block,
                    "function_definition" => Kind::FunctionDefinition,
                    "class_definition" => Kind::ClassDefinition,
                    "decorated_definition" => Kind::DecoratedDefinition,
                    "call" => Kind::Call,
                    "import_statement" => Kind::ImportStatement,
                    "import_from_statement" => Kind::ImportFromStatement,
                    "future_import_statement" => Kind::FutureImportStatement,
                    "if_statement" => Kind::IfStatement,
                    "elif_clause" => Kind::ElifClause,
                    "else_clause" => Kind::ElseClause,
                    "except_clause" => Kind::ExceptClause,
                    "except_group_clause" => Kind::ExceptGroupClause,
                    "case_clause" => Kind::CaseClause,
                    "match_statement" => Kind::MatchStatement,
                    "print_statement" => Kind::PrintStatement,
                    "exec_statement" => Kind::ExecStatement,
                    "type_alias_statement" => Kind::TypeAliasStatement,
                    "type_parameter" => Kind::TypeParameter,
                    "comparison_operator" => Kind::ComparisonOperator,
                    "raise_statement" => Kind::RaiseStatement,
                    "parameters" => Kind::Parameters,
                    "lambda_parameters" => Kind::LambdaParameters,
                    "default_parameter" => Kind::DefaultParameter,
                    "identifier" => Kind::Identifier,
                    "integer" => Kind::Integer,
                    "string" => Kind::String,
                    "string_start" => Kind::StringStart,
                    "string_content" => Kind::StringContent,
                    "interpolation" | "format_expression" => Kind::Interpolation,
                    _ => Kind::Other,
                }
            })
            .collect()
    })
}

/// The [`Kind`] of a node.
pub(crate) fn kind(node: Node<'_>) -> Kind {
    kind_table()
        .get(node.kind_id() as usize)
        .copied()
        .unwrap_or(Kind::Other)
}

/// A tree visitor for [`walk`].
pub(crate) trait Visitor<'t> {
    /// Called in pre-order; returns whether to descend into the node's children.
    fn enter(&mut self, node: Node<'t>) -> bool;
    /// Called after the node's children (also for nodes not descended into).
    fn exit(&mut self, node: Node<'t>);
}

/// Walks `root`'s subtree with a cursor, calling the visitor on entry and exit.
pub(crate) fn walk<'t>(root: Node<'t>, v: &mut impl Visitor<'t>) {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    let mut descend = v.enter(root);
    loop {
        if descend && cursor.goto_first_child() {
            depth += 1;
            descend = v.enter(cursor.node());
            continue;
        }
        loop {
            v.exit(cursor.node());
            if depth == 0 {
                return;
            }
            if cursor.goto_next_sibling() {
                descend = v.enter(cursor.node());
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}

const VALID_STRING_PREFIXES: [&str; 9] = ["", "r", "u", "f", "b", "br", "rb", "fr", "rf"];

/// If the tree has errors: a message naming the first one.
pub(crate) fn error_message(root: Node<'_>) -> Option<String> {
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
pub(crate) fn is_plain_ascii(src: &str) -> bool {
    src.bytes()
        .all(|b| matches!(b, b' '..=b'~' | b'\t' | b'\n' | b'\x0c'))
}

/// Characters between tokens that tree-sitter treats as whitespace but Python
/// rejects (a UTF-8 BOM, U+00A0, U+200B, control characters, NUL). Only needed
/// when the source is not [`is_plain_ascii`].
pub(crate) fn invalid_character(root: Node<'_>, src: &str) -> Option<String> {
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
            '\\' if chars.peek() == Some(&'\n') => {
                chars.next();
            }
            _ => return Some(c),
        }
    }
    None
}

/// Why CPython 3.11's parser rejects this node, if it does: Python 2 syntax
/// (print/exec statements, `except A, e`, `<>`, `raise E, msg`, `0777`, `10L`,
/// `ur''`, tuple parameters, `async`/`await` as names) and Python 3.12 syntax
/// (`type X = ...`, `def f[T]()`, quotes or backslashes reused inside f-string
/// expressions). `fstring_quote` is the delimiter of the innermost enclosing
/// f-string, if any.
pub(crate) fn node_rejection(
    node: Node<'_>,
    kind: Kind,
    src: &str,
    fstring_quote: Option<&str>,
) -> Option<&'static str> {
    match kind {
        // `print >>f, x` is also a valid Python 3 expression statement.
        Kind::PrintStatement => (!named_children(node).any(|c| c.kind() == "chevron"))
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
        Kind::Interpolation => {
            let expr = node.child_by_field_name("expression")?;
            let et = text(expr, src);
            let quote = fstring_quote.unwrap_or("");
            (et.contains('\\') || (!quote.is_empty() && et.contains(quote)))
                .then_some("f-string expression not valid before Python 3.12")
        }
        _ => None,
    }
}

/// The prefix letters of a `string_start` token (`rb` in `rb"""`).
pub(crate) fn string_prefix(string_start: &str) -> &str {
    let end = string_start.find(['"', '\'']).unwrap_or(string_start.len());
    &string_start[..end]
}

/// The quote delimiter of a `string_start` token (`"""` in `rb"""`).
pub(crate) fn string_quote(string_start: &str) -> &str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::extract::{Extracted, extract};
    use navbench_python::parse_tree;

    fn rejects(src: &str) -> bool {
        matches!(extract("t.py", src), Extracted::Rejected(_))
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
    fn ast_end_ignores_trailing_comments() {
        let src = "def f():\n    x = 1\n    # trailing\n\n    # more\ny = 2\n";
        let tree = parse_tree(src);
        let def = tree.root_node().named_child(0).expect("a def");
        assert_eq!(def.kind(), "function_definition");
        assert_eq!(ast_end(def).1 + 1, 2);
    }
}
