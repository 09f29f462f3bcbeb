//! The parts of one turn the loop in [`super::Agent::localize`] decides with: what a
//! reply without tool calls means ([`ending`]), whether the next request fits the
//! token budget ([`Spend`]), the texts of the reminder and the "answer now" turns,
//! and the assistant message as it goes back ([`echo`]).
//!
//! Endings of a reply without tool calls, in this order:
//! - `finish_reason: content_filter`: the conversation ends, `content_filter`;
//! - empty content (a reasoning model that spent its completion thinking), or a text
//!   naming no location: one reminder turn per conversation, then the answer as it is;
//! - `finish_reason: length` with text: the reply was cut, never scored as an answer:
//!   `truncated`;
//! - otherwise the text is the answer.
//!
//! The budget: before each request the next prompt is estimated (the last turn's
//! prompt and completion as the endpoint counted them, plus the run's tokenizer over
//! what was added since; the whole request for the first turn). A tool turn is sent
//! only when the spend so far, that estimate and a whole completion fit the budget;
//! else one "answer now" turn is sent if its prompt still fits, its completion cut to
//! what is left. So a conversation never overshoots its budget by a prompt.

use serde_json::{Value, json};

use crate::score::tokens::Tokenizer;

/// What the loop does with a reply that called no tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Send the reminder (`text`) and go on.
    Remind(&'static str),
    /// The reply is the answer.
    Answer,
    /// Cut at the length limit: not an answer.
    Truncated,
    /// Withheld by the provider's filter.
    ContentFilter,
}

/// Asked when a reply had neither a tool call nor a location.
pub const REMIND_NO_LOCATION: &str = "Your last reply called no tool and named no location. Either call a tool to keep looking, or answer now: one location per line, as path/to/file.py or path/to/file.py:Class.method.";
/// Asked when a reply was empty (a reasoning model that spent its completion thinking).
pub const REMIND_EMPTY: &str = "Your last reply was empty. Either call a tool to keep looking, or answer now: one location per line, as path/to/file.py or path/to/file.py:Class.method.";
/// The last turn's question once `max_turns` or the token budget is reached.
pub const ANSWER_NOW: &str = "You have no turns left: do not call tools. Answer now with the locations you found most likely to need the fix, most likely first, one per line, as path/to/file.py or path/to/file.py:Class.method.";

/// What a reply without tool calls means (see the module doc); `named_any` says
/// whether its text names a location, `reminded` whether the reminder was spent.
pub fn ending(finish: Option<&str>, text: &str, named_any: bool, reminded: bool) -> Ending {
    if finish == Some("content_filter") {
        return Ending::ContentFilter;
    }
    let empty = text.trim().is_empty();
    if empty && !reminded {
        return Ending::Remind(REMIND_EMPTY);
    }
    if finish == Some("length") {
        return Ending::Truncated;
    }
    if !empty && !named_any && !reminded {
        return Ending::Remind(REMIND_NO_LOCATION);
    }
    Ending::Answer
}

/// The assistant message as it goes back into the conversation: as the endpoint sent
/// it (thought signatures, reasoning fields, unknown fields kept), patching only what
/// servers refuse: a missing or null `content` becomes `""` (llama.cpp's server refuses
/// null and its chat template fails on a missing one), a tool call without an id gets
/// the one its result names (`ids`), and a tool call's name goes back as the model
/// called it.
pub fn echo(message: &Value, ids: &[String]) -> Value {
    let mut m = message.clone();
    let Value::Object(o) = &mut m else {
        return json!({"role": "assistant", "content": ""});
    };
    o.insert("role".into(), json!("assistant"));
    if !matches!(
        o.get("content"),
        Some(Value::String(_)) | Some(Value::Array(_))
    ) {
        o.insert("content".into(), json!(""));
    }
    if let Some(Value::Array(calls)) = o.get_mut("tool_calls") {
        for (call, id) in calls.iter_mut().zip(ids) {
            if let Value::Object(c) = call {
                c.insert("id".into(), json!(id));
                c.entry("type").or_insert(json!("function"));
                // Arguments sent as an object by some servers go back as the string
                // the OpenAI format has.
                if let Some(Value::Object(f)) = c.get_mut("function")
                    && let Some(args) = f.get("arguments").filter(|a| !a.is_string())
                {
                    let s = if args.is_null() {
                        "{}".to_string()
                    } else {
                        args.to_string()
                    };
                    f.insert("arguments".into(), json!(s));
                }
            }
        }
    }
    m
}

/// Tokens spent and the last turn's size, for the budget check (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Spend {
    /// Prompt plus completion tokens over the turns so far.
    pub spent: u64,
    /// The last turn's prompt + completion, and the number of messages it covered.
    last: Option<(u64, usize)>,
}

impl Spend {
    /// Notes a turn of `total` tokens after which the conversation has `covered`
    /// messages (the assistant's echo included).
    pub fn turn(&mut self, total: u64, covered: usize) {
        self.spent += total;
        self.last = Some((total, covered));
    }

    /// The conversation now has `covered` messages counted in the last turn (its
    /// echo, whose tokens were the completion).
    pub fn cover(&mut self, covered: usize) {
        if let Some((_, c)) = &mut self.last {
            *c = covered;
        }
    }

    /// The next request's prompt, estimated.
    pub fn next_prompt(&self, tok: Tokenizer, messages: &[Value], request: &Value) -> u64 {
        match self.last {
            Some((total, covered)) => {
                let added: u64 = messages
                    .iter()
                    .skip(covered)
                    .map(|m| tok.count(&m.to_string()) as u64)
                    .sum();
                total + added
            }
            None => tok.count(&request.to_string()) as u64,
        }
    }
}

/// True when a tool turn with this `prompt` and a whole completion fits `budget`.
pub fn fits(spend: &Spend, prompt: u64, max_completion: u64, budget: u64) -> bool {
    spend.spent + prompt + max_completion <= budget
}

/// The completion left for an "answer now" turn with a `prompt`, or `None` when its
/// prompt alone would pass the budget.
pub fn answer_room(spend: &Spend, prompt: u64, max_completion: u64, budget: u64) -> Option<u64> {
    let left = budget.checked_sub(spend.spent + prompt)?;
    (left > 0).then(|| left.min(max_completion))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_of_a_reply_without_tool_calls() {
        assert_eq!(
            ending(Some("content_filter"), "x", true, false),
            Ending::ContentFilter
        );
        assert_eq!(
            ending(Some("length"), "", false, false),
            Ending::Remind(REMIND_EMPTY)
        );
        assert_eq!(ending(Some("length"), "", false, true), Ending::Truncated);
        assert_eq!(
            ending(Some("length"), "a.py", true, false),
            Ending::Truncated
        );
        assert_eq!(
            ending(Some("stop"), "no idea", false, false),
            Ending::Remind(REMIND_NO_LOCATION)
        );
        assert_eq!(ending(Some("stop"), "no idea", false, true), Ending::Answer);
        assert_eq!(ending(None, "a.py", true, false), Ending::Answer);
        assert_eq!(ending(Some("stop"), "  ", false, true), Ending::Answer);
    }

    #[test]
    fn the_echo_keeps_what_the_endpoint_sent_and_patches_only_nulls_and_ids() {
        let m = json!({"role": "assistant", "content": null, "reasoning_content": "hmm",
            "reasoning_details": [{"type": "reasoning.encrypted", "data": "x"}],
            "tool_calls": [{"type": "function", "function": {"name": "grep", "arguments": {"q": 1}},
                "extra_content": {"google": {"thought_signature": "sig=="}}}]});
        let e = echo(&m, &["call_1_0".to_string()]);
        assert_eq!(e["content"], "");
        assert_eq!(e["reasoning_content"], "hmm");
        assert_eq!(e["reasoning_details"], m["reasoning_details"]);
        assert_eq!(e["tool_calls"][0]["id"], "call_1_0");
        assert_eq!(
            e["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
            "sig=="
        );
        assert_eq!(e["tool_calls"][0]["function"]["arguments"], r#"{"q":1}"#);
    }

    #[test]
    fn the_budget_check_estimates_the_next_prompt() {
        let tok = Tokenizer::default();
        let mut s = Spend::default();
        let msgs = vec![json!({"role": "user", "content": "hello there"})];
        let first = s.next_prompt(tok, &msgs, &json!({"messages": msgs}));
        assert!(first > 0);
        s.turn(1000, 1);
        let more = vec![
            msgs[0].clone(),
            json!({"role": "tool", "content": "result text"}),
        ];
        assert!(s.next_prompt(tok, &more, &Value::Null) > 1000);
        assert!(fits(&s, 1100, 100, 2200));
        assert!(!fits(&s, 1100, 200, 2200));
        assert_eq!(answer_room(&s, 1100, 200, 2200), Some(100));
        assert_eq!(answer_room(&s, 1300, 200, 2200), None);
    }
}
