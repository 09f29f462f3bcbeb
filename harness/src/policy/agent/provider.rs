//! [`Provider`]: what each endpoint an agent file may name accepts in a Chat
//! Completions request, as data (`provider = "…"` in the agent file).
//!
//! A provider fixes the request's shape: the one length key the server reads
//! ([`Provider::length_key`]), whether its reasoning models refuse a temperature
//! ([`Provider::refuses_temperature`]), the header that carries the key
//! ([`Provider::key_header`]), and what a file must add ([`Provider::needs`]). The
//! sampling keys (`temperature`, `seed`) are sent only when the agent file sets them,
//! so every server applies its own default otherwise. [`RULES`] says which provider
//! document each rule was taken from (docs/providers.md repeats it for users).
//!
//! Data flow: `config` reads `provider` and refuses what the provider cannot take
//! ([`check_temperature`]); the agent builds each body with [`body`]; the chat client
//! sends it with [`KeyHeader`] and the file's `[headers]` and `[query]`.

use serde_json::{Map, Value, json};

/// The endpoints an agent file can name (`provider = "…"`, default `generic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Provider {
    OpenAi,
    /// Anthropic's OpenAI-compatible endpoint (`https://api.anthropic.com/v1`).
    Anthropic,
    /// Gemini's OpenAI-compatible endpoint (`…/v1beta/openai`).
    Gemini,
    OpenRouter,
    Azure,
    Vllm,
    Ollama,
    /// llama.cpp's `llama-server` and `llama-cpp-python`'s server.
    LlamaCpp,
    /// Any other OpenAI-compatible server.
    #[default]
    Generic,
}

/// Every provider, in the order docs and errors list them.
pub const ALL: [Provider; 9] = [
    Provider::OpenAi,
    Provider::Anthropic,
    Provider::Gemini,
    Provider::OpenRouter,
    Provider::Azure,
    Provider::Vllm,
    Provider::Ollama,
    Provider::LlamaCpp,
    Provider::Generic,
];

/// The key a request's completion length goes under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthKey {
    MaxCompletionTokens,
    MaxTokens,
}

impl LengthKey {
    pub fn as_str(self) -> &'static str {
        match self {
            LengthKey::MaxCompletionTokens => "max_completion_tokens",
            LengthKey::MaxTokens => "max_tokens",
        }
    }

    /// The key `s` names (`length_key = "…"` in an agent file).
    pub fn parse(s: &str) -> Option<LengthKey> {
        [LengthKey::MaxCompletionTokens, LengthKey::MaxTokens]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// How the API key travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer <key>`.
    Bearer,
    /// `<name>: <key>` (Azure's `api-key`).
    Named(String),
}

/// One rule and the document it was taken from.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub provider: Provider,
    pub rule: &'static str,
    /// Title and address of the provider's document.
    pub source: &'static str,
}

/// Which document each provider rule comes from (docs/providers.md shows this table).
pub const RULES: &[Rule] = &[
    Rule {
        provider: Provider::OpenAi,
        rule: "max_completion_tokens only: max_tokens is deprecated and not compatible with o-series models; sending both is refused (400)",
        source: "OpenAI API reference, Create chat completion (https://platform.openai.com/docs/api-reference/chat/create)",
    },
    Rule {
        provider: Provider::OpenAi,
        rule: "reasoning models (o1, o3, o4-mini, gpt-5 family) take only the default temperature",
        source: "OpenAI API reference, Create chat completion; Azure OpenAI 'Work with chat completion models' note on reasoning models (https://learn.microsoft.com/azure/foundry/openai/how-to/chatgpt)",
    },
    Rule {
        provider: Provider::Azure,
        rule: "max_completion_tokens; reasoning models take no temperature; key in the api-key header; api-version query parameter on deployment URLs",
        source: "Azure OpenAI 'Work with chat completion models' and REST API reference (https://learn.microsoft.com/azure/ai-services/openai/reference)",
    },
    Rule {
        provider: Provider::Anthropic,
        rule: "max_tokens (max_completion_tokens also read); temperature between 0 and 1 (above 1 is capped, so refused here); seed and reasoning_effort ignored; key as a bearer token",
        source: "Anthropic, OpenAI SDK compatibility (https://platform.claude.com/docs/en/api/openai-sdk)",
    },
    Rule {
        provider: Provider::Gemini,
        rule: "max_tokens; tool calls carry extra_content.google.thought_signature, which must be sent back on the next turn (4xx otherwise)",
        source: "Gemini API, OpenAI compatibility (https://ai.google.dev/gemini-api/docs/openai) and Thought Signatures (https://ai.google.dev/gemini-api/docs/thought-signatures)",
    },
    Rule {
        provider: Provider::OpenRouter,
        rule: "max_tokens, the length parameter its request schema documents (mapped per upstream model); reasoning_details returned on messages are sent back as received",
        source: "OpenRouter API Reference overview (https://openrouter.ai/docs/api-reference/overview) and Reasoning Tokens (https://openrouter.ai/docs/use-cases/reasoning-tokens)",
    },
    Rule {
        provider: Provider::Vllm,
        rule: "max_tokens; tool_choice auto needs the server started with --enable-auto-tool-choice --tool-call-parser <parser>",
        source: "vLLM, Tool Calling (https://docs.vllm.ai/en/latest/features/tool_calling/)",
    },
    Rule {
        provider: Provider::Ollama,
        rule: "max_tokens (max_completion_tokens is not among the supported request fields); the context length is the server's (OLLAMA_CONTEXT_LENGTH), and a longer prompt is truncated silently",
        source: "Ollama, OpenAI compatibility (https://docs.ollama.com/api/openai-compatibility) and FAQ on the context window (https://docs.ollama.com/faq)",
    },
    Rule {
        provider: Provider::LlamaCpp,
        rule: "max_tokens; tools need a chat format or template that supports them (llama-cpp-python --chat_format chatml-function-calling, llama-server --jinja)",
        source: "llama.cpp server README (https://github.com/ggml-org/llama.cpp/tree/master/tools/server)",
    },
    Rule {
        provider: Provider::Generic,
        rule: "max_tokens, the key every OpenAI-compatible server reads (length_key overrides it)",
        source: "OpenAI API reference, Create chat completion (max_tokens deprecated but accepted by non-reasoning models)",
    },
];

impl Provider {
    /// The value of `provider = "…"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::OpenRouter => "openrouter",
            Provider::Azure => "azure",
            Provider::Vllm => "vllm",
            Provider::Ollama => "ollama",
            Provider::LlamaCpp => "llamacpp",
            Provider::Generic => "generic",
        }
    }

    /// The provider `s` names.
    pub fn parse(s: &str) -> Option<Provider> {
        ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The one length key the provider's document names (see [`RULES`]).
    pub fn length_key(self) -> LengthKey {
        match self {
            Provider::OpenAi | Provider::Azure => LengthKey::MaxCompletionTokens,
            _ => LengthKey::MaxTokens,
        }
    }

    /// The header the key travels in.
    pub fn key_header(self) -> KeyHeader {
        match self {
            Provider::Azure => KeyHeader::Named("api-key".into()),
            _ => KeyHeader::Bearer,
        }
    }

    /// True when `model` at this provider is an OpenAI reasoning model, which takes
    /// only the default temperature.
    pub fn refuses_temperature(self, model: &str) -> bool {
        matches!(
            self,
            Provider::OpenAi | Provider::Azure | Provider::OpenRouter
        ) && is_openai_reasoning_model(model)
    }

    /// The highest temperature the provider applies as sent.
    pub fn max_temperature(self) -> f64 {
        match self {
            Provider::Anthropic => 1.0,
            _ => 2.0,
        }
    }

    /// What a user must arrange outside the agent file (shown in refusals and docs).
    pub fn needs(self) -> &'static str {
        match self {
            Provider::Vllm => {
                "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser for the model>"
            }
            Provider::Ollama => {
                "set the server's context length (OLLAMA_CONTEXT_LENGTH); Ollama truncates longer prompts silently"
            }
            Provider::LlamaCpp => "start the server with a chat format that supports tools",
            Provider::Azure => "base_url is the deployment URL; [query] api-version for it",
            _ => "an API key in the variable api_key_env names",
        }
    }
}

/// OpenAI's reasoning models: the o-series and the gpt-5 family (an OpenRouter
/// `openai/…` name too). They refuse any temperature but the default.
pub fn is_openai_reasoning_model(model: &str) -> bool {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = ["o1", "o3", "o4"].iter().any(|p| {
        m == *p
            || m.strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('.'))
    });
    o_series || m.starts_with("gpt-5")
}

/// Why `temperature` cannot go to `model` at `provider`, with what to write instead.
pub fn check_temperature(provider: Provider, model: &str, t: f64) -> Result<(), String> {
    if provider.refuses_temperature(model) && t != 1.0 {
        return Err(format!(
            "{model} is an OpenAI reasoning model: it takes only the default temperature (1) and the endpoint refuses any other; remove temperature from the file"
        ));
    }
    if t > provider.max_temperature() {
        return Err(format!(
            "provider {} applies temperatures between 0 and {} (a higher one is capped, so the run would record a temperature it did not use); write at most {}",
            provider.as_str(),
            provider.max_temperature(),
            provider.max_temperature()
        ));
    }
    Ok(())
}

/// Keys the agent sets itself: `[extra_body]` may not set them.
pub const OWN_KEYS: [&str; 9] = [
    "model",
    "messages",
    "tools",
    "tool_choice",
    "stream",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "seed",
];

/// What one request is made of, besides the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub model: String,
    pub length_key: LengthKey,
    pub temperature: Option<f64>,
    pub seed: Option<i64>,
    /// `[extra_body]`, merged at the top level of every request.
    pub extra_body: Map<String, Value>,
}

/// One Chat Completions body: the conversation, the tools (none: `tools` is left out),
/// exactly one length key, the sampling keys only when the file set them, and
/// `[extra_body]`.
pub fn body(shape: &Shape, messages: &[Value], tools: &[Value], max_tokens: u64) -> Value {
    let mut r = json!({
        "model": shape.model,
        "messages": messages,
        "stream": false,
    });
    r[shape.length_key.as_str()] = json!(max_tokens);
    if !tools.is_empty() {
        r["tools"] = Value::Array(tools.to_vec());
        r["tool_choice"] = json!("auto");
    }
    if let Some(t) = shape.temperature {
        r["temperature"] = json!(t);
    }
    if let Some(seed) = shape.seed {
        r["seed"] = json!(seed);
    }
    if let Value::Object(o) = &mut r {
        for (k, v) in &shape.extra_body {
            o.insert(k.clone(), v.clone());
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(key: LengthKey) -> Shape {
        Shape {
            model: "m".into(),
            length_key: key,
            temperature: None,
            seed: None,
            extra_body: Map::new(),
        }
    }

    #[test]
    fn a_body_has_one_length_key_and_no_sampling_unless_set() {
        let b = body(&shape(LengthKey::MaxCompletionTokens), &[], &[], 64);
        assert_eq!(b["max_completion_tokens"], 64);
        assert!(b.get("max_tokens").is_none());
        assert!(b.get("temperature").is_none() && b.get("seed").is_none());
        assert!(b.get("tools").is_none());
        let mut s = shape(LengthKey::MaxTokens);
        s.temperature = Some(0.0);
        s.seed = Some(3);
        s.extra_body.insert("reasoning_effort".into(), json!("low"));
        let b = body(&s, &[], &[json!({"type": "function"})], 8);
        assert_eq!(b["max_tokens"], 8);
        assert!(b.get("max_completion_tokens").is_none());
        assert_eq!(
            (b["temperature"].clone(), b["seed"].clone()),
            (json!(0.0), json!(3))
        );
        assert_eq!(b["reasoning_effort"], "low");
        assert_eq!(b["tool_choice"], "auto");
    }

    #[test]
    fn reasoning_models_are_recognised_by_name() {
        for m in [
            "o1",
            "o3-mini",
            "o4-mini",
            "gpt-5",
            "gpt-5-mini",
            "openai/o3",
            "o1-2024-12-17",
        ] {
            assert!(is_openai_reasoning_model(m), "{m}");
        }
        for m in [
            "gpt-4o-mini",
            "gpt-4.1",
            "ollama3",
            "o",
            "claude-sonnet-4-5",
            "qwen3",
        ] {
            assert!(!is_openai_reasoning_model(m), "{m}");
        }
    }

    #[test]
    fn temperatures_a_provider_cannot_take_are_refused() {
        assert!(check_temperature(Provider::OpenAi, "o4-mini", 0.0).is_err());
        assert!(check_temperature(Provider::OpenAi, "o4-mini", 1.0).is_ok());
        assert!(check_temperature(Provider::OpenAi, "gpt-4o-mini", 0.0).is_ok());
        assert!(check_temperature(Provider::Azure, "gpt-5", 0.2).is_err());
        assert!(check_temperature(Provider::Anthropic, "claude", 1.5).is_err());
        assert!(check_temperature(Provider::Generic, "o3", 0.0).is_ok());
    }

    #[test]
    fn every_provider_has_a_rule_and_parses_back() {
        for p in ALL {
            assert_eq!(Provider::parse(p.as_str()), Some(p));
            assert!(RULES.iter().any(|r| r.provider == p), "{p:?}");
        }
        assert_eq!(
            Provider::OpenAi.length_key(),
            LengthKey::MaxCompletionTokens
        );
        assert_eq!(Provider::Gemini.length_key(), LengthKey::MaxTokens);
        assert_eq!(
            Provider::Azure.key_header(),
            KeyHeader::Named("api-key".into())
        );
    }
}
