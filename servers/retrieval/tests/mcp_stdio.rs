//! Drives the real `navbench-retrieval` binary over stdio (rmcp's child-process
//! client) as a workspace server: live updates, implementation scopes, query_code,
//! restarts, crash recovery and a missing model (the repository tools, resources and
//! prompts are in `repository_tools.rs`). The model is the tiny random-weight BERT the
//! engine writes, so rankings rest on BM25 and the assertions on exact identifiers.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

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
    // Wall-clock values are in the result's `_meta`, never in its structured result
    // or text, so the same search gives the same bytes.
    assert!(meta.get("lastIndexed").is_none() && meta.get("queryTimeMs").is_none());
    let r = call(
        &client,
        "codebase_retrieval",
        json!({"query": "login password"}),
    )
    .await;
    let times = &r.meta.as_ref().expect("_meta").0;
    assert!(times["lastIndexed"].is_string(), "{times:?}");
    assert!(times["queryTimeMs"].is_u64(), "{times:?}");
    assert!(!text(&r).contains("queryTimeMs"));
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
/// Asked for without the model, it fails saying how to install it.
#[tokio::test]
#[ignore = "needs the real all-MiniLM-L6-v2 (navbench-retrieval fetch-model, or NAVBENCH_MODEL_DIR); .ci/run runs it after the mini run"]
async fn real_minilm_finds_code_by_meaning_when_installed() {
    let dir = std::env::var_os("NAVBENCH_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            navbench_retrieval::model::default_model_dir(
                &navbench_server_support::cache::default_cache_dir(),
            )
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "no real model in {}: run `navbench-retrieval fetch-model` or set NAVBENCH_MODEL_DIR",
        dir.display()
    );
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
