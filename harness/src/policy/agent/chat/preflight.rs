//! The pre-flight: before any instance, one completion of one token with a tool
//! attached, shaped as every turn is (provider, length key, sampling, `[headers]`,
//! `[query]`, `[extra_body]`), so a request the endpoint refuses stops the run before
//! its first row instead of failing every row.
//!
//! With `--llm-cache` the probe is a request like any other: answered from the cache
//! when recorded, so a replay needs no endpoint. Outcomes:
//! - answered (or refused only for its one-token length): the run goes on;
//! - HTTP 400/401/403/404: the run stops, naming the status, the provider's message
//!   and the key of the agent file to fix ([`fatal_message`]);
//! - not answered at all: with a cache, the run replays from it alone; without, it
//!   stops naming the URL;
//! - rate-limited, overloaded or slow (408/409/425/429/5xx, a timeout): the endpoint
//!   is there; the run goes on and its requests retry as usual.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::Value;

use super::{Attempt, ChatClient, ChatError, PROBE_TIMEOUT, error_chain};
use crate::policy::Trial;
use crate::policy::agent::config::AgentConfig;
use crate::policy::agent::provider::KeyHeader;

/// The statuses that stop the run at the pre-flight (and, repeated, during it).
pub const FATAL_STATUSES: [u16; 4] = [400, 401, 403, 404];

/// The key of the agent file most likely wrong when the endpoint answers `status`
/// with `message`.
pub fn key_to_fix(cfg: &AgentConfig, status: u16, message: &str) -> String {
    let m = message.to_ascii_lowercase();
    let key_words = m.contains("api key") || m.contains("api_key") || m.contains("x-api-key");
    let key = match status {
        _ if status == 401 || status == 403 || key_words => match &cfg.key_header {
            KeyHeader::Bearer => "api_key_env (the key in that variable)".to_string(),
            KeyHeader::Named(h) => {
                format!("api_key_env (the key in that variable) or key_header (now {h})")
            }
        },
        404 if m.contains("model") || m.contains("deployment") => "model".into(),
        404 => "base_url (requests go to {base_url}/chat/completions)".into(),
        _ if m.contains("temperature") => "temperature".into(),
        _ if m.contains("max_tokens") || m.contains("max_completion_tokens") => {
            "provider (or length_key)".into()
        }
        _ if m.contains("seed") => "seed".into(),
        _ if m.contains("tool") => format!(
            "provider (the server must accept tools: {})",
            cfg.provider.needs()
        ),
        _ if m.contains("model") => "model".into(),
        _ if cfg.extra_body.keys().any(|k| m.contains(k.as_str())) => "[extra_body]".into(),
        _ => "provider".into(),
    };
    format!("{key} in {}", cfg.source.display())
}

/// What stops a run on a fatal answer: the status, the provider's words, what to fix.
pub fn fatal_message(cfg: &AgentConfig, status: u16, message: &str) -> String {
    format!(
        "agent {} ({} at {}): the endpoint answered HTTP {status}: {message}; fix {}",
        cfg.name,
        cfg.model,
        cfg.base_url,
        key_to_fix(cfg, status, message)
    )
}

/// True for a refusal that only says the one-token probe was too short to finish (a
/// reasoning model, a tool call cut off): the request itself was accepted.
fn only_too_short(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("max_tokens was reached")
        || m.contains("max_completion_tokens was reached")
        || m.contains("output limit was reached")
        || m.contains("could not finish the message")
}

impl ChatClient {
    /// Sends the pre-flight `probe` (see the module doc); an error stops the run. A
    /// down endpoint turns the run into a replay only when `may_replay` (the
    /// `--llm-cache` holds entries); an empty cache has nothing to replay.
    pub async fn preflight(
        &self,
        cfg: &AgentConfig,
        probe: &Value,
        may_replay: bool,
    ) -> anyhow::Result<()> {
        if let Some(hit) = self.cached(probe, Trial::FIRST) {
            if hit.is_ok() && self.cache.is_some() && !self.reachable(cfg).await {
                eprintln!(
                    "navbench: agent endpoint {} did not answer; replaying from the --llm-cache only",
                    cfg.base_url
                );
                self.replay_only.store(true, Ordering::Relaxed);
            }
            return Ok(());
        }
        let body = serde_json::to_vec(probe)?;
        let started = Instant::now();
        let outcome = {
            let _slot = self.slots.acquire().await;
            self.send_once(&body).await
        };
        match outcome {
            Ok(answer) => {
                self.record(probe, Trial::FIRST, answer, started.elapsed());
                Ok(())
            }
            Err(Attempt::Fatal(ChatError::Http {
                status, message, ..
            })) if FATAL_STATUSES.contains(&status) && !only_too_short(&message) => {
                anyhow::bail!("{}", fatal_message(cfg, status, &message))
            }
            Err(Attempt::Fatal(ChatError::ContextOverflow(msg))) => anyhow::bail!(
                "agent {}: the first prompt (system prompt, task, tools) already exceeds the model's context ({msg}); give the server a longer context",
                cfg.name
            ),
            Err(Attempt::Fatal(e)) => {
                eprintln!(
                    "navbench: the agent pre-flight was answered with an error the run may survive: {e}"
                );
                Ok(())
            }
            Err(Attempt::TimedOut) => {
                eprintln!(
                    "navbench: the agent pre-flight got no answer within {:?}; going on (each turn retries)",
                    self.timeout
                );
                Ok(())
            }
            Err(Attempt::Retry { why, .. }) if why.contains("did not answer") => {
                if self.cache.is_some() && may_replay {
                    eprintln!(
                        "navbench: agent endpoint {} did not answer ({why}); replaying from the --llm-cache only",
                        cfg.base_url
                    );
                    self.replay_only.store(true, Ordering::Relaxed);
                    return Ok(());
                }
                anyhow::bail!(
                    "agent endpoint {} did not answer ({why}): start the server, or fix base_url in {}",
                    cfg.base_url,
                    cfg.source.display()
                )
            }
            Err(Attempt::Retry { why, .. }) => {
                eprintln!(
                    "navbench: the agent pre-flight was answered {why}; going on (each turn retries)"
                );
                Ok(())
            }
        }
    }

    /// Whether anything answers at `base_url` at all (any HTTP answer counts).
    async fn reachable(&self, cfg: &AgentConfig) -> bool {
        let url = format!("{}/models", cfg.base_url);
        match self.http.get(&url).timeout(PROBE_TIMEOUT).send().await {
            Ok(_) => true,
            Err(e) => {
                tracing::debug!("{url}: {}", error_chain(&e));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_key_to_fix_follows_the_status_and_the_providers_words() {
        let cfg = AgentConfig::parse(
            "provider = \"openai\"\nbase_url = \"http://h/v1\"\nmodel = \"o3\"\n",
            Path::new("agents/x.toml"),
        )
        .unwrap();
        let k = |s, m| key_to_fix(&cfg, s, m);
        assert!(k(401, "Incorrect API key provided").starts_with("api_key_env"));
        // Gemini answers a wrong key with 400.
        assert!(
            k(400, "API key not valid. Please pass a valid API key.").starts_with("api_key_env")
        );
        assert!(k(404, "The model `o9` does not exist").starts_with("model"));
        assert!(k(404, "Not Found").starts_with("base_url"));
        assert!(
            k(400, "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.")
                .starts_with("provider")
        );
        assert!(
            k(400, "Unsupported value: 'temperature' does not support 0")
                .starts_with("temperature")
        );
        assert!(k(401, "x").ends_with("agents/x.toml"));
        assert!(only_too_short(
            "Could not finish the message because max_tokens or model output limit was reached."
        ));
        assert!(!only_too_short("Invalid 'tools[0].function.name'"));
    }
}
