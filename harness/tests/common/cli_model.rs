//! A scripted model on loopback for the real agent CLIs (`cli_agents.rs`): it plays
//! the *model* only, in the wire protocol each CLI speaks, streamed as the CLI asks:
//! - Anthropic Messages (`POST /v1/messages`, SSE `message_start` …
//!   `message_stop`) for Claude Code;
//! - the OpenAI Responses API (`POST /v1/responses`, SSE `response.created`,
//!   `response.output_item.done`, `response.completed`) for Codex CLI;
//! - the Gemini API (`POST /v1beta/models/M:streamGenerateContent?alt=sse`, SSE
//!   `data:` chunks; `:generateContent` as JSON) for Gemini CLI.
//!
//! Each request is answered with what the script returns for it ([`Turn`]): a call of
//! one tool, or a final text. Every response reports the same usage ([`USAGE`]), so
//! a test knows the totals the CLI should report. The endpoint records each request:
//! its body, the tools it offered the model (names as the CLI spells them) and how
//! long answering took.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What the model answers one request with.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Call this tool (as the CLI names it) with these arguments.
    Call(String, Value),
    /// Answer with this text.
    Answer(String),
}

/// One request as the script sees it.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
    /// The tools the request offered the model, as the CLI names them.
    pub tools: Vec<String>,
    /// Tool results already in the conversation.
    pub results: usize,
    /// The CLI asks for JSON of a schema (Gemini's router, …): not a turn of the agent.
    pub side_query: bool,
    pub took: Duration,
}

/// Per response: prompt tokens (of which `cached` read from a cache, and for Anthropic
/// `cache_write` written to one), completion tokens.
pub struct Usage {
    pub fresh: u64,
    pub cached: u64,
    pub cache_write: u64,
    pub completion: u64,
}

/// What every response reports.
pub const USAGE: Usage = Usage {
    fresh: 100,
    cached: 7,
    cache_write: 3,
    completion: 10,
};

type Script = dyn Fn(&Request) -> Turn + Send + Sync;

/// The endpoint: its base URL (no path) and the requests it answered.
pub struct Model {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl Model {
    /// The requests that were turns of the agent (not side queries).
    pub fn turns(&self) -> Vec<Request> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| !r.side_query)
            .cloned()
            .collect()
    }
}

/// Starts the endpoint; `script` answers each model request.
pub fn start(script: impl Fn(&Request) -> Turn + Send + Sync + 'static) -> Model {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let script: Arc<Script> = Arc::new(script);
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (script, seen) = (script.clone(), seen.clone());
            std::thread::spawn(move || serve(stream, &*script, &seen));
        }
    });
    Model { base_url, requests }
}

/// The first offered tool whose name ends with `suffix` (`grep` finds
/// `mcp__navbench__grep`, `mcp_navbench_grep`).
pub fn offered(req: &Request, suffix: &str) -> Option<String> {
    req.tools.iter().find(|t| t.ends_with(suffix)).cloned()
}

fn serve(mut stream: TcpStream, script: &Script, seen: &Mutex<Vec<Request>>) {
    let t0 = Instant::now();
    let Some(super::endpoint::HttpRequest {
        line: request_line,
        body,
        path,
        ..
    }) = super::endpoint::read_request(&stream)
    else {
        return;
    };
    if !request_line.starts_with("POST") {
        return respond(&mut stream, "application/json", "{}");
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let proto = if path.contains("/messages") {
        Proto::Anthropic
    } else if path.contains("/responses") {
        Proto::Responses
    } else if path.contains("enerateContent") {
        Proto::Gemini
    } else {
        return respond(&mut stream, "application/json", "{}");
    };
    let mut req = Request {
        tools: proto.tools(&body),
        results: proto.results(&body),
        side_query: body["generationConfig"]["responseMimeType"] == "application/json",
        path: path.clone(),
        body,
        took: Duration::ZERO,
    };
    let turn = if req.side_query {
        // Gemini CLI's router and next-speaker checks: JSON, answered neutrally.
        Turn::Answer(
            json!({"complexity_reasoning": "scripted", "complexity_score": 10,
                   "reasoning": "scripted", "next_speaker": "user"})
            .to_string(),
        )
    } else {
        script(&req)
    };
    let stream_it =
        req.body["stream"] == true || path.contains("stream") || proto == Proto::Responses;
    match proto {
        Proto::Anthropic if stream_it => sse(&mut stream, &anthropic_events(&req, &turn)),
        Proto::Anthropic => respond(&mut stream, "application/json", &anthropic_message(&turn)),
        Proto::Responses => sse(&mut stream, &responses_events(&turn)),
        Proto::Gemini if stream_it => {
            let chunk = format!("data: {}\r\n\r\n", gemini_response(&turn));
            raw_sse(&mut stream, &chunk)
        }
        Proto::Gemini => respond(&mut stream, "application/json", &gemini_response(&turn)),
    }
    req.took = t0.elapsed();
    seen.lock().unwrap().push(req);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Proto {
    Anthropic,
    Responses,
    Gemini,
}

impl Proto {
    fn tools(self, body: &Value) -> Vec<String> {
        let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
        match self {
            Proto::Anthropic => list(&body["tools"])
                .iter()
                .filter_map(|t| t["name"].as_str().map(String::from))
                .collect(),
            Proto::Responses => {
                let mut out = Vec::new();
                for t in list(&body["tools"]) {
                    if t["type"] == "namespace" {
                        let ns = t["name"].as_str().unwrap_or_default();
                        for inner in list(&t["tools"]) {
                            out.push(format!("{ns}__{}", inner["name"].as_str().unwrap_or("")));
                        }
                    } else {
                        out.push(
                            t["name"]
                                .as_str()
                                .or(t["type"].as_str())
                                .unwrap_or_default()
                                .to_string(),
                        );
                    }
                }
                out
            }
            Proto::Gemini => list(&body["tools"])
                .iter()
                .flat_map(|t| list(&t["functionDeclarations"]))
                .filter_map(|d| d["name"].as_str().map(String::from))
                .collect(),
        }
    }

    fn results(self, body: &Value) -> usize {
        let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
        match self {
            Proto::Anthropic => list(&body["messages"])
                .iter()
                .flat_map(|m| list(&m["content"]))
                .filter(|b| b["type"] == "tool_result")
                .count(),
            Proto::Responses => list(&body["input"])
                .iter()
                .filter(|i| {
                    i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output"
                })
                .count(),
            Proto::Gemini => list(&body["contents"])
                .iter()
                .flat_map(|c| list(&c["parts"]))
                .filter(|p| p.get("functionResponse").is_some())
                .count(),
        }
    }
}

fn respond(stream: &mut TcpStream, kind: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn raw_sse(stream: &mut TcpStream, text: &str) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(text.as_bytes());
    let _ = stream.flush();
}

fn sse(stream: &mut TcpStream, events: &[(&str, Value)]) {
    let text: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    raw_sse(stream, &text);
}

fn anthropic_usage(output: u64) -> Value {
    json!({"input_tokens": USAGE.fresh, "cache_read_input_tokens": USAGE.cached,
           "cache_creation_input_tokens": USAGE.cache_write, "output_tokens": output})
}

fn anthropic_events(req: &Request, turn: &Turn) -> Vec<(&'static str, Value)> {
    let model = req.body["model"].clone();
    let (block, delta, stop) = match turn {
        Turn::Call(name, args) => (
            json!({"type": "tool_use", "id": format!("toolu_{}", req.results + 1), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": args.to_string()}),
            "tool_use",
        ),
        Turn::Answer(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
    };
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_scripted", "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": anthropic_usage(1)}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": USAGE.completion}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn anthropic_message(turn: &Turn) -> String {
    let text = match turn {
        Turn::Answer(t) => t.clone(),
        Turn::Call(..) => String::new(),
    };
    json!({"id": "msg_scripted", "type": "message", "role": "assistant",
           "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
           "usage": anthropic_usage(USAGE.completion)})
    .to_string()
}

fn responses_events(turn: &Turn) -> Vec<(&'static str, Value)> {
    let item = match turn {
        Turn::Call(name, args) => {
            // Codex offers MCP tools in a namespace (`mcp__navbench` › `grep`).
            let (ns, short) = match name.rsplit_once("__") {
                Some((ns, short)) if ns.starts_with("mcp__") => (Some(ns), short),
                _ => (None, name.as_str()),
            };
            let mut item = json!({"type": "function_call", "id": "fc_scripted",
                "call_id": format!("call_{short}"), "name": short, "arguments": args.to_string()});
            if let Some(ns) = ns {
                item["namespace"] = json!(ns);
            }
            item
        }
        Turn::Answer(text) => json!({"type": "message", "id": "msg_scripted",
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    };
    let usage = json!({"input_tokens": USAGE.fresh + USAGE.cached,
        "input_tokens_details": {"cached_tokens": USAGE.cached},
        "output_tokens": USAGE.completion, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": USAGE.fresh + USAGE.cached + USAGE.completion});
    vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_scripted"}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_scripted", "usage": usage}}),
        ),
    ]
}

fn gemini_response(turn: &Turn) -> String {
    let part = match turn {
        Turn::Call(name, args) => json!({"functionCall": {"name": name, "args": args}}),
        Turn::Answer(text) => json!({"text": text}),
    };
    json!({"candidates": [{"content": {"role": "model", "parts": [part]},
            "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": USAGE.fresh + USAGE.cached,
            "cachedContentTokenCount": USAGE.cached, "candidatesTokenCount": USAGE.completion,
            "totalTokenCount": USAGE.fresh + USAGE.cached + USAGE.completion},
           "modelVersion": "scripted"})
    .to_string()
}
