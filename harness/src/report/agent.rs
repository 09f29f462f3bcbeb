//! The agent's side of a report, for runs made with `navbench run --agent`: what the
//! model cost per instance (turns, prompt / cached / completion tokens, its time beside
//! the tools', dollars) and why its conversations ended, per variant; and, when one
//! agent played every run, the README's question in one table — does the tool help the
//! agent? Each variant against `text` (the "no special tools" baseline) on the
//! instances both scored: the accuracy difference with its paired-bootstrap interval
//! and exact McNemar p ([`super::paired`]), and what the tool costs in tokens and time.
//!
//! Rows are an agent's when they carry the agent columns ([`AgentFigures`]); whether
//! one agent made all the runs comes from their `run.json` ([`AgentScope`]), since a
//! comparison of two models would answer another question.

use std::collections::BTreeMap;

use super::ReportData;
use super::paired::{self, PairedStats};
use crate::policy::agent::config::AgentInfo;
use crate::record::output::RunInfo;
use crate::record::run_dir::{AgentFigures, ResultRow};
use crate::report::stats::{self, Bootstrap, CostStat};

/// The variant every other is measured against: the agent with list, read and grep.
pub const REFERENCE: &str = "text";

/// Per-instance agent costs, with their report names.
pub const AGENT_COSTS: [(&str, &str); 7] = [
    ("llm_turns", "model turns"),
    ("prompt_tokens", "prompt tokens"),
    ("cached_tokens", "cached prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("llm_tokens", "prompt + completion tokens"),
    ("llm_ms", "llm ms"),
    ("cost_usd", "cost (USD)"),
];

/// The accuracy columns of the "does the tool help" table.
pub const HELP_METRICS: [&str; 3] = ["file_acc_5", "module_acc_10", "function_acc_10"];

/// The per-instance costs of the "does the tool help" table, as ratios against `text`.
pub const HELP_COSTS: [(&str, &str); 3] = [
    ("llm_tokens", "tokens"),
    ("llm_ms", "llm ms"),
    ("wall_ms", "wall ms"),
];

/// One agent cost of a row; `None` for `cost_usd` without prices (and unknown names).
pub fn agent_cost(a: &AgentFigures, name: &str) -> Option<f64> {
    match name {
        "llm_turns" => Some(a.llm_turns),
        "prompt_tokens" => Some(a.prompt_tokens),
        "cached_tokens" => Some(a.cached_tokens),
        "completion_tokens" => Some(a.completion_tokens),
        "llm_tokens" => Some(a.tokens()),
        "llm_ms" => Some(a.llm_ms),
        "cost_usd" => a.cost_usd,
        _ => None,
    }
}

/// One variant's agent figures.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCosts {
    /// Agent rows that ran (the cost means are over these).
    pub n_ran: usize,
    /// Per [`AGENT_COSTS`] entry; `None` without a value (`cost_usd` without prices).
    pub costs: Vec<Option<CostStat>>,
    /// Rows that ran with a cost (the agent file gave prices).
    pub n_priced: usize,
    /// Rows whose tokens were counted with the run's tokenizer (no `usage`).
    pub n_estimated: usize,
    /// Why the conversations ended, over every agent row (failures included), most
    /// frequent first.
    pub stop_reasons: Vec<(String, usize)>,
}

/// The agent figures of one variant's rows; `None` when none is an agent's.
pub fn agent_costs(rows: &[&ResultRow], cfg: &Bootstrap) -> Option<AgentCosts> {
    let all: Vec<&AgentFigures> = rows.iter().filter_map(|r| r.agent.as_ref()).collect();
    if all.is_empty() {
        return None;
    }
    let ran: Vec<&AgentFigures> = rows
        .iter()
        .filter(|r| r.ran())
        .filter_map(|r| r.agent.as_ref())
        .collect();
    let costs = AGENT_COSTS
        .iter()
        .map(|(name, _)| {
            let vals: Vec<f64> = ran.iter().filter_map(|a| agent_cost(a, name)).collect();
            stats::cost_stat(&vals, cfg)
        })
        .collect();
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &all {
        *reasons.entry(a.stop_reason.as_str()).or_default() += 1;
    }
    let mut stop_reasons: Vec<(String, usize)> = reasons
        .into_iter()
        .map(|(r, n)| (r.to_string(), n))
        .collect();
    stop_reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Some(AgentCosts {
        n_ran: ran.len(),
        costs,
        n_priced: ran.iter().filter(|a| a.cost_usd.is_some()).count(),
        n_estimated: ran.iter().filter(|a| a.tokens_estimated).count(),
        stop_reasons,
    })
}

/// Who played the report's runs.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentScope {
    /// Scripted policies only: no run records an agent.
    Scripted,
    /// One agent (same name, model, endpoint and settings) played every run.
    One(AgentInfo),
    /// Different agents, or agents and scripted policies: each run's label and player.
    Mixed(Vec<String>),
}

/// How a run's `run.json` names its player, for messages.
pub fn describe(agent: Option<&AgentInfo>) -> String {
    match agent {
        Some(a) => format!("agent {} (model {} at {})", a.name, a.model, a.base_url),
        None => "scripted policies".to_string(),
    }
}

/// Who played the runs, from their `run.json` (a run without one counts as scripted).
pub fn scope(runs: &[(&str, Option<&RunInfo>)]) -> AgentScope {
    let agents: Vec<Option<&AgentInfo>> = runs
        .iter()
        .map(|(_, i)| i.and_then(|i| i.agent.as_ref()))
        .collect();
    match agents.first() {
        None | Some(None) if agents.iter().all(Option::is_none) => AgentScope::Scripted,
        Some(Some(first)) if agents.iter().all(|a| *a == Some(*first)) => {
            AgentScope::One((*first).clone())
        }
        _ => AgentScope::Mixed(
            runs.iter()
                .zip(&agents)
                .map(|((label, _), a)| format!("{label}: {}", describe(*a)))
                .collect(),
        ),
    }
}

/// One variant against `text`.
#[derive(Debug, Clone)]
pub struct HelpRow {
    pub variant: String,
    /// Instances both scored.
    pub n: usize,
    /// Per [`HELP_METRICS`] entry that could be compared (`a` is `text`).
    pub acc: Vec<PairedStats>,
    /// Per [`HELP_COSTS`] entry: `text`'s and the variant's mean per instance over the
    /// same instances.
    pub costs: Vec<(f64, f64)>,
}

/// The "Does the tool help the agent?" section.
#[derive(Debug, Clone)]
pub enum ToolHelp {
    /// Scripted runs: no section.
    Scripted,
    /// Runs of different agents (or agents and scripted policies): one line says so.
    NotOneAgent(Vec<String>),
    /// One agent, but no `text` variant to measure against.
    NoReference(AgentInfo),
    /// One agent: each variant other than `text`, in report order.
    Rows(AgentInfo, Vec<HelpRow>),
}

/// A row's figure for [`HELP_COSTS`] (0 for a row the agent never reached).
fn help_cost(r: &ResultRow, name: &str) -> f64 {
    match name {
        "wall_ms" => r.wall_ms,
        _ => r
            .agent
            .as_ref()
            .and_then(|a| agent_cost(a, name))
            .unwrap_or(0.0),
    }
}

/// Each variant against `text`, when one agent played every run.
pub fn tool_help(data: &ReportData) -> ToolHelp {
    let agent = match &data.agent {
        AgentScope::Scripted => return ToolHelp::Scripted,
        AgentScope::Mixed(who) => return ToolHelp::NotOneAgent(who.clone()),
        AgentScope::One(a) => a.clone(),
    };
    if !data.variants.iter().any(|v| v == REFERENCE) {
        return ToolHelp::NoReference(agent);
    }
    let metrics: Vec<String> = HELP_METRICS.map(String::from).to_vec();
    let rows = data
        .variants
        .iter()
        .filter(|v| *v != REFERENCE)
        .map(|v| {
            let pairs = paired::scored_pairs(data, REFERENCE, v);
            let costs = HELP_COSTS
                .iter()
                .map(|(name, _)| {
                    let t: Vec<f64> = pairs.iter().map(|(t, _)| help_cost(t, name)).collect();
                    let x: Vec<f64> = pairs.iter().map(|(_, x)| help_cost(x, name)).collect();
                    (
                        stats::mean(&t).unwrap_or(f64::NAN),
                        stats::mean(&x).unwrap_or(f64::NAN),
                    )
                })
                .collect();
            HelpRow {
                variant: v.clone(),
                n: pairs.len(),
                acc: paired::compare_pair(REFERENCE, v, &pairs, &metrics, &data.bootstrap),
                costs,
            }
        })
        .collect();
    ToolHelp::Rows(agent, rows)
}

/// `new / base`: NaN when either is unknown, ∞ for x/0, 1 for 0/0.
pub fn ratio(base: f64, new: f64) -> f64 {
    if base.is_nan() || new.is_nan() {
        f64::NAN
    } else if base > 0.0 {
        new / base
    } else if new > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::output::metric_columns;
    use crate::report::markdown::markdown;
    use crate::report::tables;

    fn info() -> AgentInfo {
        AgentInfo {
            name: "llama".into(),
            model: "smollm2".into(),
            base_url: "http://127.0.0.1:8080/v1".into(),
            temperature: Some(0.0),
            seed: None,
            max_turns: 20,
            token_budget: 200_000,
            max_completion_tokens: 1024,
            max_tool_result_tokens: 4000,
            provider: String::new(),
            extra_body: Default::default(),
        }
    }

    /// An agent's row: `acc` on every metric, `tokens` prompt tokens (+100 completion).
    fn row(id: &str, variant: &str, acc: f64, tokens: f64, stop: &str) -> ResultRow {
        ResultRow {
            instance_id: id.into(),
            repo: "o/r".into(),
            variant: variant.into(),
            status: "ok".into(),
            metrics: Some(vec![acc; metric_columns().len()]),
            n_calls: 2.0,
            tool_ms: 10.0,
            wall_ms: 1000.0,
            agent: Some(AgentFigures {
                llm_turns: 4.0,
                prompt_tokens: tokens,
                cached_tokens: 50.0,
                completion_tokens: 100.0,
                tokens_estimated: stop == "max_turns",
                llm_ms: 500.0,
                cost_usd: Some(0.002),
                stop_reason: stop.into(),
            }),
            ..ResultRow::default()
        }
    }

    /// text finds 1 of 6; codegraph finds all 6 with twice text's tokens.
    fn data(agent: AgentScope, variants: &[&str]) -> ReportData {
        let mut rows = Vec::new();
        for i in 0..6 {
            let id = format!("i{i}");
            if variants.contains(&"text") {
                let stop = if i == 5 { "max_turns" } else { "answered" };
                rows.push(row(
                    &id,
                    "text",
                    if i == 0 { 1.0 } else { 0.0 },
                    900.0,
                    stop,
                ));
            }
            rows.push(row(&id, "codegraph", 1.0, 1900.0, "answered"));
        }
        ReportData {
            runs: Vec::new(),
            variants: variants.iter().map(|v| v.to_string()).collect(),
            trials: rows.clone(),
            rows,
            tool_latency: Vec::new(),
            variant_latency: Vec::new(),
            bootstrap: Bootstrap::default(),
            agent,
            by_dataset: Default::default(),
        }
    }

    #[test]
    fn agent_costs_stop_reasons_and_estimates() {
        let d = data(AgentScope::One(info()), &["text", "codegraph"]);
        let text: Vec<&ResultRow> = d.rows.iter().filter(|r| r.variant == "text").collect();
        let a = agent_costs(&text, &d.bootstrap).unwrap();
        assert_eq!((a.n_ran, a.n_priced, a.n_estimated), (6, 6, 1));
        let at = |name: &str| {
            let i = AGENT_COSTS.iter().position(|(c, _)| *c == name).unwrap();
            a.costs[i].unwrap()
        };
        assert_eq!(at("llm_tokens").mean.value, 1000.0);
        assert_eq!(at("cached_tokens").p95, 50.0);
        assert_eq!(at("cost_usd").mean.value, 0.002);
        assert_eq!(
            a.stop_reasons,
            vec![("answered".to_string(), 5), ("max_turns".to_string(), 1)]
        );
        let scripted = ResultRow {
            agent: None,
            ..text[0].clone()
        };
        assert_eq!(agent_costs(&[&scripted], &d.bootstrap), None);
    }

    #[test]
    fn one_agent_or_mixed_players() {
        let one = RunInfo {
            agent: Some(info()),
            ..RunInfo::default()
        };
        let other = RunInfo {
            agent: Some(AgentInfo {
                model: "gpt-4o".into(),
                ..info()
            }),
            ..RunInfo::default()
        };
        let scripted = RunInfo::default();
        assert_eq!(
            scope(&[("a", Some(&scripted)), ("b", None)]),
            AgentScope::Scripted
        );
        assert_eq!(
            scope(&[("a", Some(&one)), ("b", Some(&one))]),
            AgentScope::One(info())
        );
        let AgentScope::Mixed(who) = scope(&[("a", Some(&one)), ("b", Some(&other))]) else {
            panic!("two models are not one agent");
        };
        assert!(who[1].contains("b: agent llama (model gpt-4o"), "{who:?}");
        let AgentScope::Mixed(who) = scope(&[("a", Some(&scripted)), ("b", Some(&one))]) else {
            panic!("an agent and scripted policies are not one agent");
        };
        assert_eq!(who[0], "a: scripted policies");
    }

    #[test]
    fn each_variant_against_text_in_one_table() {
        let d = data(AgentScope::One(info()), &["text", "codegraph"]);
        let ToolHelp::Rows(who, rows) = tool_help(&d) else {
            panic!("one agent with text: rows");
        };
        assert_eq!(who.name, "llama");
        assert_eq!(rows.len(), 1);
        let cg = &rows[0];
        assert_eq!((cg.variant.as_str(), cg.n), ("codegraph", 6));
        assert_eq!(cg.acc.len(), 3);
        let file5 = &cg.acc[0];
        assert_eq!(
            (file5.a.as_str(), file5.metric.as_str()),
            ("text", "file_acc_5")
        );
        assert!((file5.diff.value - 5.0 / 6.0).abs() < 1e-12);
        assert!((file5.p_value - 0.0625).abs() < 1e-12);
        // Tokens 1000 → 2000, llm and wall time unchanged.
        assert_eq!(
            cg.costs,
            vec![(1000.0, 2000.0), (500.0, 500.0), (1000.0, 1000.0)]
        );
        assert_eq!(ratio(cg.costs[0].0, cg.costs[0].1), 2.0);

        let s = tables::compute(&d);
        let md = markdown(&d, &s, &[]);
        assert!(md.contains("## Does the tool help the agent?"), "{md}");
        assert!(md.contains("Played by agent llama (model smollm2"), "{md}");
        assert!(
            md.contains("| **codegraph** | 6 | 16.7 → 100.0, +83.3 ["),
            "{md}"
        );
        assert!(md.contains("×2.00 (1000 → 2000)"), "{md}");
        assert!(md.contains("## Agent cost per variant"), "{md}");
        assert!(
            md.contains("| prompt + completion tokens | 1000 [1000, 1000]; p50 1000; p95 1000 |"),
            "{md}"
        );
        assert!(md.contains("| **text** | 5 | 1 | 1 |"), "{md}");
        assert!(md.contains("| cost (USD) | 0.00200 ["), "{md}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.csv");
        tables::write_csv(&p, &d, &s).unwrap();
        let csv = std::fs::read_to_string(&p).unwrap();
        assert!(
            csv.contains("tool_help,text,codegraph,,,file_acc_5,6,0.833333,"),
            "{csv}"
        );
        assert!(
            csv.contains("tool_help,text,codegraph,,,llm_tokens_ratio,6,2.000000,"),
            "{csv}"
        );
        assert!(
            csv.contains("variant,text,,,,n_stop_max_turns,6,1,"),
            "{csv}"
        );
        assert!(
            csv.contains("variant,text,,,,n_tokens_estimated,6,1,"),
            "{csv}"
        );
        assert!(
            csv.contains("variant,codegraph,,,,llm_ms_p95,6,500.000000,"),
            "{csv}"
        );
    }

    #[test]
    fn without_text_or_one_agent_one_line_says_why() {
        let d = data(AgentScope::One(info()), &["codegraph"]);
        assert!(matches!(tool_help(&d), ToolHelp::NoReference(_)));
        let md = markdown(&d, &tables::compute(&d), &[]);
        assert!(
            md.contains("No `text` variant in these runs of agent llama"),
            "{md}"
        );
        let d = data(
            AgentScope::Mixed(vec!["a: scripted policies".into()]),
            &["text", "codegraph"],
        );
        let md = markdown(&d, &tables::compute(&d), &[]);
        assert!(
            md.contains("not all played by one agent (a: scripted policies)"),
            "{md}"
        );
        // Scripted runs: no agent section at all.
        let mut d = data(AgentScope::Scripted, &["text", "codegraph"]);
        for r in &mut d.rows {
            r.agent = None;
        }
        let md = markdown(&d, &tables::compute(&d), &[]);
        assert!(
            !md.contains("Does the tool help") && !md.contains("Agent cost"),
            "{md}"
        );
    }
}
