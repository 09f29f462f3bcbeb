//! Who played the two runs `compare` sets side by side. Comparing an agent's run with a
//! scripted run, or with another agent's, is not refused: "does the model beat the
//! scripted policy?" and "does the new model do better?" are fair questions on the same
//! instances, which is all the refusals guard. The note names both players, since the
//! differences are then theirs as well as the code's.

use crate::policy::agent::config::AgentInfo;
use crate::record::run_dir::Run;

/// A note when the runs were played by different agents, or one by an agent and one by
/// the scripted policies; `None` when the same player made both.
pub(crate) fn note(
    base: &Run,
    b: Option<&AgentInfo>,
    new: &Run,
    n: Option<&AgentInfo>,
) -> Option<String> {
    let who = |a: Option<&AgentInfo>| crate::report::agent::describe(a);
    let (bd, nd) = (base.dir.display(), new.dir.display());
    match (b, n) {
        (None, None) => None,
        (Some(b), Some(n)) if b == n => None,
        (Some(b), Some(n))
            if (&b.name, &b.model, &b.base_url) == (&n.name, &n.model, &n.base_url) =>
        {
            Some(format!(
                "note: {} played both runs with different settings (baseline {bd}: {}; new run {nd}: {}): differences may come from the settings",
                who(Some(b)),
                settings(b),
                settings(n)
            ))
        }
        (Some(_), Some(_)) => Some(format!(
            "note: different agents: baseline {bd} was played by {}, new run {nd} by {}: differences are the models' as well as the code's",
            who(b),
            who(n)
        )),
        _ => Some(format!(
            "note: baseline {bd} was played by {}, new run {nd} by {}: differences are the players' as well as the code's, and the model's costs are compared only where both rows are an agent's",
            who(b),
            who(n)
        )),
    }
}

/// An agent's sampling and limits, for [`note`].
fn settings(a: &AgentInfo) -> String {
    format!(
        "temperature {}, seed {}, max_turns {}, token_budget {}, max_completion_tokens {}, max_tool_result_tokens {}",
        a.temperature
            .map_or("the endpoint's default".to_string(), |t| t.to_string()),
        a.seed.map_or("none".to_string(), |s| s.to_string()),
        a.max_turns,
        a.token_budget,
        a.max_completion_tokens,
        a.max_tool_result_tokens
    )
}
