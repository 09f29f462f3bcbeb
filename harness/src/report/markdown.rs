//! `report.md`: the report's figures as readable Markdown tables, one section per
//! concern (runs, for an agent's runs whether the tool helps it, accuracy, cost, the
//! agent's cost, all metrics, paired comparisons, latency per tool, accuracy per
//! repository, plots).

use std::fmt::Write as _;

use super::ReportData;
use super::agent::{self, AGENT_COSTS, HELP_COSTS, HelpRow, ToolHelp};
use super::paired::PairedStats;
use super::tables::{COSTS, CostStat, Stats, VariantStats, acc_columns, pretty_metric};
use crate::record::output::metric_columns;
use crate::report::stats::Estimate;

fn pct(e: &Option<Estimate>) -> String {
    match e {
        Some(e) => format!(
            "{:.1} [{:.1}, {:.1}]",
            e.value * 100.0,
            e.lo * 100.0,
            e.hi * 100.0
        ),
        None => "–".into(),
    }
}

fn num(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn cost_cell(c: &Option<CostStat>, with_ci: bool) -> String {
    match c {
        Some(c) if with_ci => format!(
            "{} [{}, {}]",
            num(c.mean.value),
            num(c.mean.lo),
            num(c.mean.hi)
        ),
        Some(c) => num(c.mean.value),
        None => "–".into(),
    }
}

fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// Renders `report.md`.
pub fn markdown(data: &ReportData, stats: &Stats, plots: &[String]) -> String {
    let mut out = String::from("# navbench report\n\n");
    runs_section(&mut out, data);
    tool_help_section(&mut out, stats);
    accuracy_section(&mut out, stats);
    super::trials::section(&mut out, &stats.trials);
    super::difficulty::section(&mut out, &data.by_dataset);
    cost_section(&mut out, stats);
    agent_cost_section(&mut out, stats);
    let answers: Vec<(&str, super::answers::AnswerReading)> = stats
        .variants
        .iter()
        .filter_map(|v| Some((v.variant.as_str(), v.answers?)))
        .collect();
    super::answers::section(&mut out, &answers);
    all_metrics_section(&mut out, stats);
    paired_section(&mut out, stats);
    latency_section(&mut out, data);
    repo_section(&mut out, stats);
    plots_section(&mut out, plots);
    out
}

/// How to read the figures, and the runs they come from.
fn runs_section(out: &mut String, data: &ReportData) {
    let level = data.bootstrap.level * 100.0;
    let _ = writeln!(
        out,
        "Intervals are {level:.0}% percentile-bootstrap intervals over instances ({} resamples, seed {:#x}); \
         the same runs always give the same report. Accuracies are in percent over scored instances \
         (instances whose patch edits no existing function are left out, as in LocAgent); costs are \
         per instance over instances where the server ran.\n",
        data.bootstrap.resamples, data.bootstrap.seed
    );
    let any_agent = data.runs.iter().any(|r| r.agent.is_some());
    let mut header: Vec<String> = ["run", "dataset", "shard", "started", "rows"]
        .map(String::from)
        .to_vec();
    if any_agent {
        header.push("played by".into());
    }
    let rows: Vec<Vec<String>> = data
        .runs
        .iter()
        .map(|r| {
            let mut row = vec![
                format!("`{}`", r.dir.display()),
                r.dataset.clone(),
                if r.shard.is_empty() {
                    "–".into()
                } else {
                    r.shard.clone()
                },
                r.started.get(..19).unwrap_or(&r.started).replace('T', " "),
                r.rows.to_string(),
            ];
            if any_agent {
                row.push(agent::describe(r.agent.as_ref()));
            }
            row
        })
        .collect();
    out.push_str("## Runs\n\n");
    table(out, &header, &rows);
}

/// Accuracy per variant, and why some instances were not scored.
fn accuracy_section(out: &mut String, stats: &Stats) {
    let names = metric_columns();
    let acc = acc_columns();
    out.push_str("## Accuracy per variant\n\n");
    let mut header = vec!["variant".to_string(), "n".to_string()];
    header.extend(acc.iter().map(|a| pretty_metric(a)));
    let rows: Vec<Vec<String>> = stats
        .variants
        .iter()
        .map(|v| {
            let mut r = vec![format!("**{}**", v.variant), v.n_scored.to_string()];
            for a in &acc {
                let i = names.iter().position(|n| n == a);
                r.push(pct(&i.and_then(|i| v.metrics.get(i).copied()).flatten()));
            }
            r
        })
        .collect();
    table(out, &header, &rows);
    let troubled: Vec<String> = stats
        .variants
        .iter()
        .filter(|v| v.n_errors > 0 || v.n_no_gold > 0)
        .map(|v| {
            format!(
                "{}: {} error(s), {} without edited functions",
                v.variant, v.n_errors, v.n_no_gold
            )
        })
        .collect();
    if !troubled.is_empty() {
        let _ = writeln!(out, "Not scored: {}.\n", troubled.join("; "));
    }
}

/// Cost per variant: calls, tokens, index and tool time.
fn cost_section(out: &mut String, stats: &Stats) {
    out.push_str("## Cost per variant\n\n");
    let header: Vec<String> = [
        "variant",
        "n",
        "tool calls / inst.",
        "response tokens / inst.",
        "schema tokens",
        "index ms (mean, p50, p95)",
        "tool ms / inst. (mean, p50, p95)",
        "call ms (mean, p50, p95)",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = stats
        .variants
        .iter()
        .map(|v| {
            let three = |c: &Option<CostStat>| match c {
                Some(c) => format!("{}, {}, {}", num(c.mean.value), num(c.p50), num(c.p95)),
                None => "–".into(),
            };
            vec![
                format!("**{}**", v.variant),
                v.n_ran.to_string(),
                cost_cell(&v.costs[0], true),
                cost_cell(&v.costs[1], true),
                cost_cell(&v.costs[2], false),
                three(&v.costs[3]),
                three(&v.costs[4]),
                match &v.calls {
                    Some(c) => format!("{}, {}, {}", num(c.mean), num(c.p50), num(c.p95)),
                    None => "–".into(),
                },
            ]
        })
        .collect();
    table(out, &header, &rows);
}

/// `mean [lo, hi]; p50 x; p95 y`.
fn spread(c: &Option<CostStat>) -> String {
    match c {
        Some(c) => format!(
            "{} [{}, {}]; p50 {}; p95 {}",
            num(c.mean.value),
            num(c.mean.lo),
            num(c.mean.hi),
            num(c.p50),
            num(c.p95)
        ),
        None => "–".into(),
    }
}

/// Dollars with enough digits for fractions of a cent.
fn usd(c: &Option<CostStat>) -> String {
    match c {
        Some(c) => format!(
            "{:.5} [{:.5}, {:.5}]; p50 {:.5}; p95 {:.5}",
            c.mean.value, c.mean.lo, c.mean.hi, c.p50, c.p95
        ),
        None => "–".into(),
    }
}

/// For an agent's variants: model turns, tokens, the model's time beside the tools',
/// dollars, then why the conversations ended.
fn agent_cost_section(out: &mut String, stats: &Stats) {
    let mine: Vec<&VariantStats> = stats
        .variants
        .iter()
        .filter(|v| v.agent.is_some())
        .collect();
    if mine.is_empty() {
        return;
    }
    out.push_str("## Agent cost per variant\n\n");
    out.push_str(
        "Per instance over the instances where the agent ran: mean [95% interval]; median; \
         95th percentile. Tokens are the endpoint's counts (cached tokens are part of the \
         prompt tokens); llm ms is the model's time, tool ms the servers'.\n\n",
    );
    let mut header = vec!["per instance".to_string()];
    header.extend(mine.iter().map(|v| v.variant.clone()));
    let mut rows = Vec::new();
    let tool_ms = COSTS.iter().position(|(c, _)| *c == "tool_ms");
    let priced = mine
        .iter()
        .any(|v| v.agent.as_ref().is_some_and(|a| a.n_priced > 0));
    for (i, (name, label)) in AGENT_COSTS.iter().enumerate() {
        if *name == "cost_usd" && !priced {
            continue;
        }
        let mut r = vec![label.to_string()];
        r.extend(mine.iter().map(|v| {
            let c = v
                .agent
                .as_ref()
                .and_then(|a| a.costs.get(i).copied().flatten());
            if *name == "cost_usd" {
                usd(&c)
            } else {
                spread(&c)
            }
        }));
        rows.push(r);
        if *name == "llm_ms" {
            let mut r = vec!["tool ms".to_string()];
            r.extend(
                mine.iter()
                    .map(|v| spread(&tool_ms.and_then(|i| v.costs.get(i).copied().flatten()))),
            );
            rows.push(r);
        }
    }
    let mut n = vec!["instances".to_string()];
    n.extend(
        mine.iter()
            .map(|v| v.agent.as_ref().map_or(0, |a| a.n_ran).to_string()),
    );
    rows.push(n);
    table(out, &header, &rows);
    if !priced {
        out.push_str("No cost: the agent file gives no `[prices]`.\n\n");
    }
    stop_reason_table(out, &mine);
}

/// Why each variant's conversations ended, and how many rows had estimated tokens.
fn stop_reason_table(out: &mut String, mine: &[&VariantStats]) {
    let mut reasons: Vec<&str> = Vec::new();
    for v in mine {
        for (r, _) in v.agent.iter().flat_map(|a| &a.stop_reasons) {
            if !reasons.contains(&r.as_str()) {
                reasons.push(r);
            }
        }
    }
    let mut header = vec!["stop reason".to_string()];
    header.extend(reasons.iter().map(|r| format!("`{r}`")));
    header.push("tokens estimated".into());
    let rows: Vec<Vec<String>> = mine
        .iter()
        .filter_map(|v| {
            let a = v.agent.as_ref()?;
            let mut r = vec![format!("**{}**", v.variant)];
            r.extend(reasons.iter().map(|reason| {
                a.stop_reasons
                    .iter()
                    .find(|(x, _)| x == reason)
                    .map_or(0, |(_, k)| *k)
                    .to_string()
            }));
            r.push(a.n_estimated.to_string());
            Some(r)
        })
        .collect();
    table(out, &header, &rows);
}

/// `40.0 → 52.5, +12.5 [+3.1, +20.0], p = 0.031`.
fn help_acc_cell(p: Option<&PairedStats>) -> String {
    match p {
        Some(p) => format!(
            "{:.1} → {:.1}, {:+.1} [{:+.1}, {:+.1}], p = {}",
            p.a_mean * 100.0,
            p.b_mean * 100.0,
            p.diff.value * 100.0,
            p.diff.lo * 100.0,
            p.diff.hi * 100.0,
            p_text(p.p_value)
        ),
        None => "–".into(),
    }
}

/// `×1.85 (12300 → 22800)`.
fn help_cost_cell((text, mine): (f64, f64)) -> String {
    let r = agent::ratio(text, mine);
    if r.is_nan() {
        "–".into()
    } else if r.is_finite() {
        format!("×{r:.2} ({} → {})", num(text), num(mine))
    } else {
        format!("∞ ({} → {})", num(text), num(mine))
    }
}

/// One row of the "does the tool help" table.
fn help_row(r: &HelpRow) -> Vec<String> {
    let mut row = vec![format!("**{}**", r.variant), r.n.to_string()];
    if r.n == 0 {
        row.extend(std::iter::repeat_n(
            "–".to_string(),
            agent::HELP_METRICS.len() + HELP_COSTS.len(),
        ));
        return row;
    }
    row.extend(
        agent::HELP_METRICS
            .iter()
            .map(|m| help_acc_cell(r.acc.iter().find(|p| p.metric == *m))),
    );
    row.extend(r.costs.iter().map(|c| help_cost_cell(*c)));
    row
}

/// The README's question for an agent's runs: each variant against `text`.
fn tool_help_section(out: &mut String, stats: &Stats) {
    let (who, rows) = match &stats.tool_help {
        ToolHelp::Scripted => return,
        ToolHelp::NotOneAgent(runs) => {
            let _ = writeln!(
                out,
                "## Does the tool help the agent?\n\nNot answered here: the runs were not all played by \
                 one agent ({}), so a variant against `text` would compare players as well as tools.\n",
                runs.join("; ")
            );
            return;
        }
        ToolHelp::NoReference(a) => {
            let _ = writeln!(
                out,
                "## Does the tool help the agent?\n\nNo `text` variant in these runs of {}: nothing to \
                 measure the tools against (run `navbench run --agent … --variants text,…`).\n",
                agent::describe(Some(a))
            );
            return;
        }
        ToolHelp::Rows(a, rows) => (agent::describe(Some(a)), rows),
    };
    out.push_str("## Does the tool help the agent?\n\n");
    let _ = writeln!(
        out,
        "Played by {who}. Each variant against `text` (the same agent with list, read and grep \
         only) on the instances both scored: accuracy in percent, text → variant, the difference \
         in points with its paired-bootstrap interval and the exact McNemar p; then the variant's \
         cost per instance over text's on the same instances (tokens: prompt + completion; wall \
         ms includes start-up and indexing).\n"
    );
    let mut header = vec!["variant".to_string(), "n".to_string()];
    header.extend(agent::HELP_METRICS.iter().map(|m| pretty_metric(m)));
    header.extend(HELP_COSTS.iter().map(|(_, l)| format!("{l} ×")));
    let body: Vec<Vec<String>> = rows.iter().map(help_row).collect();
    table(out, &header, &body);
    let verdicts: Vec<String> = rows
        .iter()
        .flat_map(|r| r.acc.iter().filter(|p| p.p_value < 0.05))
        .map(|p| {
            let word = if p.diff.value > 0.0 { "helps" } else { "hurts" };
            format!(
                "{} {word} on {} (p = {})",
                p.b,
                pretty_metric(&p.metric),
                p_text(p.p_value)
            )
        })
        .collect();
    if verdicts.is_empty() {
        out.push_str("No difference from `text` is significant at p < 0.05.\n\n");
    } else {
        let _ = writeln!(out, "Significant at p < 0.05: {}.\n", verdicts.join("; "));
    }
}

/// Every metric of every variant.
fn all_metrics_section(out: &mut String, stats: &Stats) {
    let names = metric_columns();
    out.push_str("## All metrics\n\n");
    let mut header = vec!["metric".to_string()];
    header.extend(stats.variants.iter().map(|v| v.variant.clone()));
    let rows: Vec<Vec<String>> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut r = vec![pretty_metric(n)];
            r.extend(
                stats
                    .variants
                    .iter()
                    .map(|v| pct(&v.metrics.get(i).copied().flatten())),
            );
            r
        })
        .collect();
    table(out, &header, &rows);
}

/// Paired comparisons of each variant pair, with McNemar verdicts.
fn paired_section(out: &mut String, stats: &Stats) {
    out.push_str("## Paired comparisons\n\n");
    if stats.paired.is_empty() {
        out.push_str("Only one variant (or no instance scored by two): nothing to pair.\n\n");
    } else {
        out.push_str(
            "On the instances both variants scored: Δ is the second variant minus the first, in \
             points, with its paired-bootstrap interval; 'only' columns count instances just one of \
             them found; p is the exact two-sided McNemar test on those.\n\n",
        );
        let mut pairs: Vec<(&str, &str)> = stats
            .paired
            .iter()
            .map(|p| (p.a.as_str(), p.b.as_str()))
            .collect();
        pairs.dedup();
        for (a, b) in pairs {
            let mine: Vec<&PairedStats> = stats
                .paired
                .iter()
                .filter(|p| p.a == a && p.b == b)
                .collect();
            let n = mine.first().map_or(0, |p| p.n);
            let _ = writeln!(out, "### {b} vs {a} ({n} instances)\n");
            let header: Vec<String> = vec![
                "metric".into(),
                a.into(),
                b.into(),
                format!("Δ {b} − {a}"),
                format!("{a} only"),
                format!("{b} only"),
                "McNemar p".into(),
            ];
            let rows: Vec<Vec<String>> = mine
                .iter()
                .map(|p| {
                    vec![
                        pretty_metric(&p.metric),
                        format!("{:.1}", p.a_mean * 100.0),
                        format!("{:.1}", p.b_mean * 100.0),
                        format!(
                            "{:+.1} [{:+.1}, {:+.1}]",
                            p.diff.value * 100.0,
                            p.diff.lo * 100.0,
                            p.diff.hi * 100.0
                        ),
                        p.discordance.a_only.to_string(),
                        p.discordance.b_only.to_string(),
                        p_text(p.p_value),
                    ]
                })
                .collect();
            table(out, &header, &rows);
            let verdicts: Vec<String> = mine
                .iter()
                .filter(|p| p.p_value < 0.05)
                .map(|p| {
                    let (win, lose) = if p.diff.value > 0.0 { (b, a) } else { (a, b) };
                    format!(
                        "{win} beats {lose} on {} (p = {})",
                        pretty_metric(&p.metric),
                        p_text(p.p_value)
                    )
                })
                .collect();
            if verdicts.is_empty() {
                out.push_str("No difference is significant at p < 0.05.\n\n");
            } else {
                let _ = writeln!(out, "Significant at p < 0.05: {}.\n", verdicts.join("; "));
            }
        }
    }
}

/// Latency per tool.
fn latency_section(out: &mut String, data: &ReportData) {
    out.push_str("## Latency per tool\n\n");
    let header: Vec<String> = [
        "variant", "tool", "calls", "mean ms", "p50 ms", "p95 ms", "max ms",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = data
        .tool_latency
        .iter()
        .map(|l| {
            vec![
                l.variant.clone(),
                format!("`{}`", l.tool),
                l.n.to_string(),
                format!("{:.2}", l.mean),
                format!("{:.2}", l.p50),
                format!("{:.2}", l.p95),
                format!("{:.2}", l.max),
            ]
        })
        .collect();
    table(out, &header, &rows);
}

/// Accuracy per repository.
fn repo_section(out: &mut String, stats: &Stats) {
    let acc = acc_columns();
    out.push_str("## Accuracy per repository\n\n");
    let mut header = vec!["repository".to_string(), "variant".into(), "n".into()];
    header.extend(acc.iter().map(|a| pretty_metric(a)));
    let rows: Vec<Vec<String>> = stats
        .repos
        .iter()
        .map(|r| {
            let mut row = vec![r.repo.clone(), r.variant.clone(), r.n_scored.to_string()];
            row.extend(r.acc.iter().map(|e| match e {
                Some(e) => format!("{:.1}", e.value * 100.0),
                None => "–".into(),
            }));
            row
        })
        .collect();
    table(out, &header, &rows);
    out.push_str("Intervals per repository are in `report.csv` (section `repo`).\n\n");
}

/// Links to the plots.
fn plots_section(out: &mut String, plots: &[String]) {
    if !plots.is_empty() {
        out.push_str("## Plots\n\n");
        for p in plots.iter().filter(|p| p.ends_with(".png")) {
            let stem = p.trim_end_matches(".png");
            let _ = writeln!(out, "![{stem}]({p})  \n(also [{stem}.svg]({stem}.svg))\n");
        }
    }
}
