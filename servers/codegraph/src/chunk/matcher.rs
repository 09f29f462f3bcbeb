//! Which kind of code block a tree-sitter node opens, and where its children start.
//!
//! LocAgent's CodeBlock parser (a copy of moatless-tools') decides this with a list of
//! tree-sitter queries tried in order. What each query captures decides the block type, the
//! identifier node, the first child node (the block's own text ends right before it), an
//! optional last child node, and an optional "check child" (the node whose own match is
//! used, e.g. the assignment inside an expression statement). This module re-states those
//! rules directly as code over the node's children; the observable result (block types,
//! identifiers and block boundaries) is what the chunk boundaries depend on.

use tree_sitter::Node;

/// Block types of the CodeBlock model (the subset Python produces).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockType {
    /// The file.
    Module,
    /// `class` definition.
    Class,
    /// `def` definition.
    Function,
    /// A function named `__init__`.
    Constructor,
    /// `import`/`from … import`.
    Import,
    /// `if`/`for`/`while`/`with`/`match`.
    Compound,
    /// `elif`/`else`/`except`/`finally`.
    DependentClause,
    /// An assignment with a simple target.
    Assignment,
    /// A call of a name or attribute.
    Call,
    /// `return …`, `try`, and other statements with a body.
    Statement,
    /// Anything else.
    Code,
    /// Trailing whitespace of the file.
    Space,
    /// A comment or a leading string expression.
    Comment,
    /// A comment that stands for omitted code (`# ...`, "existing code", …).
    CommentedOutCode,
    /// A node tree-sitter could not parse.
    Error,
}

impl BlockType {
    /// Whether the type belongs to the "structure" group (module, class, function).
    pub fn is_structure(self) -> bool {
        matches!(
            self,
            BlockType::Module | BlockType::Class | BlockType::Function | BlockType::Constructor
        )
    }

    /// Whether the type belongs to the "comment" group.
    pub fn is_comment_group(self) -> bool {
        matches!(self, BlockType::Comment | BlockType::CommentedOutCode)
    }

    /// Short name, for debugging dumps (the original's enum member name).
    pub fn name(self) -> &'static str {
        match self {
            BlockType::Module => "MODULE",
            BlockType::Class => "CLASS",
            BlockType::Function => "FUNCTION",
            BlockType::Constructor => "CONSTRUCTOR",
            BlockType::Import => "IMPORT",
            BlockType::Compound => "COMPOUND",
            BlockType::DependentClause => "DEPENDENT_CLAUSE",
            BlockType::Assignment => "ASSIGNMENT",
            BlockType::Call => "CALL",
            BlockType::Statement => "STATEMENT",
            BlockType::Code => "CODE",
            BlockType::Space => "SPACE",
            BlockType::Comment => "COMMENT",
            BlockType::CommentedOutCode => "COMMENTED_OUT_CODE",
            BlockType::Error => "ERROR",
        }
    }
}

/// The outcome of matching one node.
#[derive(Debug, Clone, Copy)]
pub struct NodeMatch<'t> {
    /// Type of the block the node opens.
    pub block_type: BlockType,
    /// Node whose text is the block's identifier (e.g. a function's name).
    pub identifier: Option<Node<'t>>,
    /// First child node; the block's own text ends right before it.
    pub first_child: Option<Node<'t>>,
    /// Last child node, when the children stop before the node's end.
    pub last_child: Option<Node<'t>>,
    /// The inner node whose match this is (a decorated definition's definition, an
    /// expression statement's expression); the child walk stops at its end.
    pub check_child: Option<Node<'t>>,
}

impl<'t> NodeMatch<'t> {
    fn of(block_type: BlockType) -> Self {
        NodeMatch {
            block_type,
            identifier: None,
            first_child: None,
            last_child: None,
            check_child: None,
        }
    }

    fn with_first(block_type: BlockType, first_child: Option<Node<'t>>) -> Self {
        NodeMatch {
            first_child,
            ..NodeMatch::of(block_type)
        }
    }

    /// The match used for nodes that are, or directly contain, a parse error.
    pub fn error() -> Self {
        NodeMatch::of(BlockType::Error)
    }
}

fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

fn first_named_child(node: Node<'_>) -> Option<Node<'_>> {
    node.named_child(0)
}

fn last_named_child(node: Node<'_>) -> Option<Node<'_>> {
    let n = node.named_child_count();
    if n == 0 {
        None
    } else {
        node.named_child(n - 1)
    }
}

/// The first direct child of kind `kind` at or after index `from`.
fn find_kind_from<'t>(kids: &[Node<'t>], from: usize, kind: &str) -> Option<(usize, Node<'t>)> {
    kids.iter()
        .enumerate()
        .skip(from)
        .find(|(_, k)| k.kind() == kind)
        .map(|(i, k)| (i, *k))
}

/// The next named sibling (in `kids`) after index `i`, with its index.
fn next_named<'t>(kids: &[Node<'t>], i: usize) -> Option<(usize, Node<'t>)> {
    kids.iter()
        .enumerate()
        .skip(i + 1)
        .find(|(_, k)| k.is_named())
        .map(|(i, k)| (i, *k))
}

/// Matches `node` against the rules, in the original's query order. Returns `None` when
/// nothing matches (the caller then makes a plain CODE block).
pub fn find_match(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let specific = match node.kind() {
        "module" => {
            first_named_child(node).map(|c| NodeMatch::with_first(BlockType::Module, Some(c)))
        }
        "decorated_definition" => match_decorated(node),
        "class_definition" => match_class(node),
        "function_definition" => match_function(node),
        "comment" => Some(NodeMatch::of(BlockType::Comment)),
        "import_statement" => match_import(node),
        "import_from_statement" => match_import_from(node),
        "future_import_statement" => Some(NodeMatch::of(BlockType::Import)),
        "assignment" => match_assignment(node),
        "call" => match_call(node),
        "expression_statement" => match_expression_statement(node),
        "return_statement" => match_return(node),
        "if_statement" | "for_statement" | "while_statement" | "with_statement"
        | "match_statement" => match_colon_block(node, BlockType::Compound),
        "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
            match_colon_block(node, BlockType::DependentClause)
        }
        _ => None,
    };
    specific
        .or_else(|| match_generic_colon(node))
        .or_else(|| match_generic_block(node))
}

/// `(decorated_definition [(function_definition) (class_definition)] @check_child)`: the
/// definition's own match, remembering the definition as the check child.
fn match_decorated(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let def = children(node)
        .into_iter()
        .find(|c| matches!(c.kind(), "function_definition" | "class_definition"))?;
    let mut m = find_match(def)?;
    m.check_child = Some(def);
    Some(m)
}

/// A class: with a comment right before its body (`class A:  # note`) the comment is the
/// first child and the body's last statement the last child; otherwise the body's first
/// statement is the first child.
fn match_class(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    let (id_idx, ident) = find_kind_from(&kids, 0, "identifier")?;
    // Pattern 1: (identifier) (comment) . (block (_) @child.last .)
    for (i, k) in kids.iter().enumerate().skip(id_idx + 1) {
        if k.kind() == "comment"
            && let Some((_, b)) = next_named(&kids, i)
            && b.kind() == "block"
            && let Some(last) = last_named_child(b)
        {
            return Some(NodeMatch {
                block_type: BlockType::Class,
                identifier: Some(ident),
                first_child: Some(*k),
                last_child: Some(last),
                check_child: None,
            });
        }
    }
    // Pattern 2: (identifier) (argument_list)? (":") (block . (_) @child.first)
    let (colon_idx, _) = find_kind_from(&kids, id_idx + 1, ":")?;
    let (_, block) = find_kind_from(&kids, colon_idx + 1, "block")?;
    let first = first_named_child(block)?;
    Some(NodeMatch {
        block_type: BlockType::Class,
        identifier: Some(ident),
        first_child: Some(first),
        last_child: None,
        check_child: None,
    })
}

/// A function: a comment right after the colon is the first child, else the body's first
/// statement.
fn match_function(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    let (id_idx, ident) = find_kind_from(&kids, 0, "identifier")?;
    let (params_idx, _) = find_kind_from(&kids, id_idx + 1, "parameters")?;
    let (colon_idx, _) = find_kind_from(&kids, params_idx + 1, ":")?;
    let (after_idx, after) = next_named(&kids, colon_idx)?;
    let first = if after.kind() == "comment" {
        // ((comment)? @child.first (block (_))): needs a later non-empty block.
        let (_, block) = find_kind_from(&kids, after_idx + 1, "block")?;
        first_named_child(block)?;
        after
    } else if after.kind() == "block" {
        first_named_child(after)?
    } else {
        return None;
    };
    Some(NodeMatch {
        block_type: BlockType::Function,
        identifier: Some(ident),
        first_child: Some(first),
        last_child: None,
        check_child: None,
    })
}

/// `import a.b`, `import a as b`: the identifier is the first imported name (the alias when
/// aliased).
fn match_import(node: Node<'_>) -> Option<NodeMatch<'_>> {
    for k in children(node) {
        match k.kind() {
            "dotted_name" => {
                return Some(NodeMatch {
                    identifier: Some(k),
                    ..NodeMatch::of(BlockType::Import)
                });
            }
            "aliased_import" => {
                let kk = children(k);
                if let Some((i, _)) = find_kind_from(&kk, 0, "dotted_name")
                    && let Some((_, alias)) = find_kind_from(&kk, i + 1, "identifier")
                {
                    return Some(NodeMatch {
                        identifier: Some(alias),
                        ..NodeMatch::of(BlockType::Import)
                    });
                }
            }
            _ => {}
        }
    }
    None
}

/// `from .x import a` (identifier `a`, the first plain name) or `from x import …` (no
/// identifier). Relative imports of only aliased names or `*` match neither.
fn match_import_from(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    let (from_idx, _) = find_kind_from(&kids, 0, "from")?;
    let (_, module) = next_named(&kids, from_idx)?;
    match module.kind() {
        "relative_import" => {
            let (import_idx, _) = find_kind_from(&kids, from_idx + 1, "import")?;
            let (_, name) = find_kind_from(&kids, import_idx + 1, "dotted_name")?;
            Some(NodeMatch {
                identifier: Some(name),
                ..NodeMatch::of(BlockType::Import)
            })
        }
        "dotted_name" => {
            find_kind_from(&kids, from_idx + 1, "import")?;
            Some(NodeMatch::of(BlockType::Import))
        }
        _ => None,
    }
}

/// `name = value` / `obj.attr = value` (optionally annotated): the target is the
/// identifier and the value, when present, the first child.
fn match_assignment(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let left = node.child_by_field_name("left")?;
    if !matches!(left.kind(), "identifier" | "attribute") {
        return None;
    }
    let right = node.child_by_field_name("right");
    Some(NodeMatch {
        block_type: BlockType::Assignment,
        identifier: Some(left),
        first_child: right.filter(|r| r.is_named()),
        last_child: None,
        check_child: None,
    })
}

/// A call of a name or attribute with an argument list.
fn match_call(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    let f = kids
        .iter()
        .position(|k| matches!(k.kind(), "identifier" | "attribute"))?;
    find_kind_from(&kids, f + 1, "argument_list")?;
    Some(NodeMatch::of(BlockType::Call))
}

/// A leading plain string is a comment (docstring); otherwise the statement takes the
/// match of its first named child.
fn match_expression_statement(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let first = first_named_child(node)?;
    if first.kind() == "string" {
        let kk = children(first);
        if let Some((s, _)) = find_kind_from(&kk, 0, "string_start")
            && let Some((c, _)) = find_kind_from(&kk, s + 1, "string_content")
            && find_kind_from(&kk, c + 1, "string_end").is_some()
        {
            return Some(NodeMatch::of(BlockType::Comment));
        }
    }
    let mut m = find_match(first)?;
    m.check_child = Some(first);
    Some(m)
}

/// `return value`: a statement whose child is the value.
fn match_return(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    let (ret_idx, _) = find_kind_from(&kids, 0, "return")?;
    let (_, value) = next_named(&kids, ret_idx)?;
    Some(NodeMatch::with_first(BlockType::Statement, Some(value)))
}

/// `(X (":") (block . (_) @child.first))`.
fn match_colon_block(node: Node<'_>, block_type: BlockType) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    let (colon_idx, _) = find_kind_from(&kids, 0, ":")?;
    let (_, block) = find_kind_from(&kids, colon_idx + 1, "block")?;
    let first = first_named_child(block)?;
    Some(NodeMatch::with_first(block_type, Some(first)))
}

/// `(_ (":") . (_) @child.first (block . (_)))`: a named node right after a colon (e.g. a
/// trailing comment) followed later by a non-empty block.
fn match_generic_colon(node: Node<'_>) -> Option<NodeMatch<'_>> {
    let kids = children(node);
    for (i, k) in kids.iter().enumerate() {
        if k.kind() != ":" || k.is_named() {
            continue;
        }
        if let Some((j, x)) = next_named(&kids, i)
            && kids
                .iter()
                .skip(j + 1)
                .any(|b| b.kind() == "block" && b.named_child_count() > 0)
        {
            return Some(NodeMatch::with_first(BlockType::Statement, Some(x)));
        }
    }
    None
}

/// `(_ (block . (_) @child.first))`: any node with a non-empty block.
fn match_generic_block(node: Node<'_>) -> Option<NodeMatch<'_>> {
    children(node)
        .into_iter()
        .filter(|k| k.kind() == "block")
        .find_map(first_named_child)
        .map(|first| NodeMatch::with_first(BlockType::Statement, Some(first)))
}
