//! `navbench-retrieval` on odd repositories (see `servers/support/tests/odd_repos`):
//! each served as the `--workspace`, indexed, and searched without panicking; the
//! ordinary code (CRLF and BOM files included) is still found.

#[path = "../../support/tests/odd_repos/mod.rs"]
mod odd_repos;

use std::path::Path;
use std::time::{Duration, Instant};

use odd_repos::{Client, call, ok_text, spawn};
use serde_json::json;

async fn start(root: &Path, tmp: &Path) -> Client {
    let model = tmp.join("model");
    if !model.exists() {
        navbench_retrieval::model::write_tiny_model(&model, 3).expect("tiny model");
    }
    let data = tmp.join(format!(
        "data-{}",
        root.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    spawn(
        env!("CARGO_BIN_EXE_navbench-retrieval"),
        &[
            "--model-dir".as_ref(),
            model.as_os_str(),
            "--data-dir".as_ref(),
            data.as_os_str(),
            "--workspace".as_ref(),
            root.as_os_str(),
        ],
    )
    .await
}

/// The workspace's repo id once its start-up indexing is done.
async fn ready_workspace(client: &Client) -> String {
    let started = Instant::now();
    loop {
        let r = call(client, "list_repositories", json!({})).await;
        let v = r.structured_content.clone().unwrap_or_default();
        let ws = v["repositories"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["workspace"] == true).cloned())
            .unwrap_or_default();
        match ws["status"].as_str() {
            Some("ready") => return ws["repo_id"].as_str().unwrap_or_default().to_string(),
            Some("error") => panic!("the workspace failed to index: {ws}"),
            _ => {}
        }
        assert!(
            started.elapsed() < odd_repos::PER_CALL,
            "indexing never ended: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn empty_and_python_free_repositories_answer() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for root in [
        odd_repos::empty(tmp.path()),
        odd_repos::no_python(tmp.path()),
    ] {
        let client = start(&root, tmp.path()).await;
        let id = ready_workspace(&client).await;
        call(
            &client,
            "codebase_retrieval",
            json!({"query": "main entry point"}),
        )
        .await;
        call(
            &client,
            "search_code",
            json!({"repo_id": id, "query": "answer"}),
        )
        .await;
        call(
            &client,
            "get_implementation",
            json!({"entity_name": "main"}),
        )
        .await;
        call(&client, "get_repository_info", json!({"repo_id": id})).await;
        client.cancel().await.expect("close");
    }
}

#[tokio::test]
async fn odd_files_are_indexed_and_searched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = odd_repos::odd(tmp.path());
    let client = start(&root, tmp.path()).await;
    let id = ready_workspace(&client).await;
    for (name, body) in [
        ("ordinary_function", "return a + b"),
        ("CrlfClass.crlf_method", "'windows'"),
        ("bom_function", "'bom'"),
    ] {
        let found = ok_text(
            &call(
                &client,
                "get_implementation",
                json!({"entity_name": name, "scope": "minimal"}),
            )
            .await,
        );
        assert!(
            found.contains(body),
            "get_implementation {name}: {found:.800}"
        );
    }
    let hits = ok_text(
        &call(
            &client,
            "search_code",
            json!({"repo_id": id, "query": "ordinary_function adds two numbers"}),
        )
        .await,
    );
    assert!(hits.contains("pkg/normal.py"), "{hits:.800}");
    for query in [
        "level_80",
        "deep_expression",
        "broken_function",
        "key_00001234",
    ] {
        call(
            &client,
            "codebase_retrieval",
            json!({"query": query, "top_k": 50}),
        )
        .await;
        call(
            &client,
            "get_implementation",
            json!({"entity_name": query, "scope": "dependencies"}),
        )
        .await;
    }
    call(&client, "get_repository_info", json!({"repo_id": id})).await;
    client.cancel().await.expect("close");
}
