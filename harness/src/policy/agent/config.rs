//! [`AgentConfig`]: an agent file (`agents/<name>.toml`) as `navbench run --agent` reads
//! it — which endpoint and model, the environment variable holding the key (never the
//! key itself), sampling, the limits of one instance, and optional prices.
//!
//! Every refusal names the file and line and says what to write instead, before any
//! instance runs (as declared variants are refused). Unknown keys are refused too: a
//! typo must not silently become a default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

mod wire;

use super::provider::{self, KeyHeader, LengthKey, Provider};
use crate::variants::declared::validate::refuse;
use wire::{Refuse, secs, wire_keys};

/// An agent file's keys, as serde reads them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentDecl {
    name: Option<Spanned<String>>,
    provider: Option<Spanned<String>>,
    base_url: Spanned<String>,
    model: Spanned<String>,
    api_key_env: Option<Spanned<String>>,
    key_header: Option<Spanned<String>>,
    length_key: Option<Spanned<String>>,
    #[serde(default)]
    temperature: Option<Spanned<f64>>,
    seed: Option<Spanned<i64>>,
    max_turns: Option<Spanned<i64>>,
    token_budget: Option<Spanned<i64>>,
    max_completion_tokens: Option<Spanned<i64>>,
    request_timeout_secs: Option<Spanned<f64>>,
    max_concurrency: Option<Spanned<i64>>,
    max_tool_result_tokens: Option<Spanned<i64>>,
    max_retries: Option<Spanned<i64>>,
    max_retry_wait_secs: Option<Spanned<f64>>,
    prices: Option<Spanned<PricesDecl>>,
    headers: Option<Spanned<BTreeMap<String, String>>>,
    query: Option<Spanned<BTreeMap<String, String>>>,
    extra_body: Option<Spanned<toml::Table>>,
}

/// `[prices]`: US dollars per million tokens.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PricesDecl {
    input: f64,
    #[serde(default)]
    cached_input: Option<f64>,
    output: f64,
}

/// US dollars per million tokens, for `cost_usd`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    /// Cached prompt tokens; absent in the file: the input price.
    pub cached_input: f64,
    pub output: f64,
}

impl Prices {
    /// The cost of `prompt` tokens (of which `cached` were cached) and `completion`.
    pub fn cost(&self, prompt: u64, cached: u64, completion: u64) -> f64 {
        let fresh = prompt.saturating_sub(cached) as f64;
        (fresh * self.input + cached as f64 * self.cached_input + completion as f64 * self.output)
            / 1e6
    }
}

/// One agent: endpoint, model, sampling and limits (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Shown in `run.json` and the transcripts: the `name` key, else the file's stem.
    pub name: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// As users write it for their server, e.g. `http://127.0.0.1:8080/v1`; requests
    /// go to `{base_url}/chat/completions`.
    pub base_url: String,
    pub model: String,
    /// What the endpoint accepts (`provider = "…"`, default generic): see [`provider`].
    pub provider: Provider,
    /// The environment variable that holds the API key.
    pub api_key_env: Option<String>,
    /// The header the key travels in: the provider's, or `key_header = "…"`.
    pub key_header: KeyHeader,
    /// The one length key requests carry: the provider's, or `length_key = "…"`.
    pub length_key: LengthKey,
    /// Sent only when the file sets it; otherwise the server's default applies.
    pub temperature: Option<f64>,
    pub seed: Option<i64>,
    /// Model turns per instance (each turn is one request).
    pub max_turns: usize,
    /// Prompt plus completion tokens per instance, over all its turns.
    pub token_budget: u64,
    /// `max_completion_tokens` (and `max_tokens`, for servers that only know that) per turn.
    pub max_completion_tokens: u64,
    pub request_timeout: Duration,
    /// Requests in flight to this endpoint at once, over all `--jobs` lanes.
    pub max_concurrency: usize,
    /// A tool result longer than this (in the run's tokenizer) is cut, with a marker.
    pub max_tool_result_tokens: usize,
    /// Retries of a request answered 408/409/425/429/5xx or not answered at all.
    pub max_retries: u32,
    /// The longest a request waits in all between its retries.
    pub max_retry_wait: Duration,
    pub prices: Option<Prices>,
    /// `[headers]`: sent with every request (never the key: that is `api_key_env`).
    pub headers: BTreeMap<String, String>,
    /// `[query]`: added to the request URL (Azure's `api-version`).
    pub query: BTreeMap<String, String>,
    /// `[extra_body]`: merged at the top level of every request (`reasoning_effort`, …).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

/// What `run.json` keeps of the agent: enough to tell two agents' runs apart.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct AgentInfo {
    pub name: String,
    pub model: String,
    pub base_url: String,
    /// `None`: not sent, the endpoint's default applied.
    pub temperature: Option<f64>,
    #[serde(default)]
    pub seed: Option<i64>,
    pub max_turns: usize,
    pub token_budget: u64,
    pub max_completion_tokens: u64,
    pub max_tool_result_tokens: usize,
    /// The provider whose request shape was sent (empty in a `run.json` written before
    /// providers existed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provider: String,
    /// `[extra_body]` (e.g. `reasoning_effort`): it changes what the model does, so a
    /// resume with another one is refused as one with another temperature is.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl AgentConfig {
    /// The agent as `run.json` records it.
    pub fn info(&self) -> AgentInfo {
        AgentInfo {
            name: self.name.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            temperature: self.temperature,
            seed: self.seed,
            max_turns: self.max_turns,
            token_budget: self.token_budget,
            max_completion_tokens: self.max_completion_tokens,
            max_tool_result_tokens: self.max_tool_result_tokens,
            provider: self.provider.as_str().to_string(),
            extra_body: self.extra_body.clone(),
        }
    }
}

/// Defaults of the optional keys (docs/agents.md).
pub mod defaults {
    pub const MAX_TURNS: i64 = 20;
    pub const TOKEN_BUDGET: i64 = 200_000;
    pub const MAX_COMPLETION_TOKENS: i64 = 1024;
    pub const REQUEST_TIMEOUT_SECS: f64 = 300.0;
    pub const MAX_CONCURRENCY: i64 = 4;
    pub const MAX_TOOL_RESULT_TOKENS: i64 = 4000;
    pub const MAX_RETRIES: i64 = 10;
    /// Ten minutes: a rate limit's window, not a blip, is what retries wait out.
    pub const MAX_RETRY_WAIT_SECS: f64 = 600.0;
}

/// Where `--agent NAME` looks: `agents/` beside the working directory, else the one
/// this checkout ships.
pub fn agents_dir() -> PathBuf {
    let here = Path::new("agents");
    if here.is_dir() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents")
}

/// The file `--agent` names: a path (anything with a `/` or ending in `.toml`), or a
/// name under [`agents_dir`].
pub fn locate(spec: &str) -> anyhow::Result<PathBuf> {
    if spec.ends_with(".toml") || spec.contains('/') {
        let p = PathBuf::from(spec);
        if !p.is_file() {
            anyhow::bail!(
                "agent file {} does not exist; pass a TOML file (see agents/local-llama.toml) or the name of one under agents/",
                p.display()
            );
        }
        return Ok(p);
    }
    let dir = agents_dir();
    let p = dir.join(format!("{spec}.toml"));
    if p.is_file() {
        return Ok(p);
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    (p.extension()? == "toml")
                        .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))?
                })
                .collect()
        })
        .unwrap_or_default();
    anyhow::bail!(
        "no agent named '{spec}' in {}: choose from {} or pass a path to a TOML file",
        dir.display(),
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    )
}

/// `[prices]`, checked.
fn prices(decl: &AgentDecl, r: &Refuse<'_>) -> anyhow::Result<Option<Prices>> {
    Ok(match &decl.prices {
        Some(p) => {
            let v = p.get_ref();
            let all = [Some(v.input), v.cached_input, Some(v.output)];
            if all.iter().flatten().any(|x| !x.is_finite() || *x < 0.0) {
                return Err(r(
                    p.span().start,
                    "prices are US dollars per million tokens and cannot be negative: [prices] input = 0.15, output = 0.6, cached_input = 0.075 (optional)".into(),
                ));
            }
            Some(Prices {
                input: v.input,
                cached_input: v.cached_input.unwrap_or(v.input),
                output: v.output,
            })
        }
        None => None,
    })
}

/// `base_url` (returned without its trailing `/`), `model` and `api_key_env`, checked.
fn endpoint_keys(decl: &AgentDecl, r: &Refuse<'_>) -> anyhow::Result<String> {
    let base_url = decl.base_url.get_ref().trim_end_matches('/').to_string();
    let url_ok = reqwest::Url::parse(&base_url)
        .map(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .unwrap_or(false);
    if !url_ok {
        return Err(r(
            decl.base_url.span().start,
            format!(
                "base_url {:?} is not an http(s) URL; write the URL as for your server, e.g. base_url = \"http://127.0.0.1:8080/v1\"",
                decl.base_url.get_ref()
            ),
        ));
    }
    if decl.model.get_ref().trim().is_empty() {
        return Err(r(
            decl.model.span().start,
            "model is empty; write the model name the endpoint serves, e.g. model = \"gpt-4o-mini\"".into(),
        ));
    }
    if let Some(env) = &decl.api_key_env {
        let ok = !env.get_ref().is_empty()
            && env
                .get_ref()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(r(
                env.span().start,
                "api_key_env names the environment variable that holds the key (e.g. api_key_env = \"OPENAI_API_KEY\"), never the key itself".into(),
            ));
        }
    }
    Ok(base_url)
}

impl AgentConfig {
    /// Reads and checks the agent file at `path`.
    pub fn load(path: &Path) -> anyhow::Result<AgentConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "cannot read agent file {}: {e}; pass a readable TOML file",
                path.display()
            )
        })?;
        AgentConfig::parse(&text, path)
    }

    /// Parses and checks an agent file's `text` (`source` names it in refusals).
    pub fn parse(text: &str, source: &Path) -> anyhow::Result<AgentConfig> {
        let decl: AgentDecl = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            refuse(
                source,
                text,
                at,
                format!(
                    "{}; see agents/local-llama.toml for every key an agent file may have",
                    e.message().trim_end()
                ),
            )
        })?;
        let r = |at: usize, msg: String| refuse(source, text, at, msg);
        let base_url = endpoint_keys(&decl, &r)?;
        let wire = wire_keys(&decl, &r)?;
        let positive = |v: &Option<Spanned<i64>>, key: &str, default: i64| match v {
            Some(s) if *s.get_ref() < 1 => Err(r(
                s.span().start,
                format!("{key} must be a whole number of at least 1 (default {default})"),
            )),
            Some(s) => Ok(*s.get_ref()),
            None => Ok(default),
        };
        let max_turns = positive(&decl.max_turns, "max_turns", defaults::MAX_TURNS)?;
        let token_budget = positive(&decl.token_budget, "token_budget", defaults::TOKEN_BUDGET)?;
        let max_completion_tokens = positive(
            &decl.max_completion_tokens,
            "max_completion_tokens",
            defaults::MAX_COMPLETION_TOKENS,
        )?;
        let max_concurrency = positive(
            &decl.max_concurrency,
            "max_concurrency",
            defaults::MAX_CONCURRENCY,
        )?;
        let max_tool_result_tokens = positive(
            &decl.max_tool_result_tokens,
            "max_tool_result_tokens",
            defaults::MAX_TOOL_RESULT_TOKENS,
        )?;
        let max_retries = match &decl.max_retries {
            Some(s) if !(0..=20).contains(s.get_ref()) => {
                return Err(r(
                    s.span().start,
                    "max_retries must be between 0 and 20".into(),
                ));
            }
            Some(s) => *s.get_ref() as u32,
            None => defaults::MAX_RETRIES as u32,
        };
        let max_retry_wait = secs(
            &decl.max_retry_wait_secs,
            "max_retry_wait_secs",
            defaults::MAX_RETRY_WAIT_SECS,
            &r,
        )?;
        let request_timeout = secs(
            &decl.request_timeout_secs,
            "request_timeout_secs",
            defaults::REQUEST_TIMEOUT_SECS,
            &r,
        )?;
        let prices = prices(&decl, &r)?;
        let stem = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "agent".to_string());
        Ok(AgentConfig {
            name: decl.name.map(|n| n.into_inner()).unwrap_or(stem),
            source: source.to_path_buf(),
            base_url,
            model: decl.model.into_inner(),
            provider: wire.provider,
            api_key_env: decl.api_key_env.map(|e| e.into_inner()),
            key_header: wire.key_header,
            length_key: wire.length_key,
            temperature: wire.temperature,
            seed: decl.seed.map(|s| *s.get_ref()),
            max_turns: max_turns as usize,
            token_budget: token_budget as u64,
            max_completion_tokens: max_completion_tokens as u64,
            request_timeout,
            max_concurrency: max_concurrency as usize,
            max_tool_result_tokens: max_tool_result_tokens as usize,
            max_retries,
            max_retry_wait,
            prices,
            headers: wire.headers,
            query: wire.query,
            extra_body: wire.extra_body,
        })
    }

    /// The API key from [`AgentConfig::api_key_env`]; an error says which variable to set.
    pub fn api_key(&self) -> anyhow::Result<Option<String>> {
        let Some(var) = &self.api_key_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(k) if !k.is_empty() => Ok(Some(k)),
            _ => anyhow::bail!(
                "agent {}: the environment variable {var} (api_key_env in {}) is not set; export it with the endpoint's key, or remove api_key_env for an endpoint that needs none",
                self.name,
                self.source.display()
            ),
        }
    }

    /// `{base_url}/chat/completions`, with `[query]`'s parameters.
    pub fn completions_url(&self) -> String {
        let url = format!("{}/chat/completions", self.base_url);
        match reqwest::Url::parse_with_params(&url, &self.query) {
            Ok(u) if !self.query.is_empty() => u.to_string(),
            _ => url,
        }
    }

    /// What each request is made of besides the conversation (see [`provider::body`]).
    pub fn shape(&self) -> provider::Shape {
        provider::Shape {
            model: self.model.clone(),
            length_key: self.length_key,
            temperature: self.temperature,
            seed: self.seed,
            extra_body: self.extra_body.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
base_url = "http://127.0.0.1:8080/v1/"
model = "smollm2"
api_key_env = "LOCAL_KEY"
temperature = 0.2
seed = 7
max_turns = 6
token_budget = 30000
max_completion_tokens = 256
request_timeout_secs = 90
max_concurrency = 2
max_tool_result_tokens = 1500

[prices]
input = 0.15
output = 0.6
"#;

    #[test]
    fn a_good_file_is_read_with_its_values() {
        let c = AgentConfig::parse(GOOD, Path::new("agents/tiny.toml")).unwrap();
        assert_eq!(c.name, "tiny");
        assert_eq!(c.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(
            c.completions_url(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(c.max_turns, 6);
        assert_eq!(c.token_budget, 30_000);
        assert_eq!(c.seed, Some(7));
        assert_eq!(c.request_timeout, Duration::from_secs(90));
        let p = c.prices.unwrap();
        assert_eq!(p.cached_input, 0.15);
        assert!((p.cost(1_000_000, 0, 1_000_000) - 0.75).abs() < 1e-9);
    }

    #[test]
    fn defaults_fill_what_is_left_out() {
        let c = AgentConfig::parse(
            "base_url = \"https://api.example.com/v1\"\nmodel = \"m\"\n",
            Path::new("a.toml"),
        )
        .unwrap();
        assert_eq!(c.max_turns, defaults::MAX_TURNS as usize);
        assert_eq!(c.temperature, None);
        assert!(c.prices.is_none());
        assert!(c.api_key().unwrap().is_none());
    }

    #[test]
    fn refusals_name_the_line_and_what_to_write() {
        let cases = [
            (
                "base_url = \"127.0.0.1:8080\"\nmodel = \"m\"\n",
                "a.toml:1:",
                "http(s) URL",
            ),
            (
                "base_url = \"http://h/v1\"\nmodel = \"m\"\nmax_turns = 0\n",
                "a.toml:3:",
                "at least 1",
            ),
            (
                "base_url = \"http://h/v1\"\nmodel = \"m\"\napi_key_env = \"sk-123\"\n",
                "a.toml:3:",
                "never the key",
            ),
            (
                "base_url = \"http://h/v1\"\nmodel = \"m\"\ntemprature = 1\n",
                "a.toml:3:",
                "unknown field",
            ),
            ("base_url = \"http://h/v1\"\n", "a.toml:1:", "model"),
            (
                "base_url = \"http://h/v1\"\nmodel = \"m\"\n[prices]\ninput = -1\noutput = 1\n",
                "a.toml:3:",
                "negative",
            ),
        ];
        for (text, at, what) in cases {
            let e = format!(
                "{:#}",
                AgentConfig::parse(text, Path::new("a.toml")).unwrap_err()
            );
            assert!(e.starts_with(at), "{e}");
            assert!(e.contains(what), "{e}");
        }
    }

    #[test]
    fn providers_shape_the_request_and_refuse_what_they_cannot_take() {
        let text = "provider = \"azure\"\nbase_url = \"https://r.openai.azure.com/openai/deployments/d\"\nmodel = \"d\"\n\n[query]\napi-version = \"2024-10-21\"\n\n[headers]\nX-Title = \"navbench\"\n\n[extra_body]\nreasoning_effort = \"low\"\n";
        let c = AgentConfig::parse(text, Path::new("azure.toml")).unwrap();
        assert_eq!(c.provider, Provider::Azure);
        assert_eq!(c.key_header, KeyHeader::Named("api-key".into()));
        assert_eq!(c.length_key, LengthKey::MaxCompletionTokens);
        assert_eq!(
            c.completions_url(),
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(c.temperature, None);
        let body = provider::body(&c.shape(), &[], &[], 5);
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(body["max_completion_tokens"], 5);
        let head = "base_url = \"http://h/v1\"\n";
        let cases = [
            ("provider = \"opnai\"\nmodel = \"m\"\n", "unknown provider"),
            (
                "provider = \"openai\"\nmodel = \"o3-mini\"\ntemperature = 0\n",
                "reasoning model",
            ),
            (
                "provider = \"anthropic\"\nmodel = \"c\"\ntemperature = 1.5\n",
                "at most 1",
            ),
            (
                "model = \"m\"\nlength_key = \"max_new_tokens\"\n",
                "length_key",
            ),
            (
                "model = \"m\"\n[headers]\nAuthorization = \"Bearer sk-1\"\n",
                "api_key_env",
            ),
            (
                "model = \"m\"\n[extra_body]\nmax_tokens = 5\n",
                "may not set max_tokens",
            ),
            (
                "model = \"m\"\nmax_retry_wait_secs = 0\n",
                "positive number of seconds",
            ),
        ];
        for (rest, what) in cases {
            let text = format!("{head}{rest}");
            let e = format!(
                "{:#}",
                AgentConfig::parse(&text, Path::new("a.toml")).unwrap_err()
            );
            assert!(e.starts_with("a.toml:"), "{e}");
            assert!(e.contains(what), "{what}: {e}");
        }
        let generic = AgentConfig::parse(
            &format!("{head}model = \"m\"\nlength_key = \"max_completion_tokens\"\n"),
            Path::new("a.toml"),
        )
        .unwrap();
        assert_eq!(generic.length_key, LengthKey::MaxCompletionTokens);
    }

    #[test]
    fn a_missing_key_variable_says_which_to_set() {
        let text = "base_url = \"http://h/v1\"\nmodel = \"m\"\napi_key_env = \"NAVBENCH_TEST_SURELY_UNSET\"\n";
        let c = AgentConfig::parse(text, Path::new("a.toml")).unwrap();
        let e = c.api_key().unwrap_err().to_string();
        assert!(e.contains("NAVBENCH_TEST_SURELY_UNSET"), "{e}");
    }

    #[test]
    fn shipped_agent_files_are_valid() {
        let dir = agents_dir();
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                AgentConfig::load(&p).unwrap();
                n += 1;
            }
        }
        assert!(n >= 1, "no agent files in {}", dir.display());
    }
}
