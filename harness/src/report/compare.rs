//! `navbench compare BASELINE NEW`: pairs two runs by instance and variant and says what
//! changed — metrics that dropped or rose, instances that flipped from found to missed
//! (and back), status changes, latency and token ratios — and whether a threshold was
//! crossed.
//!
//! Exit codes: 0 no regression, 1 regression (every one is named with its variant,
//! metric and instances), 2 refused (runs of different datasets or tokenizers, or with
//! no instance × variant in common).
//!
//! Runs of an LLM agent (`navbench run --agent`) compare the same way, plus the model's
//! costs (turns, tokens, time, dollars) over the instances both sides' agent ran; an
//! `answer_unparsed` row is a finished, scored row (an empty answer). Comparing an
//! agent's run with a scripted run, or with another agent's, is not refused but noted,
//! naming both: "did the model beat the scripted policy?" and "did the new model do
//! better?" are fair questions on the same instances, which is all the refusals guard
//! (same dataset, same tokenizer); the note says that the differences are then the
//! players' as well as the code's.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::record::output::{
    STATUS_ANSWER_UNPARSED, STATUS_ERROR, STATUS_NO_GOLD, STATUS_OK, metric_columns,
};
use crate::record::run_dir::{self, ResultRow, Run};

mod costs;
mod players;

/// Process exit code: no regression.
pub const EXIT_OK: i32 = 0;
/// Process exit code: a threshold was crossed.
pub const EXIT_REGRESSION: i32 = 1;
/// Process exit code: the runs cannot be compared (or could not be read).
pub const EXIT_REFUSED: i32 = 2;

/// How much worse the new run may be.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// Largest allowed drop of any accuracy metric's mean (Acc, recall, NDCG, MAP), in
    /// percentage points.
    pub max_acc_drop: f64,
    /// Largest allowed ratio new/baseline of mean tool time and of mean index (start-up)
    /// time per instance; `None`: reported, never a regression.
    pub max_latency_ratio: Option<f64>,
    /// Largest allowed ratio new/baseline of mean response tokens and schema tokens per
    /// instance; `None`: reported, never a regression.
    pub max_token_ratio: Option<f64>,
    /// A latency change smaller than this many milliseconds (per instance, in the
    /// means) is noise, whatever its ratio.
    pub min_latency_ms: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            max_acc_drop: 0.0,
            max_latency_ratio: None,
            max_token_ratio: None,
            min_latency_ms: 20.0,
        }
    }
}

/// What a comparison found.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// The human-readable account (what `compare` prints to stdout).
    pub text: String,
    /// One message per crossed threshold, naming variant, metric and instances.
    pub regressions: Vec<String>,
}

impl Comparison {
    /// [`EXIT_OK`] or [`EXIT_REGRESSION`].
    pub fn exit_code(&self) -> i32 {
        if self.regressions.is_empty() {
            EXIT_OK
        } else {
            EXIT_REGRESSION
        }
    }
}

/// Why two runs were not compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// Reads both run directories and compares them.
pub fn compare_dirs(baseline: &Path, new: &Path, th: &Thresholds) -> Result<Comparison, Refusal> {
    let base = run_dir::load(baseline).map_err(|e| Refusal(format!("baseline: {e:#}")))?;
    let new = run_dir::load(new).map_err(|e| Refusal(format!("new run: {e:#}")))?;
    compare(&base, &new, th)
}

/// At most `n` ids, then "and N more".
fn some_ids<S: AsRef<str>>(ids: &[S], n: usize) -> String {
    let mut s = ids
        .iter()
        .take(n)
        .map(|x| x.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > n {
        let _ = write!(s, " and {} more", ids.len() - n);
    }
    s
}

/// Checks that the runs measured the same thing.
fn check_compatible(base: &Run, new: &Run) -> Result<Vec<String>, Refusal> {
    let mut notes = Vec::new();
    match (&base.info, &new.info) {
        (Some(b), Some(n)) => {
            if b.dataset != n.dataset {
                return Err(Refusal(format!(
                    "refusing to compare runs of different datasets: baseline {} ran '{}', new run {} ran '{}'",
                    base.dir.display(),
                    b.dataset,
                    new.dir.display(),
                    n.dataset
                )));
            }
            if !b.dataset_fingerprint.is_empty()
                && !n.dataset_fingerprint.is_empty()
                && b.dataset_fingerprint != n.dataset_fingerprint
            {
                return Err(Refusal(format!(
                    "refusing to compare: dataset '{}' changed between the runs (baseline {} has fingerprint {} over {} instance(s), new run {} has {} over {}); \
                     if the change is intended, refresh the baseline (docs/reports.md: \"Comparing runs and CI regression tracking\")",
                    b.dataset,
                    base.dir.display(),
                    b.dataset_fingerprint,
                    b.dataset_instances,
                    new.dir.display(),
                    n.dataset_fingerprint,
                    n.dataset_instances
                )));
            }
            if b.tokenizer != n.tokenizer {
                return Err(Refusal(format!(
                    "refusing to compare token counts of different tokenizers: baseline {} used {}, new run {} used {} (pass --tokenizer {} to navbench run)",
                    base.dir.display(),
                    b.tokenizer,
                    new.dir.display(),
                    n.tokenizer,
                    b.tokenizer
                )));
            }
            if let Some(note) = players::note(base, b.agent.as_ref(), new, n.agent.as_ref()) {
                notes.push(note);
            }
            if b.dataset_fingerprint.is_empty() || n.dataset_fingerprint.is_empty() {
                notes.push(
                    "note: a run.json has no dataset fingerprint (older navbench): instances are paired by id only"
                        .to_string(),
                );
            }
        }
        _ => {
            for r in [base, new] {
                if r.info.is_none() {
                    notes.push(format!(
                        "note: {} has no run.json: its dataset cannot be checked; instances are paired by id only",
                        r.dir.display()
                    ));
                }
            }
        }
    }
    let base_pairs: BTreeSet<(&str, &str)> = base
        .rows
        .iter()
        .map(|r| (r.instance_id.as_str(), r.variant.as_str()))
        .collect();
    let overlap = new
        .rows
        .iter()
        .filter(|r| base_pairs.contains(&(r.instance_id.as_str(), r.variant.as_str())))
        .count();
    if overlap == 0 {
        return Err(Refusal(format!(
            "refusing to compare: no instance × variant in common between baseline {} ({} row(s)) and new run {} ({} row(s))",
            base.dir.display(),
            base.rows.len(),
            new.dir.display(),
            new.rows.len()
        )));
    }
    Ok(notes)
}

/// Variants in order of first appearance.
fn variants_of(rows: &[ResultRow]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        if !out.contains(&r.variant) {
            out.push(r.variant.clone());
        }
    }
    out
}

fn is_acc(metric: &str) -> bool {
    metric.contains("_acc_")
}

/// One paired instance of one variant.
pub(crate) struct Pair<'a> {
    pub(crate) base: &'a ResultRow,
    pub(crate) new: &'a ResultRow,
}

/// Compares two loaded runs.
pub fn compare(base: &Run, new: &Run, th: &Thresholds) -> Result<Comparison, Refusal> {
    let notes = check_compatible(base, new)?;
    let mut cmp = Comparison::default();
    let t = &mut cmp.text;
    let _ = writeln!(
        t,
        "baseline: {} ({} row(s))\nnew:      {} ({} row(s))",
        base.dir.display(),
        base.rows.len(),
        new.dir.display(),
        new.rows.len()
    );
    for n in notes {
        let _ = writeln!(t, "{n}");
    }
    let base_variants = variants_of(&base.rows);
    let new_variants = variants_of(&new.rows);
    for v in &base_variants {
        if !new_variants.contains(v) {
            let n = base.rows.iter().filter(|r| &r.variant == v).count();
            let msg = format!(
                "variant '{v}' is in the baseline ({n} instance(s)) but missing from the new run"
            );
            let _ = writeln!(t, "\n== {v}: MISSING from the new run");
            cmp.regressions.push(msg);
        }
    }
    for v in &new_variants {
        if !base_variants.contains(v) {
            let n = new.rows.iter().filter(|r| &r.variant == v).count();
            let _ = writeln!(
                t,
                "\n== {v}: new variant, no baseline ({n} instance(s)); not compared"
            );
        }
    }
    for v in base_variants.iter().filter(|v| new_variants.contains(v)) {
        compare_variant(v, base, new, th, &mut cmp);
    }
    let t = &mut cmp.text;
    if cmp.regressions.is_empty() {
        let _ = writeln!(t, "\ncompare: no regression");
    } else {
        let _ = writeln!(t, "\ncompare: {} regression(s):", cmp.regressions.len());
        for r in &cmp.regressions {
            let _ = writeln!(t, "  regression: {r}");
        }
    }
    Ok(cmp)
}

pub(crate) fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { s / n as f64 }
}

/// Compares one variant of two runs: which instances pair up, then status changes,
/// metric changes and cost changes over the pairs.
fn compare_variant(v: &str, base: &Run, new: &Run, th: &Thresholds, cmp: &mut Comparison) {
    let b_rows: BTreeMap<&str, &ResultRow> = base
        .rows
        .iter()
        .filter(|r| r.variant == v)
        .map(|r| (r.instance_id.as_str(), r))
        .collect();
    let n_rows: BTreeMap<&str, &ResultRow> = new
        .rows
        .iter()
        .filter(|r| r.variant == v)
        .map(|r| (r.instance_id.as_str(), r))
        .collect();
    let pairs: Vec<(&str, Pair)> = b_rows
        .iter()
        .filter_map(|(id, b)| n_rows.get(id).map(|n| (*id, Pair { base: b, new: n })))
        .collect();
    let only_base: Vec<&str> = b_rows
        .keys()
        .filter(|id| !n_rows.contains_key(*id))
        .copied()
        .collect();
    let only_new: Vec<&str> = n_rows
        .keys()
        .filter(|id| !b_rows.contains_key(*id))
        .copied()
        .collect();
    let t = &mut cmp.text;
    let _ = writeln!(t, "\n== {v}: {} paired instance(s)", pairs.len());
    if !only_base.is_empty() {
        let _ = writeln!(
            t,
            "   {} baseline instance(s) not in the new run (not compared): {}",
            only_base.len(),
            some_ids(&only_base, 5)
        );
    }
    if !only_new.is_empty() {
        let _ = writeln!(
            t,
            "   {} new instance(s) without a baseline (not compared): {}",
            only_new.len(),
            some_ids(&only_new, 5)
        );
    }
    if pairs.is_empty() {
        return;
    }
    status_changes(v, &pairs, cmp);
    metric_changes(v, &pairs, th, cmp);
    costs::cost_changes(v, &pairs, th, cmp);
}

/// Status changes: a row that ran in the baseline and fails now is a regression. An
/// agent's `answer_unparsed` is a finished row scored as an empty answer: a change
/// between it and `ok` is listed (the accuracy shows its effect), not a regression.
fn status_changes(v: &str, pairs: &[(&str, Pair)], cmp: &mut Comparison) {
    let t = &mut cmp.text;
    let mut broke: Vec<String> = Vec::new();
    let mut fixed: Vec<&str> = Vec::new();
    let mut fixed_unparsed: Vec<&str> = Vec::new();
    let mut now_unparsed: Vec<&str> = Vec::new();
    let mut now_parsed: Vec<&str> = Vec::new();
    let mut gold_changed: Vec<&str> = Vec::new();
    for (id, p) in pairs {
        let (b, n) = (p.base.status.as_str(), p.new.status.as_str());
        if b != STATUS_ERROR && n == STATUS_ERROR {
            broke.push(id.to_string());
        } else if b == STATUS_ERROR && n == STATUS_OK {
            fixed.push(id);
        } else if b == STATUS_ERROR && n == STATUS_ANSWER_UNPARSED {
            fixed_unparsed.push(id);
        } else if b == STATUS_OK && n == STATUS_ANSWER_UNPARSED {
            now_unparsed.push(id);
        } else if b == STATUS_ANSWER_UNPARSED && n == STATUS_OK {
            now_parsed.push(id);
        }
        if (b == STATUS_NO_GOLD) != (n == STATUS_NO_GOLD) && b != STATUS_ERROR && n != STATUS_ERROR
        {
            gold_changed.push(id);
        }
    }
    if !broke.is_empty() {
        let _ = writeln!(
            t,
            "   status → error on {} instance(s): {}",
            broke.len(),
            some_ids(&broke, 10)
        );
        cmp.regressions.push(format!(
            "{v}: status changed to error on {} instance(s): {} (see the error column of the new run's instances.csv)",
            broke.len(),
            some_ids(&broke, 10)
        ));
    }
    if !fixed.is_empty() {
        let _ = writeln!(
            t,
            "   status error → ok on {} instance(s): {}",
            fixed.len(),
            some_ids(&fixed, 10)
        );
    }
    for (what, ids) in [
        ("status error → answer_unparsed", &fixed_unparsed),
        (
            "status ok → answer_unparsed (no location named)",
            &now_unparsed,
        ),
        ("status answer_unparsed → ok", &now_parsed),
    ] {
        if !ids.is_empty() {
            let _ = writeln!(
                t,
                "   {what} on {} instance(s): {}",
                ids.len(),
                some_ids(ids, 10)
            );
        }
    }
    if !gold_changed.is_empty() {
        let _ = writeln!(
            t,
            "   gold changed (no_gold on one side only): {}",
            some_ids(&gold_changed, 10)
        );
    }
}

/// Metric means over the scored pairs, with the instances that moved; a drop beyond
/// `--max-acc-drop` is a regression.
fn metric_changes(v: &str, pairs: &[(&str, Pair)], th: &Thresholds, cmp: &mut Comparison) {
    let t = &mut cmp.text;
    // Metrics over instances scored on at least one side; an unscored side (an error
    // before scoring) counts as a miss, so a crash cannot hide an accuracy drop.
    let scored: Vec<(&str, &Pair)> = pairs
        .iter()
        .filter(|(_, p)| p.base.metrics.is_some() || p.new.metrics.is_some())
        .map(|(id, p)| (*id, p))
        .collect();
    let names = metric_columns();
    let value = |r: &ResultRow, i: usize| r.metrics.as_ref().and_then(|m| m.get(i)).copied();
    let mut dropped_lines = Vec::new();
    let mut rose_lines = Vec::new();
    let mut flipped_lines = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if scored.is_empty() {
            break;
        }
        let b_mean = mean(scored.iter().map(|(_, p)| value(p.base, i).unwrap_or(0.0)));
        let n_mean = mean(scored.iter().map(|(_, p)| value(p.new, i).unwrap_or(0.0)));
        let drop_pts = (b_mean - n_mean) * 100.0;
        let worse: Vec<&str> = scored
            .iter()
            .filter(|(_, p)| value(p.new, i).unwrap_or(0.0) < value(p.base, i).unwrap_or(0.0))
            .map(|(id, _)| *id)
            .collect();
        let better: Vec<&str> = scored
            .iter()
            .filter(|(_, p)| value(p.new, i).unwrap_or(0.0) > value(p.base, i).unwrap_or(0.0))
            .map(|(id, _)| *id)
            .collect();
        let (worse_word, better_word) = if is_acc(name) {
            ("found → missed", "missed → found")
        } else {
            ("worse on", "better on")
        };
        let mut line = format!(
            "   {name}: {:.1} → {:.1} ({}{:.1} pts)",
            b_mean * 100.0,
            n_mean * 100.0,
            if drop_pts > 0.0 { "−" } else { "+" },
            drop_pts.abs()
        );
        if !worse.is_empty() {
            let _ = write!(line, "; {worse_word}: {}", some_ids(&worse, 10));
        }
        if !better.is_empty() {
            let _ = write!(line, "; {better_word}: {}", some_ids(&better, 10));
        }
        if drop_pts > 1e-9 {
            dropped_lines.push(line);
        } else if drop_pts < -1e-9 {
            rose_lines.push(line);
        } else if !worse.is_empty() || !better.is_empty() {
            flipped_lines.push(line);
        }
        if drop_pts > th.max_acc_drop + 1e-9 {
            cmp.regressions.push(format!(
                "{v}: {name} dropped {drop_pts:.1} points ({:.1} → {:.1} over {} scored instance(s); allowed {:.1}); {worse_word}: {}",
                b_mean * 100.0,
                n_mean * 100.0,
                scored.len(),
                th.max_acc_drop,
                some_ids(&worse, 10)
            ));
        }
    }
    if dropped_lines.is_empty() && rose_lines.is_empty() && flipped_lines.is_empty() {
        let _ = writeln!(t, "   metrics: all {} unchanged", names.len());
    }
    for (title, lines) in [
        ("metrics that dropped", &dropped_lines),
        ("metrics that rose", &rose_lines),
        ("same mean, instances flipped both ways", &flipped_lines),
    ] {
        if !lines.is_empty() {
            let _ = writeln!(t, "   {title}:");
            for l in lines {
                let _ = writeln!(t, "{l}");
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::policy::agent::config::AgentInfo;
    use crate::record::output::RunInfo;
    use crate::record::run_dir::AgentFigures;
    use std::path::PathBuf;

    pub(crate) fn row(id: &str, variant: &str, acc: f64) -> ResultRow {
        let n = metric_columns().len();
        ResultRow {
            instance_id: id.into(),
            repo: "o/r".into(),
            variant: variant.into(),
            status: STATUS_OK.into(),
            metrics: Some(vec![acc; n]),
            n_calls: 4.0,
            tool_ms: 100.0,
            index_ms: 50.0,
            response_tokens: 1000.0,
            schema_tokens: 200.0,
            ..ResultRow::default()
        }
    }

    pub(crate) fn agent_info(name: &str, model: &str) -> AgentInfo {
        AgentInfo {
            name: name.into(),
            model: model.into(),
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

    /// `base()` as played by `agent`: every row with model figures.
    pub(crate) fn agent_run(name: &str, agent: AgentInfo, prompt_tokens: f64) -> Run {
        let mut r = base();
        r.dir = PathBuf::from(name);
        r.label = name.into();
        if let Some(i) = r.info.as_mut() {
            i.agent = Some(agent);
        }
        for row in &mut r.rows {
            row.agent = Some(AgentFigures {
                llm_turns: 3.0,
                prompt_tokens,
                cached_tokens: 0.0,
                completion_tokens: 100.0,
                tokens_estimated: false,
                llm_ms: 2000.0,
                cost_usd: Some(0.001),
                stop_reason: "answered".into(),
            });
        }
        r
    }

    pub(crate) fn run(name: &str, rows: Vec<ResultRow>) -> Run {
        Run {
            dir: PathBuf::from(name),
            label: name.into(),
            info: Some(RunInfo {
                dataset: "mini".into(),
                tokenizer: "cl100k_base".into(),
                dataset_fingerprint: "fnv1a64:1".into(),
                ..RunInfo::default()
            }),
            trials: rows.clone(),
            rows,
        }
    }

    pub(crate) fn base() -> Run {
        run(
            "base",
            vec![
                row("i1", "text", 1.0),
                row("i2", "text", 1.0),
                row("i3", "text", 0.0),
            ],
        )
    }

    #[test]
    fn identical_runs_pass() {
        let c = compare(&base(), &base(), &Thresholds::default()).unwrap();
        assert_eq!(c.exit_code(), EXIT_OK, "{}", c.text);
        assert!(c.text.contains("all 28 unchanged"), "{}", c.text);
        assert!(c.text.contains("no regression"));
    }

    #[test]
    fn an_accuracy_drop_names_metric_variant_and_instances() {
        let mut new = base();
        new.rows[1] = row("i2", "text", 0.0);
        new.rows[2] = row("i3", "text", 1.0);
        new.rows[0].metrics.as_mut().unwrap()[0] = 0.0; // file_acc_1 on i1 too
        let c = compare(&base(), &new, &Thresholds::default()).unwrap();
        assert_eq!(c.exit_code(), EXIT_REGRESSION);
        let r = c
            .regressions
            .iter()
            .find(|r| r.contains("file_acc_1"))
            .unwrap();
        assert!(r.starts_with("text: file_acc_1 dropped 33.3 points"), "{r}");
        assert!(r.contains("found → missed: i1, i2"), "{r}");
        // Flips back are reported too.
        assert!(c.text.contains("missed → found: i3"), "{}", c.text);
        // A generous threshold lets it pass.
        let loose = Thresholds {
            max_acc_drop: 40.0,
            ..Thresholds::default()
        };
        assert_eq!(compare(&base(), &new, &loose).unwrap().exit_code(), EXIT_OK);
    }

    #[test]
    fn unscored_errors_count_as_misses_and_status_changes_fail() {
        let mut new = base();
        new.rows[0].status = STATUS_ERROR.into();
        new.rows[0].metrics = None;
        new.rows[0].n_calls = 0.0;
        let c = compare(&base(), &new, &Thresholds::default()).unwrap();
        assert!(
            c.regressions
                .iter()
                .any(|r| r.contains("status changed to error") && r.contains("i1")),
            "{:?}",
            c.regressions
        );
        assert!(
            c.regressions
                .iter()
                .any(|r| r.contains("function_acc_10") && r.contains("i1")),
            "{:?}",
            c.regressions
        );
    }

    #[test]
    fn a_scripted_baseline_without_agent_columns_compares_as_before() {
        // The committed baseline predates the agent columns: compared with itself it
        // passes, every metric unchanged and no model cost printed.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/baseline");
        let th = Thresholds {
            max_latency_ratio: Some(5.0),
            max_token_ratio: Some(1.5),
            ..Thresholds::default()
        };
        let c = compare_dirs(&dir, &dir, &th).unwrap();
        assert_eq!(c.exit_code(), EXIT_OK, "{}", c.text);
        assert!(c.text.contains("all 28 unchanged"), "{}", c.text);
        assert!(
            !c.text.contains("model costs") && !c.text.contains("note:"),
            "{}",
            c.text
        );
        // Against an agent's run of the same instances: a note naming both, model costs
        // not compared (one side scripted), and no token regression from them.
        let scripted = run_dir::load(&dir).unwrap();
        let mut agent = scripted.clone();
        agent.dir = PathBuf::from("agent-run");
        if let Some(i) = agent.info.as_mut() {
            i.agent = Some(agent_info("local-llama", "smollm2"));
        }
        for r in &mut agent.rows {
            r.agent = Some(AgentFigures {
                llm_turns: 2.0,
                prompt_tokens: 5000.0,
                stop_reason: "answered".into(),
                ..AgentFigures::default()
            });
        }
        let c = compare(&scripted, &agent, &th).unwrap();
        assert_eq!(c.exit_code(), EXIT_OK, "{:?}", c.regressions);
        assert!(
            c.text.contains("played by scripted policies")
                && c.text.contains("by agent local-llama (model smollm2"),
            "{}",
            c.text
        );
        assert!(c.text.contains("model costs: not compared"), "{}", c.text);
    }

    #[test]
    fn answer_unparsed_is_a_scored_finished_row() {
        let a = agent_info("gpt", "gpt-4o-mini");
        let base = agent_run("b", a.clone(), 900.0);
        let mut new = agent_run("n", a, 900.0);
        // i1: found → the answer named nothing (scored as empty).
        new.rows[0].status = STATUS_ANSWER_UNPARSED.into();
        new.rows[0].metrics = Some(vec![0.0; metric_columns().len()]);
        new.rows[0].n_calls = 0.0;
        let c = compare(&base, &new, &Thresholds::default()).unwrap();
        assert!(
            c.text
                .contains("status ok → answer_unparsed (no location named) on 1 instance(s): i1"),
            "{}",
            c.text
        );
        // Not a status regression; the accuracy drop is.
        assert!(
            !c.regressions.iter().any(|r| r.contains("status")),
            "{:?}",
            c.regressions
        );
        assert!(
            c.regressions
                .iter()
                .any(|r| r.contains("file_acc_1") && r.contains("i1"))
        );
        // It still ran (model turns without tool calls): its model costs count.
        assert!(
            c.text.contains("over 3 instance(s) played by an agent"),
            "{}",
            c.text
        );
        // error → answer_unparsed is listed as finished; answer_unparsed → error flagged.
        let mut err = base.clone();
        err.rows[0].status = STATUS_ERROR.into();
        err.rows[0].metrics = None;
        let c = compare(&err, &new, &Thresholds::default()).unwrap();
        assert!(
            c.text.contains("status error → answer_unparsed on 1"),
            "{}",
            c.text
        );
        let c = compare(&new, &err, &Thresholds::default()).unwrap();
        assert!(
            c.regressions
                .iter()
                .any(|r| r.contains("status changed to error") && r.contains("i1")),
            "{:?}",
            c.regressions
        );
    }

    #[test]
    fn new_variants_pass_missing_variants_fail() {
        let mut new = base();
        new.rows.push(row("i1", "codegraph", 1.0));
        let c = compare(&base(), &new, &Thresholds::default()).unwrap();
        assert_eq!(c.exit_code(), EXIT_OK);
        assert!(c.text.contains("codegraph: new variant, no baseline"));
        let c = compare(&new, &base(), &Thresholds::default()).unwrap();
        assert_eq!(c.exit_code(), EXIT_REGRESSION);
        assert!(
            c.regressions[0].contains("variant 'codegraph'")
                && c.regressions[0].contains("missing from the new run"),
            "{:?}",
            c.regressions
        );
    }

    #[test]
    fn refuses_other_datasets_tokenizers_and_no_overlap() {
        let mut other = base();
        if let Some(i) = other.info.as_mut() {
            i.dataset = "dev".into();
        }
        let e = compare(&base(), &other, &Thresholds::default()).unwrap_err();
        assert!(
            e.0.contains("different datasets") && e.0.contains("'dev'"),
            "{e}"
        );

        let mut other = base();
        if let Some(i) = other.info.as_mut() {
            i.dataset_fingerprint = "fnv1a64:2".into();
        }
        let e = compare(&base(), &other, &Thresholds::default()).unwrap_err();
        assert!(
            e.0.contains("changed") && e.0.contains("refresh the baseline"),
            "{e}"
        );

        let mut other = base();
        if let Some(i) = other.info.as_mut() {
            i.tokenizer = "o200k_base".into();
        }
        let e = compare(&base(), &other, &Thresholds::default()).unwrap_err();
        assert!(e.0.contains("tokenizer"), "{e}");

        let other = run("other", vec![row("zz", "text", 1.0)]);
        let e = compare(&base(), &other, &Thresholds::default()).unwrap_err();
        assert!(e.0.contains("no instance × variant in common"), "{e}");
    }
}
