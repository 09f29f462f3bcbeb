//! `navbench-text` on odd repositories (see `servers/support/tests/odd_repos`): it
//! lists, reads and greps each without panicking, and still finds the ordinary code.

#[path = "../../support/tests/odd_repos/mod.rs"]
mod odd_repos;

use odd_repos::{call, ok_text, spawn, text};
use serde_json::json;

async fn start(root: &std::path::Path) -> odd_repos::Client {
    spawn(
        env!("CARGO_BIN_EXE_navbench-text"),
        &["--root".as_ref(), root.as_os_str()],
    )
    .await
}

#[tokio::test]
async fn empty_and_python_free_repositories_answer() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for root in [
        odd_repos::empty(tmp.path()),
        odd_repos::no_python(tmp.path()),
    ] {
        let client = start(&root).await;
        call(&client, "list_files", json!({})).await;
        let g = call(&client, "grep", json!({"pattern": "def "})).await;
        assert!(!text(&g).is_empty());
        let r = call(&client, "read_file", json!({"path": "missing.py"})).await;
        assert_eq!(r.is_error, Some(true));
        client.cancel().await.expect("close");
    }
}

#[tokio::test]
async fn odd_files_are_listed_read_and_grepped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = odd_repos::odd(tmp.path());
    let client = start(&root).await;
    let listed = ok_text(&call(&client, "list_files", json!({})).await);
    assert!(
        listed.contains("pkg/generated.py") && listed.contains("pkg/crlf.py"),
        "{listed}"
    );
    let g = ok_text(
        &call(
            &client,
            "grep",
            json!({"pattern": "def (ordinary_function|crlf_method|bom_function|generated_lookup)"}),
        )
        .await,
    );
    for name in [
        "ordinary_function",
        "crlf_method",
        "bom_function",
        "generated_lookup",
    ] {
        assert!(g.contains(name), "grep missed {name}: {g:.800}");
    }
    // Binary, huge, deep and broken files read without panicking.
    for path in [
        "pkg/blob.py",
        "pkg/image.py",
        "pkg/generated.py",
        "pkg/deep.py",
        "pkg/broken.py",
    ] {
        call(&client, "read_file", json!({"path": path})).await;
        call(
            &client,
            "read_file",
            json!({"path": path, "start_line": 400000, "end_line": 400010}),
        )
        .await;
    }
    let crlf = ok_text(&call(&client, "read_file", json!({"path": "pkg/crlf.py"})).await);
    assert!(crlf.contains("crlf_method"), "{crlf}");
    call(
        &client,
        "grep",
        json!({"pattern": "key_0009999", "glob": "*.py"}),
    )
    .await;
    client.cancel().await.expect("close");
}

/// The languages other than Python, with what their files do to a text tool: a
/// minified JS bundle on one 300 kB line, a Latin-1 Java file, a UTF-16 TypeScript
/// file with a BOM, CRLF Go and a Rust file with a 5,000-character string literal.
#[tokio::test]
async fn every_language_is_listed_read_and_grepped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let write = |rel: &str, bytes: &[u8]| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    };
    let minified = format!(
        "!function(){{{}function findRoute(a){{return a}}}}();\n",
        "var x=1;".repeat(40_000)
    );
    write("web/dist/app.min.js", minified.as_bytes());
    let mut latin1 = b"package a;\n// Copyright J\xfcrgen M\xfcller\nclass Caf\xe9 {\n  int priceOf() { return 1; }\n}\n".to_vec();
    latin1.extend_from_slice(b"\n");
    write("src/main/java/a/Cafe.java", &latin1);
    let mut utf16 = vec![0xFF, 0xFE];
    for u in "export function parseCoupon(s: string) { return s; }\n".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    write("web/src/coupon.ts", &utf16);
    write(
        "gateway/queue.go",
        b"package queue\r\n\r\nfunc (q *Queue) Pop() int {\r\n\treturn 0\r\n}\r\n",
    );
    let long = format!(
        "pub fn banner() -> &'static str {{\n    \"{}\"\n}}\n",
        "=".repeat(5_000)
    );
    write("cli/src/banner.rs", long.as_bytes());

    let client = start(root).await;
    let listed = ok_text(&call(&client, "list_files", json!({})).await);
    for f in [
        "web/dist/app.min.js",
        "src/main/java/a/Cafe.java",
        "web/src/coupon.ts",
        "gateway/queue.go",
        "cli/src/banner.rs",
    ] {
        assert!(listed.contains(f), "{f} not listed: {listed}");
    }
    // A match on a minified line comes back cut, not as 300 kB.
    let g = ok_text(&call(&client, "grep", json!({"pattern": "findRoute"})).await);
    assert!(g.contains("app.min.js"), "{g:.600}");
    assert!(g.len() < 5_000, "grep returned {} bytes", g.len());
    // Latin-1 bytes do not hide the line or stop the search.
    let g = ok_text(&call(&client, "grep", json!({"pattern": "priceOf"})).await);
    assert!(g.contains("Cafe.java"), "{g}");
    // A Go method found on a CRLF file, read back by line.
    let g = ok_text(
        &call(
            &client,
            "grep",
            json!({"pattern": r"func \(q \*Queue\) Pop"}),
        )
        .await,
    );
    assert!(g.contains("gateway/queue.go"), "{g}");
    let r = ok_text(&call(&client, "read_file", json!({"path": "gateway/queue.go"})).await);
    assert!(r.contains("Pop()"), "{r}");
    let r = ok_text(&call(&client, "read_file", json!({"path": "cli/src/banner.rs"})).await);
    assert!(r.contains("banner") && r.len() < 5_000, "{} bytes", r.len());
    let r = ok_text(
        &call(
            &client,
            "read_file",
            json!({"path": "src/main/java/a/Cafe.java"}),
        )
        .await,
    );
    assert!(r.contains("priceOf"), "{r}");
    // UTF-16 is read as bytes: the call answers (it does not fail or hang).
    call(&client, "read_file", json!({"path": "web/src/coupon.ts"})).await;
    call(&client, "grep", json!({"pattern": "parseCoupon"})).await;
    client.cancel().await.expect("close");
}
