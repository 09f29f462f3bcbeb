//! Import statements: where they are, and what they import.

use tree_sitter::Node;

use crate::tree::LineRange;
use crate::tree::{Kind, ast_end, kind, named_children, preorder, text};

/// What one `import` / `from … import` statement imports, as `ast` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// `Some(module)` for `from module import …` (`__future__` for future imports;
    /// `None` for `from . import x`); `None` for a plain `import`.
    pub module: Option<String>,
    /// Leading dots of a relative `from` import (0 when absolute).
    pub level: usize,
    /// `(dotted name, alias)` per imported name; empty for `from M import *`.
    pub names: Vec<(String, Option<String>)>,
    /// `from M import *`.
    pub star: bool,
    /// True for `from …` and `from __future__` imports.
    pub is_from: bool,
}

/// Whether `node` is an import statement (plain, `from`, or `from __future__`).
pub fn is_import(node: Node<'_>) -> bool {
    kind(node).is_import()
}

/// Reads an import statement; `None` for any other node.
pub fn import_of(stmt: Node<'_>, src: &str) -> Option<Import> {
    let dotted = |n: Node<'_>| -> String {
        named_children(n)
            .filter(|c| c.kind() == "identifier")
            .map(|c| text(c, src))
            .collect::<Vec<_>>()
            .join(".")
    };
    // (name, alias) of a `dotted_name` or `aliased_import` child.
    let name_alias = |n: Node<'_>| -> Option<(String, Option<String>)> {
        match n.kind() {
            "dotted_name" => Some((dotted(n), None)),
            "aliased_import" => {
                let name = dotted(n.child_by_field_name("name")?);
                let alias = n
                    .child_by_field_name("alias")
                    .map(|a| text(a, src).to_string());
                Some((name, alias))
            }
            _ => None,
        }
    };
    let names: Vec<(String, Option<String>)> = stmt
        .children_by_field_name("name", &mut stmt.walk())
        .filter_map(name_alias)
        .collect();
    match stmt.kind() {
        "import_statement" => Some(Import {
            module: None,
            level: 0,
            names,
            star: false,
            is_from: false,
        }),
        "future_import_statement" => Some(Import {
            module: Some("__future__".to_string()),
            level: 0,
            names,
            star: false,
            is_from: true,
        }),
        "import_from_statement" => {
            let module_node = stmt.child_by_field_name("module_name")?;
            let (level, module) = match module_node.kind() {
                "relative_import" => {
                    let level = named_children(module_node)
                        .find(|c| c.kind() == "import_prefix")
                        .map(|p| text(p, src).chars().filter(|c| *c == '.').count())
                        .unwrap_or(0);
                    let module = named_children(module_node)
                        .find(|c| c.kind() == "dotted_name")
                        .map(dotted);
                    (level, module)
                }
                _ => (0, Some(dotted(module_node))),
            };
            let star = named_children(stmt).any(|c| c.kind() == "wildcard_import");
            Some(Import {
                module,
                level,
                names: if star { Vec::new() } else { names },
                star,
                is_from: true,
            })
        }
        _ => None,
    }
}

/// The `ast` line range of every import statement anywhere in the tree, sorted.
pub fn import_lines(root: Node<'_>) -> Vec<LineRange> {
    let mut out = Vec::new();
    preorder(root, |node| {
        if kind(node) == Kind::StringContent {
            return false;
        }
        if kind(node).is_import() {
            out.push(LineRange {
                start: node.start_position().row + 1,
                end: ast_end(node).point.row + 1,
            });
            return false;
        }
        true
    });
    out.sort_by_key(|r| (r.start, r.end));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::parse_tree;

    #[test]
    fn reads_plain_from_relative_star_and_future_imports() {
        let src = "import a.b as c, d\nfrom ..p.q import (x as y, z)\nfrom . import *\nfrom __future__ import annotations\n";
        let tree = parse_tree(src);
        let imports: Vec<Import> = named_children(tree.root_node())
            .filter_map(|n| import_of(n, src))
            .collect();
        assert_eq!(imports.len(), 4);
        assert_eq!(
            imports[0].names,
            [
                ("a.b".to_string(), Some("c".to_string())),
                ("d".to_string(), None)
            ]
        );
        assert!(!imports[0].is_from);
        assert_eq!(
            (imports[1].level, imports[1].module.as_deref()),
            (2, Some("p.q"))
        );
        assert_eq!(
            imports[1].names[0],
            ("x".to_string(), Some("y".to_string()))
        );
        assert!(imports[2].star && imports[2].module.is_none() && imports[2].level == 1);
        assert_eq!(imports[3].module.as_deref(), Some("__future__"));
        let lines = import_lines(tree.root_node());
        assert_eq!(lines[1], LineRange { start: 2, end: 2 });
    }
}
