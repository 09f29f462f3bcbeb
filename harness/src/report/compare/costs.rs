//! The costs `compare` sets side by side: per instance, the means of tool and index
//! time, response and schema tokens and calls over the pairs that ran on both sides,
//! and for an agent's runs the model's turns, tokens, time and dollars over the pairs
//! an agent played on both sides; each as a new/baseline ratio, a regression when it
//! crosses its threshold.

use std::fmt::Write as _;

use super::{Comparison, Pair, Thresholds, mean};
use crate::record::run_dir::{AgentFigures, ResultRow};

/// One cost compared: its name, unit, how to read it from a row (`None`: the row has
/// no value), its threshold, and whether it is a latency (with a noise floor).
struct Cost {
    name: &'static str,
    unit: &'static str,
    get: fn(&ResultRow) -> Option<f64>,
    limit: Option<f64>,
    is_latency: bool,
}

/// The agent figures of a row, for the model's costs.
fn fig(r: &ResultRow) -> Option<&AgentFigures> {
    r.agent.as_ref()
}

/// Cost means over the pairs that ran on both sides; a ratio beyond its threshold
/// (and, for latency, beyond the noise floor) is a regression. The model's costs are
/// compared over the pairs where both rows are an agent's; of them only the tokens
/// (prompt + completion) have a threshold (`--max-token-ratio`): the endpoint's speed
/// and prices are not the code's.
pub(crate) fn cost_changes(v: &str, pairs: &[(&str, Pair)], th: &Thresholds, cmp: &mut Comparison) {
    // Costs over instances where the policy ran on both sides.
    let ran: Vec<(&str, &Pair)> = pairs
        .iter()
        .filter(|(_, p)| p.base.ran() && p.new.ran())
        .map(|(id, p)| (*id, p))
        .collect();
    if ran.is_empty() {
        let _ = writeln!(cmp.text, "   costs: no instance ran on both sides");
        return;
    }
    let _ = writeln!(
        cmp.text,
        "   costs per instance over {} instance(s) (baseline → new):",
        ran.len()
    );
    let costs = [
        Cost {
            name: "tool_ms",
            unit: "ms",
            get: |r| Some(r.tool_ms),
            limit: th.max_latency_ratio,
            is_latency: true,
        },
        Cost {
            name: "index_ms",
            unit: "ms",
            get: |r| Some(r.index_ms),
            limit: th.max_latency_ratio,
            is_latency: true,
        },
        Cost {
            name: "response_tokens",
            unit: "tokens",
            get: |r| Some(r.response_tokens),
            limit: th.max_token_ratio,
            is_latency: false,
        },
        Cost {
            name: "schema_tokens",
            unit: "tokens",
            get: |r| Some(r.schema_tokens),
            limit: th.max_token_ratio,
            is_latency: false,
        },
        Cost {
            name: "n_calls",
            unit: "calls",
            get: |r| Some(r.n_calls),
            limit: None,
            is_latency: false,
        },
    ];
    for c in &costs {
        cost_line(v, c, &ran, th, cmp);
    }
    model_cost_changes(v, &ran, th, cmp);
}

/// The model's costs over the pairs where both rows are an agent's (nothing is printed
/// for two scripted runs).
fn model_cost_changes(v: &str, ran: &[(&str, &Pair)], th: &Thresholds, cmp: &mut Comparison) {
    let (b_agent, n_agent) = (
        ran.iter().filter(|(_, p)| p.base.agent.is_some()).count(),
        ran.iter().filter(|(_, p)| p.new.agent.is_some()).count(),
    );
    if b_agent == 0 && n_agent == 0 {
        return;
    }
    let both: Vec<(&str, &Pair)> = ran
        .iter()
        .filter(|(_, p)| p.base.agent.is_some() && p.new.agent.is_some())
        .copied()
        .collect();
    if both.is_empty() {
        let _ = writeln!(
            cmp.text,
            "   model costs: not compared (an agent's rows: {b_agent} of {n} in the baseline, {n_agent} of {n} in the new run; no instance has one on both sides)",
            n = ran.len()
        );
        return;
    }
    let _ = writeln!(
        cmp.text,
        "   model costs per instance over {} instance(s) played by an agent on both sides:",
        both.len()
    );
    let costs = [
        Cost {
            name: "llm_turns",
            unit: "turns",
            get: |r| fig(r).map(|a| a.llm_turns),
            limit: None,
            is_latency: false,
        },
        Cost {
            name: "prompt_tokens",
            unit: "tokens",
            get: |r| fig(r).map(|a| a.prompt_tokens),
            limit: None,
            is_latency: false,
        },
        Cost {
            name: "cached_tokens",
            unit: "tokens",
            get: |r| fig(r).map(|a| a.cached_tokens),
            limit: None,
            is_latency: false,
        },
        Cost {
            name: "completion_tokens",
            unit: "tokens",
            get: |r| fig(r).map(|a| a.completion_tokens),
            limit: None,
            is_latency: false,
        },
        Cost {
            name: "llm_tokens",
            unit: "tokens",
            get: |r| fig(r).map(AgentFigures::tokens),
            limit: th.max_token_ratio,
            is_latency: false,
        },
        Cost {
            name: "llm_ms",
            unit: "ms",
            get: |r| fig(r).map(|a| a.llm_ms),
            limit: None,
            is_latency: false,
        },
        Cost {
            name: "cost_usd",
            unit: "USD",
            get: |r| fig(r).and_then(|a| a.cost_usd),
            limit: None,
            is_latency: false,
        },
    ];
    for c in &costs {
        cost_line(v, c, &both, th, cmp);
    }
}

/// One cost's means over the pairs where both rows have it, the ratio, and a
/// regression when the ratio crosses the cost's threshold (and, for a latency, the
/// change is above the noise floor).
fn cost_line(v: &str, c: &Cost, ran: &[(&str, &Pair)], th: &Thresholds, cmp: &mut Comparison) {
    let vals: Vec<(&str, f64, f64)> = ran
        .iter()
        .filter_map(|(id, p)| Some((*id, (c.get)(p.base)?, (c.get)(p.new)?)))
        .collect();
    if vals.is_empty() {
        return;
    }
    let (name, unit) = (c.name, c.unit);
    let b = mean(vals.iter().map(|(_, b, _)| *b));
    let n = mean(vals.iter().map(|(_, _, n)| *n));
    let ratio = ratio_of(n, b);
    let digits = if unit == "USD" { 5 } else { 1 };
    let _ = writeln!(
        cmp.text,
        "     {name:<16} {b:>10.digits$} → {n:>10.digits$} {unit:<6} ×{}",
        fmt_ratio(ratio)
    );
    let Some(limit) = c.limit else { return };
    let over = ratio > limit + 1e-12;
    let noise = c.is_latency && (n - b) < th.min_latency_ms;
    if over && noise {
        let _ = writeln!(
            cmp.text,
            "       (over ×{limit} but the change is under {} ms: noise)",
            th.min_latency_ms
        );
    }
    if over && !noise {
        let mut worst: Vec<(&str, f64)> = vals
            .iter()
            .map(|(id, b, n)| (*id, ratio_of(*n, *b)))
            .filter(|(_, r)| *r > 1.0)
            .collect();
        worst.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        let named: Vec<String> = worst
            .iter()
            .take(5)
            .map(|(id, r)| format!("{id} (×{})", fmt_ratio(*r)))
            .collect();
        cmp.regressions.push(format!(
            "{v}: {name} per instance rose ×{} ({b:.1} → {n:.1} {unit}; allowed ×{limit}); largest increases: {}",
            fmt_ratio(ratio),
            if named.is_empty() {
                "none individually".to_string()
            } else {
                named.join(", ")
            }
        ));
    }
}

/// `new / base`, with 0/0 = 1 and x/0 = ∞.
fn ratio_of(new: f64, base: f64) -> f64 {
    if base > 0.0 {
        new / base
    } else if new > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

fn fmt_ratio(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.2}")
    } else {
        "∞".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::tests::{agent_info, agent_run, base};
    use crate::report::compare::{EXIT_OK, EXIT_REGRESSION, compare};

    #[test]
    fn latency_and_token_ratios_respect_thresholds_and_the_noise_floor() {
        let th = Thresholds {
            max_latency_ratio: Some(2.0),
            max_token_ratio: Some(1.5),
            ..Thresholds::default()
        };
        let mut new = base();
        new.rows[2].tool_ms = 1000.0; // mean 100 → 400: ×4
        new.rows[1].response_tokens = 5000.0; // mean 1000 → 2333: ×2.33
        let c = compare(&base(), &new, &th).unwrap();
        let lat = c
            .regressions
            .iter()
            .find(|r| r.contains("tool_ms"))
            .unwrap();
        assert!(
            lat.contains("×4.00") && lat.contains("i3 (×10.00)"),
            "{lat}"
        );
        let tok = c
            .regressions
            .iter()
            .find(|r| r.contains("response_tokens"))
            .unwrap();
        assert!(
            tok.contains("i2 (×5.00)") && tok.starts_with("text:"),
            "{tok}"
        );
        // Without thresholds they are only reported.
        let c = compare(&base(), &new, &Thresholds::default()).unwrap();
        assert_eq!(c.exit_code(), EXIT_OK, "{:?}", c.regressions);
        assert!(c.text.contains("×4.00"));
        // A large ratio on tiny times is noise.
        let mut tiny_b = base();
        let mut tiny_n = base();
        for r in &mut tiny_b.rows {
            r.tool_ms = 1.0;
        }
        for r in &mut tiny_n.rows {
            r.tool_ms = 9.0;
        }
        let c = compare(&tiny_b, &tiny_n, &th).unwrap();
        assert_eq!(c.exit_code(), EXIT_OK, "{:?}", c.regressions);
        assert!(c.text.contains("noise"));
    }

    #[test]
    fn model_costs_are_compared_and_tokens_gated() {
        let a = agent_info("gpt", "gpt-4o-mini");
        let th = Thresholds {
            max_token_ratio: Some(1.5),
            ..Thresholds::default()
        };
        let c = compare(
            &agent_run("b", a.clone(), 900.0),
            &agent_run("n", a.clone(), 900.0),
            &th,
        )
        .unwrap();
        assert_eq!(c.exit_code(), EXIT_OK, "{:?}", c.regressions);
        assert!(
            c.text
                .contains("model costs per instance over 3 instance(s)"),
            "{}",
            c.text
        );
        assert!(c.text.contains("llm_tokens"), "{}", c.text);
        assert!(c.text.contains("0.00100 →    0.00100 USD"), "{}", c.text);
        assert!(!c.text.contains("note:"), "{}", c.text);
        // Prompt tokens 900 → 2900: llm tokens 1000 → 3000, ×3 over the allowed ×1.5.
        let c = compare(
            &agent_run("b", a.clone(), 900.0),
            &agent_run("n", a.clone(), 2900.0),
            &th,
        )
        .unwrap();
        assert_eq!(c.exit_code(), EXIT_REGRESSION);
        let r = c
            .regressions
            .iter()
            .find(|r| r.contains("llm_tokens"))
            .unwrap();
        assert!(
            r.starts_with("text: llm_tokens per instance rose ×3.00"),
            "{r}"
        );
        // Another model: compared, with a note naming both.
        let c = compare(
            &agent_run("b", a.clone(), 900.0),
            &agent_run("n", agent_info("llama", "smollm2"), 900.0),
            &th,
        )
        .unwrap();
        assert_eq!(c.exit_code(), EXIT_OK);
        assert!(
            c.text.contains("note: different agents")
                && c.text.contains("agent gpt (model gpt-4o-mini")
                && c.text.contains("agent llama (model smollm2"),
            "{}",
            c.text
        );
        // Same agent, other settings: the note names them.
        let mut hot = a.clone();
        hot.temperature = Some(0.7);
        let c = compare(&agent_run("b", a, 900.0), &agent_run("n", hot, 900.0), &th).unwrap();
        assert!(c.text.contains("temperature 0.7"), "{}", c.text);
    }
}
