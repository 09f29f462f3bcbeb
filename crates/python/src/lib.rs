//! navbench's one Python front end: the only tree-sitter layer in the workspace.
//!
//! Principal types and functions, by module:
//! - [`source`]: newline handling — [`lone_cr_as_newline`] (keeps byte offsets) and
//!   [`universal_newlines`] (Python's text mode).
//! - [`tree`]: [`parse_tree`], node helpers ([`tree::text`], [`tree::named_children`],
//!   [`tree::unparenthesize`]), non-recursive traversals ([`tree::preorder`],
//!   [`tree::walk`]) and [`ast_end`], where CPython's `ast` ends a node.
//! - [`definitions`]: the one walk over definitions, [`Definitions`] of [`Entity`]s
//!   (kind, qualified name, `ast` lines, byte span, body, decorators, docstring,
//!   enclosing scope) and their `ast.walk` order.
//! - [`imports`]: [`Import`] records (module, names, aliases, level) and import lines.
//! - [`reject`]: [`rejection`], what CPython 3.11's `ast.parse` rejects.
//! - [`docstring`]: `ast.get_docstring` and the string semantics it needs.
//! - [`module`]: [`ParsedModule`], all of the above for one file, via [`parse_module`].
//!
//! Data flow:
//! ```text
//! source ─lone_cr_as_newline→ text ─parse_tree→ tree ─┬─ definitions() → Definitions ─┐
//!                                                    ├─ imports::import_lines/import_of ├→ ParsedModule
//!                                                    └─ rejection()                  ──┘
//! ```
//! Consumers (the graph builder, the chunkers, the harness's gold rules) build their
//! own rules on top of the tree helpers or of [`ParsedModule`].
//!
//! # Line semantics (identical to CPython's `ast`)
//! - [`Entity::start_line`] is the line of the `def`/`class` keyword (of `async` for
//!   `async def`), i.e. `ast` `lineno`: decorators are not included. The first
//!   decorator's line is [`Entity::decorated_start_line`].
//! - [`Entity::end_line`] is `ast` `end_lineno`: the last line of the last token of the
//!   body, so trailing comments and blank lines are never part of an entity.
//! - Lines are 1-based. A lone carriage return counts as a line break (as with Python's
//!   universal newlines); `\r\n` is one line break.
//!
//! # Entities
//! Every `class` and `def` anywhere in the file is an entity, including methods,
//! nested functions, classes local to functions, definitions under `if`/`try`/`with`/...
//! and every method called `__init__` (LocAgent's graph builder leaves `Cls.__init__`
//! out; graph code applies that rule itself). The qualified name joins every enclosing
//! class and function name, as LocAgent's graph ids do: `Cls.meth`, `func.inner`,
//! `Cls.Inner.m`. A definition under a compound statement at module level is still top
//! level (`qualname` = its name), but [`Entity::conditional`] records that it is not a
//! direct member of its scope's body.
//!
//! # Validation
//! Compared with CPython 3.11/3.12 `ast` on 15,281 `.py` files (the five dev
//! repositories at their dev base commits and HEAD): entities, qualified names, all
//! three line numbers, `walk_order`, import ranges and docstrings agree on every file
//! both accept. The graph builder built on this crate reproduces LocAgent's graphs of
//! requests, flask and pytest line for line.
//!
//! # Example
//! ```
//! use navbench_python::parse_module;
//!
//! let m = parse_module("import os\n\nclass A:\n    @property\n    def f(self):\n        return 1\n");
//! assert!(!m.has_syntax_errors());
//! let f = &m.entities[1];
//! assert_eq!((f.qualname.as_str(), f.decorated_start_line, f.start_line, f.end_line), ("A.f", 4, 5, 6));
//! assert_eq!(m.imports[0].start, 1);
//! assert!(parse_module("print 'python 2'\n").has_syntax_errors());
//! ```

pub mod definitions;
pub mod docstring;
pub mod imports;
pub mod module;
pub mod reject;
pub mod source;
pub mod tree;

pub use definitions::{Definitions, Entity, EntityKind, definitions};
pub use docstring::Docstring;
pub use imports::Import;
pub use module::{LineRange, ParsedModule, parse_module};
pub use reject::rejection;
pub use source::{lone_cr_as_newline, universal_newlines};
pub use tree::{ast_end, parse_tree};

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(m: &'a ParsedModule, qualname: &str) -> &'a Entity {
        m.entities
            .iter()
            .find(|e| e.qualname == qualname)
            .unwrap_or_else(|| panic!("no entity {qualname}"))
    }

    fn lines(e: &Entity) -> (usize, usize, usize) {
        (e.decorated_start_line, e.start_line, e.end_line)
    }

    #[test]
    fn python_entities_have_ast_line_numbers() {
        let src = "\
import os

@deco
@other(
    1)
def top(a,
        b):
    x = 1

    # trailing comment
    return x
    # another


class Cls(Base):
    \"\"\"Doc.\"\"\"

    @property
    def val(self):
        return 1

    async def run(self):
        def inner():
            pass
        return inner

    class Inner:
        def m(self): pass
";
        let m = parse_module(src);
        assert!(!m.has_syntax_errors());
        let q: Vec<&str> = m.entities.iter().map(|e| e.qualname.as_str()).collect();
        assert_eq!(
            q,
            [
                "top",
                "Cls",
                "Cls.val",
                "Cls.run",
                "Cls.run.inner",
                "Cls.Inner",
                "Cls.Inner.m"
            ]
        );
        assert_eq!(lines(find(&m, "top")), (3, 6, 11));
        assert_eq!(lines(find(&m, "Cls")), (15, 15, 28));
        assert_eq!(lines(find(&m, "Cls.val")), (18, 19, 20));
        let run = find(&m, "Cls.run");
        assert_eq!(lines(run), (22, 22, 25));
        assert!(run.is_async);
        assert_eq!(run.depth, 1);
        assert_eq!(run.parent, Some(1));
        assert_eq!(find(&m, "Cls.run.inner").depth, 2);
        assert_eq!(lines(find(&m, "Cls.Inner.m")), (28, 28, 28));
        assert_eq!(m.imports, [LineRange { start: 1, end: 1 }]);
        assert_eq!(
            find(&m, "Cls")
                .docstring
                .as_ref()
                .map(|d| (d.line, d.cleaned.as_str())),
            Some((16, "Doc."))
        );
        assert_eq!(
            &src[find(&m, "Cls.Inner.m").span.clone()],
            "def m(self): pass"
        );
        assert_eq!(
            m.innermost_at(24).map(|e| e.qualname.as_str()),
            Some("Cls.run.inner")
        );
        assert_eq!(m.innermost_at(21).map(|e| e.qualname.as_str()), Some("Cls"));
        assert_eq!(m.innermost_at(4), None);
        assert_eq!(m.line_count, 28);
    }

    #[test]
    fn python_walk_order_is_breadth_first_over_the_ast() {
        let src = "\
if X:
    def f1(): pass
elif Y:
    def f2(): pass
else:
    def f3(): pass

class C:
    def f1(self): pass

def g():
    def h(): pass

try:
    def t(): pass
except E:
    def handler(): pass
";
        let m = parse_module(src);
        let order: Vec<&str> = m
            .walk_order
            .iter()
            .map(|&i| m.entities[i].qualname.as_str())
            .collect();
        // Depth 1: C, g. Depth 2: f1 (if body), C.f1, g.h, t. Depth 3: f2 and f3 (elif
        // is an If nested in the outer orelse, else is its orelse), handler (inside an
        // ExceptHandler).
        assert_eq!(
            order,
            ["C", "g", "f1", "C.f1", "g.h", "t", "f2", "f3", "handler"]
        );
    }

    #[test]
    fn python_ranges_for_imports_assignments_and_docstrings() {
        let src = "\
from a import (
    b,
    c,  # comment
)
X = 1; y = 2
Z: int = (
    3
)
W += 1
foo(); V = 1

class K:
    '''
    First line.

        indented
    '''
    def m(self):
        import json
        return json


class E:
    (\"one\\n\"
     \"two\\nthree\")
    pass


class F:
    f\"not a docstring\"


class G:
    '''   '''
";
        let m = parse_module(src);
        assert!(!m.has_syntax_errors());
        assert_eq!(
            m.imports,
            [
                LineRange { start: 1, end: 4 },
                LineRange { start: 19, end: 19 }
            ]
        );
        assert_eq!(
            m.top_level_assignments,
            [
                LineRange { start: 5, end: 5 },
                LineRange { start: 6, end: 8 }
            ]
        );
        assert_eq!(
            find(&m, "G").docstring.as_ref().map(|d| d.cleaned.as_str()),
            Some("")
        );
        assert!(find(&m, "F").docstring.is_none());
    }

    #[test]
    fn python_syntax_errors_and_python2_are_flagged() {
        assert!(parse_module("def f(:\n    pass\n").has_syntax_errors());
        assert!(parse_module("print 'hello'\n").has_syntax_errors());
        assert!(!parse_module("print('hello')\n").has_syntax_errors());
        assert!(parse_module("x = '\\user'\n").has_syntax_errors());
        for bad in [
            "try:\n    pass\nexcept E, e:\n    pass\n",
            "raise E, 'message'\n",
            "x = 1 <> 2\n",
            "x = 10L\n",
            "x = 0777\n",
            "x = ur'a'\n",
            "exec 'code'\n",
            "def f():\nx = 1\n",
            "    x = 1\n",
            "if x:\n\ty = 1\n        z = 2\n",
            "f(a=1, b)\n",
            "f(**kw, *args)\n",
        ] {
            assert!(parse_module(bad).has_syntax_errors(), "{bad:?}");
        }
        for good in [
            "print >> sys.stderr, 'x'\n",
            "print (a), b\n",
            "x = 0; y = 00; z = 0_0; w = 0x1F\n",
            "x = u'a' + rb'b' + Rb'c'\n",
            "if x:\n\ty = 1\n\tz = 2\nelse:\n        w = 3\n",
            "def f():\n    '''doc\n  text'''\n    return 1\n",
            "x = 1; y = 2\n",
            "f(a, *b, c=1, *d, **e, f=2)\n",
            "f(a=1, # comment\n  b=2, \\\n  c=3)\n",
            "class A(B, metaclass=M):\n    pass\n",
        ] {
            assert!(!parse_module(good).has_syntax_errors(), "{good:?}");
        }
        assert!(
            !parse_module("x = r'\\user' + b'\\user' + '\\\\user' + '\\u00e9'\n")
                .has_syntax_errors()
        );
        let m = parse_module("");
        assert!(m.entities.is_empty());
        assert_eq!(m.line_count, 0);
    }

    #[test]
    fn python_crlf_and_lone_cr_count_lines_like_python() {
        let m = parse_module("x = 1\r\ndef f():\r\n    pass\r\n");
        assert_eq!(lines(find(&m, "f")), (2, 2, 3));
        let m = parse_module("x = 1\rdef f():\r    pass\r");
        assert_eq!(lines(find(&m, "f")), (2, 2, 3));
    }

    #[test]
    fn python_match_and_with_bodies_hold_definitions() {
        let src = "\
match x:
    case 1:
        def one(): pass
with open(p) as fh:
    async def two():
        await y
";
        let m = parse_module(src);
        assert!(!m.has_syntax_errors());
        assert_eq!(lines(find(&m, "one")), (3, 3, 3));
        let two = find(&m, "two");
        assert!(two.is_async && two.conditional);
        assert_eq!(lines(two), (5, 5, 6));
    }
}
