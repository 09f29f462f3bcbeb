//! The per-function corpus and its index on a repository the test writes.

use super::corpus::{file_documents, source_files};
use super::*;

const SHOP: &str = "\
import os


class Cart:
    \"\"\"A cart.\"\"\"

    def __init__(self):
        self.items = []

    @property
    def size(self):
        return len(self.items)

    @size.setter
    def size(self, value):
        raise AttributeError(value)

    def total(self):
        def price(item):
            return item.price
        return sum(price(i) for i in self.items)

    if os.name == 'nt':
        def windows_only(self):
            pass

    async def refresh(self):
        pass

    class Line:
        def cost(self):
            return 0


def total():
    return 0


@cached
def make_cart():
    class Local:
        def hidden(self):
            pass
    return Cart()
";

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn functions_corpus_is_swerank_format() {
    let docs = file_documents("pkg/shop.py", SHOP).expect("parses");
    let ids: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            // Functions in `ast.walk` order: the module's, then nested ones by depth.
            // The top-level `total` is left out: `Cart` has a method of that name.
            "pkg/shop.py/make_cart",
            "pkg/shop.py/price",
            "pkg/shop.py/windows_only",
            // Then the direct methods of each class, classes in walk order.
            "pkg/shop.py/Cart/__init__",
            "pkg/shop.py/Cart/size",
            "pkg/shop.py/Cart/total",
            "pkg/shop.py/Cart/refresh",
            // A class nested in a class keeps its outer class; a local class (in a
            // function) is named alone, as SweRank does.
            "pkg/shop.py/Cart.Line/cost",
            "pkg/shop.py/Local/hidden",
        ]
    );
    let by_id = |id: &str| docs.iter().find(|d| d.id == id).expect("document");
    // A method: the id line, `class Cart:` glued to the method's first line, no
    // decorator; the setter (the last `size`) replaced the getter's text.
    let size = by_id("pkg/shop.py/Cart/size");
    assert_eq!(
        size.text,
        "pkg/shop.py/Cart/size\nclass Cart:    def size(self, value):\n        raise AttributeError(value)"
    );
    assert_eq!((size.start_line, size.end_line), (15, 16));
    let make = by_id("pkg/shop.py/make_cart");
    assert!(
        make.text
            .starts_with("pkg/shop.py/make_cart\ndef make_cart():\n    class Local:")
    );
    assert!(make.text.ends_with("    return Cart()"));
    assert_eq!(
        by_id("pkg/shop.py/price").text,
        "pkg/shop.py/price\n        def price(item):\n            return item.price"
    );
    assert_eq!(file_documents("py2.py", "print 'x'\n"), None);
}

#[test]
fn functions_index_reads_the_tree_and_ranks_functions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "pkg/shop.py", SHOP.as_bytes());
    write(
        root,
        "pkg/tests/test_shop.py",
        b"def test_total():\n    assert total() == 0\n",
    );
    write(
        root,
        "pkg/tests/fixtures.py",
        b"def make_fixture():\n    pass\n",
    );
    write(root, "pkg/old.py", b"print 'python 2'\n");
    write(root, "pkg/latin.py", b"def caf\xe9():\n    pass\n");
    write(root, ".tools/gen.py", b"def generate_totals():\n    pass\n");
    write(root, "setup.py", b"def setup():\n    pass\n");
    let files: Vec<String> = source_files(root)
        .expect("walk")
        .into_iter()
        .map(|f| f.rel)
        .collect();
    assert_eq!(
        files,
        [
            ".tools/gen.py",
            "pkg/latin.py",
            "pkg/old.py",
            "pkg/shop.py",
            "pkg/tests/fixtures.py",
            "pkg/tests/test_shop.py",
            "setup.py"
        ]
    );
    let index = FunctionIndex::build(root, TestFilter::Path).expect("builds");
    let stats = index.stats();
    assert_eq!(
        (
            stats.source_files,
            stats.test_files,
            stats.undecodable_files,
            stats.unparsable_files
        ),
        (7, 2, 1, 1)
    );
    assert_eq!(stats.documents, 11);
    assert_eq!(index.documents()[0].id, ".tools/gen.py/generate_totals");
    let found = index.search("The cart total is wrong when an item has no price", 3);
    assert_eq!(found.empty_reason, None);
    let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids[0], "pkg/shop.py/Cart/total", "{found:?}");
    assert!(found.hits.windows(2).all(|w| w[0].score >= w[1].score));
    // The file-name rule keeps files under test-named directories.
    let loose = FunctionIndex::build(root, TestFilter::FileName).expect("builds");
    assert_eq!(loose.stats().test_files, 1);
    let none = index.search("the of and", 5);
    assert!(none.hits.is_empty() && none.empty_reason.is_some());
    let none = index.search("zebra", 5);
    assert_eq!(
        none.empty_reason,
        Some("no word of the query occurs in any function")
    );
}

/// A Go method is a document of its receiver's type, a Rust impl method of its type, a
/// TypeScript class method of its class; free functions are `path/name`.
#[test]
fn other_languages_give_documents_in_the_same_format() {
    let go = "package q\n\ntype Queue struct{ xs []int }\n\nfunc (q *Queue) Pop() int {\n\treturn q.xs[0]\n}\n\nfunc New() *Queue {\n\treturn &Queue{}\n}\n";
    let ids = |rel: &str, text: &str| -> Vec<String> {
        file_documents(rel, text)
            .expect("a source file")
            .into_iter()
            .map(|d| d.id)
            .collect()
    };
    assert_eq!(
        ids("q/queue.go", go),
        ["q/queue.go/Queue/Pop", "q/queue.go/New"]
    );
    let rs = "pub struct W;\n\nimpl W {\n    pub fn get(&self) -> u8 {\n        1\n    }\n}\n\npub fn parse() {}\n";
    assert_eq!(ids("src/w.rs", rs), ["src/w.rs/W/get", "src/w.rs/parse"]);
    let ts = "export class Cart {\n  total(): number {\n    return 0;\n  }\n}\nexport function fmt(c: number) {\n  return String(c);\n}\n";
    let docs = file_documents("web/cart.ts", ts).expect("a source file");
    assert_eq!(docs[0].id, "web/cart.ts/Cart/total");
    assert_eq!((docs[0].start_line, docs[0].end_line), (2, 4));
    assert!(
        docs[0]
            .text
            .starts_with("web/cart.ts/Cart/total\n  total(): number {")
    );
    assert_eq!(docs[1].id, "web/cart.ts/fmt");
    assert_eq!(file_documents("README.md", "# x\n"), None);
    // Nested types keep their outer types, as gold names them; a module-level function
    // in a Rust `mod` its module; a nested function its bare name.
    let java = "package p;\n\npublic class Outer {\n    static class Inner {\n        int method() {\n            return 1;\n        }\n    }\n}\n";
    assert_eq!(
        ids("src/p/Outer.java", java),
        ["src/p/Outer.java/Outer.Inner/method"]
    );
    let ts = "export namespace Shop {\n  export class Cart {\n    total(): number {\n      return 0;\n    }\n  }\n}\n";
    assert_eq!(ids("web/shop.ts", ts), ["web/shop.ts/Shop.Cart/total"]);
    let rs = "mod inner {\n    pub struct W;\n    impl W {\n        pub fn get(&self) -> u8 {\n            1\n        }\n    }\n    pub fn parse() {\n        fn helper() {}\n    }\n}\n";
    assert_eq!(
        ids("src/w.rs", rs),
        [
            "src/w.rs/inner.W/get",
            "src/w.rs/inner.parse",
            "src/w.rs/helper"
        ]
    );
    // A constructor is its type, as gold names an edit in it: a Java constructor, a
    // TS/JS `constructor`, an inner class's (the Python corpus keeps the paper's
    // `path.py/Class/__init__`).
    let java = "package p;\n\npublic class Outer {\n    Outer() {}\n    Outer(int a) {}\n    static class Inner {\n        Inner() {}\n        int m() { return 1; }\n    }\n}\n";
    assert_eq!(
        ids("src/p/Outer.java", java),
        [
            "src/p/Outer.java/Outer",
            "src/p/Outer.java/Outer.Inner",
            "src/p/Outer.java/Outer.Inner/m"
        ]
    );
    let ts =
        "export class Cart {\n  constructor(private o: string) {}\n  total() { return 0; }\n}\n";
    assert_eq!(
        ids("web/cart.ts", ts),
        ["web/cart.ts/Cart", "web/cart.ts/Cart/total"]
    );
    let js = "class Lexer {\n  constructor(o) { this.o = o; }\n}\n";
    assert_eq!(ids("lib/lexer.js", js), ["lib/lexer.js/Lexer"]);
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "q/queue.go", go.as_bytes());
    write(
        dir.path(),
        "q/queue_test.go",
        b"package q\n\nfunc TestPop() {}\n",
    );
    write(dir.path(), "src/w.rs", rs.as_bytes());
    let index = FunctionIndex::build(dir.path(), TestFilter::Path).expect("builds");
    assert_eq!(index.stats().source_files, 3);
    assert_eq!(index.stats().test_files, 1);
    let hits = index.search("Pop returns the first element of the queue", 5);
    assert_eq!(hits.hits[0].id, "q/queue.go/Queue/Pop");
}

/// The corpus reads the repository's languages: a Python project's one JavaScript
/// asset stays out by default, as in the paper's `.py`-only corpus, and is read when
/// the server is told `all`.
#[test]
fn a_python_project_corpus_is_python_unless_told_otherwise() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..10 {
        let text = format!("def total_{i}():\n    return {i}\n");
        write(dir.path(), &format!("pkg/m{i}.py"), text.as_bytes());
    }
    write(
        dir.path(),
        "pkg/static/cart.js",
        b"function totalPrice(items) {\n  return 0;\n}\n",
    );
    let auto = FunctionIndex::build(dir.path(), TestFilter::Path).expect("builds");
    assert_eq!(auto.stats().source_files, 10);
    assert!(auto.documents().iter().all(|d| d.file.ends_with(".py")));
    let all = FunctionIndex::build_for(
        dir.path(),
        TestFilter::Path,
        &navbench_lang::family::Selection::All,
    )
    .expect("builds");
    assert_eq!(all.stats().source_files, 11);
    assert!(
        all.documents()
            .iter()
            .any(|d| d.id == "pkg/static/cart.js/totalPrice")
    );
}
