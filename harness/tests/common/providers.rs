//! Endpoints of the tests' own that play a model behind each provider and enforce
//! that provider's documented request rules with its documented error wording
//! (docs/providers.md lists the documents). They fake the model only: the harness,
//! the servers and the CLI under test are the real ones.
//!
//! The scripted model: the pre-flight probe gets "OK"; the first turn calls
//! `list_files`; the next answers with a path from the tool's result.

use serde_json::{Value, json};

use super::endpoint::{self, Endpoint, Reply, Req, is_probe, turns_so_far};

/// The key every provider endpoint accepts.
pub const GOOD_KEY: &str = "test-key-good";

fn error(status: u16, body: Value) -> Reply {
    Reply::Http(status, Vec::new(), body.to_string())
}

fn openai_error(status: u16, message: &str) -> Reply {
    error(
        status,
        json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}}),
    )
}

fn reasoning_model(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4"]
        .iter()
        .any(|p| m == *p || m.starts_with(&format!("{p}-")))
        || m.starts_with("gpt-5")
}

fn bearer_ok(r: &Req) -> bool {
    r.header("authorization") == Some(&format!("Bearer {GOOD_KEY}"))
}

/// OpenAI's rules (API reference, Create chat completion), shared by Azure.
fn openai_rules(b: &Value) -> Option<Reply> {
    let has = |k: &str| b.get(k).is_some();
    if has("max_tokens") && has("max_completion_tokens") {
        return Some(openai_error(
            400,
            "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.",
        ));
    }
    let model = b["model"].as_str().unwrap_or("");
    if reasoning_model(model) {
        if has("max_tokens") {
            return Some(openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            ));
        }
        if let Some(t) = b.get("temperature").and_then(Value::as_f64)
            && t != 1.0
        {
            return Some(openai_error(
                400,
                &format!(
                    "Unsupported value: 'temperature' does not support {t} with this model. Only the default (1) value is supported."
                ),
            ));
        }
    }
    for (i, t) in b["tools"].as_array().into_iter().flatten().enumerate() {
        let name = t["function"]["name"].as_str().unwrap_or("");
        let ok = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        if !ok {
            return Some(openai_error(
                400,
                &format!(
                    "Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                ),
            ));
        }
    }
    None
}

/// The refusal `provider` documents for `r`, if it breaks a rule.
pub fn enforce(provider: &str, r: &Req) -> Option<Reply> {
    let b = &r.body;
    match provider {
        "openai" | "generic" => {
            if provider == "openai" && !bearer_ok(r) {
                return Some(openai_error(401, "Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys."));
            }
            openai_rules(b)
        }
        "azure" => {
            if r.header("api-key") != Some(GOOD_KEY) {
                return Some(error(401, json!({"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}})));
            }
            if !r.path.contains("api-version=") {
                return Some(error(404, json!({"error": {"code": "404", "message": "Resource not found"}})));
            }
            openai_rules(b)
        }
        "anthropic" => {
            if !bearer_ok(r) {
                return Some(error(401, json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})));
            }
            if b.get("n").and_then(Value::as_u64).is_some_and(|n| n != 1) {
                return Some(error(400, json!({"type": "error", "error": {"type": "invalid_request_error", "message": "n must be exactly 1"}})));
            }
            None
        }
        "gemini" => {
            if !bearer_ok(r) {
                return Some(error(400, json!([{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}])));
            }
            // Thought signatures must come back on the tool calls of earlier turns.
            for m in b["messages"].as_array().into_iter().flatten() {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let want = format!("sig-{}", c["id"].as_str().unwrap_or(""));
                    if c.pointer("/extra_content/google/thought_signature").and_then(Value::as_str) != Some(want.as_str()) {
                        let name = c["function"]["name"].as_str().unwrap_or("");
                        return Some(error(400, json!([{"error": {"code": 400, "message": format!("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."), "status": "INVALID_ARGUMENT"}}])));
                    }
                }
            }
            None
        }
        "openrouter" => (!bearer_ok(r)).then(|| {
            error(401, json!({"error": {"message": "No auth credentials found", "code": 401}}))
        }),
        "vllm" => (b["tool_choice"] == "auto" && r.header("x-test-vllm-flags") == Some("none")).then(|| {
            error(400, json!({"object": "error", "message": "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set", "type": "BadRequestError", "param": null, "code": 400}))
        }),
        "llamacpp" => {
            // llama.cpp's server refuses a null content.
            let null = b["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| m["role"] == "assistant" && m["content"].is_null());
            null.then(|| error(500, json!({"error": {"code": 500, "message": "Expected 'content' to be a string or an array", "type": "server_error"}})))
        }
        _ => None,
    }
}

/// A path the last tool result names, for the scripted answer.
fn a_path_from_the_tools(b: &Value) -> String {
    b["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .flat_map(|t| t.split_whitespace())
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '/' || c == '.' || c == '_'))
        })
        .find(|w| w.ends_with(".py") && !w.contains(':'))
        .unwrap_or("setup.py")
        .to_string()
}

/// The scripted model's reply to `r` at `provider`, with the fields that provider adds.
pub fn model_turn(provider: &str, r: &Req) -> Reply {
    let b = &r.body;
    let (message, usage) = if is_probe(b) {
        (
            json!({"role": "assistant", "content": "OK"}),
            json!({"prompt_tokens": 50, "completion_tokens": 1}),
        )
    } else if turns_so_far(b) == 0 {
        let mut call = json!({"id": "c0", "type": "function", "function": {"name": "list_files", "arguments": "{}"}});
        let mut m = json!({"role": "assistant", "content": null});
        match provider {
            "gemini" => call["extra_content"] = json!({"google": {"thought_signature": "sig-c0"}}),
            "openrouter" => {
                m["reasoning"] = json!("Listing first.");
                m["reasoning_details"] =
                    json!([{"type": "reasoning.encrypted", "data": "opaque", "id": "r0"}]);
            }
            "vllm" | "llamacpp" => m["reasoning_content"] = json!("Listing first."),
            _ => {}
        }
        m["tool_calls"] = json!([call]);
        (m, json!({"prompt_tokens": 400, "completion_tokens": 20}))
    } else {
        let m = json!({"role": "assistant", "content": a_path_from_the_tools(b)});
        (m, json!({"prompt_tokens": 600, "completion_tokens": 10}))
    };
    let mut usage = usage;
    match provider {
        "openai" | "azure" => {
            usage["prompt_tokens_details"] = json!({"cached_tokens": 32});
            usage["completion_tokens_details"] = json!({"reasoning_tokens": 8});
        }
        "anthropic" => usage["cache_read_input_tokens"] = json!(16),
        _ => {}
    }
    let body = json!({"id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": if message["tool_calls"].is_array() {"tool_calls"} else {"stop"}}],
        "usage": usage});
    Reply::Http(200, Vec::new(), body.to_string())
}

/// An endpoint playing `provider`: its rules enforced, then the scripted model.
pub fn start(provider: &'static str) -> Endpoint {
    endpoint::start_req(move |r| enforce(provider, r).unwrap_or_else(|| model_turn(provider, r)))
}
