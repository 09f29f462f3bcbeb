//! `kill -9` during indexing, then a restart on the same data directory: the
//! repository comes back in `error` saying what to call, and indexing it again reuses
//! every vector the killed process had already shared (the embedding cache's packs,
//! written atomically after each group of chunks).

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use rmcp::ServiceExt as _;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use serde_json::json;

/// Vectors in the complete pack files under `dir` (checked records: key and vector).
fn packed_vectors(dir: &Path) -> usize {
    let mut n = 0;
    for model in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for pack in std::fs::read_dir(model.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let p = pack.path();
            if p.extension().is_none_or(|x| x != "pack") {
                continue;
            }
            let Ok(bytes) = std::fs::read(&p) else {
                continue;
            };
            // A records file (navbench_server_support::frame): a 28-byte header whose
            // bytes 12..20 hold the record length, then records of that length, each
            // followed by an 8-byte checksum.
            if bytes.len() < 28 {
                continue;
            }
            let record = u64::from_le_bytes(bytes[12..20].try_into().unwrap_or([0; 8])) as usize;
            n += (bytes.len() - 28) / (record + 8).max(9);
        }
    }
    n
}

/// A repository big enough that embedding it takes many groups of chunks.
fn big_repository(root: &Path, files: usize, functions: usize) {
    for f in 0..files {
        let body: String = (0..functions)
            .map(|i| format!("def function_{f}_{i}(value_{i}):\n    \"\"\"Handles case {i} of module {f}.\"\"\"\n    return value_{i} * {i} + {f}\n\n\n"))
            .collect();
        write(root, &format!("pkg/module_{f}.py"), &body);
    }
}

#[tokio::test]
async fn kill_during_indexing_then_restart_reuses_computed_vectors() {
    let fx = fixture();
    let big = fx.tmp.path().join("big");
    big_repository(&big, 40, 60);
    let args: Vec<std::ffi::OsString> = vec![
        "--model-dir".into(),
        fx.model.clone().into(),
        "--data-dir".into(),
        fx.data.clone().into(),
        "--allow-root".into(),
        big.clone().into(),
    ];
    let (transport, _) = TokioChildProcess::builder(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_navbench-retrieval")).configure(|cmd| {
            cmd.args(&args).env("RUST_LOG", "warn");
        }),
    )
    .stderr(Stdio::inherit())
    .spawn()
    .expect("spawn");
    let pid = transport.id().expect("pid");
    let client = ().serve(transport).await.expect("handshake");
    let source = big.to_string_lossy().into_owned();
    let v = ok(&call(
        &client,
        "index_repository",
        json!({"url_or_path": source, "wait_seconds": 0}),
    )
    .await);
    let id = v["repo_id"].as_str().unwrap_or_default().to_string();
    assert_eq!(v["status"], "indexing", "{v}");

    // Kill -9 once some vectors are shared, while the job still runs.
    let packs = fx.data.join("embeddings");
    let started = Instant::now();
    while packed_vectors(&packs) == 0 {
        assert!(started.elapsed() < PATIENCE, "no vectors were ever shared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    drop(client);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let computed = packed_vectors(&packs);

    // Restart: the repository is in error, saying what to call.
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_os_str()).collect();
    let client = start(&refs, &[]).await;
    let info = ok(&call(&client, "get_repository_info", json!({"repo_id": id})).await);
    assert_eq!(info["status"], "error", "{info}");
    let why = info["error_message"].as_str().unwrap_or_default();
    assert!(
        why.contains("interrupted") && why.contains("index_repository"),
        "{info}"
    );

    // Indexing again embeds only what was not computed before the kill.
    let v = ok(&call(
        &client,
        "index_repository",
        json!({"url_or_path": source, "wait_seconds": 600}),
    )
    .await);
    let chunks = v["chunks_indexed"].as_u64().unwrap_or(0) as usize;
    let embedded = v["chunks_embedded"].as_u64().unwrap_or(0) as usize;
    eprintln!(
        "crash recovery: {chunks} chunks, {computed} vectors shared before the kill, {embedded} embedded after"
    );
    assert!(
        chunks > computed,
        "the kill came after indexing ended ({computed} of {chunks})"
    );
    assert!(
        embedded + computed <= chunks,
        "vectors computed before the kill were embedded again: {v}"
    );
    assert!(embedded > 0);
    client.cancel().await.expect("close");
}
