//! The variant server's MCP tools as the model sees them, and their results as it
//! reads them.
//!
//! Each MCP tool becomes one OpenAI function tool with the tool's name (mapped when
//! the endpoints would refuse it, see [`super::names`]), description and input schema
//! verbatim, so what the model is offered is exactly what the server
//! offers. A result goes back verbatim too (its text content, or the tool's error),
//! cut at `max_tool_result_tokens` of the run's tokenizer with a marker that says how
//! much was left out and how to ask for less: a result larger than the model's context
//! would otherwise end the conversation.

use rmcp::model::Tool;
use serde_json::{Value, json};

use super::names::ToolNames;
use crate::score::tokens::Tokenizer;

/// `tools` in the Chat Completions `tools` format, each under the name the model
/// sees (`names`: the server's name, or a safe one the endpoints accept).
pub fn function_tools(tools: &[Tool], names: &ToolNames) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            let mut f = json!({
                "name": names.safe(&t.name),
                "parameters": Value::Object((*t.input_schema).clone()),
            });
            if let Some(d) = &t.description {
                f["description"] = Value::String(d.to_string());
            }
            json!({"type": "function", "function": f})
        })
        .collect()
}

/// `text` cut to at most `max_tokens` tokens, with the marker when cut; and whether it was.
pub fn cut_result(text: &str, max_tokens: usize, tokenizer: Tokenizer) -> (String, bool) {
    let total = tokenizer.count(text);
    if total <= max_tokens {
        return (text.to_string(), false);
    }
    // Tokens are not characters: shrink the prefix until it fits, starting from the
    // proportional guess (a few rounds at most).
    let chars: Vec<char> = text.chars().collect();
    let mut keep = chars.len() * max_tokens / total.max(1);
    loop {
        let head: String = chars[..keep].iter().collect();
        if keep == 0 || tokenizer.count(&head) <= max_tokens {
            let marker = format!(
                "\n[navbench: result cut here; {max_tokens} of {total} tokens shown. Ask for less: a narrower query, a smaller line range, fewer results.]"
            );
            return (format!("{head}{marker}"), true);
        }
        keep = keep * 9 / 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn tools_are_offered_verbatim() {
        let schema: rmcp::model::JsonObject = serde_json::from_value(
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        )
        .unwrap();
        let t = Tool::new("grep", "Search files", Arc::new(schema.clone()));
        let f = function_tools(&[t], &ToolNames::new(["grep"]));
        assert_eq!(
            f[0],
            json!({"type": "function", "function": {"name": "grep", "description": "Search files", "parameters": Value::Object(schema)}})
        );
    }

    #[test]
    fn long_results_are_cut_with_a_marker_and_short_ones_are_not() {
        let tok = Tokenizer::default();
        let (same, cut) = cut_result("short", 10, tok);
        assert_eq!((same.as_str(), cut), ("short", false));
        let long = "alpha beta gamma delta ".repeat(200);
        let (text, cut) = cut_result(&long, 50, tok);
        assert!(cut);
        let head = text.split("\n[navbench: result cut here").next().unwrap();
        assert!(tok.count(head) <= 50);
        assert!(text.contains("50 of"), "{text}");
    }
}
