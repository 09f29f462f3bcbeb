//! Unit tests of the chunker. Expected chunk boundaries and span ids were produced by the
//! original (LocAgent's `EpicSplitter` with LocAgent's settings, tree-sitter 0.21.3 and
//! tree_sitter_languages 1.10.2) on the same sources.

use super::*;

fn chunks_of(source: &str) -> Vec<(usize, usize, Vec<String>)> {
    match chunk_source("m.py", source, &ChunkConfig::default()) {
        FileChunks::Chunks(c) => c
            .into_iter()
            .map(|c| (c.start_line, c.end_line, c.span_ids))
            .collect(),
        FileChunks::Rejected(e) => panic!("rejected: {e}"),
    }
}

fn spans(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// A module with a license header, a docstring, imports, a class with three ~150-token
/// methods and two such functions.
fn multi_source() -> String {
    fn body(name: &str, n: usize) -> Vec<String> {
        let mut out = vec![
            format!("def {name}(alpha, beta, gamma):"),
            format!("    \"\"\"Compute {name} from alpha, beta and gamma.\"\"\""),
        ];
        for i in 0..n {
            out.push(format!(
                "    value_{i} = alpha * {i} + beta - gamma / ({i} + 1)  # step {i}"
            ));
        }
        out.push("    return alpha".to_string());
        out
    }
    let mut lines: Vec<String> = [
        "# Copyright 2024 Example Authors",
        "# License: MIT",
        "\"\"\"Module docstring.\"\"\"",
        "import sys",
        "from os import path",
        "",
        "",
        "class Widget(object):",
        "    \"\"\"A widget.\"\"\"",
        "",
        "    size = 3",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for m in ["grow", "shrink", "paint"] {
        for l in body(m, 9) {
            lines.push(if l.is_empty() { l } else { format!("    {l}") });
        }
        lines.push(String::new());
    }
    lines.push(String::new());
    for f in ["helper_one", "helper_two"] {
        lines.extend(body(f, 9));
        lines.push(String::new());
        lines.push(String::new());
    }
    lines.push("if __name__ == '__main__':".to_string());
    lines.push("    helper_one(1, 2, 3)".to_string());
    lines.push(String::new());
    lines.join("\n")
}

#[test]
fn bm25_chunk_small_file_is_one_chunk() {
    let src = "\"\"\"Tiny module.\"\"\"\nimport os\n\n\ndef f(x):\n    return x + 1\n";
    assert_eq!(chunks_of(src), [(1, 7, spans(&["docstring", "f"]))]);
    let FileChunks::Chunks(c) = chunk_source("m.py", src, &ChunkConfig::default()) else {
        panic!("rejected")
    };
    assert_eq!(c[0].text, src.trim_end_matches('\n'));
    assert_eq!(c[0].tokens, tokens::count_tokens(&c[0].text));
}

#[test]
fn bm25_chunk_boundaries_follow_structures() {
    assert_eq!(
        chunks_of(&multi_source()),
        [
            (4, 24, spans(&["Widget", "Widget.grow", "docstring"])),
            (26, 37, spans(&["Widget.shrink"])),
            (39, 50, spans(&["Widget.paint"])),
            (53, 64, spans(&["helper_one"])),
            (67, 83, spans(&["helper_two", "impl"])),
        ]
    );
    // A method chunk shows its class header and hides the other members.
    let FileChunks::Chunks(c) = chunk_source("m.py", &multi_source(), &ChunkConfig::default())
    else {
        panic!("rejected")
    };
    assert!(
        c[1].text.starts_with("class Widget(object):\n"),
        "{}",
        c[1].text
    );
    assert!(c[1].text.contains("def shrink(") && !c[1].text.contains("def grow("));
    // The license header is dropped, and so is the docstring right after it (comments
    // following an ignored comment are ignored too).
    assert!(c[0].text.starts_with("import sys\n"), "{}", c[0].text);
}

#[test]
fn bm25_chunk_edge_cases_match_the_original() {
    // Empty file: no chunks.
    assert_eq!(chunks_of(""), []);
    // A syntax error tree-sitter recovers from still chunks (as in the original).
    assert_eq!(chunks_of("def f(:\n    pass\n"), [(1, 3, spans(&["f"]))]);
    // Semicolons are fine.
    assert_eq!(chunks_of("x = 1; y = 2\n"), [(1, 2, spans(&["impl"]))]);
    // Tab indentation: the original's CodeBlock rejects the whitespace, so no chunks.
    assert!(matches!(
        chunk_source("m.py", "def f():\n\treturn 1\n", &ChunkConfig::default()),
        FileChunks::Rejected(ParseFailure::BadPreCode { .. })
    ));
}

#[test]
fn bm25_chunk_corpus_files_follow_the_reader_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for f in [
        "ok.py",
        "a/b.py",
        "a-b/c.py",
        "tests/x.py",
        "a/test/z.py",
        "a/testing/v.py",
        "testsx/w.py",
        "test_root.py",
        "a/b_test.py",
        ".hid/h.py",
        "a/.h.py",
        "notes.txt",
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, "x = 1\n").expect("write");
    }
    let files: Vec<String> = list_corpus_files(root)
        .expect("list")
        .into_iter()
        .map(|f| f.rel_path)
        .collect();
    // `a/testing/` is dropped because its path starts with `a/test` (the original's
    // string-prefix test); `testsx/` likewise for `tests`. Sorted by path components.
    assert_eq!(files, ["a/b.py", "a-b/c.py", "ok.py"]);
}

#[test]
fn bm25_chunk_embed_text_has_the_metadata_header() {
    let c = Chunk {
        file_path: "pkg/m.py".into(),
        start_line: 1,
        end_line: 2,
        span_ids: spans(&["Foo", "Foo.bar"]),
        tokens: 3,
        text: "class Foo:\n    def bar(self): ...\n".into(),
    };
    assert_eq!(
        c.embed_text(),
        "file_path: pkg/m.py\ncategory: implementation\nspan_ids: ['Foo', 'Foo.bar']\n\nclass Foo:\n    def bar(self): ..."
    );
}

#[test]
fn bm25_chunk_utf8_decoding_drops_invalid_bytes() {
    assert_eq!(
        files::decode_utf8_ignore(b"a\xffb\xc3\xa9c\xe2\x82"),
        "abéc"
    );
}

#[test]
fn bm25_chunk_token_counts_treat_special_tokens_as_llama_index_does() {
    // llama-index encodes with allowed_special="all": `<|endoftext|>` is one token.
    assert_eq!(tokens::count_tokens("<|endoftext|>"), 1);
    assert_eq!(tokens::count_tokens(""), 0);
    assert_eq!(tokens::count_tokens("def f(x):"), 4); // tiktoken 0.8 cl100k: 4
}

/// The fast counter agrees with tiktoken on text that exercises every pre-tokenizer
/// alternative, on every prefix and suffix (so each piece also ends the text).
#[test]
fn fast_count_matches_tiktoken() {
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let samples = [
        "def f(x):\n    return x  \n\n\n  # it's 'S 'RE 'Ve 'lL 'd 'M 'T 'x\r\n\r\n \t\x0b\x0c y",
        "a  b   c\t\td \n e\n\n  \n  f  ",
        "12345 1234567 x1y22z333 ++-- (a)\n)\n\n  !!\r\n\r\n?? ?x  ?",
        "  \n\n\t\n   \t  foo.bar_baz(qux)[0]; return{'k': \"v\"}   ",
        "'''docstring'''\n\"\"\"\n    Text, with: punctuation! and 'quotes'.\n\"\"\"\n",
        "\x00\x01 \x7f x\x1fy '\n' 's's'",
        "    \n",
        " ",
        "\n",
        "x\n \n ",
        "x\n\n\n   \t",
        "x \n  \n\n  y  \n \t z\n\n",
        "''",
        "'",
    ];
    for s in samples {
        for k in 0..=s.len() {
            for t in [&s[..k], &s[k..]] {
                assert_eq!(tokens::count_tokens(t), bpe.count_ordinary(t), "text {t:?}");
                // The pieces encode, one by one, to tiktoken's token sequence.
                let mut by_piece = Vec::new();
                let mut i = 0;
                while i < t.len() {
                    let end = tokens::next_piece(t.as_bytes(), i);
                    assert!(end > i);
                    by_piece.extend(bpe.encode_ordinary(&t[i..end]));
                    i = end;
                }
                assert_eq!(by_piece, bpe.encode_ordinary(t), "text {t:?}");
            }
        }
    }
    // This crate's own sources, whole.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/chunk");
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if !text.contains("<|") {
            assert_eq!(tokens::count_tokens(&text), bpe.count_ordinary(&text));
        }
    }
}
