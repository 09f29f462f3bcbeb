//! Drives the real `navbench-retrieval` binary over stdio (rmcp's child-process
//! client) through every tool, resource and prompt, the live-update path, bad input,
//! restarts and crash recovery. The model is the tiny random-weight BERT the engine
//! writes, so rankings rest on BM25 and the assertions on exact identifiers.

mod common;

use std::time::Duration;

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

async fn workspace_ready(client: &Client) -> Value {
    let r = poll(
        client,
        "codebase_retrieval",
        json!({"query": "login password"}),
        |r| r.is_error == Some(false),
    )
    .await;
    ok(&r)
}

#[tokio::test]
async fn workspace_retrieval_live_updates_and_implementation_scopes() {
    let fx = fixture();
    let client = start_with(&fx, true, &[]).await;

    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("navbench-retrieval")
    );
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "codebase_retrieval",
            "delete_repository",
            "get_implementation",
            "get_repository_info",
            "index_repository",
            "list_repositories",
            "query_code",
            "search_code",
            "update_repository"
        ]
    );

    // codebase_retrieval: JSON text and structured content with the plan's fields.
    let v = workspace_ready(&client).await;
    let first = &v["results"][0];
    assert_eq!(first["file"], "pkg/auth.py", "{v}");
    assert!(
        first["content"]
            .as_str()
            .is_some_and(|c| c.contains("def login"))
    );
    let score = first["score"].as_f64().unwrap_or(-1.0);
    assert!((0.0..=1.0).contains(&score), "{score}");
    assert!(first["lines"].as_str().is_some_and(|l| l.contains('-')));
    assert!(first["reason"].as_str().is_some_and(|r| !r.is_empty()));
    let meta = &v["metadata"];
    assert!(
        meta["workspace"]
            .as_str()
            .is_some_and(|w| w.ends_with("ws"))
    );
    assert!(meta["lastIndexed"].is_string());
    assert!(meta["queryTimeMs"].is_u64());
    assert_eq!(
        meta["totalResults"].as_u64(),
        v["results"].as_array().map(|a| a.len() as u64)
    );
    let r = call(
        &client,
        "codebase_retrieval",
        json!({"query": "password", "top_k": 1}),
    )
    .await;
    let text_json: Value = serde_json::from_str(&text(&r)).expect("text is JSON");
    assert_eq!(text_json["results"].as_array().map(Vec::len), Some(1));

    // Bad input.
    let r = call(&client, "codebase_retrieval", json!({"query": "   "})).await;
    assert_tool_error(&r, "query is empty");
    let r = call(
        &client,
        "codebase_retrieval",
        json!({"query": "x".repeat(1001)}),
    )
    .await;
    assert_tool_error(&r, "at most 1000");
    let r = call(
        &client,
        "codebase_retrieval",
        json!({"query": "x", "top_k": 0}),
    )
    .await;
    assert_tool_error(&r, "between 1 and 50");
    let r = call(
        &client,
        "codebase_retrieval",
        json!({"query": "x", "top_k": 51}),
    )
    .await;
    assert_tool_error(&r, "between 1 and 50");
    let r = call(&client, "codebase_retrieval", json!({"q": "x"})).await;
    assert_tool_error(&r, "Example of valid arguments");
    let r = call(&client, "codebase_retrieval", json!({"query": 5})).await;
    assert_tool_error(&r, "invalid arguments");

    // get_implementation scopes on the workspace.
    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "login"}),
    )
    .await;
    let v = ok(&r);
    assert_eq!(v["scope"], "minimal");
    assert_eq!(v["results"][0]["name"], "login");
    assert_eq!(v["results"][0]["relation"], "entity");
    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "login", "scope": "logical"}),
    )
    .await;
    let v = ok(&r);
    let names: Vec<&str> = v["results"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(names.contains(&"_check"), "{v}");
    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "pkg/auth.py:login", "scope": "dependencies"}),
    )
    .await;
    let v = ok(&r);
    let names: Vec<&str> = v["results"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(names.contains(&"hash_password"), "{v}");
    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "logn"}),
    )
    .await;
    assert_tool_error(&r, "no function, class or method named 'logn'");
    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "login", "scope": "everything"}),
    )
    .await;
    assert_tool_error(&r, "invalid arguments");

    // Live update: a new file becomes searchable without any tool call.
    write(
        &fx.workspace,
        "pkg/widgets.py",
        "def frobnicate_widgets(widgets):\n    return [w.frobnicate() for w in widgets]\n",
    );
    let r = poll(
        &client,
        "codebase_retrieval",
        json!({"query": "frobnicate_widgets", "top_k": 3}),
        |r| {
            r.structured_content.as_ref().is_some_and(|v| {
                result_files(v, "file").first().map(String::as_str) == Some("pkg/widgets.py")
            })
        },
    )
    .await;
    ok(&r);
    // An edit replaces the old content; a deletion removes it.
    write(
        &fx.workspace,
        "pkg/widgets.py",
        "def defrobnicate_gadgets(gadgets):\n    return list(gadgets)\n",
    );
    poll(
        &client,
        "codebase_retrieval",
        json!({"query": "defrobnicate_gadgets", "top_k": 3}),
        |r| {
            r.structured_content.as_ref().is_some_and(|v| {
                v["results"][0]["content"]
                    .as_str()
                    .is_some_and(|c| c.contains("defrobnicate_gadgets"))
            })
        },
    )
    .await;
    std::fs::remove_file(fx.workspace.join("pkg/widgets.py")).expect("rm");
    poll(
        &client,
        "codebase_retrieval",
        json!({"query": "defrobnicate_gadgets", "top_k": 50}),
        |r| {
            r.structured_content
                .as_ref()
                .is_some_and(|v| !result_files(v, "file").contains(&"pkg/widgets.py".to_string()))
        },
    )
    .await;

    // The workspace is a registered repository that cannot be deleted or updated.
    let v = ok(&call(&client, "list_repositories", json!({})).await);
    assert_eq!(v["count"], 1);
    assert_eq!(v["repositories"][0]["workspace"], true);
    let ws_id = v["repositories"][0]["repo_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let r = call(&client, "delete_repository", json!({"repo_id": ws_id})).await;
    assert_tool_error(&r, "cannot be deleted");
    let r = call(&client, "update_repository", json!({"repo_id": ws_id})).await;
    assert_tool_error(&r, "re-indexed automatically");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn repository_tools_resources_and_prompts() {
    let fx = fixture();
    let client = start_with(&fx, false, &[]).await;

    // Without --workspace, codebase_retrieval says what to do instead.
    let r = call(&client, "codebase_retrieval", json!({"query": "cart"})).await;
    assert_tool_error(&r, "--workspace");
    let r = call(&client, "list_repositories", json!({})).await;
    assert_eq!(ok(&r)["count"], 0);
    assert!(text(&r).contains("index_repository"));
    let r = call(
        &client,
        "search_code",
        json!({"repo_id": "abc", "query": "x"}),
    )
    .await;
    assert_tool_error(&r, "index_repository");

    // index_repository: a local directory, with bad input first.
    let other = fx.other.to_string_lossy().to_string();
    let r = call(
        &client,
        "index_repository",
        json!({"url_or_path": "/definitely/not/here"}),
    )
    .await;
    assert_tool_error(&r, "neither an existing directory nor a git URL");
    let r = call(
        &client,
        "index_repository",
        json!({"url_or_path": other, "include_patterns": ["["]}),
    )
    .await;
    assert_tool_error(&r, "include_patterns");
    let r = call(
        &client,
        "index_repository",
        json!({"url_or_path": other, "branch": "main"}),
    )
    .await;
    assert_tool_error(&r, "git URLs only");
    let r = call(
        &client,
        "index_repository",
        json!({"url_or_path": other, "wait_seconds": 601}),
    )
    .await;
    assert_tool_error(&r, "between 0 and 600");
    let r = call(&client, "index_repository", json!({"url": other})).await;
    let v = ok(&r);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["status"], "ready");
    assert_eq!(v["files_processed"], 3);
    let id = v["repo_id"].as_str().unwrap_or_default().to_string();
    assert_eq!(id.len(), 16);
    let prefix = &id[..8];

    // list / info (by prefix) / search with filters.
    let v = ok(&call(&client, "list_repositories", json!({})).await);
    assert_eq!(v["count"], 1);
    assert_eq!(v["repositories"][0]["status"], "ready");
    assert_eq!(v["repositories"][0]["name"], "other");
    let v = ok(&call(&client, "get_repository_info", json!({"repo_id": prefix})).await);
    assert_eq!(v["repo_id"], id.as_str());
    assert_eq!(
        v["indexed_files"],
        json!(["docs/guide.md", "shop/cart.py", "shop/payment.py"])
    );
    let r = call(
        &client,
        "get_repository_info",
        json!({"repo_id": "ffffffffffffffff0"}),
    )
    .await;
    assert_tool_error(&r, "list_repositories");
    let r = call(
        &client,
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
        &client,
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
        &client,
        "search_code",
        json!({"repo_id": prefix, "query": "charge", "file_filter": "payment"}),
    )
    .await);
    assert_eq!(result_files(&v, "file"), ["shop/payment.py"]);
    let r = call(
        &client,
        "search_code",
        json!({"repo_id": prefix, "query": "x", "chunk_type": "lambda"}),
    )
    .await;
    assert_tool_error(&r, "unknown variant");
    let r = call(
        &client,
        "search_code",
        json!({"repo_id": prefix, "query": ""}),
    )
    .await;
    assert_tool_error(&r, "query is empty");
    let r = call(
        &client,
        "search_code",
        json!({"repo_id": prefix, "query": "x", "top_k": 500}),
    )
    .await;
    assert_tool_error(&r, "between 1 and 50");

    // get_implementation on a repository.
    let v = ok(&call(
        &client,
        "get_implementation",
        json!({"entity_name": "Cart.add_item", "repo_id": prefix}),
    )
    .await);
    assert_eq!(v["results"][0]["name"], "Cart.add_item");
    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "Cart"}),
    )
    .await;
    assert_tool_error(&r, "pass repo_id");

    // query_code without an endpoint names the settings.
    let r = call(
        &client,
        "query_code",
        json!({"repo_id": prefix, "question": "How is the total computed?"}),
    )
    .await;
    assert_tool_error(&r, "NAVBENCH_LLM_BASE_URL");
    let r = call(
        &client,
        "query_code",
        json!({"repo_id": prefix, "question": "q", "top_k": 21}),
    )
    .await;
    assert_tool_error(&r, "between 1 and 20");

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
    let r = call(&client, "update_repository", json!({"repo_id": prefix})).await;
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
        &client,
        "search_code",
        json!({"repo_id": prefix, "query": "refund_order"}),
    )
    .await);
    assert_eq!(v["results"][0]["file"], "shop/refund.py");
    let v = ok(&call(&client, "update_repository", json!({"repo_id": prefix})).await);
    assert_eq!(v["files_changed"], 0);

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
        &client,
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
    let v = ok(&call(&client, "update_repository", json!({"repo_id": git_id})).await);
    assert_eq!(v["method"], "git diff", "{v}");
    assert_eq!(v["from_commit"], first.as_str());
    assert_eq!(v["to_commit"], second.as_str());
    assert_eq!(v["files_changed"], 2, "{v}");
    let v = ok(&call(
        &client,
        "search_code",
        json!({"repo_id": git_id, "query": "compute_crc"}),
    )
    .await);
    assert_eq!(v["results"][0]["file"], "lib/core.py");
    let v = ok(&call(&client, "get_repository_info", json!({"repo_id": git_id})).await);
    assert_eq!(v["indexed_files"], json!(["lib/core.py", "lib/io.py"]));
    assert_eq!(v["last_commit"], second.as_str());

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
    let read = |uri: String| {
        let client = &client;
        async move {
            client
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
        }
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
    assert_eq!(repo["repo_id"], id.as_str());
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
        &client,
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
    assert_eq!(chunk["repo_id"], id.as_str());
    assert!(read("chunk://nope.py:1-2".into()).await.is_err());
    assert!(read("bogus://x".into()).await.is_err());

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

    // A clone that fails leaves the repository in 'error' with the reason.
    let missing = format!("file://{}", fx.tmp.path().join("no-such-repo").display());
    let r = call(&client, "index_repository", json!({"url_or_path": missing})).await;
    assert_tool_error(&r, "clone failed");
    let v = ok(&call(&client, "list_repositories", json!({})).await);
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
        &client,
        "search_code",
        json!({"repo_id": failed_id, "query": "x"}),
    )
    .await;
    assert_tool_error(&r, "in error");

    // delete_repository.
    let v = ok(&call(&client, "delete_repository", json!({"repo_id": prefix})).await);
    assert_eq!(v["success"], true);
    let r = call(&client, "get_repository_info", json!({"repo_id": id})).await;
    assert_tool_error(&r, "no repository");
    assert!(!fx.data.join("repos").join(&id).exists());
    let r = call(&client, "delete_repository", json!({"repo_id": id})).await;
    assert_tool_error(&r, "no repository");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn query_code_answers_with_checked_citations() {
    let fx = fixture();
    let (base, llm) = canned_llm(
        "Totals come from Cart.total_price [shop/cart.py:8-9], which sums item prices.",
        1,
    );
    let client = start_with(
        &fx,
        false,
        &[
            ("NAVBENCH_LLM_BASE_URL", base.as_str()),
            ("NAVBENCH_LLM_MODEL", "canned-model"),
            ("NAVBENCH_LLM_API_KEY", "test-key"),
        ],
    )
    .await;
    let other = fx.other.to_string_lossy().to_string();
    let v = ok(&call(&client, "index_repository", json!({"url_or_path": other})).await);
    let id = v["repo_id"].as_str().unwrap_or_default().to_string();
    let r = call(
        &client,
        "query_code",
        json!({"repo_id": id, "question": "How is the cart total price computed?", "top_k": 20}),
    )
    .await;
    let v = ok(&r);
    assert_eq!(v["model"], "canned-model");
    assert_eq!(v["grounded"], true, "{v}");
    assert_eq!(
        v["citations"],
        json!([{"file_path": "shop/cart.py", "start_line": 8, "end_line": 9, "verified": true}])
    );
    assert!(v["evidence"].as_array().is_some_and(|e| !e.is_empty()));
    assert!(text(&r).contains("grounded: true"));
    let requests = llm.join().expect("llm thread");
    assert_eq!(requests.len(), 1);
    assert!(requests[0].starts_with("POST /v1/chat/completions"));
    assert!(requests[0].contains("Bearer test-key"));
    assert!(requests[0].contains("How is the cart total price computed?"));
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn registry_survives_restarts_and_crashes() {
    let fx = fixture();
    let other = fx.other.to_string_lossy().to_string();
    let id = {
        let client = start_with(&fx, false, &[]).await;
        let v = ok(&call(&client, "index_repository", json!({"url_or_path": other})).await);
        client.cancel().await.expect("close");
        v["repo_id"].as_str().unwrap_or_default().to_string()
    };
    // Simulate a crash mid-indexing of a second repository: its record says 'indexing'.
    let registry_path = fx.data.join("registry.json");
    let mut records: Vec<Value> =
        serde_json::from_slice(&std::fs::read(&registry_path).expect("registry")).expect("json");
    let mut crashed = records[0].clone();
    crashed["id"] = json!("00000000deadbeef");
    crashed["name"] = json!("crashed");
    crashed["status"] = json!("indexing");
    records.push(crashed);
    std::fs::write(&registry_path, serde_json::to_vec(&records).expect("json")).expect("write");

    let client = start_with(&fx, false, &[]).await;
    let v = ok(&call(&client, "list_repositories", json!({})).await);
    assert_eq!(v["count"], 2);
    let by_id = |rid: &str| {
        v["repositories"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["repo_id"] == rid).cloned())
            .unwrap_or_default()
    };
    assert_eq!(by_id(&id)["status"], "ready");
    let crashed = by_id("00000000deadbeef");
    assert_eq!(crashed["status"], "error");
    assert!(
        crashed["error"]
            .as_str()
            .is_some_and(|e| e.contains("interrupted"))
    );
    // The ready one is searchable right away from the persisted index.
    let v = ok(&call(
        &client,
        "search_code",
        json!({"repo_id": id, "query": "charge_card"}),
    )
    .await);
    assert_eq!(v["results"][0]["file"], "shop/payment.py");
    // The crashed one refuses searches with the reason.
    let r = call(
        &client,
        "search_code",
        json!({"repo_id": "00000000", "query": "x"}),
    )
    .await;
    assert_tool_error(&r, "interrupted");
    // A background index that is not waited for reports 'indexing' and then becomes ready.
    let v = ok(&call(
        &client,
        "index_repository",
        json!({"url_or_path": other, "wait_seconds": 0}),
    )
    .await);
    assert!(v["status"] == "indexing" || v["status"] == "ready", "{v}");
    poll(
        &client,
        "get_repository_info",
        json!({"repo_id": id}),
        |r| {
            r.structured_content
                .as_ref()
                .is_some_and(|v| v["status"] == "ready")
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn missing_model_fails_with_an_actionable_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navbench-retrieval"))
        .arg("--model-dir")
        .arg(tmp.path().join("none"))
        .arg("--data-dir")
        .arg(tmp.path().join("data"))
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("navbench-retrieval fetch-model"), "{err}");
    assert!(err.contains("--model-dir"), "{err}");
}

/// With the real all-MiniLM-L6-v2 installed (`navbench-retrieval fetch-model`, or
/// NAVBENCH_MODEL_DIR), a query sharing no keyword with the code still finds it.
#[tokio::test]
async fn real_minilm_finds_code_by_meaning_when_installed() {
    let dir = std::env::var_os("NAVBENCH_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            navbench_retrieval::model::default_model_dir(
                &navbench_server_support::cache::default_cache_dir(),
            )
        });
    if !dir.join("model.safetensors").is_file() {
        eprintln!(
            "skipped: no real model in {} (run `navbench-retrieval fetch-model`)",
            dir.display()
        );
        return;
    }
    let fx = fixture();
    let args: Vec<&std::ffi::OsStr> = vec![
        "--model-dir".as_ref(),
        dir.as_os_str(),
        "--data-dir".as_ref(),
        fx.data.as_os_str(),
        "--workspace".as_ref(),
        fx.workspace.as_os_str(),
    ];
    let client = start(&args, &[]).await;
    let r = poll(
        &client,
        "codebase_retrieval",
        json!({"query": "verify a user's credentials", "top_k": 3}),
        |r| r.is_error == Some(false),
    )
    .await;
    let v = ok(&r);
    assert_eq!(v["results"][0]["file"], "pkg/auth.py", "{v}");
    client.cancel().await.expect("close");
}
