//! `get_skeleton` (SPEC.md §4.6, `plugins/location_tools/utils/compress_file.py`): the
//! structure of a large class or file, as the original's libcst transformer
//! prints it, reproduced on a tree-sitter tree.
//!
//! - Module level: only class and function definitions (decorators included) and
//!   simple-statement lines whose first statement is a plain assignment (`x = ...`,
//!   not annotated or augmented) are kept. Comments and blank lines before the
//!   first statement (libcst's module header) and after the last one (its footer)
//!   are kept; the lines before a dropped statement go with it.
//! - Class bodies: every statement except bare string-literal expressions
//!   (docstrings, wherever they are) is kept; a body left empty prints `pass`.
//!   The class header's trailing comment and comments after the last statement
//!   are dropped (libcst rebuilds the block).
//! - Every function body, at any depth, becomes `...` on its own line, indented by
//!   the function's indentation plus the file's first indentation unit.
//! - Text that tree-sitter cannot parse cleanly is returned unchanged (libcst's
//!   parse failure).

use navbench_python::tree::{definition_of, preorder};
use tree_sitter::Node;

/// The skeleton of `code` (a class's or a file's source).
pub fn skeleton(code: &str) -> String {
    let tree = navbench_python::parse_tree(code);
    let root = tree.root_node();
    if root.has_error() {
        return code.to_string();
    }
    let mut r = Renderer::new(code, root);
    r.module(root);
    if !code.ends_with('\n') && !r.ends_with_body && r.out.ends_with('\n') {
        r.out.pop();
    }
    r.out
}

struct Renderer<'s> {
    src: &'s str,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    /// libcst's `default_indent`: the first indentation in the file.
    indent_unit: String,
    out: String,
    /// True when the last thing written was a replaced function body.
    ends_with_body: bool,
}

/// Statement children of a module or block (comments are not statements).
fn statements<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// The `:` ending a definition's header (the last `:` before its body).
fn header_colon<'t>(def: Node<'t>, body: Node<'t>) -> Option<Node<'t>> {
    let mut cursor = def.walk();
    def.children(&mut cursor)
        .take_while(|c| c.id() != body.id())
        .filter(|c| c.kind() == ":")
        .last()
}

impl<'s> Renderer<'s> {
    fn new(src: &'s str, root: Node<'_>) -> Renderer<'s> {
        let mut line_starts = vec![0];
        line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        let mut r = Renderer {
            src,
            line_starts,
            indent_unit: String::from("    "),
            out: String::new(),
            ends_with_body: false,
        };
        if let Some(unit) = r.first_indent(root) {
            r.indent_unit = unit;
        }
        r
    }

    /// The whitespace before the first statement of the first block that starts
    /// on its own line.
    fn first_indent(&self, root: Node<'_>) -> Option<String> {
        let mut found = None;
        preorder(root, |n| {
            if found.is_some() {
                return false;
            }
            if n.kind() == "block"
                && let Some(first) = statements(n).first()
            {
                let row = first.start_position().row;
                let prev_row = n.prev_sibling().map(|p| p.end_position().row);
                if prev_row.is_some_and(|p| p < row) {
                    found = Some(self.indent_of(row));
                    return false;
                }
            }
            true
        });
        found.filter(|s| !s.is_empty())
    }

    fn line_start(&self, row: usize) -> usize {
        self.line_starts.get(row).copied().unwrap_or(self.src.len())
    }

    /// Offset just past the end of `row` (after its newline, if any).
    fn line_end(&self, row: usize) -> usize {
        self.line_starts
            .get(row + 1)
            .copied()
            .unwrap_or(self.src.len())
    }

    fn text(&self, start: usize, end: usize) -> &'s str {
        self.src.get(start..end.max(start)).unwrap_or("")
    }

    fn indent_of(&self, row: usize) -> String {
        let line = self.text(self.line_start(row), self.line_end(row));
        line.chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }

    fn emit(&mut self, s: &str) {
        if !s.is_empty() {
            self.out.push_str(s);
            self.ends_with_body = false;
        }
    }

    /// Emits whole lines `from..to` (exclusive), as leading lines of a statement
    /// at `indent` width, dropping the deeper-indented comments that libcst gives
    /// to the previous block's footer when `after_block`.
    fn leading(&mut self, from: usize, to: usize, indent: usize, after_block: bool) {
        let mut from = from;
        if after_block {
            let mut last_deeper = None;
            for row in from..to {
                let line = self.text(self.line_start(row), self.line_end(row));
                let trimmed = line.trim_start_matches([' ', '\t']);
                if trimmed.starts_with('#') && line.len() - trimmed.len() > indent {
                    last_deeper = Some(row);
                }
            }
            if let Some(row) = last_deeper {
                from = row + 1;
            }
        }
        if from < to {
            let s = self.text(self.line_start(from), self.line_start(to));
            self.emit(s);
        }
    }

    fn module(&mut self, root: Node<'_>) {
        let stmts = statements(root);
        let Some(first) = stmts.first() else {
            self.emit(self.src);
            return;
        };
        self.emit(self.text(0, self.line_start(first.start_position().row)));
        let mut prev: Option<(usize, bool)> = None; // (end row, was compound)
        for s in &stmts {
            let row = s.start_position().row;
            if let Some((end, compound)) = prev
                && row <= end
            {
                // another statement on the same line: part of the previous one
                prev = Some((end.max(s.end_position().row), compound));
                continue;
            }
            if keep_at_module_level(*s) {
                if let Some((end, compound)) = prev {
                    self.leading(end + 1, row, s.start_position().column, compound);
                }
                self.statement(*s);
            }
            prev = Some((s.end_position().row, is_compound(*s)));
        }
        if let Some((end, _)) = prev {
            let footer = self.text(self.line_end(end), self.src.len());
            self.emit(footer);
        }
    }

    fn statement(&mut self, s: Node<'_>) {
        let def = definition_of(s).unwrap_or(s);
        match def.kind() {
            "function_definition" => self.function(s, def),
            "class_definition" => self.class(s, def),
            _ => self.generic(s),
        }
    }

    /// A definition's header up to its `:`, from the first line of `outer`
    /// (decorators included). Returns the header's last row.
    fn header(&mut self, outer: Node<'_>, def: Node<'_>, body: Node<'_>) -> usize {
        let end = header_colon(def, body).map_or(body.start_byte(), |c| c.end_byte());
        let row =
            header_colon(def, body).map_or(body.start_position().row, |c| c.end_position().row);
        let text = self.text(self.line_start(outer.start_position().row), end);
        self.emit(text);
        self.emit("\n");
        row
    }

    fn function(&mut self, outer: Node<'_>, def: Node<'_>) {
        let Some(body) = def.child_by_field_name("body") else {
            return self.generic(outer);
        };
        self.header(outer, def, body);
        let indent = self.indent_of(outer.start_position().row);
        let line = format!("{indent}{}...\n", self.indent_unit);
        self.emit(&line);
        self.ends_with_body = true;
    }

    fn class(&mut self, outer: Node<'_>, def: Node<'_>) {
        let Some(body) = def.child_by_field_name("body") else {
            return self.generic(outer);
        };
        let header_row = self.header(outer, def, body);
        let indent = format!(
            "{}{}",
            self.indent_of(outer.start_position().row),
            self.indent_unit
        );
        let stmts = statements(body);
        let mut prev: Option<(usize, bool)> = None;
        let mut kept = 0;
        for s in &stmts {
            let row = s.start_position().row;
            if let Some((end, compound)) = prev
                && row <= end
            {
                prev = Some((end.max(s.end_position().row), compound));
                continue;
            }
            if !is_docstring(*s) {
                kept += 1;
                if row == header_row {
                    // one-line body (`class A: x = 1`): libcst re-indents it
                    let line = format!(
                        "{indent}{}\n",
                        self.text(s.start_byte(), body.end_byte()).trim()
                    );
                    self.emit(&line);
                    return;
                }
                let (from, after_block) = prev.map_or((header_row + 1, false), |(e, c)| (e + 1, c));
                self.leading(from, row, s.start_position().column, after_block);
                self.statement(*s);
            }
            prev = Some((s.end_position().row, is_compound(*s)));
        }
        if kept == 0 {
            let line = format!("{indent}pass\n");
            self.emit(&line);
        }
    }

    /// Any other statement: its lines as written, with nested definitions rendered
    /// by the rules above.
    fn generic(&mut self, s: Node<'_>) {
        let start = self.line_start(s.start_position().row);
        let end = self.line_end(s.end_position().row);
        let mut nested: Vec<Node<'_>> = Vec::new();
        preorder(s, |n| {
            if n.id() == s.id() {
                return true;
            }
            match n.kind() {
                "decorated_definition" | "function_definition" | "class_definition" => {
                    nested.push(n);
                    false
                }
                _ => true,
            }
        });
        let mut cursor = start;
        for n in nested {
            let from = self.line_start(n.start_position().row);
            if from < cursor {
                continue;
            }
            self.emit(self.text(cursor, from));
            self.statement(n);
            cursor = self.line_end(n.end_position().row);
        }
        let rest = self.text(cursor, end);
        self.emit(rest);
        if !self.out.ends_with('\n') && !self.out.is_empty() {
            self.emit("\n");
        }
    }
}

/// Module-level filter: definitions and plain assignments.
fn keep_at_module_level(s: Node<'_>) -> bool {
    match s.kind() {
        "function_definition" | "class_definition" | "decorated_definition" => true,
        "expression_statement" => s
            .named_child(0)
            .is_some_and(|c| c.kind() == "assignment" && c.child_by_field_name("type").is_none()),
        _ => false,
    }
}

/// A statement line that is just a plain (non-f) string literal.
fn is_docstring(s: Node<'_>) -> bool {
    if s.kind() != "expression_statement" || s.named_child_count() != 1 {
        return false;
    }
    let Some(c) = s.named_child(0) else {
        return false;
    };
    if c.kind() != "string" {
        return false;
    }
    let mut cursor = c.walk();
    let is_f = c.children(&mut cursor).any(|p| p.kind() == "interpolation");
    !is_f
}

/// Statements with a body block.
fn is_compound(s: Node<'_>) -> bool {
    let mut cursor = s.walk();
    let has_block = definition_of(s)
        .unwrap_or(s)
        .children(&mut cursor)
        .any(|c| c.kind() == "block");
    has_block
        || matches!(
            s.kind(),
            "if_statement"
                | "for_statement"
                | "while_statement"
                | "try_statement"
                | "with_statement"
                | "match_statement"
        )
}

#[cfg(test)]
mod tests {
    use super::skeleton;

    #[test]
    fn skeleton_of_the_originals_example() {
        // The example in compress_file.py, with libcst's output.
        let code = "\n\"\"\"\nthis is a module\n...\n\"\"\"\nconst = {1,2,3}\nimport os\n\nclass fooClass:\n    '''this is a class'''\n\n    def __init__(self, x):\n        '''initialization.'''\n        self.x = x\n\n    def print(self):\n        print(self.x)\n\ndef test():\n    a = fooClass(3)\n    a.print()\n\n";
        let want = "\nconst = {1,2,3}\n\nclass fooClass:\n\n    def __init__(self, x):\n        ...\n\n    def print(self):\n        ...\n\ndef test():\n    ...\n\n";
        assert_eq!(skeleton(code), want);
    }

    #[test]
    fn class_code_without_trailing_newline() {
        let code = "class A(B):\n    \"\"\"Doc.\"\"\"\n    x = 1\n\n    @property\n    def f(self):  # c\n        return 1";
        assert_eq!(
            skeleton(code),
            "class A(B):\n    x = 1\n\n    @property\n    def f(self):\n        ...\n"
        );
        assert_eq!(skeleton("class A:\n    x = 1"), "class A:\n    x = 1");
        assert_eq!(skeleton("class A:\n    'doc'"), "class A:\n    pass");
    }

    #[test]
    fn unparsable_code_is_returned_unchanged() {
        assert_eq!(skeleton("def (:\n"), "def (:\n");
    }

    #[test]
    fn module_drops_imports_ifs_and_annotations() {
        let code = "#!/usr/bin/env python\n# header\nimport os\nx: int = 1\ny = 2\nif True:\n    z = 3\nasync def g():\n    await h()\n";
        assert_eq!(
            skeleton(code),
            "#!/usr/bin/env python\n# header\ny = 2\nasync def g():\n    ...\n"
        );
    }
}
