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
