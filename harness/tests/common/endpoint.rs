//! A scripted Chat Completions endpoint on loopback, for the agent loop's edge cases
//! only: it fakes the model (never the harness or a server), answering each request
//! with what a script returns for it. The real model is in `agent_llm.rs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// What the script answers one request with.
pub enum Reply {
    /// HTTP status, extra headers, body.
    Http(u16, Vec<(String, String)>, String),
    /// Wait this long, then close without answering.
    Hang(Duration),
}

impl Reply {
    /// A 200 with one assistant message.
    pub fn message(message: Value, usage: Option<(u64, u64)>) -> Reply {
        let mut body = serde_json::json!({
            "id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        });
        if let Some((p, c)) = usage {
            body["usage"] = serde_json::json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
        }
        Reply::Http(200, Vec::new(), body.to_string())
    }

    /// A final answer.
    pub fn answer(text: &str) -> Reply {
        Reply::message(
            serde_json::json!({"role": "assistant", "content": text}),
            Some((100, 10)),
        )
    }

    /// Tool calls: (name, raw arguments string).
    pub fn calls(calls: &[(&str, &str)]) -> Reply {
        let tc: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (n, a))| serde_json::json!({"id": format!("c{i}"), "type": "function", "function": {"name": n, "arguments": a}}))
            .collect();
        Reply::message(
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": tc}),
            Some((100, 10)),
        )
    }
}

/// One chat request as the endpoint received it.
pub struct Req {
    /// 0-based among the requests the script sees.
    pub n: usize,
    pub body: Value,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    /// The request target: path and query.
    pub path: String,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Script = dyn Fn(&Req) -> Reply + Send + Sync;

/// The endpoint: its base URL and every request body its script answered, in order,
/// and (for [`start`]) the pre-flight probes answered on the side.
pub struct Endpoint {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
    pub probes: Arc<Mutex<Vec<Value>>>,
}

/// True for the harness's pre-flight: one token, "Reply with OK.".
pub fn is_probe(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["content"] == "Reply with OK.")
}

/// Starts the endpoint; `script(n, body)` answers the n-th (0-based) chat request.
/// The pre-flight probe is answered 200 on the side (kept in `probes`), so scripts
/// count the conversation's requests only; `GET /v1/models` is answered 200.
pub fn start(script: impl Fn(usize, &Value) -> Reply + Send + Sync + 'static) -> Endpoint {
    serve_all(Arc::new(move |r: &Req| script(r.n, &r.body)), true)
}

/// Starts the endpoint with `script` seeing every request, the probe included, with
/// its headers and path (the provider endpoints of `providers.rs`).
pub fn start_req(script: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Endpoint {
    serve_all(Arc::new(script), false)
}

fn serve_all(script: Arc<Script>, probes_aside: bool) -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let probes = Arc::new(Mutex::new(Vec::new()));
    let (seen, probed) = (requests.clone(), probes.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (script, seen, probed) = (script.clone(), seen.clone(), probed.clone());
            std::thread::spawn(move || {
                serve(stream, &*script, &seen, probes_aside.then_some(&*probed))
            });
        }
    });
    Endpoint {
        base_url,
        requests,
        probes,
    }
}

/// One HTTP request as the scripted endpoints read it.
pub struct HttpRequest {
    /// The request line (`POST /v1/chat/completions HTTP/1.1`).
    pub line: String,
    /// Header names in lower case, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The request line's path.
    pub path: String,
}

/// Reads one request from `stream` (headers, then `content-length` bytes of body);
/// `None` when the client sent nothing.
pub fn read_request(stream: &TcpStream) -> Option<HttpRequest> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut length = 0usize;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    Some(HttpRequest {
        line,
        headers,
        body,
        path,
    })
}

fn serve(
    mut stream: TcpStream,
    script: &Script,
    seen: &Mutex<Vec<Value>>,
    probes: Option<&Mutex<Vec<Value>>>,
) {
    let Some(HttpRequest {
        line: request_line,
        headers,
        body,
        path,
    }) = read_request(&stream)
    else {
        return;
    };
    let reply = if request_line.starts_with("GET") {
        Reply::Http(200, Vec::new(), r#"{"data":[]}"#.to_string())
    } else {
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        match probes {
            Some(p) if is_probe(&v) => {
                p.lock().unwrap().push(v);
                Reply::answer("OK")
            }
            _ => {
                let n = {
                    let mut s = seen.lock().unwrap();
                    s.push(v.clone());
                    s.len() - 1
                };
                script(&Req {
                    n,
                    body: v,
                    headers,
                    path,
                })
            }
        }
    };
    match reply {
        Reply::Hang(d) => std::thread::sleep(d),
        Reply::Http(status, headers, body) => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    }
}

/// The number of assistant turns already in a request's conversation.
pub fn turns_so_far(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|x| x["role"] == "assistant").count())
}

/// An agent file for `base_url` with `extra` TOML lines, written under `dir`.
pub fn agent_file(dir: &std::path::Path, base_url: &str, extra: &str) -> std::path::PathBuf {
    let p = dir.join("agent.toml");
    std::fs::write(
        &p,
        format!("base_url = \"{base_url}\"\nmodel = \"scripted\"\nmax_retries = 2\n{extra}\n"),
    )
    .unwrap();
    p
}

/// Runs the text variant on one instance (`acme__shop-1`) into `out` with the agent
/// file [`agent_file`] writes for `base_url` and `extra_toml`, and `extra` flags; the
/// rows of `instances.csv` (none when the run wrote none).
pub fn run_agent(
    s: &super::repo::Setup,
    out: &str,
    base_url: &str,
    extra_toml: &str,
    extra: &[&str],
) -> (
    std::process::Output,
    Vec<std::collections::HashMap<String, String>>,
) {
    let ds = s.write_dataset(&[super::repo::instance("acme__shop-1", &s.commit)]);
    let agent = agent_file(s.work.path(), base_url, extra_toml);
    let mut args = vec!["--variants", "text", "--agent"];
    let agent = agent.to_string_lossy().into_owned();
    args.push(&agent);
    args.extend_from_slice(extra);
    let o = s.run(&ds, out, &args);
    let rows_path = s.work.path().join(out).join("instances.csv");
    let rows = if rows_path.exists() {
        super::repo::read_csv(&rows_path)
    } else {
        Vec::new()
    };
    (o, rows)
}
