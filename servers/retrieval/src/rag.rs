//! `query_code`'s answer generation: an OpenAI-compatible chat endpoint answers a
//! question from retrieved chunks, citing them as `[file:start-end]`, and every
//! citation is checked against that evidence.
//!
//! The endpoint is configured by environment variables ([`ENV_BASE_URL`],
//! [`ENV_MODEL`], optionally [`ENV_API_KEY`]); any server speaking
//! `POST {base}/chat/completions` works (OpenAI, vLLM, llama.cpp, Ollama, …). Without
//! them, [`LlmConfig::from_env`] fails with a message naming the settings.
//!
//! A citation is *verified* when an evidence chunk of the same file contains the
//! whole cited line range; the answer is *grounded* when it has at least one
//! citation and all of them are verified.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Base URL of the OpenAI-compatible API, e.g. `https://api.openai.com/v1`.
pub const ENV_BASE_URL: &str = "NAVBENCH_LLM_BASE_URL";
/// Model name sent in the request, e.g. `gpt-4o-mini`.
pub const ENV_MODEL: &str = "NAVBENCH_LLM_MODEL";
/// Bearer token (optional for local servers).
pub const ENV_API_KEY: &str = "NAVBENCH_LLM_API_KEY";
/// Request timeout in seconds (optional, default 120).
pub const ENV_TIMEOUT: &str = "NAVBENCH_LLM_TIMEOUT_SECS";

/// Longest evidence excerpt sent to the model, in characters.
const MAX_EVIDENCE_CHARS: usize = 6000;

/// Why an answer could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum RagError {
    /// The environment does not name an endpoint.
    #[error(
        "query_code needs an OpenAI-compatible chat endpoint, and none is configured: set {ENV_BASE_URL} \
(e.g. https://api.openai.com/v1 or http://localhost:11434/v1) and {ENV_MODEL} (e.g. gpt-4o-mini), plus \
{ENV_API_KEY} if the endpoint needs a key, in the server's environment. Missing: {missing}. \
Meanwhile use search_code, which needs no LLM."
    )]
    NotConfigured {
        /// The variables that are unset.
        missing: String,
    },
    /// The request failed before a response arrived.
    #[error(
        "the chat endpoint {url} could not be reached: {message}; check {ENV_BASE_URL} and that the server is up, or use search_code"
    )]
    Transport {
        /// The URL called.
        url: String,
        /// What the HTTP client reported.
        message: String,
    },
    /// The endpoint answered with an error status.
    #[error(
        "the chat endpoint {url} answered HTTP {status}: {body}; check {ENV_MODEL} and {ENV_API_KEY}, or use search_code"
    )]
    Status {
        /// The URL called.
        url: String,
        /// HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The response is not an OpenAI chat completion.
    #[error(
        "the chat endpoint {url} returned an unexpected response ({message}); it must implement POST /chat/completions"
    )]
    BadResponse {
        /// The URL called.
        url: String,
        /// What was wrong.
        message: String,
    },
}

/// Where and how to call the chat endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmConfig {
    /// Base URL without the trailing `/chat/completions`.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Bearer token, if any.
    pub api_key: Option<String>,
    /// Whole-request timeout.
    pub timeout: Duration,
}

impl LlmConfig {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<LlmConfig, RagError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the configuration through `get` (testable without touching the environment).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<LlmConfig, RagError> {
        let get = |k: &str| {
            get(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let (base_url, model) = (get(ENV_BASE_URL), get(ENV_MODEL));
        let (Some(base_url), Some(model)) = (base_url.clone(), model.clone()) else {
            let missing: Vec<&str> = [(ENV_BASE_URL, &base_url), (ENV_MODEL, &model)]
                .into_iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect();
            return Err(RagError::NotConfigured {
                missing: missing.join(", "),
            });
        };
        let timeout = get(ENV_TIMEOUT)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|s| *s > 0)
            .unwrap_or(120);
        Ok(LlmConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model,
            api_key: get(ENV_API_KEY),
            timeout: Duration::from_secs(timeout),
        })
    }

    /// The full URL of the chat completions endpoint.
    pub fn chat_url(&self) -> String {
        if self.base_url.ends_with("/chat/completions") {
            self.base_url.clone()
        } else {
            format!("{}/chat/completions", self.base_url)
        }
    }
}

/// One piece of evidence as the model is shown it: where it is, what it is, its text.
/// (The `query_code` tool makes these from the chunks it retrieved.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence<'a> {
    /// Repository-relative path.
    pub file: &'a str,
    /// First line (1-based).
    pub start_line: usize,
    /// Last line (inclusive).
    pub end_line: usize,
    /// Chunk type (function, method, class, module, text).
    pub kind: &'a str,
    /// Qualified name of a definition.
    pub name: Option<&'a str>,
    /// The code.
    pub content: &'a str,
}

/// A `[file:start-end]` citation found in an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Citation {
    /// Repo-relative path as cited.
    pub file_path: String,
    /// First cited line.
    pub start_line: usize,
    /// Last cited line.
    pub end_line: usize,
    /// Whether an evidence chunk of that file contains the cited lines.
    pub verified: bool,
}

/// The model's answer with its checked citations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RagAnswer {
    /// The answer text.
    pub answer: String,
    /// Citations in order of appearance (duplicates removed).
    pub citations: Vec<Citation>,
    /// At least one citation, and all verified.
    pub grounded: bool,
}

/// The system prompt: answer from the evidence only, cite everything.
pub const SYSTEM_PROMPT: &str = "You answer questions about a code repository using only the \
evidence excerpts provided. Every excerpt is headed by its citation [path:start-end] and its lines \
are numbered. Support every claim with a citation in exactly that form, e.g. [src/app.py:12-30], \
using the line numbers shown, narrowed to the lines that support the claim. Do not cite anything \
that is not in the evidence. If the evidence does not answer the question, say so plainly.";

/// The user message: the question and the numbered evidence.
pub fn user_message(question: &str, evidence: &[Evidence<'_>]) -> String {
    let mut out = format!("Question: {question}\n\nEvidence:\n");
    for (i, chunk) in evidence.iter().enumerate() {
        let label = chunk
            .name
            .map(|n| format!(" ({} {n})", chunk.kind))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n[{}] [{}:{}-{}]{label}\n",
            i + 1,
            chunk.file,
            chunk.start_line,
            chunk.end_line
        ));
        let mut used = 0;
        for (n, line) in chunk.content.lines().enumerate() {
            if used > MAX_EVIDENCE_CHARS {
                out.push_str("    ... (excerpt cut)\n");
                break;
            }
            used += line.len() + 1;
            out.push_str(&format!("{:>6} | {line}\n", chunk.start_line + n));
        }
    }
    out.push_str("\nAnswer with [path:start-end] citations.");
    out
}

/// Sends `question` and `evidence` to the endpoint and checks the citations.
pub fn answer(
    config: &LlmConfig,
    question: &str,
    evidence: &[Evidence<'_>],
) -> Result<RagAnswer, RagError> {
    let text = chat(config, SYSTEM_PROMPT, &user_message(question, evidence))?;
    let citations = check_citations(&parse_citations(&text), evidence);
    let grounded = !citations.is_empty() && citations.iter().all(|c| c.verified);
    Ok(RagAnswer {
        answer: text,
        citations,
        grounded,
    })
}

/// One chat completion: the assistant message's text.
pub fn chat(config: &LlmConfig, system: &str, user: &str) -> Result<String, RagError> {
    let url = config.chat_url();
    let body = serde_json::json!({
        "model": config.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    });
    // TLS through the system's OpenSSL and its root certificates (the one TLS stack
    // the workspace links: git2 and the harness's reqwest use it too).
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::NativeTls)
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(Some(config.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json");
    if let Some(key) = &config.api_key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let transport = |e: ureq::Error| RagError::Transport {
        url: url.clone(),
        message: e.to_string(),
    };
    let mut response = request.send(body.to_string()).map_err(transport)?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(16 * 1024 * 1024)
        .read_to_string()
        .map_err(transport)?;
    if !(200..300).contains(&status) {
        return Err(RagError::Status {
            url,
            status,
            body: text.chars().take(500).collect(),
        });
    }
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| RagError::BadResponse {
            url: url.clone(),
            message: format!("not JSON: {e}"),
        })?;
    value
        .pointer("/choices/0/message/content")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| RagError::BadResponse {
            url,
            message: "no choices[0].message.content".to_string(),
        })
}

static BRACKET: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[([^\[\]\n]{1,500})\]").expect("static regex"));
static CITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*`?([^\s:`]+)`?\s*:\s*L?(\d{1,9})(?:\s*[-–]\s*L?(\d{1,9}))?\s*$")
        .expect("static regex")
});

/// The `[file:start-end]` / `[file:line]` citations in `text`, in order, without
/// duplicates; a bracket may hold several, separated by `,` or `;`.
pub fn parse_citations(text: &str) -> Vec<(String, usize, usize)> {
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for bracket in BRACKET.captures_iter(text) {
        for part in bracket[1].split([',', ';']) {
            let Some(c) = CITE.captures(part) else {
                continue;
            };
            let file = c[1].trim_start_matches("./").to_string();
            let (Ok(start), end) = (c[2].parse::<usize>(), c.get(3).map(|m| m.as_str())) else {
                continue;
            };
            let end = end.and_then(|e| e.parse::<usize>().ok()).unwrap_or(start);
            let (start, end) = (start.min(end), start.max(end));
            let cite = (file, start, end);
            if !out.contains(&cite) {
                out.push(cite);
            }
        }
    }
    out
}

/// Marks each citation verified when an evidence chunk of its file spans its lines.
pub fn check_citations(
    citations: &[(String, usize, usize)],
    evidence: &[Evidence<'_>],
) -> Vec<Citation> {
    citations
        .iter()
        .map(|(file, start, end)| Citation {
            file_path: file.clone(),
            start_line: *start,
            end_line: *end,
            verified: evidence.iter().any(|e| {
                e.file.trim_start_matches("./") == file
                    && e.start_line <= *start
                    && *end <= e.end_line
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};

    fn evidence() -> Vec<Evidence<'static>> {
        vec![Evidence {
            file: "pkg/auth.py",
            start_line: 10,
            end_line: 30,
            kind: "function",
            name: Some("login"),
            content: "def login(user):\n    return check(user)\n",
        }]
    }

    #[test]
    fn configuration_names_missing_settings() {
        let err = LlmConfig::from_lookup(|_| None).expect_err("unset");
        let msg = err.to_string();
        assert!(
            msg.contains(ENV_BASE_URL) && msg.contains(ENV_MODEL),
            "{msg}"
        );
        assert!(msg.contains("search_code"), "{msg}");
        let cfg = LlmConfig::from_lookup(|k| match k {
            ENV_BASE_URL => Some("http://127.0.0.1:9/v1/".into()),
            ENV_MODEL => Some("m".into()),
            _ => None,
        })
        .expect("configured");
        assert_eq!(cfg.chat_url(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(cfg.api_key, None);
    }

    #[test]
    fn parses_and_checks_citations() {
        let text = "Login is in [pkg/auth.py:12-14] and [`pkg/auth.py`:10]; see also \
[pkg/auth.py:12-14, other.py:1-3] and [link](x) and [pkg/auth.py:L25-L40].";
        let cites = parse_citations(text);
        assert_eq!(
            cites,
            vec![
                ("pkg/auth.py".to_string(), 12, 14),
                ("pkg/auth.py".to_string(), 10, 10),
                ("other.py".to_string(), 1, 3),
                ("pkg/auth.py".to_string(), 25, 40),
            ]
        );
        let checked = check_citations(&cites, &evidence());
        let verified: Vec<bool> = checked.iter().map(|c| c.verified).collect();
        assert_eq!(verified, [true, true, false, false]);
    }

    /// A one-shot HTTP server answering with `body`; returns its base URL and the
    /// request it received.
    fn canned_server(
        status: &'static str,
        body: String,
    ) -> (String, std::thread::JoinHandle<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let handle = std::thread::spawn(move || {
            let (stream, _) = listener.accept().expect("accept");
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut head = String::new();
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).expect("read");
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().expect("length");
                }
                head.push_str(&line);
                if line == "\r\n" || line.is_empty() {
                    break;
                }
            }
            let mut req_body = vec![0u8; length];
            reader.read_exact(&mut req_body).expect("body");
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .expect("respond");
            format!("{head}{}", String::from_utf8_lossy(&req_body))
        });
        (format!("http://{addr}/v1"), handle)
    }

    #[test]
    fn answers_through_an_openai_compatible_endpoint() {
        let reply = serde_json::json!({
            "choices": [{"message": {"role": "assistant",
                "content": "login() delegates to check() [pkg/auth.py:10-11]."}}]
        });
        let (base, server) = canned_server("200 OK", reply.to_string());
        let cfg = LlmConfig {
            base_url: base,
            model: "test-model".into(),
            api_key: Some("sekret".into()),
            timeout: Duration::from_secs(10),
        };
        let out = answer(&cfg, "How does login work?", &evidence()).expect("answer");
        assert!(out.grounded);
        assert_eq!(out.citations.len(), 1);
        let request = server.join().expect("server thread");
        assert!(
            request.starts_with("POST /v1/chat/completions"),
            "{request}"
        );
        assert!(request.contains("Bearer sekret"), "{request}");
        assert!(request.contains("test-model") && request.contains("How does login work?"));
        assert!(request.contains("[pkg/auth.py:10-30]"), "{request}");
    }

    #[test]
    fn reports_http_errors() {
        let (base, server) = canned_server("401 Unauthorized", r#"{"error":"bad key"}"#.into());
        let cfg = LlmConfig {
            base_url: base,
            model: "m".into(),
            api_key: None,
            timeout: Duration::from_secs(10),
        };
        let err = answer(&cfg, "q", &evidence()).expect_err("401");
        assert!(err.to_string().contains("HTTP 401"), "{err}");
        server.join().expect("server thread");
    }
}
