//! Gold fixtures per language, each a real `git diff` of a repository the test writes:
//! a method added to an existing type (which edits the type, [`super::super::inserted`]),
//! to a nested type, to a new type (edits nothing), a field changed, a free function, a nested
//! function or closure, a renamed file.

use super::super::test_git::{git, show, write};
use super::super::{GoldDerivation, derive_gold};

/// Commits `base` at `path`, applies `edits` (each replaces the first occurrence of
/// its left text, which must exist), moves the file to `rename_to` if given, and
/// derives gold from `git diff -M` against the commit.
fn gold_of(
    path: &str,
    base: &str,
    edits: &[(&str, &str)],
    rename_to: Option<&str>,
) -> GoldDerivation {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    git(dir, &["init", "-q"]);
    write(dir, path, base);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let mut text = base.to_string();
    for (from, to) in edits {
        assert!(text.contains(from), "{from:?} not in the fixture");
        text = text.replacen(from, to, 1);
    }
    match rename_to {
        Some(to) => {
            git(dir, &["mv", path, to]);
            write(dir, to, &text);
        }
        None => write(dir, path, &text),
    }
    git(dir, &["add", "-A"]);
    let diff = git(dir, &["diff", "--cached", "-M", "HEAD"]);
    let read = |p: &str| show(dir, "HEAD", p);
    derive_gold(&diff, &read).expect("gold derives")
}

/// `path:unit` for each unit.
fn ids(path: &str, units: &[&str]) -> Vec<String> {
    units.iter().map(|u| format!("{path}:{u}")).collect()
}

/// (edited functions, edited modules, added functions) of one edit.
type Expected<'a> = (&'a [&'a str], &'a [&'a str], &'a [&'a str]);

/// Checks one edit of `base` against `want`, the file being gold in every case.
fn check(path: &str, base: &str, edits: &[(&str, &str)], want: Expected<'_>) {
    let g = gold_of(path, base, edits, None);
    let what = format!("{edits:?}: {g:?}");
    assert_eq!(g.locations.files, [path], "{what}");
    assert_eq!(g.locations.functions, ids(path, want.0), "{what}");
    assert_eq!(g.locations.modules, ids(path, want.1), "{what}");
    assert_eq!(g.added_functions, ids(path, want.2), "{what}");
}

/// A rename with an edit in `function`: gold is on the old path.
fn check_rename(path: &str, to: &str, base: &str, edit: (&str, &str), function: &str) {
    let g = gold_of(path, base, &[edit], Some(to));
    assert_eq!(g.locations.files, [path], "{g:?}");
    assert_eq!(g.locations.functions, ids(path, &[function]), "{g:?}");
}

const TS: &str = "\
import { Item } from './item';

export class Cart {
  private items: Item[] = [];
  readonly limit = 10;

  constructor(private owner: string) {
    this.items = [];
  }

  add(item: Item): this {
    this.items.push(item);
    return this;
  }

  total(): number {
    const sum = (xs: Item[]) => xs.reduce((a, b) => a + b.price, 0);
    return sum(this.items);
  }
}

export function makeCart(owner: string): Cart {
  // a comment
  return new Cart(owner);
}
";

#[test]
fn gold_typescript() {
    let p = "src/cart.ts";
    let added = "  count(): number {\n    return this.items.length;\n  }\n\n  total(): number {";
    check(
        p,
        TS,
        &[("  total(): number {", added)],
        (&["Cart"], &["Cart"], &["Cart.count"]),
    );
    check(
        p,
        TS,
        &[("limit = 10", "limit = 20")],
        (&["Cart"], &["Cart"], &[]),
    );
    check(
        p,
        TS,
        &[("this.items = [];", "this.items = [1];")],
        (&["Cart"], &["Cart"], &[]),
    );
    let free = ("new Cart(owner)", "new Cart(owner.trim())");
    check(p, TS, &[free], (&["makeCart"], &["makeCart"], &[]));
    let closure = ("a + b.price", "a + b.price * 2");
    check(p, TS, &[closure], (&["Cart.total"], &["Cart"], &[]));
    check(
        p,
        TS,
        &[("// a comment", "// another comment")],
        (&[], &[], &[]),
    );
    check_rename(p, "src/basket.ts", TS, free, "makeCart");
}

const JSX: &str = "\
import React from 'react';

export class Counter extends React.Component {
  state = { n: 0 };

  increment = () => {
    this.setState({ n: this.state.n + 1 });
  };

  render() {
    return <button onClick={this.increment}>{this.state.n}</button>;
  }
}

export const Label = ({ text }) => {
  const upper = () => text.toUpperCase();
  return <span>{upper()}</span>;
};
";

#[test]
fn gold_jsx_and_tsx() {
    for p in ["web/Counter.jsx", "web/Counter.tsx"] {
        let added = "  reset = () => {\n    this.setState({ n: 0 });\n  };\n\n  render() {";
        check(
            p,
            JSX,
            &[("  render() {", added)],
            (&["Counter"], &["Counter"], &["Counter.reset"]),
        );
        check(
            p,
            JSX,
            &[("{ n: 0 }", "{ n: 1 }")],
            (&["Counter"], &["Counter"], &[]),
        );
        let method = ("this.state.n + 1", "this.state.n + 2");
        check(
            p,
            JSX,
            &[method],
            (&["Counter.increment"], &["Counter"], &[]),
        );
        check(
            p,
            JSX,
            &[("<span>", "<span className=\"l\">")],
            (&["Label"], &["Label"], &[]),
        );
        let closure = ("text.toUpperCase()", "text.toLowerCase()");
        check(p, JSX, &[closure], (&["Label"], &["Label"], &[]));
        check_rename(p, "web/Clicker.jsx", JSX, method, "Counter.increment");
    }
}

#[test]
fn gold_minified_javascript_maps_to_the_first_definition_on_the_line() {
    let min = "var a=require(\"x\");function f(n){return n+1}function g(){return f(2)}\n";
    let p = "dist/lib.min.js";
    check(p, min, &[("f(2)", "f(3)")], (&["f"], &["f"], &[]));
}

const JAVA: &str = "\
package shop;

import java.util.ArrayList;
import java.util.List;

public class Cart {
    private final List<Item> items;
    private int limit = 10;

    public Cart() {
        this.items = new ArrayList<>();
    }

    public Cart add(Item item) {
        items.add(item);
        return this;
    }

    public int total() {
        return items.stream().mapToInt(i -> {
            return i.price();
        }).sum();
    }

    static class Item {
        int price() {
            return 1;
        }
    }
}
";

#[test]
fn gold_java() {
    let p = "src/main/java/shop/Cart.java";
    let added =
        "    public int count() {\n        return items.size();\n    }\n\n    public int total() {";
    check(
        p,
        JAVA,
        &[("    public int total() {", added)],
        (&["Cart"], &["Cart"], &["Cart.count"]),
    );
    check(
        p,
        JAVA,
        &[("limit = 10", "limit = 20")],
        (&["Cart"], &["Cart"], &[]),
    );
    let ctor = ("new ArrayList<>()", "new ArrayList<>(8)");
    check(p, JAVA, &[ctor], (&["Cart"], &["Cart"], &[]));
    let lambda = ("return i.price();", "return i.price() * 2;");
    check(p, JAVA, &[lambda], (&["Cart.total"], &["Cart"], &[]));
    let nested = ("return 1;", "return 2;");
    check(
        p,
        JAVA,
        &[nested],
        (&["Cart.Item.price"], &["Cart.Item"], &[]),
    );
    check_rename(
        p,
        "src/main/java/shop/Basket.java",
        JAVA,
        lambda,
        "Cart.total",
    );
}

const GO: &str = "\
package store

import \"fmt\"

type Cart struct {
\titems []int
\tlimit int
}

func NewCart() *Cart {
\treturn &Cart{limit: 10}
}

func (c *Cart) Add(x int) *Cart {
\tc.items = append(c.items, x)
\treturn c
}

func (c Cart) Total() int {
\tsum := func(xs []int) int {
\t\tt := 0
\t\tfor _, x := range xs {
\t\t\tt += x
\t\t}
\t\treturn t
\t}
\treturn sum(c.items)
}

func Describe(c *Cart) string {
\treturn fmt.Sprint(c.Total())
}
";

#[test]
fn gold_go() {
    let p = "store/cart.go";
    let added = "func (c *Cart) Count() int {\n\treturn len(c.items)\n}\n\nfunc Describe(";
    check(
        p,
        GO,
        &[("func Describe(", added)],
        (&["Cart"], &["Cart"], &["Cart.Count"]),
    );
    check(
        p,
        GO,
        &[("\tlimit int", "\tlimit uint")],
        (&["Cart"], &["Cart"], &[]),
    );
    let free = ("limit: 10", "limit: 20");
    check(p, GO, &[free], (&["NewCart"], &["NewCart"], &[]));
    let pointer = ("append(c.items, x)", "append(c.items, x, x)");
    check(p, GO, &[pointer], (&["Cart.Add"], &["Cart"], &[]));
    let closure = ("t += x", "t += 2 * x");
    check(p, GO, &[closure], (&["Cart.Total"], &["Cart"], &[]));
    check_rename(p, "store/basket.go", GO, free, "NewCart");
}

const RUST: &str = "\
use std::fmt;

pub struct Cart {
    items: Vec<u32>,
    limit: usize,
}

impl Cart {
    pub fn new() -> Self {
        Cart { items: Vec::new(), limit: 10 }
    }

    pub fn total(&self) -> u32 {
        let sum = |xs: &[u32]| xs.iter().sum::<u32>();
        sum(&self.items)
    }
}

impl fmt::Display for Cart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, \"{}\", self.total())
    }
}

pub fn describe(c: &Cart) -> String {
    fn prefix() -> &'static str {
        \"cart\"
    }
    format!(\"{}: {}\", prefix(), c)
}
";

#[test]
fn gold_rust() {
    let p = "src/cart.rs";
    let added =
        "    pub fn count(&self) -> usize {\n        self.items.len()\n    }\n\n    pub fn total(";
    check(
        p,
        RUST,
        &[("    pub fn total(", added)],
        (&["Cart"], &["Cart"], &["Cart.count"]),
    );
    check(
        p,
        RUST,
        &[("limit: usize", "limit: u64")],
        (&["Cart"], &["Cart"], &[]),
    );
    let free = ("\"{}: {}\"", "\"{} - {}\"");
    check(p, RUST, &[free], (&["describe"], &["describe"], &[]));
    let nested = ("\"cart\"", "\"basket\"");
    check(p, RUST, &[nested], (&["describe"], &["describe"], &[]));
    let closure = ("xs.iter().sum::<u32>()", "xs.iter().copied().sum::<u32>()");
    check(p, RUST, &[closure], (&["Cart.total"], &["Cart"], &[]));
    let trait_impl = ("write!(f, \"{}\"", "write!(f, \"total {}\"");
    check(p, RUST, &[trait_impl], (&["Cart.fmt"], &["Cart"], &[]));
    check_rename(p, "src/basket.rs", RUST, free, "describe");
}

#[test]
fn gold_other_files_syntax_errors_and_new_files() {
    let g = gold_of("README.md", "old\n", &[("old", "new")], None);
    assert!(g.locations.files.is_empty(), "{g:?}");
    assert!(g.skipped[0].contains("no language front end"), "{g:?}");
    let g = gold_of(
        "store/cart.go",
        GO,
        &[("func NewCart() *Cart {", "func NewCart( *Cart {")],
        None,
    );
    assert_eq!(g.locations.files, ["store/cart.go"]);
    assert!(g.locations.functions.is_empty());
    assert!(
        g.skipped[0].contains("go syntax error after applying the patch"),
        "{g:?}"
    );
    let patch = "\
diff --git a/src/fresh.ts b/src/fresh.ts
new file mode 100644
--- /dev/null
+++ b/src/fresh.ts
@@ -0,0 +1,3 @@
+export function fresh(): number {
+  return 1;
+}
";
    let g = derive_gold(patch, &|_| None).expect("derives");
    assert!(g.locations.files.is_empty());
    assert_eq!(g.added_functions, ["src/fresh.ts:fresh"]);
    assert_eq!(g.added_modules, ["src/fresh.ts:fresh"]);
}

#[test]
fn gold_added_methods_edit_existing_types_only() {
    // Java: a method added to an inner class edits `Outer.Inner`; a new nested class
    // with a method edits nothing that existed.
    let p = "src/main/java/shop/Cart.java";
    let inner = "        int price() {\n            return 1;\n        }\n\n        int weight() {\n            return 0;\n        }";
    check(
        p,
        JAVA,
        &[(
            "        int price() {\n            return 1;\n        }",
            inner,
        )],
        (&["Cart.Item"], &["Cart.Item"], &["Cart.Item.weight"]),
    );
    let fresh = "    static class Fee {\n        int amount() {\n            return 2;\n        }\n    }\n\n    static class Item {";
    let g = gold_of(p, JAVA, &[("    static class Item {", fresh)], None);
    assert!(g.locations.functions.is_empty(), "{g:?}");
    assert_eq!(
        g.added_functions,
        ids(p, &["Cart.Fee", "Cart.Fee.amount"]),
        "{g:?}"
    );

    // TypeScript: a new class with methods after an existing one edits nothing.
    let p = "src/cart.ts";
    let g = gold_of(
        p,
        TS,
        &[(
            "export function makeCart",
            "export class Basket {\n  size(): number {\n    return 0;\n  }\n}\n\nexport function makeCart",
        )],
        None,
    );
    assert!(g.locations.functions.is_empty(), "{g:?}");
    assert_eq!(
        g.added_functions,
        ids(p, &["Basket", "Basket.size"]),
        "{g:?}"
    );

    // Rust: a method in a new `impl` block of a struct the file declares edits the
    // struct; a method of a type the file does not declare edits nothing.
    let p = "src/cart.rs";
    let more = "impl Cart {\n    pub fn empty(&self) -> bool {\n        self.items.is_empty()\n    }\n}\n\npub fn describe(";
    check(
        p,
        RUST,
        &[("pub fn describe(", more)],
        (&["Cart"], &["Cart"], &["Cart.empty"]),
    );
    let foreign =
        "impl Other {\n    pub fn zero() -> u32 {\n        0\n    }\n}\n\npub fn describe(";
    let g = gold_of(p, RUST, &[("pub fn describe(", foreign)], None);
    assert!(g.locations.functions.is_empty(), "{g:?}");
    assert_eq!(g.added_functions, ids(p, &["Other", "Other.zero"]), "{g:?}");

    // Go: the receiver type must be declared in the file; a file that only holds
    // methods of a type declared elsewhere in the package gains a method: nothing
    // existing is edited.
    let p = "store/cart_ops.go";
    let ops = "package store\n\nfunc (c *Cart) Clear() {\n\tc.items = nil\n}\n";
    let added = "}\n\nfunc (c *Cart) Len() int {\n\treturn len(c.items)\n}\n";
    let g = gold_of(p, ops, &[("}\n", added)], None);
    assert!(g.locations.functions.is_empty(), "{g:?}");
    assert_eq!(g.added_functions, ids(p, &["Cart.Len"]), "{g:?}");
}
