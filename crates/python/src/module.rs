//! A Python file reduced to what localization needs: [`ParsedModule`].

use tree_sitter::Node;

use crate::definitions::{Entity, definitions};
use crate::imports::import_lines;
use crate::reject::rejection;
use crate::source::lone_cr_as_newline;
pub use crate::tree::LineRange;
use crate::tree::{ast_end, parse_tree};

/// A Python file's definitions, the order `ast.walk` reaches them, its import and
/// module-level assignment lines, and whether CPython 3.11 accepts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedModule {
    /// Every class and function, in source (pre-)order: a parent precedes its children.
    pub entities: Vec<Entity>,
    /// Indices into `entities` in the order Python's `ast.walk` (breadth first over the
    /// whole syntax tree) reaches them.
    pub walk_order: Vec<usize>,
    /// Why CPython 3.11's `ast.parse` would reject the file, if it would
    /// (see [`crate::reject`]).
    pub rejection: Option<String>,
    /// Every `import` / `from … import` statement anywhere in the file (`ast` ranges).
    pub imports: Vec<LineRange>,
    /// Module-level statement lines (`;`-joined simple statements count as one) whose
    /// first statement is an assignment or annotated assignment.
    pub top_level_assignments: Vec<LineRange>,
    /// Number of lines in the source (a final line without a newline counts).
    pub line_count: usize,
}

/// Parses Python source into a [`ParsedModule`].
///
/// Never fails: invalid source yields whatever tree-sitter recovered, with
/// [`ParsedModule::rejection`] set. Callers that need `ast.parse` semantics check it.
pub fn parse_module(source: &str) -> ParsedModule {
    let text = lone_cr_as_newline(source);
    let tree = parse_tree(&text);
    let root = tree.root_node();
    let defs = definitions(root, text.as_bytes());
    ParsedModule {
        entities: defs.entities,
        walk_order: defs.walk_order,
        rejection: rejection(root, &text),
        imports: import_lines(root),
        top_level_assignments: top_level_assignments(root),
        line_count: text.lines().count(),
    }
}

impl ParsedModule {
    /// Whether CPython 3.11's `ast.parse` would reject the file.
    pub fn has_syntax_errors(&self) -> bool {
        self.rejection.is_some()
    }

    /// The innermost entity whose `[start_line, end_line]` holds `line`.
    pub fn innermost_at(&self, line: usize) -> Option<&Entity> {
        // Ancestors precede descendants in pre-order, so the last hit is the innermost.
        self.entities.iter().rev().find(|e| e.contains_line(line))
    }
}

/// Module-level statement lines whose first statement is an (annotated) assignment,
/// the way libcst's `SimpleStatementLine` groups `;`-separated statements.
fn top_level_assignments(root: Node) -> Vec<LineRange> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let children: Vec<Node> = root.children(&mut cursor).collect();
    let mut i = 0;
    while i < children.len() {
        let first = children[i];
        if first.is_extra() || !first.is_named() {
            i += 1;
            continue;
        }
        // Extend over `; stmt` pairs that continue the same logical line.
        let mut last = first;
        let mut j = i + 1;
        while j + 1 < children.len() && children[j].kind() == ";" && children[j + 1].is_named() {
            let next = children[j + 1];
            if next.is_extra() || next.start_position().row != children[j].end_position().row {
                break;
            }
            last = next;
            j += 2;
        }
        let is_assignment = first.kind() == "expression_statement"
            && first.child(0).is_some_and(|c| c.kind() == "assignment");
        if is_assignment {
            out.push(LineRange {
                start: first.start_position().row + 1,
                end: ast_end(last).point.row + 1,
            });
        }
        i = j.max(i + 1);
    }
    out
}
