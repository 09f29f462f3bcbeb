//! TypeScript, Go, Java and Rust through the real binary: a workspace of one small
//! file per language, indexed with the static encoder, where each definition is found
//! by `codebase_retrieval` from parts of its identifiers, and a Go method's
//! `get_implementation` reaches its receiver type in another file.

mod common;

use std::process::Command;

use common::*;
use serde_json::json;

/// Writes the polyglot workspace under `root`.
fn polyglot(root: &std::path::Path) {
    write(
        root,
        "web/router.ts",
        "import { Request } from './http';\n\n\
export class RouteMatcher {\n  constructor(private prefix: string) {}\n\n\
  matchPath(req: Request): boolean {\n    return req.url.startsWith(this.prefix);\n  }\n}\n",
    );
    write(
        root,
        "engine/engine.go",
        "package engine\n\n// Engine routes requests.\ntype Engine struct {\n\thandlers []string\n}\n",
    );
    write(
        root,
        "engine/handle.go",
        "package engine\n\n// HandleContext serves one request.\nfunc (e *Engine) HandleContext(path string) int {\n\treturn len(e.handlers) + len(path)\n}\n",
    );
    write(
        root,
        "src/main/java/shop/InventoryStore.java",
        "package shop;\n\npublic class InventoryStore {\n    private int stockLevel;\n\n    public int countItems() {\n        return stockLevel;\n    }\n}\n",
    );
    write(
        root,
        "src/walker.rs",
        "/// Walks a directory tree.\npub struct DirWalker {\n    root: String,\n}\n\nimpl DirWalker {\n    pub fn visit_entries(&self) -> usize {\n        self.root.len()\n    }\n}\n",
    );
    write(
        root,
        "README.md",
        "# Polyglot\n\nA workspace in four languages.\n",
    );
}

#[tokio::test]
async fn static_server_finds_definitions_in_typescript_go_java_and_rust() {
    let fx = fixture();
    let ws = fx.tmp.path().join("polyglot");
    polyglot(&ws);
    let static_dir = fx.tmp.path().join("static");
    let out = Command::new(env!("CARGO_BIN_EXE_navbench-retrieval"))
        .args(["distill", "--dims", "16", "--model-dir"])
        .arg(&fx.model)
        .arg("--out")
        .arg(&static_dir)
        .env("RUST_LOG", "off")
        .output()
        .expect("run distill");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let args = [
        "--encoder".as_ref(),
        "static".as_ref(),
        "--model-dir".as_ref(),
        static_dir.as_os_str(),
        "--data-dir".as_ref(),
        fx.data.as_os_str(),
        "--workspace".as_ref(),
        ws.as_os_str(),
    ];
    let client = start(&args, &[]).await;
    // Parts of camelCase / PascalCase / snake_case names, as an agent would write them.
    for (query, file, name) in [
        ("route matcher match path", "web/router.ts", "matchPath"),
        ("engine handle context", "engine/handle.go", "HandleContext"),
        (
            "inventory store count items",
            "src/main/java/shop/InventoryStore.java",
            "countItems",
        ),
        ("dir walker visit entries", "src/walker.rs", "visit_entries"),
    ] {
        let r = poll(
            &client,
            "codebase_retrieval",
            json!({"query": query, "top_k": 5}),
            |r| r.is_error == Some(false),
        )
        .await;
        let v = ok(&r);
        let files = result_files(&v, "file");
        assert_eq!(
            files.first().map(String::as_str),
            Some(file),
            "{query}: {v}"
        );
        let hits = v["results"].as_array().cloned().unwrap_or_default();
        assert!(
            hits.iter()
                .filter(|h| h["file"] == file)
                .any(|h| h["content"].as_str().is_some_and(|c| c.contains(name))),
            "{query}: {v}"
        );
    }

    let r = call(
        &client,
        "get_implementation",
        json!({"entity_name": "Engine.HandleContext", "scope": "logical"}),
    )
    .await;
    let v = ok(&r);
    assert_eq!(v["fell_back"], false, "{v}");
    let results = v["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 2, "{v}");
    assert_eq!(results[0]["file"], "engine/handle.go", "{v}");
    assert_eq!(results[0]["chunk_type"], "method", "{v}");
    assert_eq!(results[1]["file"], "engine/engine.go", "{v}");
    assert_eq!(results[1]["relation"], "type context", "{v}");
    assert_eq!(results[1]["name"], "Engine", "{v}");
    client.cancel().await.expect("close");
}
