//! The tree-sitter layer: parsing, node helpers, traversals, and where Python's `ast`
//! ends a node.
//!
//! Traversals never recurse (deep expression chains must not overflow the stack).
//! [`Kind`] classifies the node kinds the crate and its consumers branch on, through a
//! table built once from the grammar (cheaper than comparing kind strings per node).

use std::cell::RefCell;
use std::sync::OnceLock;

use tree_sitter::{Node, Point, TreeCursor};

/// Parses Python source into a tree-sitter tree.
///
/// tree-sitter always produces a tree, even for invalid input (with `ERROR` nodes);
/// [`crate::reject::rejection`] says whether CPython would accept the source.
///
/// Each thread keeps one parser for all its parses: making a parser (its stacks and
/// lexer) is a few percent of parsing a typical file.
pub fn parse_tree(source: &str) -> tree_sitter::Tree {
    thread_local! {
        static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
    }
    PARSER.with(|cell| {
        // Taken out while parsing, so a re-entrant call (there is none) would make a
        // parser of its own rather than fail.
        let mut parser = cell.borrow_mut().take().unwrap_or_else(new_parser);
        let tree = parser
            .parse(source, None)
            .expect("parsing without a timeout or cancellation flag always yields a tree");
        *cell.borrow_mut() = Some(parser);
        tree
    })
}

/// A parser for the bundled Python grammar.
fn new_parser() -> tree_sitter::Parser {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("the bundled tree-sitter-python grammar matches the tree-sitter ABI");
    parser
}

/// Visits `root` and its descendants in pre-order without recursion (deep
/// expression chains must not overflow the stack). `visit` returns whether to
/// descend into the node's children.
pub fn preorder<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
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

/// An inclusive range of 1-based lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    /// First line.
    pub start: usize,
    /// Last line (inclusive).
    pub end: usize,
}

impl LineRange {
    /// Whether `line` lies in the range.
    pub fn contains(&self, line: usize) -> bool {
        self.start <= line && line <= self.end
    }
}

/// The text of a node.
pub fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// All children of `node` (in linear time: `Node::child(i)` is O(i)).
pub fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// The children of a node, in order, read with a cursor of their own: no list is
/// collected, so a check that stops at the first match (`any`, `find`) costs only the
/// children it reads. Made by [`child_iter`].
pub struct ChildIter<'t> {
    cursor: TreeCursor<'t>,
    /// Whether the cursor stands on a child already (else on the parent).
    started: bool,
    done: bool,
}

impl<'t> Iterator for ChildIter<'t> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        if self.done {
            return None;
        }
        let moved = if self.started {
            self.cursor.goto_next_sibling()
        } else {
            self.started = true;
            self.cursor.goto_first_child()
        };
        if moved {
            Some(self.cursor.node())
        } else {
            self.done = true;
            None
        }
    }
}

/// The children of `node`, lazily (see [`ChildIter`]).
pub fn child_iter(node: Node<'_>) -> ChildIter<'_> {
    ChildIter {
        cursor: node.walk(),
        started: false,
        done: false,
    }
}

/// Named children of `node` that are not comments, lazily.
pub fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    child_iter(node).filter(|c| c.is_named() && c.kind() != "comment")
}

/// Strips parentheses the way `ast` does: `(f)` is just `f`.
pub fn unparenthesize(mut node: Node<'_>) -> Node<'_> {
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
pub fn name_or_attr<'s>(expr: Node<'_>, src: &'s str) -> Option<&'s str> {
    let expr = unparenthesize(expr);
    match expr.kind() {
        "identifier" => Some(text(expr, src)),
        "attribute" => expr.child_by_field_name("attribute").map(|a| text(a, src)),
        _ => None,
    }
}

/// For a `call` node: the callee name LocAgent records (`Name.id` or
/// `Attribute.attr`), or `None` for subscripts, calls of calls, lambdas, ...
pub fn call_name<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    call.child_by_field_name("function")
        .and_then(|f| name_or_attr(f, src))
}

/// For a `call` node whose callee is a plain `Name` (after removing parentheses):
/// that name.
pub fn call_plain_name<'s>(call: Node<'_>, src: &'s str) -> Option<&'s str> {
    let f = unparenthesize(call.child_by_field_name("function")?);
    (f.kind() == "identifier").then(|| text(f, src))
}

/// Where Python's `ast` ends a node (`end_lineno`, `end_col_offset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AstEnd {
    /// Byte offset just past the node's last token.
    pub byte: usize,
    /// Position just past the node's last token (0-based row).
    pub point: Point,
}

/// Where `ast` ends this node: the end of its last token that is not a comment or a
/// line continuation. tree-sitter lets a block swallow trailing comments; `ast`'s
/// `end_lineno`/`end_col_offset` never include them.
pub fn ast_end(node: Node<'_>) -> AstEnd {
    // Down the last child that is a real token or holds one, from the end backwards
    // (one cursor, no list of children per level).
    let mut cursor = node.walk();
    'down: loop {
        if cursor.goto_last_child() {
            loop {
                let child = cursor.node();
                if !child.is_extra() && child.start_byte() != child.end_byte() {
                    continue 'down;
                }
                if !cursor.goto_previous_sibling() {
                    break;
                }
            }
            cursor.goto_parent();
        }
        let cur = cursor.node();
        return AstEnd {
            byte: cur.end_byte(),
            point: cur.end_position(),
        };
    }
}

/// The 0-based row of the last line holding part of `node`, as tree-sitter ends it (a
/// node ending with its newline ends at column 0 of the next row). Unlike [`ast_end`],
/// trailing comments a block swallows count: this is where a text chunk of the node
/// ends, not where `ast` ends it.
pub fn last_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// The `def` or `class` of a definition statement: `node` itself, or the definition a
/// `decorated_definition` wraps; `None` for any other node.
pub fn definition_of(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "function_definition" | "class_definition" => Some(node),
        "decorated_definition" => node.child_by_field_name("definition"),
        _ => None,
    }
}

/// True for `async def` (tree-sitter puts the `async` keyword inside
/// `function_definition`).
pub fn is_async_def(def: Node<'_>) -> bool {
    def.child(0).is_some_and(|c| c.kind() == "async")
}

/// The node kinds the crate and its consumers distinguish (one variant per grammar
/// kind of the same name); everything else is `Other`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
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
    ArgumentList,
}

impl Kind {
    /// True for import statements.
    pub fn is_import(self) -> bool {
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
                    "argument_list" => Kind::ArgumentList,
                    _ => Kind::Other,
                }
            })
            .collect()
    })
}

/// The [`Kind`] of a node.
pub fn kind(node: Node<'_>) -> Kind {
    kind_table()
        .get(node.kind_id() as usize)
        .copied()
        .unwrap_or(Kind::Other)
}

/// A tree visitor for [`walk`].
pub trait Visitor<'t> {
    /// Called in pre-order; returns whether to descend into the node's children.
    fn enter(&mut self, node: Node<'t>) -> bool;
    /// Called after the node's children (also for nodes not descended into).
    fn exit(&mut self, node: Node<'t>);
}

/// Walks `root`'s subtree with a cursor, calling the visitor on entry and exit.
pub fn walk<'t>(root: Node<'t>, v: &mut impl Visitor<'t>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ast_end_ignores_trailing_comments() {
        let src = "def f():\n    x = 1\n    # trailing\n\n    # more\ny = 2\n";
        let tree = parse_tree(src);
        let def = tree.root_node().named_child(0).expect("a def");
        assert_eq!(def.kind(), "function_definition");
        assert_eq!(ast_end(def).point.row + 1, 2);
        assert_eq!(
            &src[def.start_byte()..ast_end(def).byte],
            "def f():\n    x = 1"
        );
    }

    #[test]
    fn preorder_visits_every_node_once_in_source_order() {
        let tree = parse_tree("a = f(b)\n");
        let mut kinds = Vec::new();
        preorder(tree.root_node(), |n| {
            if n.is_named() {
                kinds.push(n.kind());
            }
            true
        });
        assert_eq!(
            kinds,
            [
                "module",
                "expression_statement",
                "assignment",
                "identifier",
                "call",
                "identifier",
                "argument_list",
                "identifier"
            ]
        );
    }

    #[test]
    fn last_row_keeps_swallowed_comments_and_drops_the_final_newline() {
        let src = "@dec\ndef f():\n    return 1\n    # trailing\n\nx = 1\n";
        let tree = parse_tree(src);
        let stmt = tree
            .root_node()
            .named_child(0)
            .expect("decorated definition");
        let def = definition_of(stmt).expect("a definition");
        assert_eq!(def.kind(), "function_definition");
        assert_eq!(def.start_position().row, 1);
        // tree-sitter's block ends after the comment; `ast` ends at `return 1`.
        assert_eq!(last_row(def), 3);
        assert_eq!(ast_end(def).point.row, 2);
        let assign = tree.root_node().named_child(1).expect("assignment");
        assert_eq!(definition_of(assign), None);
        assert_eq!(last_row(assign), 5);
    }
}
