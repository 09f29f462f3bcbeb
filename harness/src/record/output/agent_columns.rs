//! The columns an agent's row adds to `instances.csv` ([`COLUMNS`]): turns, tokens as
//! the endpoint counted them (or estimated, and marked so; `reasoning_tokens` are the
//! part of the completion a reasoning model spent thinking), the model's time beside the
//! tools', the cost when the agent file gives prices, and why the conversation ended.
//! `usage_source` says whose account they are: the endpoint's (the built-in loop) or an
//! external CLI's own report (`--agent-cmd NAME`). A scripted policy's row leaves them
//! empty.

use crate::policy::agent::{AgentStats, StopReason, UsageSource};

/// The agent columns, in file order.
pub const COLUMNS: [&str; 10] = [
    "llm_turns",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "tokens_estimated",
    "llm_ms",
    "cost_usd",
    "stop_reason",
    "usage_source",
];

/// The cells of `stats` (all empty for a scripted row).
pub fn cells(stats: Option<&AgentStats>) -> Vec<String> {
    let Some(s) = stats else {
        return vec![String::new(); COLUMNS.len()];
    };
    vec![
        s.llm_turns.to_string(),
        s.prompt_tokens.to_string(),
        s.cached_tokens.to_string(),
        s.completion_tokens.to_string(),
        s.reasoning_tokens.to_string(),
        s.tokens_estimated.to_string(),
        format!("{:.3}", s.llm_ms),
        s.cost_usd.map_or(String::new(), |c| format!("{c:.6}")),
        s.stop_reason.as_str().to_string(),
        s.usage_source.as_str().to_string(),
    ]
}

/// The stats read back from a row's cells by column name; `None` for a scripted row
/// (no `stop_reason`) and for files written before these columns existed.
pub fn read(get: impl Fn(&str) -> String) -> Option<AgentStats> {
    let stop_reason = StopReason::parse(&get("stop_reason"))?;
    let int = |c: &str| get(c).parse::<u64>().unwrap_or(0);
    Some(AgentStats {
        llm_turns: int("llm_turns") as usize,
        prompt_tokens: int("prompt_tokens"),
        cached_tokens: int("cached_tokens"),
        completion_tokens: int("completion_tokens"),
        reasoning_tokens: int("reasoning_tokens"),
        tokens_estimated: get("tokens_estimated") == "true",
        llm_ms: get("llm_ms").parse().unwrap_or(0.0),
        cache_hits: 0,
        cost_usd: get("cost_usd").parse().ok(),
        stop_reason,
        usage_source: UsageSource::parse(&get("usage_source")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_back_and_scripted_rows_stay_empty() {
        let s = AgentStats {
            llm_turns: 3,
            prompt_tokens: 900,
            cached_tokens: 100,
            completion_tokens: 40,
            reasoning_tokens: 12,
            tokens_estimated: true,
            llm_ms: 1234.5,
            cache_hits: 0,
            cost_usd: Some(0.000161),
            stop_reason: StopReason::MaxTurns,
            usage_source: UsageSource::Cli,
        };
        let c = cells(Some(&s));
        let get = |name: &str| {
            COLUMNS
                .iter()
                .position(|x| *x == name)
                .map(|i| c[i].clone())
                .unwrap_or_default()
        };
        assert_eq!(read(get), Some(s));
        assert!(cells(None).iter().all(String::is_empty));
        assert_eq!(read(|_| String::new()), None);
    }
}
