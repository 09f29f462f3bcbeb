//! Docstrings as `ast.get_docstring` sees them, and the Python string semantics that
//! takes: literal evaluation (escapes, implicit concatenation), `inspect.cleandoc`,
//! and `str.splitlines`.

use tree_sitter::Node;

/// A definition's docstring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Docstring {
    /// 1-based first line of the docstring statement.
    pub line: usize,
    /// The value `ast.get_docstring(node, clean=True)` returns (may be empty).
    pub cleaned: String,
}

/// The docstring of a class or function body (a `block` node), if its first
/// statement is a `str` constant.
pub fn docstring(body: Node<'_>, src: &[u8]) -> Option<Docstring> {
    let mut cursor = body.walk();
    let first = body.named_children(&mut cursor).find(|n| !n.is_extra())?;
    if first.kind() != "expression_statement" || first.child_count() != 1 {
        return None;
    }
    let value = docstring_value(first.child(0)?, src)?;
    Some(Docstring {
        line: first.start_position().row + 1,
        cleaned: cleandoc(&value),
    })
}

/// The value of a docstring expression as `ast.get_docstring` sees it: a `str`
/// constant, possibly parenthesised or implicitly concatenated. f-strings (a
/// `JoinedStr`) and bytes are not docstrings.
fn docstring_value(expr: Node, src: &[u8]) -> Option<String> {
    match expr.kind() {
        "parenthesized_expression" => {
            if expr.named_child_count() != 1 {
                return None;
            }
            docstring_value(expr.named_child(0)?, src)
        }
        "string" => string_literal_value(expr, src),
        "concatenated_string" => {
            let mut out = String::new();
            let mut cursor = expr.walk();
            for part in expr.named_children(&mut cursor) {
                if part.is_extra() {
                    continue;
                }
                out.push_str(&string_literal_value(part, src)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// Evaluates one (non-f, non-bytes) string literal token.
fn string_literal_value(node: Node, src: &[u8]) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let text = std::str::from_utf8(&src[node.start_byte()..node.end_byte()]).ok()?;
    let quote_at = text.find(['"', '\''])?;
    let prefix = text[..quote_at].to_ascii_lowercase();
    if prefix.contains('f') || prefix.contains('b') || prefix.contains('t') {
        return None;
    }
    let rest = &text[quote_at..];
    let quote = if rest.starts_with("\"\"\"") {
        "\"\"\""
    } else if rest.starts_with("'''") {
        "'''"
    } else {
        &rest[..1]
    };
    if rest.len() < 2 * quote.len() || !rest.ends_with(quote) {
        return None;
    }
    let body = &rest[quote.len()..rest.len() - quote.len()];
    // The tokenizer reads source with universal newlines.
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    if prefix.contains('r') {
        Some(body)
    } else {
        Some(unescape(&body))
    }
}

/// Python's escape processing for a non-raw `str` literal. `\N{…}` resolves only the
/// names of line-break and space characters (the only ones that can change a
/// docstring's line count); other names become a placeholder letter.
fn unescape(body: &str) -> String {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' || i + 1 >= chars.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = chars[i + 1];
        i += 2;
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3 && i < chars.len() && chars[i].is_digit(8) {
                    value = value * 8 + chars[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                out.push(char::from_u32(value).unwrap_or('?'));
            }
            'x' | 'u' | 'U' => {
                let width = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars[i..].iter().take(width).collect();
                match u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(ch) if digits.len() == width => {
                        out.push(ch);
                        i += width;
                    }
                    // Invalid escapes are syntax errors in Python; keep the text.
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            'N' if chars.get(i) == Some(&'{') => {
                let close = chars[i..].iter().position(|&c| c == '}');
                match close {
                    Some(len) => {
                        let name: String = chars[i + 1..i + len].iter().collect();
                        out.push(named_char(&name));
                        i += len + 1;
                    }
                    None => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

fn named_char(name: &str) -> char {
    match name.to_ascii_uppercase().as_str() {
        "LINE FEED" | "LF" | "NEW LINE" | "END OF LINE" | "EOL" | "NL" => '\n',
        "CARRIAGE RETURN" | "CR" => '\r',
        "CHARACTER TABULATION" | "TAB" | "HORIZONTAL TABULATION" | "HT" => '\t',
        "LINE TABULATION" | "VT" | "VERTICAL TABULATION" => '\x0b',
        "FORM FEED" | "FF" => '\x0c',
        "INFORMATION SEPARATOR FOUR" | "FILE SEPARATOR" | "FS" => '\x1c',
        "INFORMATION SEPARATOR THREE" | "GROUP SEPARATOR" | "GS" => '\x1d',
        "INFORMATION SEPARATOR TWO" | "RECORD SEPARATOR" | "RS" => '\x1e',
        "INFORMATION SEPARATOR ONE" | "UNIT SEPARATOR" | "US" => '\x1f',
        "NEXT LINE" | "NEXT LINE (NEL)" | "NEL" => '\u{85}',
        "LINE SEPARATOR" => '\u{2028}',
        "PARAGRAPH SEPARATOR" => '\u{2029}',
        "SPACE" | "SP" => ' ',
        "NO-BREAK SPACE" | "NBSP" => '\u{a0}',
        _ => 'x',
    }
}

/// Python's `str.isspace`.
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.expandtabs()` with the default tab size 8.
fn expandtabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut column = 0usize;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            _ => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// CPython 3.12's `inspect.cleandoc`, as used by `ast.get_docstring(clean=True)`.
fn cleandoc(doc: &str) -> String {
    let expanded = expandtabs(doc);
    let mut lines: Vec<Vec<char>> = expanded.split('\n').map(|l| l.chars().collect()).collect();
    let mut margin = usize::MAX;
    for line in lines.iter().skip(1) {
        let content = line.iter().skip_while(|&&c| py_isspace(c)).count();
        if content > 0 {
            margin = margin.min(line.len() - content);
        }
    }
    if let Some(first) = lines.first_mut() {
        let skip = first.iter().take_while(|&&c| py_isspace(c)).count();
        first.drain(..skip);
    }
    if margin < usize::MAX {
        for line in lines.iter_mut().skip(1) {
            let cut = margin.min(line.len());
            line.drain(..cut);
        }
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let leading = lines.iter().take_while(|l| l.is_empty()).count();
    lines.drain(..leading);
    lines
        .iter()
        .map(|l| l.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `len(s.splitlines())` with Python's line boundaries.
pub fn splitlines_count(s: &str) -> usize {
    let chars: Vec<char> = s.chars().collect();
    let mut count = 0;
    let mut i = 0;
    let mut line_has_content = false;
    while i < chars.len() {
        let c = chars[i];
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if is_break {
            count += 1;
            line_has_content = false;
            if c == '\r' && chars.get(i + 1) == Some(&'\n') {
                i += 1;
            }
        } else {
            line_has_content = true;
        }
        i += 1;
    }
    if line_has_content {
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_cleandoc_matches_cpython() {
        assert_eq!(cleandoc("\n    a\n      b\n    "), "a\n  b");
        assert_eq!(cleandoc("  x  "), "x  ");
        assert_eq!(cleandoc("a\n\tb"), "a\nb");
        assert_eq!(splitlines_count("a\nb\n"), 2);
        assert_eq!(splitlines_count("a\r\nb\x0cc"), 3);
        assert_eq!(splitlines_count(""), 0);
        assert_eq!(
            unescape("a\\nb\\\nc\\x41\\101\\N{LINE SEPARATOR}\\q"),
            "a\nbcAA\u{2028}\\q"
        );
    }

    #[test]
    fn docstring_of_a_body() {
        let src = "class A:\n    (\"\"\"One.\n\n    Two.\n    \"\"\" 'x')\n    y = 1\n";
        let tree = crate::tree::parse_tree(src);
        let class = tree.root_node().named_child(0).expect("a class");
        let body = class.child_by_field_name("body").expect("a body");
        let d = docstring(body, src.as_bytes()).expect("a docstring");
        assert_eq!((d.line, d.cleaned.as_str()), (2, "One.\n\nTwo.\nx"));
    }
}
