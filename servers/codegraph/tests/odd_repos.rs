//! `navbench-codegraph` on odd repositories (see `servers/support/tests/odd_repos`):
//! it builds the graph of each and answers every kind of query without panicking, and
//! still finds the ordinary code (CRLF files included; BOM files are left out, as
//! LocAgent leaves them).

#[path = "../../support/tests/odd_repos/mod.rs"]
mod odd_repos;

use std::path::Path;

use odd_repos::{Client, call, ok_text, spawn, text};
use serde_json::json;

async fn start(root: &Path, cache: &Path) -> Client {
    let client = spawn(
        env!("CARGO_BIN_EXE_navbench-codegraph"),
        &[
            "--cache".as_ref(),
            cache.as_os_str(),
            "--allow-root".as_ref(),
            root.as_os_str(),
        ],
    )
    .await;
    let root = root.to_string_lossy().into_owned();
    let init = call(&client, "init_repository", json!({"repo_path": root})).await;
    assert!(!text(&init).is_empty());
    client
}

#[tokio::test]
async fn empty_and_python_free_repositories_answer() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("cache");
    for root in [
        odd_repos::empty(tmp.path()),
        odd_repos::no_python(tmp.path()),
    ] {
        let client = start(&root, &cache).await;
        call(&client, "explore_tree", json!({})).await;
        call(&client, "search_code", json!({"query": ["main"]})).await;
        call(&client, "search_entities", json!({"query": ["main"]})).await;
        call(&client, "get_dependencies", json!({"entities": ["/"]})).await;
        client.cancel().await.expect("close");
    }
}

#[tokio::test]
async fn odd_files_are_parsed_and_queried() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = odd_repos::odd(tmp.path());
    let client = start(&root, &tmp.path().join("cache")).await;
    let tree = ok_text(&call(&client, "explore_tree", json!({"path": "pkg"})).await);
    assert!(
        tree.contains("crlf.py") && tree.contains("generated.py"),
        "{tree:.800}"
    );
    for (entity, body) in [
        ("pkg/normal.py:ordinary_function", "return a + b"),
        ("pkg/crlf.py:CrlfClass.crlf_method", "'windows'"),
        ("pkg/generated.py:generated_lookup", "TABLE[k]"),
    ] {
        let code = ok_text(&call(&client, "get_code", json!({"entities": [entity]})).await);
        assert!(code.contains(body), "get_code {entity}: {code:.800}");
    }
    // A BOM makes Python's ast.parse of the decoded text fail, so LocAgent (and this
    // faithful port) leave the file out: asked for, it is an explained error.
    let bom = call(
        &client,
        "get_code",
        json!({"entities": ["pkg/bom.py:bom_function"]}),
    )
    .await;
    assert_eq!(bom.is_error, Some(true));
    assert!(text(&bom).contains("Hint"), "{}", text(&bom));
    for file in [
        "pkg/blob.py",
        "pkg/image.py",
        "pkg/broken.py",
        "pkg/deep.py",
        "pkg/generated.py",
    ] {
        call(
            &client,
            "get_dependencies",
            json!({"entities": [file], "depth": 3}),
        )
        .await;
        call(&client, "get_code", json!({"entities": [file]})).await;
        call(
            &client,
            "get_code_snippet",
            json!({"file": file, "start_line": 1, "end_line": 40}),
        )
        .await;
    }
    call(
        &client,
        "search_code",
        json!({"query": ["level_80", "key_00001234"]}),
    )
    .await;
    call(
        &client,
        "search_entities",
        json!({"query": ["level_89", "deep_expression"]}),
    )
    .await;
    client.cancel().await.expect("close");
}
