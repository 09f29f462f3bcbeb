//! Drives the real `navbench-retrieval` binary over stdio as a code-RAG server without a
//! workspace: repositories indexed from a directory and from a git URL, searched,
//! updated, read as resources, prompted about, failed and deleted. One server runs the
//! whole scenario (each step starts from the state the previous one left); the steps
//! are functions named for what they check. The model is the tiny random-weight BERT
//! the engine writes, so rankings rest on BM25 and the assertions on exact identifiers.

mod common;

use common::*;
use rmcp::model::{
    GetPromptRequestParams, JsonObject, ReadResourceRequestParams, ResourceContents,
};
use serde_json::{Value, json};

fn resource_text(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .filter_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn repository_tools_resources_and_prompts() {
    let fx = fixture();
    let client = start_with(&fx, false, &[]).await;
    without_a_repository(&client).await;
    let id = index_a_local_directory(&client, &fx).await;
    list_info_and_search(&client, &id).await;
    implementation_and_query_code(&client, &id).await;
    update_a_local_directory(&client, &fx, &id).await;
    index_and_update_a_git_url(&client, &fx, &id).await;
    resources(&client, &id).await;
    prompts(&client, &id).await;
    a_failed_clone_is_in_error(&client, &fx).await;
    delete_a_repository(&client, &fx, &id).await;
    client.cancel().await.expect("close");
}

/// Before any index: what each tool says to do instead.
async fn without_a_repository(client: &Client) {
    // Without --workspace, codebase_retrieval says what to do instead.
    let r = call(client, "codebase_retrieval", json!({"query": "cart"})).await;
    assert_tool_error(&r, "--workspace");
    let r = call(client, "list_repositories", json!({})).await;
    assert_eq!(ok(&r)["count"], 0);
    assert!(text(&r).contains("index_repository"));
    let r = call(
        client,
        "search_code",
        json!({"repo_id": "abc", "query": "x"}),
    )
    .await;
    assert_tool_error(&r, "index_repository");
}

/// index_repository on a local directory, bad input first; returns the repo id.
async fn index_a_local_directory(client: &Client, fx: &Fixture) -> String {
    // index_repository: a local directory, with bad input first.
    let other = fx.other.to_string_lossy().to_string();
    let r = call(
        client,
        "index_repository",
        json!({"url_or_path": "/definitely/not/here"}),
    )
    .await;
    assert_tool_error(&r, "neither an existing directory nor a git URL");
    let r = call(
        client,
        "index_repository",
        json!({"url_or_path": other, "include_patterns": ["["]}),
    )
    .await;
    assert_tool_error(&r, "include_patterns");
    let r = call(
        client,
        "index_repository",
        json!({"url_or_path": other, "branch": "main"}),
    )
    .await;
    assert_tool_error(&r, "git URLs only");
    let r = call(
        client,
        "index_repository",
        json!({"url_or_path": other, "wait_seconds": 601}),
    )
    .await;
    assert_tool_error(&r, "between 0 and 600");
    let r = call(client, "index_repository", json!({"url": other})).await;
    let v = ok(&r);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["status"], "ready");
    assert_eq!(v["files_processed"], 3);
    let id = v["repo_id"].as_str().unwrap_or_default().to_string();
    assert_eq!(id.len(), 16);
    id
}

/// list_repositories, get_repository_info by id prefix, search_code with its filters.
async fn list_info_and_search(client: &Client, id: &str) {
    let prefix = &id[..8];
    // list / info (by prefix) / search with filters.
    let v = ok(&call(client, "list_repositories", json!({})).await);
    assert_eq!(v["count"], 1);
    assert_eq!(v["repositories"][0]["status"], "ready");
    assert_eq!(v["repositories"][0]["name"], "other");
    let v = ok(&call(client, "get_repository_info", json!({"repo_id": prefix})).await);
    assert_eq!(v["repo_id"], id);
    assert_eq!(
        v["indexed_files"],
        json!(["docs/guide.md", "shop/cart.py", "shop/payment.py"])
    );
    let r = call(
        client,
        "get_repository_info",
        json!({"repo_id": "ffffffffffffffff0"}),
    )
    .await;
    assert_tool_error(&r, "list_repositories");
    let r = call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "total_price items"}),
    )
    .await;
    let v = ok(&r);
    assert_eq!(v["results"][0]["file"], "shop/cart.py", "{v}");
    assert!(text(&r).contains("[shop/cart.py:"));
    let chunk_uri = v["results"][0]["chunk_uri"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(chunk_uri.starts_with(&format!("chunk://{id}/shop/cart.py:")));
    let v = ok(&call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "cart items", "chunk_type": "text"}),
    )
    .await);
    assert!(v["results"].as_array().is_some_and(|a| !a.is_empty()));
    assert!(
        v["results"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|r| r["chunk_type"] == "text")
    );
    let v = ok(&call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "charge", "file_filter": "payment"}),
    )
    .await);
    assert_eq!(result_files(&v, "file"), ["shop/payment.py"]);
    let r = call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "x", "chunk_type": "lambda"}),
    )
    .await;
    assert_tool_error(&r, "unknown variant");
    let r = call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": ""}),
    )
    .await;
    assert_tool_error(&r, "query is empty");
    let r = call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "x", "top_k": 500}),
    )
    .await;
    assert_tool_error(&r, "between 1 and 50");
}

/// get_implementation on a repository; query_code without an endpoint.
async fn implementation_and_query_code(client: &Client, id: &str) {
    let prefix = &id[..8];
    // get_implementation on a repository.
    let v = ok(&call(
        client,
        "get_implementation",
        json!({"entity_name": "Cart.add_item", "repo_id": prefix}),
    )
    .await);
    assert_eq!(v["results"][0]["name"], "Cart.add_item");
    let r = call(client, "get_implementation", json!({"entity_name": "Cart"})).await;
    assert_tool_error(&r, "pass repo_id");

    // query_code without an endpoint names the settings.
    let r = call(
        client,
        "query_code",
        json!({"repo_id": prefix, "question": "How is the total computed?"}),
    )
    .await;
    assert_tool_error(&r, "NAVBENCH_LLM_BASE_URL");
    let r = call(
        client,
        "query_code",
        json!({"repo_id": prefix, "question": "q", "top_k": 21}),
    )
    .await;
    assert_tool_error(&r, "between 1 and 20");
}

/// update_repository on a local directory: a file check.
async fn update_a_local_directory(client: &Client, fx: &Fixture, id: &str) {
    let prefix = &id[..8];
    // update_repository on a local directory: a file check.
    write(
        &fx.other,
        "shop/cart.py",
        "class Cart:\n    def clear_all(self):\n        self.items = []\n",
    );
    write(
        &fx.other,
        "shop/refund.py",
        "def refund_order(order):\n    return order.refund()\n",
    );
    std::fs::remove_file(fx.other.join("shop/payment.py")).expect("rm");
    let r = call(client, "update_repository", json!({"repo_id": prefix})).await;
    let v = ok(&r);
    assert_eq!(v["method"], "file check", "{v}");
    assert_eq!(
        (
            v["files_added"].as_u64(),
            v["files_modified"].as_u64(),
            v["files_deleted"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{v}"
    );
    let v = ok(&call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "refund_order"}),
    )
    .await);
    assert_eq!(v["results"][0]["file"], "shop/refund.py");
    let v = ok(&call(client, "update_repository", json!({"repo_id": prefix})).await);
    assert_eq!(v["files_changed"], 0);
}

/// A git URL: clone, then update from the git diff.
async fn index_and_update_a_git_url(client: &Client, fx: &Fixture, id: &str) {
    // A git URL: clone, then update from the git diff.
    let upstream = fx.tmp.path().join("upstream");
    write(
        &upstream,
        "lib/core.py",
        "def compute_checksum(data):\n    return sum(data) % 256\n",
    );
    write(
        &upstream,
        "lib/io.py",
        "def read_blocks(stream):\n    return stream.read()\n",
    );
    let first = git_commit_all(&upstream, "first");
    let url = format!("file://{}", upstream.display());
    let v = ok(&call(
        client,
        "index_repository",
        json!({"url_or_path": url, "exclude_patterns": ["*.md"]}),
    )
    .await);
    assert_eq!(v["commit"], first.as_str(), "{v}");
    let git_id = v["repo_id"].as_str().unwrap_or_default().to_string();
    assert_ne!(git_id, id);
    write(
        &upstream,
        "lib/core.py",
        "def compute_crc(data):\n    return 0\n",
    );
    write(&upstream, "NOTES.md", "excluded\n");
    let second = git_commit_all(&upstream, "second");
    let v = ok(&call(client, "update_repository", json!({"repo_id": git_id})).await);
    assert_eq!(v["method"], "git diff", "{v}");
    assert_eq!(v["from_commit"], first.as_str());
    assert_eq!(v["to_commit"], second.as_str());
    assert_eq!(v["files_changed"], 2, "{v}");
    let v = ok(&call(
        client,
        "search_code",
        json!({"repo_id": git_id, "query": "compute_crc"}),
    )
    .await);
    assert_eq!(v["results"][0]["file"], "lib/core.py");
    let v = ok(&call(client, "get_repository_info", json!({"repo_id": git_id})).await);
    assert_eq!(v["indexed_files"], json!(["lib/core.py", "lib/io.py"]));
    assert_eq!(v["last_commit"], second.as_str());
}

/// Resources: the list, a repository, code by path, chunks by URI; bad URIs refused.
async fn resources(client: &Client, id: &str) {
    let prefix = &id[..8];
    // Resources.
    let resources = client.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"repositories://list"));
    assert!(
        uris.contains(&format!("repository://{id}").as_str()),
        "{uris:?}"
    );
    let templates = client
        .list_resource_templates(None)
        .await
        .expect("templates");
    let tpl: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    for t in [
        "repository://{repo_id}",
        "code://{repo_id}/{path}",
        "chunk://{repo_id}/{chunk_id}",
    ] {
        assert!(tpl.contains(&t), "{tpl:?}");
    }
    let read = |uri: String| async move {
        client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
    };
    let list: Value = serde_json::from_str(&resource_text(
        &read("repositories://list".into())
            .await
            .expect("list")
            .contents,
    ))
    .expect("json");
    assert_eq!(list["count"], 2);
    let repo: Value = serde_json::from_str(&resource_text(
        &read(format!("repository://{prefix}"))
            .await
            .expect("repo")
            .contents,
    ))
    .expect("json");
    assert_eq!(repo["repo_id"], id);
    let code = resource_text(
        &read(format!("code://{id}/shop/refund.py"))
            .await
            .expect("code")
            .contents,
    );
    assert!(code.contains("def refund_order"));
    assert!(read(format!("code://{id}/shop/nope.py")).await.is_err());
    assert!(read(format!("code://{id}/../../etc/passwd")).await.is_err());
    let v = ok(&call(
        client,
        "search_code",
        json!({"repo_id": prefix, "query": "refund_order"}),
    )
    .await);
    let chunk_uri = v["results"][0]["chunk_uri"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let chunk: Value = serde_json::from_str(&resource_text(
        &read(chunk_uri.clone()).await.expect("chunk").contents,
    ))
    .expect("json");
    assert_eq!(chunk["file"], "shop/refund.py");
    assert_eq!(chunk["name"], "refund_order");
    assert!(chunk["meta"]["calls"].is_array());
    let bare = chunk_uri.replace(&format!("{id}/"), "");
    let chunk: Value = serde_json::from_str(&resource_text(
        &read(bare).await.expect("bare chunk id").contents,
    ))
    .expect("json");
    assert_eq!(chunk["repo_id"], id);
    assert!(read("chunk://nope.py:1-2".into()).await.is_err());
    assert!(read("bogus://x".into()).await.is_err());
}

/// The three prompts, with and without their required argument.
async fn prompts(client: &Client, id: &str) {
    // Prompts.
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        ["analyze_repository", "code_review", "find_implementation"]
    );
    let mut args = JsonObject::new();
    args.insert("repo_id".into(), json!(id));
    args.insert("feature".into(), json!("cart totals"));
    let p = client
        .get_prompt(GetPromptRequestParams::new("find_implementation").with_arguments(args))
        .await
        .expect("prompt");
    let body = format!("{:?}", p.messages);
    assert!(
        body.contains("cart totals") && body.contains("search_code"),
        "{body}"
    );
    let mut args = JsonObject::new();
    args.insert("repo_url".into(), json!("pallets/flask"));
    let p = client
        .get_prompt(GetPromptRequestParams::new("analyze_repository").with_arguments(args))
        .await
        .expect("prompt");
    assert!(format!("{:?}", p.messages).contains("index_repository"));
    let mut args = JsonObject::new();
    args.insert("repo_id".into(), json!(id));
    let p = client
        .get_prompt(GetPromptRequestParams::new("code_review").with_arguments(args))
        .await
        .expect("prompt");
    assert!(
        format!("{:?}", p.messages).contains("code review")
            || format!("{:?}", p.messages).contains("Review")
    );
    assert!(
        client
            .get_prompt(GetPromptRequestParams::new("find_implementation"))
            .await
            .is_err()
    );
}

/// A clone that fails leaves the repository in `error` with the reason.
async fn a_failed_clone_is_in_error(client: &Client, fx: &Fixture) {
    // A clone that fails leaves the repository in 'error' with the reason.
    let missing = format!("file://{}", fx.tmp.path().join("no-such-repo").display());
    let r = call(client, "index_repository", json!({"url_or_path": missing})).await;
    assert_tool_error(&r, "clone failed");
    let v = ok(&call(client, "list_repositories", json!({})).await);
    let failed = v["repositories"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == "no-such-repo").cloned())
        .unwrap_or_default();
    assert_eq!(failed["status"], "error", "{v}");
    assert!(
        failed["error"]
            .as_str()
            .is_some_and(|e| e.contains("index_repository"))
    );
    let failed_id = failed["repo_id"].as_str().unwrap_or_default().to_string();
    let r = call(
        client,
        "search_code",
        json!({"repo_id": failed_id, "query": "x"}),
    )
    .await;
    assert_tool_error(&r, "in error");
}

/// delete_repository removes the entry and its data.
async fn delete_a_repository(client: &Client, fx: &Fixture, id: &str) {
    let prefix = &id[..8];
    // delete_repository.
    let v = ok(&call(client, "delete_repository", json!({"repo_id": prefix})).await);
    assert_eq!(v["success"], true);
    let r = call(client, "get_repository_info", json!({"repo_id": id})).await;
    assert_tool_error(&r, "no repository");
    assert!(!fx.data.join("repos").join(id).exists());
    let r = call(client, "delete_repository", json!({"repo_id": id})).await;
    assert_tool_error(&r, "no repository");
}
