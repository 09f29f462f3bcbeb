//! The MCP plumbing every navbench server shares: typed tool outputs, tidy JSON
//! schemas, and [`call_tool`], which turns a raw argument object into a
//! `CallToolResult`.
//!
//! Servers take each tool's arguments as a raw JSON object (the advertised
//! `inputSchema` comes from the typed argument struct), so malformed arguments become
//! a tool result with `isError: true` and a message the agent can act on, not a
//! JSON-RPC error it never sees. A result carries the agent-facing text as a text
//! content item and the same data as `structuredContent`; wall-clock values (build
//! and query times, `timings_ms`, when an index was made) go in the result's `_meta`
//! ([`ToolOutput::with_meta`]), never in the text or the structured data, so the same
//! call on the same tree gives the same bytes (a recorded agent run replays, and
//! response sizes are reproducible).
//!
//! ```
//! use std::sync::Arc;
//! use navbench_server_support::mcp::{ToolOutput, call_tool};
//!
//! #[derive(serde::Deserialize)]
//! struct Args { n: u32 }
//!
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let args = serde_json::json!({"n": 2}).as_object().cloned().unwrap_or_default();
//! let result = rt.block_on(call_tool(Arc::new(10u32), "add", r#"{"n": 1}"#, args, |base, a: Args| {
//!     Ok::<_, std::convert::Infallible>(ToolOutput::ok(format!("{}", base + a.n), base + a.n))
//! }));
//! assert_eq!(result.is_error, Some(false));
//! assert_eq!(result.structured_content, Some(serde_json::json!(12)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Display;
use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_input, schema_for_output, schema_for_type};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a tool returns: the text an agent reads and the same data as a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput<T> {
    /// Text content of the result.
    pub text: String,
    /// Structured content of the result.
    pub data: T,
    /// True when the call found nothing usable (e.g. every entity was unknown): the
    /// result is sent with `isError: true` while its text still helps (candidates).
    pub is_error: bool,
    /// The result's `_meta`: values that differ between two identical calls (times).
    pub meta: Option<JsonObject>,
}

impl<T> ToolOutput<T> {
    /// A successful output.
    pub fn ok(text: String, data: T) -> ToolOutput<T> {
        ToolOutput {
            text,
            data,
            is_error: false,
            meta: None,
        }
    }

    /// An output sent with `isError: true` that still carries useful text and data.
    pub fn failed(text: String, data: T) -> ToolOutput<T> {
        ToolOutput {
            text,
            data,
            is_error: true,
            meta: None,
        }
    }

    /// The output with `meta` (a JSON object; anything else is dropped) as the
    /// result's `_meta`: where a tool puts its wall-clock values.
    pub fn with_meta(mut self, meta: serde_json::Value) -> ToolOutput<T> {
        if let serde_json::Value::Object(m) = meta {
            self.meta = Some(m);
        }
        self
    }
}

/// Input schema for a tool whose arguments deserialize into `T`, tidied for an agent's
/// context (see [`tidy_input_schema`]).
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    // Argument structs are plain objects, so the first form always succeeds (unit-tested
    // by each server); the fallback keeps a usable, unstripped schema.
    let schema = schema_for_input::<T>().unwrap_or_else(|_| schema_for_type::<T>());
    Arc::new(tidy_input_schema(&schema))
}

/// Output schema for a tool whose structured result is `T`, without `$schema`.
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = schema_for_output::<T>().as_ref().clone();
    schema.remove("$schema");
    Arc::new(schema)
}

/// Drops what only adds tokens: `$schema`, `default: null`, integer `format`s, and the
/// `"null"` alternative of optional properties (optional = not in `required`).
pub fn tidy_input_schema(schema: &JsonObject) -> JsonObject {
    let mut out = schema.clone();
    out.remove("$schema");
    if let Some(serde_json::Value::Object(props)) = out.get_mut("properties") {
        for prop in props.values_mut() {
            let serde_json::Value::Object(prop) = prop else {
                continue;
            };
            if prop.get("default").is_some_and(serde_json::Value::is_null) {
                prop.remove("default");
            }
            prop.remove("format");
            let single = match prop.get("type") {
                Some(serde_json::Value::Array(types)) => {
                    let rest: Vec<&serde_json::Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    match rest.as_slice() {
                        [only] => Some((*only).clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(single) = single {
                prop.insert("type".to_string(), single);
            }
        }
    }
    out
}

/// Parses `args` into `A`, runs `f` on a blocking thread with `state`, and turns the
/// outcome into a result. Bad arguments answer with the parse error and `example`, a
/// valid argument object for the tool; a tool error answers with its message.
pub async fn call_tool<S, A, O, E, F>(
    state: Arc<S>,
    tool: &'static str,
    example: &'static str,
    args: JsonObject,
    f: F,
) -> CallToolResult
where
    S: Send + Sync + 'static + ?Sized,
    A: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
    E: Display + Send + 'static,
    F: FnOnce(&S, A) -> Result<ToolOutput<O>, E> + Send + 'static,
{
    let parsed: A = match serde_json::from_value(serde_json::Value::Object(args)) {
        Ok(parsed) => parsed,
        Err(e) => {
            tracing::debug!(tool, error = %e, "bad arguments");
            return error_result(format!(
                "invalid arguments for {tool}: {e}. Example of valid arguments: {example}"
            ));
        }
    };
    let started = std::time::Instant::now();
    let outcome = tokio::task::spawn_blocking(move || f(&state, parsed)).await;
    let result = match outcome {
        Ok(Ok(output)) => success_result(tool, output),
        Ok(Err(e)) => error_result(e.to_string()),
        Err(join) => {
            tracing::error!(tool, error = %join, "tool task failed");
            error_result(format!("{tool} failed unexpectedly: {join}"))
        }
    };
    tracing::debug!(
        tool,
        is_error = result.is_error.unwrap_or(false),
        elapsed_us = started.elapsed().as_micros() as u64,
        "tool call"
    );
    result
}

/// A result with text and structured content (`isError` as the output says).
pub fn success_result<O: Serialize>(tool: &str, output: ToolOutput<O>) -> CallToolResult {
    match serde_json::to_value(&output.data) {
        Ok(value) => {
            let content = vec![ContentBlock::text(output.text)];
            let mut result = if output.is_error {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            };
            result.structured_content = Some(value);
            result.meta = output.meta.map(rmcp::model::MetaObject);
            result
        }
        Err(e) => error_result(format!("{tool} could not encode its result: {e}")),
    }
}

/// A tool-level error the agent sees (`isError: true`).
pub fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Serves `server` over stdin/stdout until the client closes the connection (or the
/// connection fails); `name` labels the log lines. stdout carries MCP only.
pub async fn serve_stdio<S: rmcp::ServerHandler>(server: S, name: &str) -> Result<(), StdioError> {
    use rmcp::ServiceExt as _;
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| StdioError::Initialize(e.to_string()))?;
    let reason = running
        .waiting()
        .await
        .map_err(|e| StdioError::Task(e.to_string()))?;
    tracing::info!(?reason, "{name} stopped");
    Ok(())
}

/// Why serving over stdio ended in failure.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The client never completed the MCP initialization.
    #[error("MCP initialization with the client failed: {0}")]
    Initialize(String),
    /// The server task ended abnormally.
    #[error("server task failed: {0}")]
    Task(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// A required name.
        name: String,
        /// An optional count.
        count: Option<u32>,
    }

    #[test]
    fn input_schema_is_tidy() {
        let schema = input_schema::<Args>();
        assert!(!schema.contains_key("$schema"));
        let count = &schema["properties"]["count"];
        assert_eq!(count["type"], "integer");
        assert!(count.get("format").is_none());
        assert_eq!(schema["required"], serde_json::json!(["name"]));
    }

    fn rt() -> tokio::runtime::Runtime {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => panic!("runtime: {e}"),
        }
    }

    #[test]
    fn bad_arguments_become_an_actionable_tool_error() {
        let args = JsonObject::new();
        let result = rt().block_on(call_tool(
            Arc::new(()),
            "greet",
            r#"{"name": "x"}"#,
            args,
            |_, a: Args| Ok::<_, String>(ToolOutput::ok(a.name.clone(), a.name)),
        ));
        assert_eq!(result.is_error, Some(true));
        let text = format!("{:?}", result.content);
        assert!(text.contains("invalid arguments for greet"), "{text}");
        assert!(text.contains("missing field `name`"), "{text}");
        assert!(text.contains(r#"{\"name\": \"x\"}"#), "{text}");
    }

    #[test]
    fn tool_errors_and_failed_outputs_set_is_error() {
        let mut args = JsonObject::new();
        args.insert("name".into(), "x".into());
        let err = rt().block_on(call_tool(
            Arc::new(()),
            "greet",
            "{}",
            args.clone(),
            |_, _a: Args| Err::<ToolOutput<()>, _>("call init first"),
        ));
        assert_eq!(err.is_error, Some(true));
        assert!(format!("{:?}", err.content).contains("call init first"));
        let failed = rt().block_on(call_tool(
            Arc::new(()),
            "greet",
            "{}",
            args,
            |_, a: Args| Ok::<_, String>(ToolOutput::failed("no such x".into(), a.name)),
        ));
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(failed.structured_content, Some(serde_json::json!("x")));
    }

    #[test]
    fn meta_goes_to_the_results_meta_not_its_content() {
        let out = ToolOutput::ok("t".into(), 1u8).with_meta(serde_json::json!({"took_ms": 3.5}));
        let result = success_result("x", out);
        let wire = serde_json::to_value(&result).unwrap_or_default();
        assert_eq!(wire["_meta"], serde_json::json!({"took_ms": 3.5}));
        assert_eq!(wire["structuredContent"], serde_json::json!(1));
        assert!(!wire["content"].to_string().contains("took_ms"));
    }
}
