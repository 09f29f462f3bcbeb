//! Tests of the three tools on a small repository.

use super::*;
use std::fs;
use std::path::Path;

fn write(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("mkdir");
    }
    fs::write(path, body).expect("write");
}

fn fixture() -> (tempfile::TempDir, TextTools) {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(
        r,
        "src/app.py",
        b"import os\n\ndef parse(x):\n    return int(x)\n\nclass ParseError(Exception):\n    pass\n",
    );
    write(r, "src/util.py", b"def helper():\n    return parse('1')\n");
    write(r, "README.md", b"# Demo\nCall parse() to parse.\n");
    write(r, "build/gen.py", b"def parse(): pass\n");
    write(r, ".gitignore", b"build/\n");
    write(r, "data.bin", b"parse\0\x01\x02binary");
    write(r, "empty.txt", b"");
    let tools = TextTools::new(Sandbox::new(r).expect("sandbox"), Limits::default());
    (dir, tools)
}

#[test]
fn list_files_sorted_ignoring_gitignored() {
    let (_d, t) = fixture();
    let out = t.list_files(&ListFilesArgs::default()).expect("list");
    assert_eq!(
        out.data.files,
        [
            "README.md",
            "data.bin",
            "empty.txt",
            "src/app.py",
            "src/util.py"
        ]
    );
    assert_eq!(out.text, out.data.files.join("\n"));
    assert_eq!(out.data.truncated, 0);
}

#[test]
fn list_files_glob_and_truncation() {
    let (_d, t) = fixture();
    let out = t
        .list_files(&ListFilesArgs {
            glob: Some("*.py".into()),
            max_results: Some(1),
        })
        .expect("list");
    assert_eq!(out.data.files, ["src/app.py"]);
    assert_eq!(out.data.total_files, 2);
    assert_eq!(out.data.truncated, 1);
    assert!(
        out.text.contains("... [truncated: 1 more files"),
        "{}",
        out.text
    );
    let none = t
        .list_files(&ListFilesArgs {
            glob: Some("*.rs".into()),
            max_results: None,
        })
        .expect("list");
    assert!(none.text.contains("No files match glob '*.rs'"));
    let err = t
        .list_files(&ListFilesArgs {
            glob: Some("[".into()),
            max_results: None,
        })
        .expect_err("bad glob");
    assert!(err.to_string().contains("invalid glob"));
    let err = t
        .list_files(&ListFilesArgs {
            glob: None,
            max_results: Some(0),
        })
        .expect_err("zero");
    assert!(err.to_string().contains("between 1 and 10000"));
}

#[test]
fn read_file_numbers_lines() {
    let (_d, t) = fixture();
    let out = t
        .read_file(&ReadFileArgs {
            path: "src/app.py".into(),
            start_line: Some(3),
            end_line: Some(4),
        })
        .expect("read");
    assert_eq!(out.text, "     3\tdef parse(x):\n     4\t    return int(x)");
    assert_eq!(out.data.total_lines, 7);
    assert_eq!((out.data.start_line, out.data.end_line), (3, 4));
    assert_eq!(out.data.truncated, 0);
    // end_line past the end is clamped.
    let out = t
        .read_file(&ReadFileArgs {
            path: "src/app.py".into(),
            start_line: Some(6),
            end_line: Some(100),
        })
        .expect("read");
    assert_eq!(out.data.end_line, 7);
    assert_eq!(out.data.lines.len(), 2);
}

#[test]
fn read_file_range_errors_name_line_count() {
    let (_d, t) = fixture();
    let err = t
        .read_file(&ReadFileArgs {
            path: "src/app.py".into(),
            start_line: Some(50),
            end_line: None,
        })
        .expect_err("past end");
    assert!(err.to_string().contains("has 7 lines"), "{err}");
    let err = t
        .read_file(&ReadFileArgs {
            path: "src/app.py".into(),
            start_line: Some(0),
            end_line: None,
        })
        .expect_err("zero");
    assert!(err.to_string().contains("numbered from 1"), "{err}");
    let err = t
        .read_file(&ReadFileArgs {
            path: "src/app.py".into(),
            start_line: Some(5),
            end_line: Some(2),
        })
        .expect_err("reversed");
    assert!(err.to_string().contains("before start_line"), "{err}");
}

#[test]
fn read_file_truncates_with_marker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    write(dir.path(), "big.txt", body.as_bytes());
    let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), Limits::default());
    let out = t
        .read_file(&ReadFileArgs {
            path: "big.txt".into(),
            ..ReadFileArgs::default()
        })
        .expect("read");
    assert_eq!(out.data.lines.len(), 2000);
    assert_eq!(out.data.truncated, 500);
    assert_eq!(out.data.next_start_line, Some(2001));
    assert!(out.text.ends_with(
        "... [truncated: 500 more lines ('big.txt' has 2500 lines); call read_file with start_line=2001 to continue]"
    ));
    // The byte budget cuts earlier, at a line boundary.
    let small = Limits {
        max_output_bytes: 100,
        ..Limits::default()
    };
    let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), small);
    let out = t
        .read_file(&ReadFileArgs {
            path: "big.txt".into(),
            ..ReadFileArgs::default()
        })
        .expect("read");
    let shown = out.data.lines.len();
    assert!(shown > 0 && shown < 10, "{shown}");
    assert_eq!(out.data.next_start_line, Some(shown + 1));
}

#[test]
fn read_file_refuses_binary_dirs_missing_and_escapes() {
    let (_d, t) = fixture();
    let read = |p: &str| {
        t.read_file(&ReadFileArgs {
            path: p.into(),
            ..ReadFileArgs::default()
        })
    };
    assert!(
        read("data.bin")
            .expect_err("bin")
            .to_string()
            .contains("binary")
    );
    assert!(
        read("src")
            .expect_err("dir")
            .to_string()
            .contains("directory")
    );
    assert!(
        read("src/nope.py")
            .expect_err("missing")
            .to_string()
            .contains("does not exist")
    );
    assert!(
        read("../x")
            .expect_err("escape")
            .to_string()
            .contains("leaves the repository root")
    );
    let empty = read("empty.txt").expect("empty");
    assert_eq!(empty.data.total_lines, 0);
    assert!(empty.text.contains("empty file"));
}

#[test]
fn read_file_cuts_very_long_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "min.js", "x".repeat(5000).as_bytes());
    let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), Limits::default());
    let out = t
        .read_file(&ReadFileArgs {
            path: "min.js".into(),
            ..ReadFileArgs::default()
        })
        .expect("read");
    assert!(out.text.ends_with("... [line cut: 3000 more characters]"));
}

fn grep(pattern: &str) -> GrepArgs {
    GrepArgs {
        pattern: pattern.into(),
        ..GrepArgs::default()
    }
}

#[test]
fn grep_ripgrep_format_sorted_skipping_ignored_and_binary() {
    let (_d, t) = fixture();
    let out = t.grep(&grep("parse")).expect("grep");
    assert_eq!(
        out.text,
        "README.md:2:Call parse() to parse.\nsrc/app.py:3:def parse(x):\nsrc/util.py:2:    return parse('1')"
    );
    assert_eq!(out.data.total_matches, 3);
    assert_eq!(out.data.total_files, 3);
    assert!(out.data.matches.iter().all(|m| m.path != "data.bin"));
    assert!(
        out.data
            .matches
            .iter()
            .all(|m| !m.path.starts_with("build/"))
    );
}

#[test]
fn grep_context_lines_and_separators() {
    let (_d, t) = fixture();
    let out = t
        .grep(&GrepArgs {
            context_lines: Some(1),
            glob: Some("src/*.py".into()),
            ..grep("def ")
        })
        .expect("grep");
    assert_eq!(
        out.text,
        "src/app.py-2-\nsrc/app.py:3:def parse(x):\nsrc/app.py-4-    return int(x)\n--\nsrc/util.py:1:def helper():\nsrc/util.py-2-    return parse('1')"
    );
    let first = &out.data.matches[0];
    assert_eq!(
        first.context_before,
        [NumberedLine {
            line: 2,
            text: String::new()
        }]
    );
    assert_eq!(first.context_after[0].line, 4);
}

#[test]
fn grep_truncates_and_counts_the_rest() {
    let (_d, t) = fixture();
    let out = t
        .grep(&GrepArgs {
            max_results: Some(1),
            case_insensitive: Some(true),
            ..grep("PARSE")
        })
        .expect("grep");
    assert_eq!(out.data.matches.len(), 1);
    assert_eq!(out.data.total_matches, 4);
    assert_eq!(out.data.truncated, 3);
    assert_eq!(out.data.truncated_files, 2);
    assert!(
        out.text
            .contains("... [truncated: 3 more matches in 2 files"),
        "{}",
        out.text
    );
}

#[test]
fn grep_byte_budget_cuts_at_line_boundary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body: String = (1..=200).map(|i| format!("match line {i}\n")).collect();
    write(dir.path(), "many.txt", body.as_bytes());
    let limits = Limits {
        max_output_bytes: 1000,
        ..Limits::default()
    };
    let t = TextTools::new(Sandbox::new(dir.path()).expect("sb"), limits);
    let out = t.grep(&grep("match")).expect("grep");
    let shown = out.data.matches.len();
    assert!(shown > 0 && shown < 100, "{shown}");
    assert_eq!(out.data.truncated, 200 - shown);
    assert!(
        out.text.contains("output size limit reached"),
        "{}",
        out.text
    );
    let last_row = out.text.lines().rev().nth(1).unwrap_or_default();
    assert_eq!(last_row, format!("many.txt:{shown}:match line {shown}"));
}

#[test]
fn grep_argument_errors() {
    let (_d, t) = fixture();
    let err = t.grep(&grep("parse(")).expect_err("bad regex");
    let msg = err.to_string();
    assert!(msg.contains("invalid regular expression 'parse('"), "{msg}");
    assert!(msg.contains("fixed_strings=true"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    let out = t
        .grep(&GrepArgs {
            fixed_strings: Some(true),
            ..grep("parse(")
        })
        .expect("literal");
    assert_eq!(out.data.total_matches, 3);
    let err = t
        .grep(&GrepArgs {
            context_lines: Some(21),
            ..grep("x")
        })
        .expect_err("context");
    assert!(err.to_string().contains("between 0 and 20"));
    assert!(t.grep(&grep("")).is_err());
    let none = t.grep(&grep("zzz_nothing")).expect("none");
    assert_eq!(none.text, "No matches for pattern 'zzz_nothing'.");
}
