//! [`CallOutcome`]: what one tool call gave, whatever happened, with the raw result
//! or JSON-RPC error kept beside the digest (text, error flag, size), so that a proxy
//! (`crate::session::proxy`) can pass the server's answer on verbatim.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::CallToolResult;

/// The result of one tool call, whatever happened.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The text content items of the result, joined with `\n` (empty on failure).
    pub text: String,
    /// The result's `structuredContent`, if any.
    pub structured: Option<serde_json::Value>,
    /// True for a tool-level error (`isError: true`), a JSON-RPC error, a timeout, a
    /// crash or a dead session.
    pub is_error: bool,
    /// What went wrong, when `is_error`: the tool's own message for tool-level errors.
    pub error: Option<String>,
    /// Time from sending the request to receiving the response (or giving up).
    pub latency: Duration,
    /// Size of the result serialized as JSON (the `result` member of the response)
    /// without its `_meta` ([`content_json`]); 0 when there was no result.
    pub response_bytes: usize,
    /// The server's result as it came, when it answered with one.
    pub result: Option<CallToolResult>,
    /// The server's JSON-RPC error as it came, when it answered with one.
    pub rpc_error: Option<ErrorData>,
}

/// The result as JSON without its `_meta`: what a tool answered (content, structured
/// content, error flag). `_meta` is protocol metadata a client does not hand to a
/// model, and where navbench's servers put wall-clock values (build and query times),
/// so leaving it out makes a result's size the same from one run to the next.
pub fn content_json(result: &CallToolResult) -> String {
    if result.meta.is_none() {
        return serde_json::to_string(result).unwrap_or_default();
    }
    let mut bare = result.clone();
    bare.meta = None;
    serde_json::to_string(&bare).unwrap_or_default()
}

impl CallOutcome {
    pub(super) fn failure(message: String, latency: Duration) -> CallOutcome {
        CallOutcome {
            text: String::new(),
            structured: None,
            is_error: true,
            error: Some(message),
            latency,
            response_bytes: 0,
            result: None,
            rpc_error: None,
        }
    }

    /// A call the server answered with a JSON-RPC error: a failure that keeps it.
    pub(super) fn rpc_failure(tool: &str, e: ErrorData, latency: Duration) -> CallOutcome {
        let mut out = CallOutcome::failure(
            format!(
                "server answered tools/call '{tool}' with JSON-RPC error {}: {}",
                e.code.0, e.message
            ),
            latency,
        );
        out.rpc_error = Some(e);
        out
    }

    pub(super) fn from_result(result: CallToolResult, latency: Duration) -> CallOutcome {
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        let is_error = result.is_error.unwrap_or(false);
        let error = is_error.then(|| {
            if text.is_empty() {
                "the tool reported an error without a message".to_string()
            } else {
                text.clone()
            }
        });
        CallOutcome {
            structured: result.structured_content.clone(),
            is_error,
            error,
            latency,
            response_bytes: content_json(&result).len(),
            text,
            result: Some(result),
            rpc_error: None,
        }
    }
}
