//! The one walk shared by the tree-sitter front ends: a [`Grammar`] says what a node
//! is ([`Visit`]) and which imports it holds; [`parse`] does the rest (qualified
//! names, parents, module-level flags, line numbers, the lines that hold code).

use tree_sitter::{Node, Parser};

use crate::definition::{Binding, DefKind, Definition, Import, ParsedFile};

/// A definition a grammar recognised at a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// What it is.
    pub kind: DefKind,
    /// Its bare name.
    pub name: String,
    /// The type it belongs to when that is not the enclosing definition (a Go
    /// method's receiver type, a JS `Type.prototype.m = function` assignment): its
    /// qualified name becomes `owner.name`.
    pub owner: Option<String>,
}

/// What a grammar makes of one node.
pub(crate) enum Visit {
    /// A definition: its span is the node's; its children are inside it.
    Def(Found),
    /// Nothing here; look at the children.
    Descend,
    /// Nothing here or below counts as a definition (an anonymous class body): the
    /// children are still read for imports and code lines.
    Opaque,
}

/// One language's tree-sitter grammar and the rules that read definitions and
/// imports from its trees. Implemented by each tree-sitter front end.
pub(crate) trait Grammar {
    /// The tree-sitter grammar.
    fn tree_sitter(&self) -> tree_sitter::Language;

    /// What `node` is; `scope` is the innermost enclosing definition.
    fn classify(&self, node: Node<'_>, src: &str, scope: Option<&Definition>) -> Visit;

    /// Appends the imports `node` makes, if it is an import (their lines are set by
    /// the walk: build them with [`import`]).
    fn imports(&self, node: Node<'_>, src: &str, out: &mut Vec<Import>);

    /// The names the definition at `node` inherits from (see [`Definition::bases`]);
    /// asked only of nodes [`Grammar::classify`] made definitions.
    fn bases(&self, _node: Node<'_>, _src: &str) -> Vec<String> {
        Vec::new()
    }

    /// The callee of `node`, as written, if `node` is a call or an instantiation (see
    /// [`Definition::calls`]).
    fn call(&self, _node: Node<'_>, _src: &str) -> Option<String> {
        None
    }

    /// Whether a node of this kind is a comment (its text is not code).
    fn is_comment(&self, kind: &str) -> bool {
        kind.ends_with("comment")
    }
}

/// The text of a node (empty if the span is not on character boundaries).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The text of `node`'s field `field`, if present.
pub(crate) fn field_text<'s>(node: Node<'_>, field: &str, src: &'s str) -> Option<&'s str> {
    node.child_by_field_name(field)
        .map(|n| text(n, src))
        .filter(|t| !t.is_empty())
}

/// The kind of `node`'s parent ("" at the root).
pub(crate) fn parent_kind(node: Node<'_>) -> &'static str {
    node.parent().map(|p| p.kind()).unwrap_or("")
}

/// 1-based first and last line of `node`. A node that ends at column 0 of a later row
/// (it took in a line break) ends on the row before.
pub(crate) fn lines(node: Node<'_>) -> (usize, usize) {
    let start = node.start_position().row;
    let end = node.end_position();
    let last = if end.column == 0 && end.row > start {
        end.row - 1
    } else {
        end.row
    };
    (start + 1, last + 1)
}

/// Parses `source` with `grammar` and reads its definitions, imports and code lines.
pub(crate) fn parse(grammar: &dyn Grammar, source: &str) -> ParsedFile {
    let mut parser = Parser::new();
    let tree = parser
        .set_language(&grammar.tree_sitter())
        .ok()
        .and_then(|()| parser.parse(source, None));
    let Some(tree) = tree else {
        // Only a grammar of an incompatible ABI gets here: nothing can be read.
        return ParsedFile {
            has_syntax_errors: true,
            ..ParsedFile::default()
        };
    };
    read(grammar, &tree, source)
}

/// Reads the definitions, imports and code lines of `tree`, a parse of `source` with
/// `grammar`'s grammar. Front ends that parse themselves (Python, whose parser
/// navbench-python owns) walk their one tree with this instead of parsing again.
pub(crate) fn read(grammar: &dyn Grammar, tree: &tree_sitter::Tree, source: &str) -> ParsedFile {
    let root = tree.root_node();
    let mut file = ParsedFile {
        has_syntax_errors: root.has_error(),
        code_lines: vec![false; root.end_position().row + 2],
        ..ParsedFile::default()
    };
    // (node, innermost enclosing definition, whether definitions may start here)
    let mut stack: Vec<(Node<'_>, Option<usize>, bool)> = vec![(root, None, true)];
    let mut found: Vec<Import> = Vec::new();
    while let Some((node, scope, defs_allowed)) = stack.pop() {
        if grammar.is_comment(node.kind()) {
            continue;
        }
        if node.child_count() == 0 {
            mark_code(node, &mut file.code_lines);
            continue;
        }
        grammar.imports(node, source, &mut found);
        if !found.is_empty() {
            let (start_line, end_line) = lines(node);
            file.imports.extend(found.drain(..).map(|i| Import {
                start_line,
                end_line,
                ..i
            }));
        }
        if let (Some(s), Some(callee)) = (scope, grammar.call(node, source)) {
            let calls = &mut file.definitions[s].calls;
            if !callee.is_empty() && !calls.contains(&callee) {
                calls.push(callee);
            }
        }
        let (mut inner, mut allowed) = (scope, defs_allowed);
        if defs_allowed {
            let visit = grammar.classify(node, source, scope.map(|i| &file.definitions[i]));
            match visit {
                Visit::Def(def_found) => {
                    inner = Some(file.definitions.len());
                    let mut def = definition(node, def_found, scope, &file.definitions);
                    for base in grammar.bases(node, source) {
                        if !base.is_empty() && !def.bases.contains(&base) {
                            def.bases.push(base);
                        }
                    }
                    file.definitions.push(def);
                }
                Visit::Opaque => allowed = false,
                Visit::Descend => {}
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, inner, allowed)));
    }
    file
}

/// Marks the rows a non-comment token covers as holding code.
fn mark_code(leaf: Node<'_>, code_lines: &mut [bool]) {
    if leaf.start_byte() == leaf.end_byte() {
        return; // a token tree-sitter inserted to recover from an error
    }
    let (start, end) = (leaf.start_position().row, leaf.end_position().row);
    for row in start..=end {
        if let Some(slot) = code_lines.get_mut(row + 1) {
            *slot = true;
        }
    }
}

/// Builds the definition for `found` at `node` inside `scope`.
fn definition(
    node: Node<'_>,
    found: Found,
    scope: Option<usize>,
    defs: &[Definition],
) -> Definition {
    let enclosing = scope.map(|i| &defs[i]);
    let container = match (&found.owner, enclosing) {
        (Some(owner), Some(e)) if e.kind != DefKind::Impl => {
            Some(format!("{}.{owner}", e.qualname))
        }
        (Some(owner), _) => Some(owner.clone()),
        (None, Some(e)) => Some(e.qualname.clone()),
        (None, None) => None,
    };
    // An `impl` block's name is its type's: inside a module it is `module.Type`.
    let qualname = match &container {
        Some(c) => format!("{c}.{}", found.name),
        None => found.name.clone(),
    };
    let in_function = ancestors(scope, defs).any(|d| d.kind.is_callable());
    let only_modules = ancestors(scope, defs).all(|d| d.kind == DefKind::Module);
    let module_level = match found.kind {
        k if k.is_type() => !in_function,
        DefKind::Function => only_modules,
        _ => false,
    };
    let (start_line, end_line) = lines(node);
    Definition {
        kind: found.kind,
        name: found.name,
        qualname,
        container,
        parent: scope,
        start_line,
        end_line,
        span: node.byte_range(),
        module_level,
        bases: Vec::new(),
        calls: Vec::new(),
    }
}

/// `scope` and its enclosing definitions, innermost first.
fn ancestors(scope: Option<usize>, defs: &[Definition]) -> impl Iterator<Item = &Definition> {
    std::iter::successors(scope.map(|i| &defs[i]), |d| d.parent.map(|p| &defs[p]))
}

/// What a front end found: a definition of `kind` named `name`, in the enclosing scope.
pub(crate) fn def(kind: DefKind, name: &str) -> Visit {
    def_owned(kind, name, None)
}

/// [`def`], attached to `owner` instead of the enclosing scope when given (a Go
/// method's receiver type).
pub(crate) fn def_owned(kind: DefKind, name: &str, owner: Option<String>) -> Visit {
    Visit::Def(Found {
        kind,
        name: name.to_string(),
        owner,
    })
}

/// An import of `module` binding `binds` (lines are set by the walk).
pub(crate) fn import(module: String, binds: Vec<Binding>) -> Import {
    Import {
        module,
        binds,
        start_line: 0,
        end_line: 0,
    }
}

/// A name path as written, without whitespace: `a.b`, `Foo::new`; `None` when `node`
/// is not one of `path_kinds` nor a leaf of `leaf_kinds` (a call, an index, a literal:
/// nothing a name can be read from). `join` is what separates a `field`/`property`
/// from its object.
pub(crate) fn dotted(node: Node<'_>, src: &str, leaf_kinds: &[&str]) -> Option<String> {
    let kind = node.kind();
    if leaf_kinds.contains(&kind) {
        let t: String = text(node, src).split_whitespace().collect();
        return (!t.is_empty()).then_some(t);
    }
    let (object, member, sep) = match kind {
        // TS/JS `a.b`, Go `a.b`, Java `a.b`, Rust `a.b`
        "member_expression" => ("object", "property", "."),
        "selector_expression" => ("operand", "field", "."),
        "field_access" => ("object", "field", "."),
        "field_expression" => ("value", "field", "."),
        "scoped_identifier" | "scoped_type_identifier" => ("path", "name", "::"),
        "nested_type_identifier" => ("module", "name", "."),
        "qualified_type" => ("package", "name", "."),
        "generic_type" | "generic_function" => {
            let inner = node
                .child_by_field_name("type")
                .or_else(|| node.child_by_field_name("function"))
                .or_else(|| node.child_by_field_name("name"))
                .or_else(|| node.named_child(0))?;
            return dotted(inner, src, leaf_kinds);
        }
        _ => return None,
    };
    let member = field_text(node, member, src)?;
    match node
        .child_by_field_name(object)
        .and_then(|o| dotted(o, src, leaf_kinds))
    {
        Some(o) => Some(format!("{o}{sep}{member}")),
        None => Some(member.to_string()),
    }
}
