//! Reading an agent CLI's own report from its stdout ([`parse`]): its final message,
//! its account of the run (turns, tokens, cost, why it stopped, as
//! [`AgentStats`] marked [`UsageSource::Cli`]) and the tools it ran ([`ToolUse`]), so
//! a call of anything but the variant's MCP tools is caught ([`own_tools`]).
//!
//! One reader per format a named command declares (`report = …` in
//! `agents/cmd/NAME.toml`, [`ReportFormat`]):
//! - `claude-stream-json`: Claude Code's `--output-format stream-json --verbose`, one
//!   JSON event a line: `assistant` messages carry the `tool_use` blocks, `user`
//!   messages their `tool_result` (`is_error` when Claude Code refused the call), the
//!   last `result` event the final text, `num_turns`, `usage`, `total_cost_usd`;
//! - `codex-json`: `codex exec --json` events: `item.completed` items
//!   (`agent_message`, `mcp_tool_call`, `command_execution`, `file_change`, …) and
//!   `turn.completed` with `usage`; `turn.failed` / `error` events end it;
//! - `gemini-json`: Gemini CLI's `--output-format json`, one object: `response`,
//!   `stats.models.*` (requests, tokens, latency), `stats.tools.byName`, `error`;
//! - `text`: stdout is the answer; nothing else is known (the raw template's way).
//!
//! The MCP server the harness configures is always named
//! [`crate::session::proxy::SERVER_NAME`] (`navbench`); each CLI prefixes its tools in
//! its own way (`mcp__navbench__grep`, `mcp_navbench_grep`, or a `server` field).

use serde_json::Value;

pub use super::template::ReportFormat;

use crate::policy::agent::{AgentStats, StopReason, UsageSource};
use crate::session::proxy::SERVER_NAME;

/// One tool the CLI ran (or was asked to run), as its report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUse {
    /// As the CLI names it (`mcp__navbench__grep`, `Bash`, `command_execution: ls`).
    pub name: String,
    /// The tool of the harness's MCP server it is, if it is one.
    pub server_tool: Option<String>,
    /// False when the CLI refused it (no such tool, not allowed): nothing ran.
    pub ran: bool,
}

/// What a CLI's report says.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Its final message, read by the answer parser.
    pub answer: String,
    pub stats: AgentStats,
    pub tools: Vec<ToolUse>,
    /// Set when the CLI says it failed (an API error, a turn that failed): the row's error.
    pub failure: Option<String>,
}

/// The tools the report shows running that are not the harness server's: the CLI's
/// own (shell, file reading, web search, …). Each name once, in first-use order.
pub fn own_tools(report: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in &report.tools {
        if t.ran && t.server_tool.is_none() && !out.contains(&t.name) {
            out.push(t.name.clone());
        }
    }
    out
}

/// Reads `stdout` in `format`; `Ok(None)` for [`ReportFormat::Text`]. An error says
/// what was missing, for the row.
pub fn parse(format: ReportFormat, stdout: &str) -> anyhow::Result<Option<Report>> {
    let mut report = match format {
        ReportFormat::Text => return Ok(None),
        ReportFormat::ClaudeStreamJson => claude(stdout)?,
        ReportFormat::CodexJson => codex(stdout)?,
        ReportFormat::GeminiJson => gemini(stdout)?,
    };
    report.stats.usage_source = UsageSource::Cli;
    Ok(Some(report))
}

/// The JSON objects of a JSON-lines stream; other lines (a CLI's stray log line) are
/// skipped.
fn json_lines(stdout: &str) -> impl Iterator<Item = Value> + '_ {
    stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Claude Code's stream-json (see the module doc).
fn claude(stdout: &str) -> anyhow::Result<Report> {
    let mut r = Report::default();
    let mut result: Option<Value> = None;
    // tool_use id → index in r.tools, to mark refused calls from their results.
    let mut by_id: Vec<(String, usize)> = Vec::new();
    for ev in json_lines(stdout) {
        match ev["type"].as_str() {
            Some("assistant") => {
                for block in ev["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] != "tool_use" {
                        continue;
                    }
                    let name = block["name"].as_str().unwrap_or_default().to_string();
                    let prefix = format!("mcp__{SERVER_NAME}__");
                    let server_tool = name.strip_prefix(&prefix).map(String::from);
                    if let Some(id) = block["id"].as_str() {
                        by_id.push((id.to_string(), r.tools.len()));
                    }
                    r.tools.push(ToolUse {
                        name,
                        server_tool,
                        ran: true,
                    });
                }
            }
            Some("user") => {
                for block in ev["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] != "tool_result" || block["is_error"] != true {
                        continue;
                    }
                    let text = block["content"].to_string();
                    // Claude Code's refusal of a tool it does not offer (or may not run).
                    let refused =
                        text.contains("No such tool available") || text.contains("haven't granted");
                    if let Some((_, i)) = by_id.iter().find(|(id, _)| block["tool_use_id"] == *id)
                        && refused
                    {
                        r.tools[*i].ran = false;
                    }
                }
            }
            Some("result") => result = Some(ev),
            _ => {}
        }
    }
    let Some(res) = result else {
        anyhow::bail!(
            "Claude Code's output has no `result` event (expected --output-format stream-json --verbose)"
        );
    };
    r.answer = res["result"].as_str().unwrap_or_default().to_string();
    let usage = &res["usage"];
    let cache_read = u64_at(usage, "cache_read_input_tokens");
    let cache_creation = u64_at(usage, "cache_creation_input_tokens");
    r.stats.llm_turns = u64_at(&res, "num_turns") as usize;
    // Anthropic's input_tokens excludes cached prompt tokens (read or written); the
    // column counts the whole prompt, cached_tokens the part read from the cache.
    r.stats.prompt_tokens = u64_at(usage, "input_tokens") + cache_read + cache_creation;
    r.stats.cached_tokens = cache_read;
    r.stats.completion_tokens = u64_at(usage, "output_tokens");
    r.stats.llm_ms = res["duration_api_ms"].as_f64().unwrap_or(0.0);
    r.stats.cost_usd = res["total_cost_usd"].as_f64();
    let subtype = res["subtype"].as_str().unwrap_or_default();
    r.stats.stop_reason = match subtype {
        "success" if res["is_error"] != true => StopReason::Answered,
        "error_max_turns" => StopReason::MaxTurns,
        "error_max_budget_usd" => StopReason::TokenBudget,
        _ => StopReason::LlmError,
    };
    if r.stats.stop_reason == StopReason::LlmError {
        r.failure = Some(format!(
            "Claude Code ended with {} ({}): {}",
            if subtype.is_empty() {
                "no subtype"
            } else {
                subtype
            },
            res["api_error_status"],
            r.answer.chars().take(300).collect::<String>()
        ));
    }
    Ok(r)
}

/// `codex exec --json` events (see the module doc).
fn codex(stdout: &str) -> anyhow::Result<Report> {
    let mut r = Report::default();
    let mut completed = false;
    let mut turns_seen = false;
    for ev in json_lines(stdout) {
        match ev["type"].as_str() {
            Some("item.completed") => {
                let item = &ev["item"];
                match item["type"].as_str().unwrap_or_default() {
                    "agent_message" => {
                        r.answer = item["text"].as_str().unwrap_or_default().to_string();
                    }
                    // Notices (an unknown model's metadata, …) and thinking: no tool.
                    "reasoning" | "error" => {}
                    "mcp_tool_call" => {
                        let server = item["server"].as_str().unwrap_or_default();
                        let tool = item["tool"].as_str().unwrap_or_default();
                        r.tools.push(ToolUse {
                            name: format!("mcp_tool_call {server}.{tool}"),
                            server_tool: (server == SERVER_NAME).then(|| tool.to_string()),
                            ran: true,
                        });
                    }
                    kind => {
                        let what = item["command"]
                            .as_str()
                            .or(item["query"].as_str())
                            .map(|c| format!("{kind}: {}", c.chars().take(80).collect::<String>()))
                            .unwrap_or_else(|| kind.to_string());
                        r.tools.push(ToolUse {
                            name: what,
                            server_tool: None,
                            ran: true,
                        });
                    }
                }
            }
            Some("turn.completed") => {
                completed = true;
                turns_seen = true;
                let u = &ev["usage"];
                // OpenAI's input_tokens includes the cached ones, as the column does.
                r.stats.prompt_tokens += u64_at(u, "input_tokens");
                r.stats.cached_tokens += u64_at(u, "cached_input_tokens");
                r.stats.completion_tokens += u64_at(u, "output_tokens");
            }
            Some("turn.failed") => {
                turns_seen = true;
                r.failure = Some(format!(
                    "Codex's turn failed: {}",
                    ev["error"]["message"].as_str().unwrap_or("(no message)")
                ));
            }
            Some("error") => {
                r.failure = Some(format!(
                    "Codex reported an error: {}",
                    ev["message"].as_str().unwrap_or("(no message)")
                ));
            }
            _ => {}
        }
    }
    if !turns_seen && r.failure.is_none() {
        anyhow::bail!("Codex's output has no turn.completed event (expected `codex exec --json`)");
    }
    r.stats.stop_reason = if completed && r.failure.is_none() {
        StopReason::Answered
    } else {
        StopReason::LlmError
    };
    Ok(r)
}

/// Gemini CLI's `--output-format json` object (see the module doc).
fn gemini(stdout: &str) -> anyhow::Result<Report> {
    // The object is the whole of stdout; a warning printed before it is skipped.
    let start = stdout.find('{').unwrap_or(0);
    let v: Value = serde_json::from_str(stdout[start..].trim()).map_err(|e| {
        anyhow::anyhow!(
            "Gemini CLI's output is not one JSON object ({e}); expected --output-format json"
        )
    })?;
    let mut r = Report {
        answer: v["response"].as_str().unwrap_or_default().to_string(),
        ..Report::default()
    };
    for m in v["stats"]["models"].as_object().into_iter().flatten() {
        let (api, tok) = (&m.1["api"], &m.1["tokens"]);
        r.stats.llm_turns += u64_at(api, "totalRequests") as usize;
        r.stats.llm_ms += api["totalLatencyMs"].as_f64().unwrap_or(0.0);
        // `prompt` includes the cached part; thoughts are billed as output.
        r.stats.prompt_tokens += u64_at(tok, "prompt");
        r.stats.cached_tokens += u64_at(tok, "cached");
        r.stats.completion_tokens += u64_at(tok, "candidates") + u64_at(tok, "thoughts");
    }
    let prefix = format!("mcp_{SERVER_NAME}_");
    for (name, t) in v["stats"]["tools"]["byName"]
        .as_object()
        .into_iter()
        .flatten()
    {
        r.tools.push(ToolUse {
            name: name.clone(),
            server_tool: name.strip_prefix(&prefix).map(String::from),
            // A tool Gemini CLI does not offer fails without running ("not found").
            ran: u64_at(t, "success") > 0,
        });
    }
    if !v["error"].is_null() {
        r.failure = Some(format!(
            "Gemini CLI reported an error: {}",
            v["error"]["message"].as_str().unwrap_or("(no message)")
        ));
    } else if v.get("response").is_none() {
        anyhow::bail!("Gemini CLI's output has neither `response` nor `error`");
    }
    r.stats.stop_reason = if r.failure.is_none() {
        StopReason::Answered
    } else {
        StopReason::LlmError
    };
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shapes as Claude Code 2.1.332 prints them (trimmed to the fields read).
    const CLAUDE: &str = r#"{"type":"system","subtype":"init","tools":["mcp__navbench__grep"]}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__navbench__grep","input":{"pattern":"x"}}]}}
{"type":"user","message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"text","text":"a.py:1"}]}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","content":"<tool_use_error>Error: No such tool available: Bash.</tool_use_error>","is_error":true,"tool_use_id":"t2"}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Read","input":{}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","content":"1 import os","tool_use_id":"t3"}]}}
{"type":"result","subtype":"success","is_error":false,"num_turns":4,"result":"a.py:f","duration_api_ms":135,"total_cost_usd":0.0012,"usage":{"input_tokens":200,"cache_creation_input_tokens":6,"cache_read_input_tokens":14,"output_tokens":20}}
"#;

    #[test]
    fn claude_stream_json_gives_answer_usage_and_the_tools_that_ran() {
        let r = parse(ReportFormat::ClaudeStreamJson, CLAUDE)
            .unwrap()
            .unwrap();
        assert_eq!(r.answer, "a.py:f");
        let s = &r.stats;
        assert_eq!(
            (s.llm_turns, s.prompt_tokens, s.cached_tokens),
            (4, 220, 14)
        );
        assert_eq!(
            (s.completion_tokens, s.llm_ms, s.cost_usd),
            (20, 135.0, Some(0.0012))
        );
        assert_eq!(
            (s.stop_reason, s.usage_source),
            (StopReason::Answered, UsageSource::Cli)
        );
        assert_eq!(r.tools[0].server_tool.as_deref(), Some("grep"));
        // Bash was refused (nothing ran); Read ran: only Read is the agent's own use.
        assert!(!r.tools[1].ran);
        assert_eq!(own_tools(&r), vec!["Read".to_string()]);
        assert!(r.failure.is_none());
    }

    #[test]
    fn a_claude_error_result_or_a_missing_one_is_a_failure() {
        let err = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key","num_turns":1,"usage":{}}"#;
        let r = parse(ReportFormat::ClaudeStreamJson, err).unwrap().unwrap();
        assert_eq!(r.stats.stop_reason, StopReason::LlmError);
        assert!(r.failure.unwrap().contains("Invalid API key"));
        let e = parse(ReportFormat::ClaudeStreamJson, "not json").unwrap_err();
        assert!(e.to_string().contains("stream-json"), "{e}");
    }

    #[test]
    fn codex_events_give_answer_usage_and_own_tools() {
        let out = r#"{"type":"thread.started","thread_id":"t"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `m` not found."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"navbench","tool":"grep","arguments":{},"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'ls /'","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"a.py:f"}}
{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":14,"output_tokens":20,"reasoning_output_tokens":0}}
"#;
        let r = parse(ReportFormat::CodexJson, out).unwrap().unwrap();
        assert_eq!(r.answer, "a.py:f");
        let s = &r.stats;
        assert_eq!(
            (s.prompt_tokens, s.cached_tokens, s.completion_tokens),
            (200, 14, 20)
        );
        assert_eq!((s.stop_reason, s.cost_usd), (StopReason::Answered, None));
        assert_eq!(r.tools[0].server_tool.as_deref(), Some("grep"));
        assert_eq!(
            own_tools(&r),
            vec!["command_execution: /bin/bash -lc 'ls /'".to_string()]
        );
        let failed = r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#;
        let r = parse(ReportFormat::CodexJson, failed).unwrap().unwrap();
        assert!(r.failure.unwrap().contains("stream disconnected"));
        assert!(parse(ReportFormat::CodexJson, "").is_err());
    }

    #[test]
    fn gemini_json_gives_answer_usage_and_own_tools() {
        let out = r#"Warning: 256-color support not detected.
{"session_id":"s","response":"a.py:f","stats":{"models":{"m":{"api":{"totalRequests":2,"totalLatencyMs":120},"tokens":{"prompt":200,"candidates":20,"cached":14,"thoughts":3}}},
"tools":{"byName":{"mcp_navbench_grep":{"count":1,"success":1},"grep_search":{"count":1,"success":0,"fail":1},"read_file":{"count":1,"success":1}}}}}"#;
        let r = parse(ReportFormat::GeminiJson, out).unwrap().unwrap();
        assert_eq!(r.answer, "a.py:f");
        let s = &r.stats;
        assert_eq!(
            (s.llm_turns, s.prompt_tokens, s.cached_tokens),
            (2, 200, 14)
        );
        assert_eq!((s.completion_tokens, s.llm_ms), (23, 120.0));
        assert_eq!(own_tools(&r), vec!["read_file".to_string()]);
        let err = r#"{"session_id":"s","error":{"type":"Error","message":"Invalid auth method selected.","code":41}}"#;
        let r = parse(ReportFormat::GeminiJson, err).unwrap().unwrap();
        assert!(r.failure.unwrap().contains("Invalid auth"));
        assert!(parse(ReportFormat::Text, "x").unwrap().is_none());
    }
}
