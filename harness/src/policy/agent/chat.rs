//! [`ChatClient`]: plain Chat Completions over HTTP (`POST {base_url}/chat/completions`,
//! `stream: false`, tools in the OpenAI function format), as every OpenAI-compatible
//! server speaks it (OpenAI, Anthropic's and Gemini's compatible endpoints, OpenRouter,
//! Azure, vLLM, llama.cpp's server, Ollama, LiteLLM, …), with the key in the header
//! the provider reads and the agent file's `[headers]` and `[query]`.
//!
//! What an endpoint does wrong is an outcome, never a panic: HTTP 408/409/425/429/5xx
//! and a request that was not answered (refused, reset, timed out) are retried with
//! full-jitter backoff up to a total wait, honouring every rate-limit header
//! ([`super::retry`]), each retry kept as a [`RetryNote`]; a prompt the model cannot
//! hold comes back as [`ChatError::ContextOverflow`]; another error status as
//! [`ChatError::Http`] with the provider's own message. Requests in flight to one
//! endpoint are bounded by a semaphore shared by every `--jobs` lane. With an
//! [`LlmCache`] a request seen before is answered from disk without touching the
//! network, so a rerun, a resume after a kill and CI replay a recorded run exactly.
//! Before the run, [`ChatClient::preflight`] sends one real request ([`preflight`]).

mod preflight;

pub use preflight::{FATAL_STATUSES, fatal_message, key_to_fix};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::cache::{CachedResponse, LlmCache};
use super::config::AgentConfig;
use super::provider::KeyHeader;
use super::retry::{self, Budget};
use crate::policy::Trial;

/// Where a cache entry that records a context overflow keeps its message.
const OVERFLOW_POINTER: &str = "/navbench_error/context_overflow";
/// How long the reachability check of a replay waits for the endpoint to answer at all.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Token counts of one response, as the endpoint's `usage` gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    /// Of the completion tokens, those spent reasoning (not in the message).
    pub reasoning_tokens: u64,
}

impl Usage {
    /// `usage` of a Chat Completions response; `None` when absent or not numbers.
    /// Cached prompt tokens are read in every documented shape: OpenAI's
    /// `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`,
    /// DeepSeek's `prompt_cache_hit_tokens`; reasoning tokens from
    /// `completion_tokens_details.reasoning_tokens`.
    pub fn from_response(body: &Value) -> Option<Usage> {
        let u = body.get("usage")?;
        let first = |ptrs: &[&str]| {
            ptrs.iter()
                .find_map(|p| u.pointer(p).and_then(Value::as_u64))
                .unwrap_or(0)
        };
        Some(Usage {
            prompt_tokens: u.get("prompt_tokens")?.as_u64()?,
            completion_tokens: u.get("completion_tokens")?.as_u64()?,
            cached_tokens: first(&[
                "/prompt_tokens_details/cached_tokens",
                "/cache_read_input_tokens",
                "/prompt_cache_hit_tokens",
            ]),
            reasoning_tokens: first(&[
                "/completion_tokens_details/reasoning_tokens",
                "/output_tokens_details/reasoning_tokens",
            ]),
        })
    }
}

/// One retry of a request: why, and how long it waited first (for the transcript).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNote {
    /// The attempt that failed (1-based).
    pub attempt: u32,
    pub why: String,
    pub wait: Duration,
}

impl RetryNote {
    /// The transcript line of this retry.
    pub fn json(&self) -> Value {
        json!({"role": "navbench", "retry": self.attempt, "why": self.why,
            "wait_ms": self.wait.as_secs_f64() * 1000.0})
    }
}

/// One answered request.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The whole response body.
    pub body: Value,
    /// Time the endpoint took (for a cached answer: what it took when recorded).
    pub latency: Duration,
    /// Answered from the `--llm-cache`, without a request.
    pub cached: bool,
    /// Attempts it took (1 when the first was answered).
    pub attempts: u32,
    /// The retries before the answer.
    pub retries: Vec<RetryNote>,
}

impl Completion {
    /// `choices[0].message`, or why the body has none.
    pub fn message(&self) -> Result<&Value, String> {
        self.body
            .pointer("/choices/0/message")
            .filter(|m| m.is_object())
            .ok_or_else(|| {
                format!(
                    "the response has no choices[0].message: {}",
                    snippet(&self.body.to_string())
                )
            })
    }

    /// `choices[0].finish_reason`, when given.
    pub fn finish_reason(&self) -> Option<&str> {
        self.body
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
    }
}

/// Why a request got no usable answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChatError {
    /// The prompt no longer fits the model's context.
    #[error("the conversation no longer fits the model's context: {0}")]
    ContextOverflow(String),
    /// No answer within the request timeout, on every attempt.
    #[error("{url} did not answer within {timeout:?} ({attempts} attempts)")]
    Timeout {
        url: String,
        timeout: Duration,
        attempts: u32,
    },
    /// An error status no retry cures (400, 401, 403, 404, …), with the provider's
    /// own message.
    #[error("{url} answered HTTP {status}: {message}")]
    Http {
        url: String,
        status: u16,
        message: String,
    },
    /// Not answered at all (refused, reset), or answered with something unusable, on
    /// the last attempt.
    #[error("{0}")]
    Failed(String),
    /// Replaying from the cache only, and this request is not in it.
    #[error(
        "request not in the --llm-cache and the endpoint is not reachable: record it first with the endpoint up"
    )]
    NotCached,
}

/// A request that got no usable answer: why, the time spent on it (a context overflow
/// can follow minutes of generation) and its retries.
#[derive(Debug, Clone)]
pub struct Failure {
    pub error: ChatError,
    pub spent: Duration,
    pub retries: Vec<RetryNote>,
}

/// The Chat Completions client of one agent (see the module doc).
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    key: Option<String>,
    key_header: KeyHeader,
    headers: reqwest::header::HeaderMap,
    timeout: Duration,
    max_retries: u32,
    max_retry_wait: Duration,
    slots: Arc<Semaphore>,
    cache: Option<LlmCache>,
    /// No request may be sent: the endpoint was down and a cache was given. Set by
    /// the pre-flight, which runs on a client already shared.
    replay_only: AtomicBool,
}

impl ChatClient {
    /// A client for `cfg`'s endpoint, answering from `cache` first when given.
    pub fn new(cfg: &AgentConfig, cache: Option<LlmCache>) -> anyhow::Result<ChatClient> {
        let http = reqwest::Client::builder()
            .timeout(cfg.request_timeout)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the HTTP client: {e}"))?;
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &cfg.headers {
            // config checked both; a bad one is skipped rather than trusted.
            if let (Ok(k), Ok(v)) = (
                reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                reqwest::header::HeaderValue::from_str(v),
            ) {
                headers.insert(k, v);
            }
        }
        Ok(ChatClient {
            http,
            url: cfg.completions_url(),
            key: cfg.api_key()?,
            key_header: cfg.key_header.clone(),
            headers,
            timeout: cfg.request_timeout,
            max_retries: cfg.max_retries,
            max_retry_wait: cfg.max_retry_wait,
            slots: Arc::new(Semaphore::new(cfg.max_concurrency)),
            cache,
            replay_only: AtomicBool::new(false),
        })
    }

    /// The recorded answer to `request`, if the cache has one (a recorded overflow
    /// comes back as its error).
    fn cached(&self, request: &Value, trial: Trial) -> Option<Result<Completion, Failure>> {
        let cache = self.cache.as_ref()?;
        let hit = cache.get(&cache.key(request, trial))?;
        let latency = Duration::from_secs_f64(hit.latency_ms.max(0.0) / 1000.0);
        // A recorded overflow is the model's answer to this conversation too.
        if let Some(msg) = hit.body.pointer(OVERFLOW_POINTER).and_then(Value::as_str) {
            return Some(Err(Failure {
                error: ChatError::ContextOverflow(msg.to_string()),
                spent: latency,
                retries: Vec::new(),
            }));
        }
        Some(Ok(Completion {
            body: hit.body,
            latency,
            cached: true,
            attempts: 0,
            retries: Vec::new(),
        }))
    }

    /// Records `body` (an answer, or an overflow's error) as the answer to `request`.
    fn record(&self, request: &Value, trial: Trial, body: Value, latency: Duration) {
        if let Some(cache) = &self.cache {
            let key = cache.key(request, trial);
            let entry = CachedResponse {
                body,
                latency_ms: latency.as_secs_f64() * 1000.0,
            };
            if let Err(e) = cache.put(&key, request, trial, &entry) {
                tracing::warn!("cannot write the --llm-cache entry {key}: {e:#}");
            }
        }
    }

    /// Sends `request` (a whole Chat Completions body) and returns the answer; see the
    /// module doc for retries and errors. A failure comes with the time spent waiting
    /// on the endpoint for it, so a turn that failed still counts in `llm_ms`; a
    /// recorded overflow replays with its recorded time, so a replay's CSVs stay
    /// identical.
    /// `trial` (of `run --repeats`) picks the request's `--llm-cache` entry.
    pub async fn complete(&self, request: &Value, trial: Trial) -> Result<Completion, Failure> {
        if let Some(hit) = self.cached(request, trial) {
            return hit;
        }
        if self.replay_only.load(Ordering::Relaxed) {
            return Err(Failure {
                error: ChatError::NotCached,
                spent: Duration::ZERO,
                retries: Vec::new(),
            });
        }
        let started = Instant::now();
        let (outcome, retries) = self.send_with_retries(request).await;
        match outcome {
            Err(ChatError::ContextOverflow(msg)) => {
                let spent = started.elapsed();
                // Recorded like an answer: it ends the conversation the same way on
                // replay. Other failures are not recorded, so a rerun retries them.
                self.record(
                    request,
                    trial,
                    json!({"navbench_error": {"context_overflow": msg}}),
                    spent,
                );
                Err(Failure {
                    error: ChatError::ContextOverflow(msg),
                    spent,
                    retries,
                })
            }
            Err(error) => Err(Failure {
                error,
                spent: started.elapsed(),
                retries,
            }),
            Ok(mut done) => {
                self.record(request, trial, done.body.clone(), done.latency);
                done.retries = retries;
                Ok(done)
            }
        }
    }

    async fn send_with_retries(
        &self,
        request: &Value,
    ) -> (Result<Completion, ChatError>, Vec<RetryNote>) {
        let mut notes = Vec::new();
        let body = match serde_json::to_vec(request) {
            Ok(b) => b,
            Err(e) => {
                let e = ChatError::Failed(format!("cannot encode the request: {e}"));
                return (Err(e), notes);
            }
        };
        let mut budget = Budget::new(self.max_retries, self.max_retry_wait);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (outcome, latency) = {
                let _slot = self.slots.acquire().await;
                let started = Instant::now();
                let r = self.send_once(&body).await;
                (r, started.elapsed())
            };
            let (why, hint) = match outcome {
                Ok(body) => {
                    let done = Completion {
                        body,
                        latency,
                        cached: false,
                        attempts: attempt,
                        retries: Vec::new(),
                    };
                    return (Ok(done), notes);
                }
                Err(Attempt::Fatal(e)) => return (Err(e), notes),
                Err(Attempt::TimedOut) => (None, None),
                Err(Attempt::Retry { why, after }) => (Some(why), after),
            };
            let Some(wait) = budget.next(attempt, hint, retry::draw()) else {
                let e = match why {
                    None => ChatError::Timeout {
                        url: self.url.clone(),
                        timeout: self.timeout,
                        attempts: attempt,
                    },
                    Some(why) => ChatError::Failed(format!(
                        "{why} (after {attempt} attempts, {:.1} s of waiting)",
                        budget.waited.as_secs_f64()
                    )),
                };
                return (Err(e), notes);
            };
            let why = why.unwrap_or_else(|| format!("no answer within {:?}", self.timeout));
            tracing::warn!("{}: {why}; retrying in {wait:?}", self.url);
            notes.push(RetryNote { attempt, why, wait });
            tokio::time::sleep(wait).await;
        }
    }

    /// One POST of `body` with the key, `[headers]` and `[query]`.
    async fn send_once(&self, body: &[u8]) -> Result<Value, Attempt> {
        let mut req = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if let Some(k) = &self.key {
            req = match &self.key_header {
                KeyHeader::Bearer => req.bearer_auth(k),
                KeyHeader::Named(name) => req.header(name.as_str(), k.as_str()),
            };
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => return Err(Attempt::TimedOut),
            Err(e) => {
                return Err(Attempt::Retry {
                    why: format!("{} did not answer: {}", self.url, error_chain(&e)),
                    after: None,
                });
            }
        };
        let status = resp.status();
        let after = retry::server_wait(resp.headers(), SystemTime::now());
        let text = match resp.text().await {
            Ok(t) => t,
            Err(e) if e.is_timeout() => return Err(Attempt::TimedOut),
            Err(e) => {
                return Err(Attempt::Retry {
                    why: format!("{} broke off its answer: {}", self.url, error_chain(&e)),
                    after: None,
                });
            }
        };
        classify(status.as_u16(), &text, after, &self.url)
    }
}

/// One attempt's failure, and whether another attempt may help.
#[derive(Debug)]
pub(super) enum Attempt {
    TimedOut,
    Retry {
        why: String,
        after: Option<Duration>,
    },
    Fatal(ChatError),
}

/// Reads one HTTP answer: a JSON body on 2xx; 408/409/425/429/5xx retried; a context
/// overflow recognised by status 413 or by what OpenAI, vLLM, llama.cpp, Anthropic and
/// Gemini say; any other status fatal, with the provider's message.
fn classify(status: u16, text: &str, after: Option<Duration>, url: &str) -> Result<Value, Attempt> {
    if (200..300).contains(&status) {
        return serde_json::from_str(text).map_err(|e| {
            Attempt::Fatal(ChatError::Failed(format!(
                "{url} answered {status} with a body that is not JSON ({e}): {}",
                snippet(text)
            )))
        });
    }
    if retry::retryable_status(status) {
        return Err(Attempt::Retry {
            why: format!("{url} answered HTTP {status}: {}", snippet(text)),
            after,
        });
    }
    if status == 413 || is_context_overflow(text) {
        return Err(Attempt::Fatal(ChatError::ContextOverflow(snippet(text))));
    }
    Err(Attempt::Fatal(ChatError::Http {
        url: url.to_string(),
        status,
        message: provider_message(text),
    }))
}

/// The provider's own words in an error body: `error.message` (OpenAI's shape, also
/// inside a one-element list as Gemini sends it), else the body cut short.
pub fn provider_message(text: &str) -> String {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let v = v.get(0).cloned().unwrap_or(v);
    v.pointer("/error/message")
        .or_else(|| v.get("message"))
        .or_else(|| v.get("error").filter(|e| e.is_string()))
        .and_then(Value::as_str)
        .map(snippet)
        .unwrap_or_else(|| snippet(text))
}

/// True for the words servers use when a prompt exceeds the context: OpenAI's
/// `context_length_exceeded`, vLLM's "maximum context length", llama.cpp's
/// "exceed context window", Anthropic's "prompt is too long: N tokens > M maximum",
/// Gemini's "The input token count (N) exceeds the maximum number of tokens allowed".
fn is_context_overflow(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("context_length_exceeded")
        || b.contains("maximum context length")
        || b.contains("prompt is too long")
        || (b.contains("input token count") && b.contains("exceeds the maximum"))
        || (b.contains("context") && (b.contains("exceed") || b.contains("too long")))
}

/// An error with its sources, for messages (reqwest's top line alone says little).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// At most 300 characters of `text`, for messages.
fn snippet(text: &str) -> String {
    let t: String = text.chars().take(300).collect();
    if t.len() < text.len() {
        format!("{t}…")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_sorted_into_retry_overflow_and_fatal() {
        assert!(classify(200, r#"{"choices":[]}"#, None, "u").is_ok());
        assert!(matches!(
            classify(200, "<html>", None, "u"),
            Err(Attempt::Fatal(_))
        ));
        assert!(matches!(
            classify(429, "slow down", Some(Duration::from_secs(3)), "u"),
            Err(Attempt::Retry { after: Some(d), .. }) if d == Duration::from_secs(3)
        ));
        assert!(matches!(
            classify(503, "", None, "u"),
            Err(Attempt::Retry { .. })
        ));
        let overflow =
            r#"{"error":{"message":"Requested tokens (9000) exceed context window of 8192"}}"#;
        assert!(matches!(
            classify(400, overflow, None, "u"),
            Err(Attempt::Fatal(ChatError::ContextOverflow(_)))
        ));
        assert!(matches!(
            classify(
                400,
                r#"{"error":{"code":"context_length_exceeded"}}"#,
                None,
                "u"
            ),
            Err(Attempt::Fatal(ChatError::ContextOverflow(_)))
        ));
        assert!(matches!(
            classify(401, r#"{"error":{"message":"Incorrect API key provided"}}"#, None, "u"),
            Err(Attempt::Fatal(ChatError::Http { status: 401, message, .. })) if message == "Incorrect API key provided"
        ));
    }

    #[test]
    fn overflows_are_recognised_in_every_providers_words_and_as_413() {
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"}}"#;
        let gemini = r#"[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#;
        for (status, body) in [
            (400, anthropic),
            (400, gemini),
            (413, "Request Entity Too Large"),
        ] {
            assert!(
                matches!(
                    classify(status, body, None, "u"),
                    Err(Attempt::Fatal(ChatError::ContextOverflow(_)))
                ),
                "{status} {body}"
            );
        }
        assert_eq!(
            provider_message(gemini),
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
        );
        for status in [408, 409, 425] {
            assert!(matches!(
                classify(status, "", None, "u"),
                Err(Attempt::Retry { .. })
            ));
        }
    }

    #[test]
    fn usage_is_read_with_cached_tokens() {
        let body: Value = serde_json::json!({"usage": {"prompt_tokens": 120, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 64},
            "completion_tokens_details": {"reasoning_tokens": 5}}});
        assert_eq!(
            Usage::from_response(&body),
            Some(Usage {
                prompt_tokens: 120,
                cached_tokens: 64,
                completion_tokens: 7,
                reasoning_tokens: 5,
            })
        );
        let anthropic = serde_json::json!({"usage": {"prompt_tokens": 10, "completion_tokens": 1, "cache_read_input_tokens": 8}});
        assert_eq!(Usage::from_response(&anthropic).unwrap().cached_tokens, 8);
        let deepseek = serde_json::json!({"usage": {"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 6}});
        assert_eq!(Usage::from_response(&deepseek).unwrap().cached_tokens, 6);
        assert_eq!(Usage::from_response(&serde_json::json!({})), None);
    }
}
