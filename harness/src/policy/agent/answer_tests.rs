//! Every answer form of [`super`]'s table, on a real checked-out tree.

use super::*;

/// `pkg/money.py`: `Money` (lines 1-8, `__init__` 2-3, `allocate` 5-8 with a nested
/// `share`), module-level code at 10, `parse` at 11-12; a test file that defines
/// `parse` again, and `pkg/util.py` defining `helper`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("pkg/money.py"),
        "class Money:\n    def __init__(self, a):\n        self.a = a\n\n    def allocate(self, r):\n        def share(x):\n            return x\n        return r\n\nLIMIT = 3\ndef parse(s):\n    return Money(s)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("pkg/util.py"),
        "def helper():\n    return 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tests/test_money.py"),
        "def parse(s):\n    return s\n\ndef helper():\n    return 2\n",
    )
    .unwrap();
    dir
}

fn shown(text: &str, root: &Path) -> Vec<String> {
    parse_lines(text, root).iter().map(Named::display).collect()
}

#[test]
fn locations_are_read_in_order_with_markers_and_noise_ignored() {
    let text = "Here is what I found:\n\n1. `pkg/money.py:Money.allocate`\n- pkg/money.py:parse  (builds Money)\n* pkg/money.py\npkg/money.py:Money.allocate\nThe bug is in allocate.\n";
    assert_eq!(
        shown(text, Path::new("/w")),
        [
            "pkg/money.py:Money.allocate",
            "pkg/money.py:parse",
            "pkg/money.py"
        ]
    );
}

#[test]
fn absolute_paths_under_the_tree_or_the_virtual_root_are_made_relative() {
    let named = shown(
        "/w/t/pkg/a.py:f\n./pkg/b.py\n- `/w/t/pkg/c.py`\n1. **/repo/pkg/d.py:g**\n/repo/pkg/e.py:3\n",
        Path::new("/w/t"),
    );
    assert_eq!(
        named,
        [
            "pkg/a.py:f",
            "pkg/b.py",
            "pkg/c.py",
            "pkg/d.py:g",
            "pkg/e.py:3"
        ]
    );
}

#[test]
fn emphasis_brackets_and_punctuation_are_taken_off() {
    let named = shown(
        "**pkg/a.py:f**\n- **`pkg/b.py`**: where it starts\n`pkg/c.py`:`C.m`\n> 2) \"pkg/d.py\",\n[pkg/e.py:4-9] function g\npkg/f.py.\n",
        Path::new("/w"),
    );
    assert_eq!(
        named,
        [
            "pkg/a.py:f",
            "pkg/b.py",
            "pkg/c.py:C.m",
            "pkg/d.py",
            "pkg/e.py:4-9",
            "pkg/f.py"
        ]
    );
}

#[test]
fn double_colons_and_calls_name_entities() {
    let named = shown(
        "pkg/a.py::Money::allocate\npkg/a.py:Money.allocate()\npkg/a.py:parse(s, t)\npkg/a.py:Money::split\n",
        Path::new("/w"),
    );
    assert_eq!(
        named,
        [
            "pkg/a.py:Money.allocate",
            "pkg/a.py:parse",
            "pkg/a.py:Money.split"
        ]
    );
}

#[test]
fn grep_lines_and_ranges_name_the_innermost_entity() {
    let dir = tree();
    // text's grep (`path:LINE:text`), codegraph's search_code (`path:START-END`),
    // retrieval's citation (`[path:START-END]`) and GitHub's anchors.
    let text = "pkg/money.py:7:            return x\npkg/money.py:3\n[pkg/money.py:11-12]\npkg/money.py:1-8\npkg/money.py#L10\npkg/money.py:5-12\n";
    let a = read(text, dir.path());
    assert_eq!((a.lines, a.dropped), (6, 0), "{a:?}");
    assert_eq!(a.locations.files, ["pkg/money.py"]);
    // Line 7 is in `share`, nested in `allocate`: the method is the function.
    // Line 3 is in `__init__`: the class. Lines 1-8 are the whole class. Line 10 and
    // lines 5-12 hold no one entity: the file only.
    assert_eq!(
        a.locations.functions,
        [
            "pkg/money.py:Money.allocate",
            "pkg/money.py:Money",
            "pkg/money.py:parse"
        ]
    );
    assert_eq!(
        a.locations.modules,
        ["pkg/money.py:Money", "pkg/money.py:parse"]
    );
}

#[test]
fn a_line_past_the_end_or_in_a_missing_file_still_names_the_file() {
    let dir = tree();
    let a = read("pkg/money.py:400\npkg/gone.py:3\n", dir.path());
    assert_eq!((a.lines, a.dropped), (2, 0));
    assert_eq!(a.locations.files, ["pkg/money.py", "pkg/gone.py"]);
    assert!(a.locations.functions.is_empty());
}

#[test]
fn bare_calls_are_found_in_the_one_file_that_defines_them() {
    let dir = tree();
    let a = read(
        "Money.allocate()\n- `parse()`\nhelper()\nnowhere()\n",
        dir.path(),
    );
    // `parse` is also defined in a test file: the source file wins. `helper` is in
    // one source file and one test file: the source file. `nowhere` is not defined.
    assert_eq!(a.locations.files, ["pkg/money.py", "pkg/util.py"]);
    assert_eq!(
        a.locations.functions,
        [
            "pkg/money.py:Money.allocate",
            "pkg/money.py:parse",
            "pkg/util.py:helper"
        ]
    );
    assert_eq!((a.lines, a.dropped), (3, 1));
    assert_eq!(a.dropped_lines, ["nowhere()"]);
}

#[test]
fn a_bare_call_defined_in_two_source_files_is_dropped() {
    let dir = tree();
    std::fs::write(dir.path().join("pkg/other.py"), "def parse(x):\n    pass\n").unwrap();
    let a = read("parse()\n", dir.path());
    assert_eq!((a.lines, a.dropped), (0, 1));
    assert!(a.locations.files.is_empty());
}

#[test]
fn unreadable_locations_are_counted_as_dropped() {
    let a = read(
        "../etc/passwd.py\npkg/a.py:9-3\npkg/a.py:0\npkg/a.py:<lambda>\npkg/a.py:f\n",
        Path::new("/w"),
    );
    assert_eq!(a.lines, 1);
    assert_eq!(a.dropped, 4);
    assert_eq!(
        a.dropped_lines,
        [
            "../etc/passwd.py",
            "pkg/a.py:9-3",
            "pkg/a.py:0",
            "pkg/a.py:<lambda>"
        ]
    );
}

#[test]
fn ids_follow_locagent_from_the_tree() {
    let dir = tree();
    let named = parse_lines(
        "pkg/money.py:Money.allocate\npkg/money.py:parse\npkg/money.py:Money\npkg/money.py:Money.__init__\npkg/other.py:Gone.f\n",
        dir.path(),
    );
    let loc = to_locations(&named, dir.path());
    assert_eq!(loc.files, ["pkg/money.py", "pkg/other.py"]);
    assert_eq!(
        loc.modules,
        [
            "pkg/money.py:Money",
            "pkg/money.py:parse",
            "pkg/other.py:Gone"
        ]
    );
    assert_eq!(
        loc.functions,
        [
            "pkg/money.py:Money.allocate",
            "pkg/money.py:parse",
            "pkg/money.py:Money",
            "pkg/other.py:Gone.f"
        ]
    );
}

#[test]
fn prose_alone_gives_no_location_and_no_drop() {
    let a = read(
        "I could not find it. Maybe look at the money module?\n1.2\nshopkeep 0.9.3\nSee https://example.com/a.py\nMoney.allocate is wrong\n- allocate\n",
        Path::new("/w"),
    );
    assert!(a.named.is_empty(), "{a:?}");
    assert_eq!((a.lines, a.dropped), (0, 0));
}

#[test]
fn a_dotted_name_is_not_a_file_but_a_known_extension_is() {
    let named = shown(
        "setup.cfg\nmoney.py\nMoney.allocate\nREADME.rst: docs\n",
        Path::new("/w"),
    );
    assert_eq!(named, ["setup.cfg", "money.py", "README.rst"]);
}
