//! Drives the real binary over Streamable HTTP (`--http 127.0.0.1:0`) with raw
//! JSON-RPC POSTs (ureq): `GET /health`, the MCP handshake with its session id, every
//! tool, resource and prompt, the live-update path and bad input.

mod common;

use std::ffi::OsStr;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

struct Session {
    agent: ureq::Agent,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl Session {
    fn new(base: &str) -> Session {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .http_status_as_error(false)
            .build()
            .into();
        Session {
            agent,
            url: format!("{base}/mcp"),
            session: None,
            next_id: 1,
        }
    }

    /// POSTs one JSON-RPC message; returns the HTTP status and the JSON-RPC messages
    /// of the response (SSE `data:` lines or a JSON body).
    fn post(&mut self, message: &Value) -> (u16, Vec<Value>) {
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(s) = &self.session {
            req = req
                .header("Mcp-Session-Id", s)
                .header("MCP-Protocol-Version", "2025-06-18");
        }
        let mut resp = req.send(message.to_string()).expect("POST /mcp");
        let status = resp.status().as_u16();
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_string());
        }
        let body = resp.body_mut().read_to_string().unwrap_or_default();
        let mut out = Vec::new();
        if let Ok(v) = serde_json::from_str::<Value>(&body) {
            out.push(v);
        } else {
            for line in body.lines() {
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                {
                    out.push(v);
                }
            }
        }
        (status, out)
    }

    /// A request; returns its `result` (or the JSON-RPC `error` as `Err`).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        let (status, messages) =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = messages
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no reply to {method} (HTTP {status})"));
        match reply.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(reply["result"].clone()),
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
            .unwrap_or_else(|e| panic!("tools/call {tool} failed at the protocol level: {e}"))
    }
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

fn result_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn ok_http(result: &Value) -> Value {
    assert!(
        !is_error(result),
        "expected success: {}",
        result_text(result)
    );
    result["structuredContent"].clone()
}

fn err_http(result: &Value, needle: &str) {
    let t = result_text(result);
    assert!(is_error(result), "expected an error, got {t}");
    assert!(t.contains(needle), "{t:?} lacks {needle:?}");
}

#[test]
fn streamable_http_serves_health_tools_resources_and_prompts() {
    let fx = fixture();
    let server = spawn_http(&fx, &[OsStr::new("--allow-root"), fx.other.as_os_str()]);

    // GET /health.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .get(&format!("{}/health", server.base))
        .call()
        .expect("GET /health");
    assert_eq!(resp.status().as_u16(), 200);
    let health: Value =
        serde_json::from_str(&resp.body_mut().read_to_string().expect("body")).expect("json");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["server"], "navbench-retrieval");
    assert!(health["workspace"]["repo_id"].is_string(), "{health}");

    // Handshake.
    let mut s = Session::new(&server.base);
    let init = s
        .request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "navbench-test", "version": "0"}}),
        )
        .expect("initialize");
    assert_eq!(init["serverInfo"]["name"], "navbench-retrieval");
    assert!(init["capabilities"]["resources"].is_object());
    assert!(init["capabilities"]["prompts"].is_object());
    assert!(s.session.is_some(), "no Mcp-Session-Id header");
    let (status, _) = s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(status == 202 || status == 200, "{status}");

    let tools = s.request("tools/list", json!({})).expect("tools/list");
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names.len(), 9, "{names:?}");
    let cr = tools["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == "codebase_retrieval"))
        .cloned()
        .unwrap_or_default();
    assert!(
        cr["description"]
            .as_str()
            .is_some_and(|d| d.contains("CRITICAL RULES"))
    );
    assert_eq!(cr["inputSchema"]["required"], json!(["query"]));
    assert!(cr["outputSchema"].is_object());

    // codebase_retrieval, waiting for the start-up indexing.
    let start = Instant::now();
    let v = loop {
        let r = s.call(
            "codebase_retrieval",
            json!({"query": "login password", "top_k": 5}),
        );
        if !is_error(&r) {
            break ok_http(&r);
        }
        assert!(start.elapsed() < PATIENCE, "{}", result_text(&r));
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(v["results"][0]["file"], "pkg/auth.py", "{v}");
    assert!(
        v["metadata"]["totalResults"]
            .as_u64()
            .is_some_and(|n| n >= 1)
    );
    err_http(
        &s.call("codebase_retrieval", json!({"query": ""})),
        "query is empty",
    );
    err_http(
        &s.call("codebase_retrieval", json!({"query": "x", "top_k": -3})),
        "between 1 and 50",
    );

    // Live update over HTTP.
    write(
        &fx.workspace,
        "pkg/sprockets.py",
        "def align_sprockets(s):\n    return sorted(s)\n",
    );
    let start = Instant::now();
    loop {
        let v = ok_http(&s.call(
            "codebase_retrieval",
            json!({"query": "align_sprockets", "top_k": 3}),
        ));
        if v["results"][0]["file"] == "pkg/sprockets.py" {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the new file never appeared: {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // get_implementation.
    let v = ok_http(&s.call(
        "get_implementation",
        json!({"entity_name": "login", "scope": "logical"}),
    ));
    assert_eq!(v["results"][0]["name"], "login");
    err_http(
        &s.call("get_implementation", json!({"entity_name": ""})),
        "entity_name is empty",
    );

    // The repository tools.
    let other = fx.other.to_string_lossy().to_string();
    let v = ok_http(&s.call("index_repository", json!({"url_or_path": other})));
    let id = v["repo_id"].as_str().unwrap_or_default().to_string();
    let v = ok_http(&s.call("list_repositories", json!({})));
    assert_eq!(v["count"], 2);
    let v = ok_http(&s.call("get_repository_info", json!({"repo_id": &id[..6]})));
    assert_eq!(v["status"], "ready");
    let v = ok_http(&s.call(
        "search_code",
        json!({"repo_id": id, "query": "add_item", "chunk_type": "method"}),
    ));
    assert_eq!(v["results"][0]["name"], "Cart.add_item", "{v}");
    let v = ok_http(&s.call("update_repository", json!({"repo_id": id})));
    assert_eq!(v["files_changed"], 0);
    err_http(
        &s.call("query_code", json!({"repo_id": id, "question": "what?"})),
        "NAVBENCH_LLM_MODEL",
    );
    err_http(
        &s.call("search_code", json!({"repo_id": "zz", "query": "x"})),
        "Known repositories",
    );

    // Resources and prompts.
    let list = s
        .request("resources/list", json!({}))
        .expect("resources/list");
    assert!(
        list["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x["uri"] == "repositories://list"))
    );
    let t = s
        .request("resources/templates/list", json!({}))
        .expect("templates");
    assert_eq!(t["resourceTemplates"].as_array().map(Vec::len), Some(3));
    let r = s
        .request(
            "resources/read",
            json!({"uri": format!("code://{id}/shop/cart.py")}),
        )
        .expect("read");
    assert!(
        r["contents"][0]["text"]
            .as_str()
            .is_some_and(|c| c.contains("class Cart"))
    );
    let r = s
        .request(
            "resources/read",
            json!({"uri": format!("repository://{id}")}),
        )
        .expect("read");
    assert!(
        r["contents"][0]["text"]
            .as_str()
            .is_some_and(|c| c.contains("shop/cart.py"))
    );
    assert!(
        s.request("resources/read", json!({"uri": "chunk://nothing"}))
            .is_err()
    );
    let p = s.request("prompts/list", json!({})).expect("prompts/list");
    assert_eq!(p["prompts"].as_array().map(Vec::len), Some(3));
    let p = s
        .request("prompts/get", json!({"name": "code_review", "arguments": {"repo_id": id, "focus_area": "error handling"}}))
        .expect("prompts/get");
    assert!(
        p["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("error handling"))
    );
    assert!(s.request("prompts/get", json!({"name": "nope"})).is_err());

    let v = ok_http(&s.call("delete_repository", json!({"repo_id": id})));
    assert_eq!(v["success"], true);
}
