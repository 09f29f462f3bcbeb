//! [`ChatClient`]: plain Chat Completions over HTTP (`POST {base_url}/chat/completions`,
//! `stream: false`, tools in the OpenAI function format), as every OpenAI-compatible
//! server speaks it (OpenAI, vLLM, llama.cpp's server, Ollama, LiteLLM, …).
//!
//! What an endpoint does wrong is an outcome, never a panic: HTTP 429 and 5xx and a
//! request that was not answered (refused, reset, timed out) are retried with
//! exponential backoff, honouring `Retry-After`; a prompt the model cannot hold comes
//! back as [`ChatError::ContextOverflow`]; anything else as [`ChatError::Failed`] with
//! the endpoint's own words. Requests in flight to one endpoint are bounded by a
//! semaphore shared by every `--jobs` lane. With an [`LlmCache`] a request seen before
//! is answered from disk without touching the network, so a rerun, a resume after a
//! kill and CI replay a recorded run exactly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Semaphore;

use super::cache::{CachedResponse, LlmCache};
use super::config::AgentConfig;

/// First backoff after a retryable failure; doubled per attempt, capped at [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Longest wait between two attempts, whatever `Retry-After` asks for.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Where a cache entry that records a context overflow keeps its message.
const OVERFLOW_POINTER: &str = "/navbench_error/context_overflow";
/// How long the pre-run check waits for the endpoint to answer at all.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Token counts of one response, as the endpoint's `usage` gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    /// `usage` of a Chat Completions response; `None` when absent or not numbers.
    pub fn from_response(body: &Value) -> Option<Usage> {
        let u = body.get("usage")?;
        Some(Usage {
            prompt_tokens: u.get("prompt_tokens")?.as_u64()?,
            completion_tokens: u.get("completion_tokens")?.as_u64()?,
            cached_tokens: u
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        })
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
    /// Not answered at all (refused, reset), or answered with an error, on the last attempt.
    #[error("{0}")]
    Failed(String),
    /// Replaying from the cache only, and this request is not in it.
    #[error(
        "request not in the --llm-cache and the endpoint is not reachable: record it first with the endpoint up"
    )]
    NotCached,
}

/// The Chat Completions client of one agent (see the module doc).
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    key: Option<String>,
    timeout: Duration,
    max_retries: u32,
    slots: Arc<Semaphore>,
    cache: Option<LlmCache>,
    /// No request may be sent: the endpoint was down and a cache was given. Set by
    /// [`ChatClient::check_endpoint`], which runs on a client already shared.
    replay_only: AtomicBool,
}

impl ChatClient {
    /// A client for `cfg`'s endpoint, answering from `cache` first when given.
    pub fn new(cfg: &AgentConfig, cache: Option<LlmCache>) -> anyhow::Result<ChatClient> {
        let http = reqwest::Client::builder()
            .timeout(cfg.request_timeout)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the HTTP client: {e}"))?;
        Ok(ChatClient {
            http,
            url: cfg.completions_url(),
            key: cfg.api_key()?,
            timeout: cfg.request_timeout,
            max_retries: cfg.max_retries,
            slots: Arc::new(Semaphore::new(cfg.max_concurrency)),
            cache,
            replay_only: AtomicBool::new(false),
        })
    }

    /// Before the run: is anything listening at `base_url`? (`GET {base_url}/models`;
    /// any HTTP answer counts, as not every server serves that path.) When it is not and
    /// a cache was given, the run goes on answering from the cache alone; otherwise the
    /// error names the URL that did not answer.
    pub async fn check_endpoint(&self, cfg: &AgentConfig) -> anyhow::Result<()> {
        let url = format!("{}/models", cfg.base_url);
        let mut req = self.http.get(&url).timeout(PROBE_TIMEOUT);
        if let Some(k) = &self.key {
            req = req.bearer_auth(k);
        }
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) if self.cache.is_some() => {
                eprintln!(
                    "navbench: agent endpoint {} did not answer ({}); replaying from the --llm-cache only",
                    cfg.base_url,
                    error_chain(&e)
                );
                self.replay_only.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => anyhow::bail!(
                "agent endpoint {} did not answer ({}): start the server, or fix base_url in {}",
                cfg.base_url,
                error_chain(&e),
                cfg.source.display()
            ),
        }
    }

    /// Sends `request` (a whole Chat Completions body) and returns the answer; see the
    /// module doc for retries and errors. A failure comes with the time spent waiting
    /// on the endpoint for it (a context overflow can follow minutes of generation),
    /// so a turn that failed still counts in `llm_ms`; a recorded overflow replays with
    /// its recorded time, so a replay's CSVs stay identical.
    pub async fn complete(&self, request: &Value) -> Result<Completion, (ChatError, Duration)> {
        let key = self.cache.as_ref().map(|c| c.key(request));
        if let (Some(cache), Some(key)) = (&self.cache, &key)
            && let Some(hit) = cache.get(key)
        {
            let latency = Duration::from_secs_f64(hit.latency_ms.max(0.0) / 1000.0);
            // A recorded overflow is the model's answer to this conversation too.
            if let Some(msg) = hit.body.pointer(OVERFLOW_POINTER).and_then(Value::as_str) {
                return Err((ChatError::ContextOverflow(msg.to_string()), latency));
            }
            return Ok(Completion {
                body: hit.body,
                latency,
                cached: true,
                attempts: 0,
            });
        }
        if self.replay_only.load(Ordering::Relaxed) {
            return Err((ChatError::NotCached, Duration::ZERO));
        }
        let started = Instant::now();
        let done = match self.send_with_retries(request).await {
            Err(ChatError::ContextOverflow(msg)) => {
                let spent = started.elapsed();
                // Recorded like an answer: it ends the conversation the same way on
                // replay. Other failures are not recorded, so a rerun retries them.
                if let (Some(cache), Some(key)) = (&self.cache, &key) {
                    let entry = CachedResponse {
                        body: serde_json::json!({"navbench_error": {"context_overflow": msg}}),
                        latency_ms: spent.as_secs_f64() * 1000.0,
                    };
                    if let Err(e) = cache.put(key, request, &entry) {
                        tracing::warn!("cannot write the --llm-cache entry {key}: {e:#}");
                    }
                }
                return Err((ChatError::ContextOverflow(msg), spent));
            }
            Err(e) => return Err((e, started.elapsed())),
            Ok(done) => done,
        };
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            let entry = CachedResponse {
                body: done.body.clone(),
                latency_ms: done.latency.as_secs_f64() * 1000.0,
            };
            if let Err(e) = cache.put(key, request, &entry) {
                tracing::warn!("cannot write the --llm-cache entry {key}: {e:#}");
            }
        }
        Ok(done)
    }

    async fn send_with_retries(&self, request: &Value) -> Result<Completion, ChatError> {
        let body = serde_json::to_vec(request)
            .map_err(|e| ChatError::Failed(format!("cannot encode the request: {e}")))?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let last = attempt > self.max_retries;
            let outcome = {
                let _slot = self.slots.acquire().await;
                let started = Instant::now();
                let r = self.send_once(&body).await;
                (r, started.elapsed())
            };
            let wait = match outcome {
                (Ok(body), latency) => {
                    return Ok(Completion {
                        body,
                        latency,
                        cached: false,
                        attempts: attempt,
                    });
                }
                (Err(Attempt::Fatal(e)), _) => return Err(e),
                (Err(Attempt::TimedOut), _) if last => {
                    return Err(ChatError::Timeout {
                        url: self.url.clone(),
                        timeout: self.timeout,
                        attempts: attempt,
                    });
                }
                (Err(Attempt::Retry { why, .. }), _) if last => {
                    return Err(ChatError::Failed(format!(
                        "{why} (after {attempt} attempts)"
                    )));
                }
                (Err(Attempt::TimedOut), _) => backoff(attempt),
                (Err(Attempt::Retry { why, after }), _) => {
                    let wait = after.unwrap_or_else(|| backoff(attempt)).min(MAX_BACKOFF);
                    tracing::warn!("{}: {why}; retrying in {wait:?}", self.url);
                    wait
                }
            };
            tokio::time::sleep(wait).await;
        }
    }

    async fn send_once(&self, body: &[u8]) -> Result<Value, Attempt> {
        let mut req = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if let Some(k) = &self.key {
            req = req.bearer_auth(k);
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
        let after = retry_after(resp.headers());
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
enum Attempt {
    TimedOut,
    Retry {
        why: String,
        after: Option<Duration>,
    },
    Fatal(ChatError),
}

/// Reads one HTTP answer: a JSON body on 2xx; 429 / 5xx retried; a context overflow
/// recognised by what OpenAI, vLLM and llama.cpp say; any other status fatal.
fn classify(status: u16, text: &str, after: Option<Duration>, url: &str) -> Result<Value, Attempt> {
    if (200..300).contains(&status) {
        return serde_json::from_str(text).map_err(|e| {
            Attempt::Fatal(ChatError::Failed(format!(
                "{url} answered {status} with a body that is not JSON ({e}): {}",
                snippet(text)
            )))
        });
    }
    if status == 429 || status >= 500 {
        return Err(Attempt::Retry {
            why: format!("{url} answered HTTP {status}: {}", snippet(text)),
            after,
        });
    }
    if is_context_overflow(text) {
        return Err(Attempt::Fatal(ChatError::ContextOverflow(snippet(text))));
    }
    Err(Attempt::Fatal(ChatError::Failed(format!(
        "{url} answered HTTP {status}: {}",
        snippet(text)
    ))))
}

/// True for the words servers use when a prompt exceeds the context: OpenAI's
/// `context_length_exceeded`, vLLM's "maximum context length", llama.cpp's
/// "exceed context window".
fn is_context_overflow(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("context_length_exceeded")
        || b.contains("maximum context length")
        || (b.contains("context") && (b.contains("exceed") || b.contains("too long")))
}

/// `Retry-After` in seconds (an HTTP date is left to the backoff).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    let secs: f64 = v.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// The wait before attempt `attempt + 1`.
fn backoff(attempt: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(MAX_BACKOFF)
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
            classify(401, "bad key", None, "u"),
            Err(Attempt::Fatal(ChatError::Failed(m))) if m.contains("401")
        ));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_millis(500));
        assert_eq!(backoff(2), Duration::from_secs(1));
        assert_eq!(backoff(30), MAX_BACKOFF);
    }

    #[test]
    fn usage_is_read_with_cached_tokens() {
        let body: Value = serde_json::json!({"usage": {"prompt_tokens": 120, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 64}}});
        assert_eq!(
            Usage::from_response(&body),
            Some(Usage {
                prompt_tokens: 120,
                cached_tokens: 64,
                completion_tokens: 7
            })
        );
        assert_eq!(Usage::from_response(&serde_json::json!({})), None);
    }
}
