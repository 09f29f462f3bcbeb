//! Reading finished run directories back for `report` and `compare`: `run.json`, and
//! `instances.csv` / `calls.csv` streamed record by record, looking only at the columns
//! asked for (the `pred_*` / `gold_*` lists and error texts are never parsed).
//!
//! The agent columns ([`crate::record::output::agent_columns`]) are read when the file has them:
//! a run written before they existed (the committed `results/baseline/`) reads as a
//! scripted run, every [`ResultRow::agent`] `None`; likewise a file without the
//! `trial` column reads as one trial per pair.
//!
//! A run of `--repeats K` has K rows per instance × variant. [`Run::rows`] holds one
//! row per pair, each the mean of its trials ([`per_instance_means`]), so every table,
//! paired test and `compare` treats an instance once whatever K; [`Run::trials`] keeps
//! the rows of every trial for the figures over trials (`report::trials`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::policy::Trial;
use crate::record::output::answer_columns::{self, AnswerCounts};
use crate::record::output::{RunInfo, STATUS_NO_GOLD, TRIAL_COLUMN, metric_columns, read_info};

/// Cost columns of `instances.csv` that reports and comparisons use.
pub const COST_COLUMNS: [&str; 6] = [
    "n_calls",
    "tool_ms",
    "index_ms",
    "wall_ms",
    "response_tokens",
    "schema_tokens",
];

/// The numeric agent columns read when present (see [`AgentFigures`]).
const AGENT_NUMBERS: [&str; 6] = [
    "llm_turns",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "llm_ms",
    "cost_usd",
];

/// The text agent columns read when present.
const AGENT_TEXTS: [&str; 2] = ["tokens_estimated", "stop_reason"];

/// What the LLM agent cost on one row (the agent columns of `instances.csv`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentFigures {
    pub llm_turns: f64,
    pub prompt_tokens: f64,
    pub cached_tokens: f64,
    pub completion_tokens: f64,
    /// Some response had no `usage`: the tokens were counted with the run's tokenizer.
    pub tokens_estimated: bool,
    pub llm_ms: f64,
    /// `None` when the agent file gave no prices.
    pub cost_usd: Option<f64>,
    /// As written (`answered`, `max_turns`, …), so a reason a newer navbench adds is
    /// still counted.
    pub stop_reason: String,
}

impl AgentFigures {
    /// Prompt plus completion tokens: what the model read and wrote.
    pub fn tokens(&self) -> f64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// One instance × variant result, as far as statistics need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultRow {
    pub instance_id: String,
    pub repo: String,
    pub variant: String,
    /// The play of the pair (`run --repeats`); in a per-instance mean row, the first.
    pub trial: Trial,
    pub status: String,
    /// Metric values in [`metric_columns`] order; `None` when the row is not scored.
    pub metrics: Option<Vec<f64>>,
    pub n_calls: f64,
    pub tool_ms: f64,
    pub index_ms: f64,
    pub wall_ms: f64,
    pub response_tokens: f64,
    pub schema_tokens: f64,
    /// The agent's figures; `None` for a scripted policy's row (and every row of a run
    /// written before the agent columns existed).
    pub agent: Option<AgentFigures>,
    /// What reading an agent's answer found (built-in agent and `--agent-cmd`); `None`
    /// for scripted rows, unanswered rows and runs written before these columns.
    pub answer: Option<AnswerCounts>,
}

impl ResultRow {
    /// True when the policy ran for this row (it had gold, and made tool calls or, for
    /// an agent, model turns: a model may answer without calling a tool), so its costs
    /// count in means — the same rule as `summary.csv`.
    pub fn ran(&self) -> bool {
        self.status != STATUS_NO_GOLD
            && (self.n_calls > 0.0 || self.agent.as_ref().is_some_and(|a| a.llm_turns > 0.0))
    }
}

/// A run directory read back.
#[derive(Debug, Clone)]
pub struct Run {
    pub dir: PathBuf,
    /// A short name for messages: the directory's file name.
    pub label: String,
    /// `run.json`, when present.
    pub info: Option<RunInfo>,
    /// One row per instance × variant: the mean over its trials (see the module doc).
    pub rows: Vec<ResultRow>,
    /// Every trial's row; the same as `rows` for a run without `--repeats`.
    pub trials: Vec<ResultRow>,
}

/// The header of a CSV file (only its first record is read).
fn csv_header(path: &Path) -> anyhow::Result<Vec<String>> {
    let mut rdr = csv::ReaderBuilder::new()
        .from_path(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    Ok(rdr
        .headers()
        .map_err(|e| anyhow::anyhow!("cannot read the header of {}: {e}", path.display()))?
        .iter()
        .map(String::from)
        .collect())
}

/// The header of a file [`for_each_record`] will read, or why it cannot be read.
fn existing_header(path: &Path) -> anyhow::Result<Vec<String>> {
    if !path.exists() {
        anyhow::bail!(
            "{} not found: is {} a navbench run directory (made by `navbench run --out`)?",
            path.display(),
            path.parent().unwrap_or(path).display()
        );
    }
    csv_header(path)
}

/// Streams the CSV file at `path`, handing `f` the fields of the columns `wanted` (in
/// that order) of each record; a column in `optional` that the header lacks reads as
/// empty, any other missing column is refused before the first record. Only the
/// wanted fields are looked at: the `pred_*` / `gold_*` lists and error texts are
/// skipped over, never parsed.
fn for_each_record(
    path: &Path,
    wanted: &[&str],
    optional: &[&str],
    mut f: impl FnMut(&Fields) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let header = existing_header(path)?;
    let index: Vec<Option<usize>> = wanted
        .iter()
        .map(|c| header.iter().position(|h| h == c))
        .collect();
    let missing: Vec<&str> = wanted
        .iter()
        .zip(&index)
        .filter(|(c, i)| i.is_none() && !optional.contains(c))
        .map(|(c, _)| *c)
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "{} lacks column(s) {}: was it written by an older navbench? Re-run it",
            path.display(),
            missing.join(", ")
        );
    }
    let mut rdr = csv::ReaderBuilder::new()
        .from_path(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut record = csv::StringRecord::new();
    let mut line = 1;
    loop {
        let more = rdr
            .read_record(&mut record)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        if !more {
            return Ok(());
        }
        line += 1;
        let fields = Fields {
            path,
            line,
            wanted,
            index: &index,
            record: &record,
        };
        f(&fields)?;
    }
}

/// The wanted fields of one CSV record (see [`for_each_record`]).
struct Fields<'a> {
    path: &'a Path,
    line: usize,
    wanted: &'a [&'a str],
    index: &'a [Option<usize>],
    record: &'a csv::StringRecord,
}

impl Fields<'_> {
    /// Wanted column `k` as text (empty when absent).
    fn text(&self, k: usize) -> &str {
        self.index[k].and_then(|i| self.record.get(i)).unwrap_or("")
    }

    /// Wanted column `k` as a number; `None` when empty or absent.
    fn number(&self, k: usize) -> anyhow::Result<Option<f64>> {
        let t = self.text(k).trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse().map(Some).map_err(|_| {
            anyhow::anyhow!(
                "{} line {}: column {} holds {t:?}, not a number: was the file edited by hand?",
                self.path.display(),
                self.line,
                self.wanted[k]
            )
        })
    }
}

/// Reads a run's `instances.csv`: identity, status, every metric, the cost columns and
/// those agent columns the file has, one row per instance × variant (the last row of a
/// retried pair wins, as in [`crate::record::output::read_instance_rows`]; rows keep the order
/// of the rows that won).
pub fn read_instances(dir: &Path) -> anyhow::Result<Vec<ResultRow>> {
    let path = dir.join("instances.csv");
    let metrics = metric_columns();
    let mut wanted: Vec<&str> = vec!["instance_id", "repo", "variant", "status"];
    wanted.extend(metrics.iter().map(String::as_str));
    wanted.extend(COST_COLUMNS);
    wanted.extend(AGENT_NUMBERS);
    wanted.extend(AGENT_TEXTS);
    wanted.extend(answer_columns::COLUMNS);
    wanted.push(TRIAL_COLUMN);
    let optional: Vec<&str> = AGENT_NUMBERS
        .iter()
        .chain(&AGENT_TEXTS)
        .chain(&answer_columns::COLUMNS)
        .chain(&[TRIAL_COLUMN])
        .copied()
        .collect();
    let (m0, c0, a0) = (4, 4 + metrics.len(), 4 + metrics.len() + COST_COLUMNS.len());
    let t0 = a0 + AGENT_NUMBERS.len();
    let n0 = t0 + AGENT_TEXTS.len();
    let mut rows: Vec<ResultRow> = Vec::new();
    for_each_record(&path, &wanted, &optional, |f| {
        let metrics: Option<Vec<f64>> = (m0..c0)
            .map(|k| f.number(k))
            .collect::<anyhow::Result<Vec<_>>>()?
            .into_iter()
            .collect();
        let cost = |k: usize| Ok::<_, anyhow::Error>(f.number(c0 + k)?.unwrap_or(0.0));
        let trial = Trial::parse_cell(f.text(n0 + 2)).ok_or_else(|| {
            anyhow::anyhow!(
                "{} line {}: column trial holds {:?}, not a trial number (1, 2, …): was the file edited by hand?",
                f.path.display(),
                f.line,
                f.text(n0 + 2)
            )
        })?;
        rows.push(ResultRow {
            instance_id: f.text(0).to_string(),
            repo: f.text(1).to_string(),
            variant: f.text(2).to_string(),
            trial,
            status: f.text(3).to_string(),
            metrics,
            n_calls: cost(0)?,
            tool_ms: cost(1)?,
            index_ms: cost(2)?,
            wall_ms: cost(3)?,
            response_tokens: cost(4)?,
            schema_tokens: cost(5)?,
            agent: agent_figures(f, a0, t0)?,
            answer: match (f.number(n0)?, f.number(n0 + 1)?) {
                (Some(lines), Some(dropped)) => Some(AnswerCounts {
                    lines: lines as usize,
                    dropped: dropped as usize,
                }),
                _ => None,
            },
        });
        Ok(())
    })?;
    Ok(last_wins(rows))
}

/// The agent columns of a record (numbers from `a0`, texts from `t0`, in
/// [`AGENT_NUMBERS`] / [`AGENT_TEXTS`] order); `None` for a scripted row (empty
/// `stop_reason`, or a run older than the agent policy).
fn agent_figures(f: &Fields, a0: usize, t0: usize) -> anyhow::Result<Option<AgentFigures>> {
    let stop_reason = f.text(t0 + 1);
    if stop_reason.is_empty() {
        return Ok(None);
    }
    let num = |k: usize| f.number(a0 + k);
    Ok(Some(AgentFigures {
        llm_turns: num(0)?.unwrap_or(0.0),
        prompt_tokens: num(1)?.unwrap_or(0.0),
        cached_tokens: num(2)?.unwrap_or(0.0),
        completion_tokens: num(3)?.unwrap_or(0.0),
        llm_ms: num(4)?.unwrap_or(0.0),
        cost_usd: num(5)?,
        tokens_estimated: f.text(t0) == "true",
        stop_reason: stop_reason.to_string(),
    }))
}

/// Keeps the last row of each trial of an instance × variant, in the order of the
/// rows kept.
fn last_wins(rows: Vec<ResultRow>) -> Vec<ResultRow> {
    let mut last: HashMap<(&str, &str, Trial), usize> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        last.insert((r.instance_id.as_str(), r.variant.as_str(), r.trial), i);
    }
    let keep: HashSet<usize> = last.into_values().collect();
    rows.into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, r)| r)
        .collect()
}

/// One row per instance × variant, in the order of their first rows: a pair with one
/// trial as it is; a pair with several, their mean. Metrics are averaged over the
/// trials that scored (none scored: no metrics), so an instance's Acc@k becomes the
/// share of its trials that found the gold; the costs over the trials that ran (none
/// ran: over all), the agent's figures and answer counts over the trials that have
/// them. The status is `ok` when a scored trial is, else the first scored trial's,
/// else the last trial's; the stop reason is the first agent trial's.
pub fn per_instance_means(trials: &[ResultRow]) -> Vec<ResultRow> {
    let mut groups: Vec<Vec<&ResultRow>> = Vec::new();
    let mut at: HashMap<(&str, &str), usize> = HashMap::new();
    for r in trials {
        let key = (r.instance_id.as_str(), r.variant.as_str());
        match at.get(&key) {
            Some(&g) => groups[g].push(r),
            None => {
                at.insert(key, groups.len());
                groups.push(vec![r]);
            }
        }
    }
    groups.into_iter().map(|g| mean_row(&g)).collect()
}

/// The mean of one pair's trials (see [`per_instance_means`]).
fn mean_row(group: &[&ResultRow]) -> ResultRow {
    let (first, last) = (group[0], group[group.len() - 1]);
    if group.len() == 1 {
        return first.clone();
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let scored: Vec<&[f64]> = group.iter().filter_map(|r| r.metrics.as_deref()).collect();
    let metrics = (!scored.is_empty()).then(|| {
        (0..scored[0].len())
            .map(|i| mean(&scored.iter().map(|m| m[i]).collect::<Vec<_>>()))
            .collect()
    });
    let status = if group
        .iter()
        .any(|r| r.metrics.is_some() && r.status == "ok")
    {
        "ok".to_string()
    } else {
        group
            .iter()
            .find(|r| r.metrics.is_some())
            .map_or(&last.status, |r| &r.status)
            .clone()
    };
    let ran: Vec<&ResultRow> = group.iter().copied().filter(|r| r.ran()).collect();
    let costed = if ran.is_empty() { group } else { &ran[..] };
    let cost = |f: fn(&ResultRow) -> f64| mean(&costed.iter().map(|r| f(r)).collect::<Vec<_>>());
    let agents: Vec<&AgentFigures> = costed.iter().filter_map(|r| r.agent.as_ref()).collect();
    let agent = agents.first().map(|a0| {
        let of =
            |f: fn(&AgentFigures) -> f64| mean(&agents.iter().map(|a| f(a)).collect::<Vec<_>>());
        let priced: Vec<f64> = agents.iter().filter_map(|a| a.cost_usd).collect();
        AgentFigures {
            llm_turns: of(|a| a.llm_turns),
            prompt_tokens: of(|a| a.prompt_tokens),
            cached_tokens: of(|a| a.cached_tokens),
            completion_tokens: of(|a| a.completion_tokens),
            tokens_estimated: agents.iter().any(|a| a.tokens_estimated),
            llm_ms: of(|a| a.llm_ms),
            cost_usd: (priced.len() == agents.len()).then(|| mean(&priced)),
            stop_reason: a0.stop_reason.clone(),
        }
    });
    let answers: Vec<AnswerCounts> = group.iter().filter_map(|r| r.answer).collect();
    let answer = (!answers.is_empty()).then(|| {
        let avg = |f: fn(&AnswerCounts) -> usize| {
            mean(&answers.iter().map(|a| f(a) as f64).collect::<Vec<_>>()).round() as usize
        };
        AnswerCounts {
            lines: avg(|a| a.lines),
            dropped: avg(|a| a.dropped),
        }
    });
    ResultRow {
        instance_id: first.instance_id.clone(),
        repo: first.repo.clone(),
        variant: first.variant.clone(),
        trial: Trial::FIRST,
        status,
        metrics,
        n_calls: cost(|r| r.n_calls),
        tool_ms: cost(|r| r.tool_ms),
        index_ms: cost(|r| r.index_ms),
        wall_ms: cost(|r| r.wall_ms),
        response_tokens: cost(|r| r.response_tokens),
        schema_tokens: cost(|r| r.schema_tokens),
        agent,
        answer,
    }
}

/// One call of a run's `calls.csv`, as far as latency statistics need it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    pub variant: String,
    pub tool: String,
    /// `None` when the file has no value.
    pub latency_ms: Option<f64>,
}

/// Streams a run's `calls.csv` (variant, tool and latency of every call) into `f`,
/// without holding the calls.
pub fn for_each_call(dir: &Path, mut f: impl FnMut(CallRow)) -> anyhow::Result<()> {
    let path = dir.join("calls.csv");
    for_each_record(
        &path,
        &["instance_id", "variant", "tool", "latency_ms"],
        &[],
        |r| {
            f(CallRow {
                variant: r.text(1).to_string(),
                tool: r.text(2).to_string(),
                latency_ms: r.number(3)?,
            });
            Ok(())
        },
    )
}

/// Reads a run directory: `run.json` (if any) and its instance rows.
pub fn load(dir: &Path) -> anyhow::Result<Run> {
    if !dir.is_dir() {
        anyhow::bail!(
            "run directory {} not found (pass the --out of a `navbench run`)",
            dir.display()
        );
    }
    let info = read_info(dir)?;
    let trials = read_instances(dir)?;
    let rows = per_instance_means(&trials);
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(Run {
        dir: dir.to_path_buf(),
        label,
        info,
        rows,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::output::{InstanceRow, RunOutput, STATUS_ERROR, STATUS_OK};

    #[test]
    fn loads_rows_last_wins_and_unscored_rows_have_no_metrics() {
        let dir = tempfile::tempdir().unwrap();
        let n = metric_columns().len();
        {
            let out = RunOutput::open(dir.path()).unwrap();
            let base = InstanceRow {
                instance_id: "i1".into(),
                repo: "o/r".into(),
                variant: "text".into(),
                status: STATUS_ERROR.into(),
                error: "boom, with a comma\nand a newline".into(),
                ..InstanceRow::default()
            };
            out.write_instance(&base).unwrap();
            out.write_instance(&InstanceRow {
                status: STATUS_OK.into(),
                metrics: vec![1.0; n],
                n_calls: 4,
                tool_ms: 12.5,
                response_tokens: 300,
                schema_tokens: 90,
                ..base.clone()
            })
            .unwrap();
            out.write_instance(&InstanceRow {
                instance_id: "i2".into(),
                ..base
            })
            .unwrap();
        }
        let run = load(dir.path()).unwrap();
        assert_eq!(run.rows.len(), 2);
        let i1 = &run.rows[0];
        assert_eq!(i1.instance_id, "i1");
        assert_eq!(i1.status, STATUS_OK);
        assert_eq!(i1.metrics.as_deref(), Some(&vec![1.0; n][..]));
        assert_eq!(
            (i1.n_calls, i1.tool_ms, i1.schema_tokens),
            (4.0, 12.5, 90.0)
        );
        assert!(i1.ran());
        let i2 = &run.rows[1];
        assert_eq!(i2.metrics, None);
        assert!(!i2.ran());
        assert!(run.info.is_none());
    }

    #[test]
    fn agent_columns_are_read_when_present() {
        use crate::policy::agent::{AgentStats, StopReason};
        let dir = tempfile::tempdir().unwrap();
        let n = metric_columns().len();
        {
            let out = RunOutput::open(dir.path()).unwrap();
            let scripted = InstanceRow {
                instance_id: "i1".into(),
                repo: "o/r".into(),
                variant: "text".into(),
                status: STATUS_OK.into(),
                metrics: vec![0.0; n],
                n_calls: 2,
                wall_ms: 40.0,
                ..InstanceRow::default()
            };
            out.write_instance(&scripted).unwrap();
            out.write_instance(&InstanceRow {
                instance_id: "i2".into(),
                n_calls: 0,
                agent: Some(AgentStats {
                    llm_turns: 1,
                    prompt_tokens: 900,
                    cached_tokens: 100,
                    completion_tokens: 40,
                    reasoning_tokens: 0,
                    tokens_estimated: true,
                    llm_ms: 1234.5,
                    cache_hits: 0,
                    cost_usd: None,
                    stop_reason: StopReason::Answered,
                    ..AgentStats::default()
                }),
                ..scripted
            })
            .unwrap();
        }
        let run = load(dir.path()).unwrap();
        assert_eq!(run.rows[0].agent, None);
        assert_eq!(run.rows[0].wall_ms, 40.0);
        let a = run.rows[1].agent.as_ref().unwrap();
        assert_eq!(
            (a.llm_turns, a.prompt_tokens, a.cached_tokens),
            (1.0, 900.0, 100.0)
        );
        assert_eq!((a.tokens(), a.llm_ms, a.cost_usd), (940.0, 1234.5, None));
        assert!(a.tokens_estimated);
        assert_eq!(a.stop_reason, "answered");
        // An agent that answered without a tool call still ran.
        assert!(run.rows[1].ran());
    }

    #[test]
    fn runs_older_than_the_agent_columns_read_as_scripted() {
        // The committed baseline's rows, written as runs before the agent columns were.
        let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/baseline");
        let mut reader = csv::Reader::from_path(baseline.join("instances.csv")).unwrap();
        let header = reader.headers().unwrap().clone();
        let keep: Vec<usize> = (0..header.len())
            .filter(|&i| !crate::record::output::agent_columns::COLUMNS.contains(&&header[i]))
            .collect();
        assert!(
            keep.len() < header.len(),
            "the baseline has the agent columns"
        );
        let dir = tempfile::tempdir().unwrap();
        let mut old = csv::Writer::from_path(dir.path().join("instances.csv")).unwrap();
        old.write_record(keep.iter().map(|&i| &header[i])).unwrap();
        for row in reader.records() {
            let row = row.unwrap();
            old.write_record(keep.iter().map(|&i| &row[i])).unwrap();
        }
        old.flush().unwrap();
        drop(old);
        let header = csv_header(&dir.path().join("instances.csv")).unwrap();
        assert!(!header.iter().any(|h| h == "stop_reason"));
        let run = load(dir.path()).unwrap();
        assert!(!run.rows.is_empty());
        assert!(run.rows.iter().all(|r| r.agent.is_none()));
        assert!(run.rows.iter().any(|r| r.ran() && r.wall_ms > 0.0));
    }

    #[test]
    fn trials_are_kept_and_averaged_per_instance() {
        let dir = tempfile::tempdir().unwrap();
        let n = metric_columns().len();
        {
            let out = RunOutput::open(dir.path()).unwrap();
            let base = InstanceRow {
                instance_id: "i1".into(),
                repo: "o/r".into(),
                variant: "text".into(),
                status: STATUS_OK.into(),
                n_calls: 2,
                wall_ms: 10.0,
                ..InstanceRow::default()
            };
            for (t, acc, status) in [
                (1, 1.0, STATUS_OK),
                (2, 0.0, STATUS_OK),
                (3, 0.0, STATUS_ERROR),
            ] {
                let scored = status == STATUS_OK;
                out.write_instance(&InstanceRow {
                    trial: Trial::new(t).unwrap(),
                    status: status.into(),
                    metrics: if scored { vec![acc; n] } else { vec![] },
                    wall_ms: 10.0 * t as f64,
                    n_calls: if scored { 2 } else { 0 },
                    ..base.clone()
                })
                .unwrap();
            }
            out.write_instance(&InstanceRow {
                instance_id: "i2".into(),
                metrics: vec![1.0; n],
                ..base
            })
            .unwrap();
        }
        let run = load(dir.path()).unwrap();
        assert_eq!(run.trials.len(), 4);
        let trials: Vec<u32> = run.trials.iter().map(|r| r.trial.get()).collect();
        assert_eq!(trials, [1, 2, 3, 1]);
        assert_eq!(run.rows.len(), 2);
        let i1 = &run.rows[0];
        // Accuracy over the two trials that scored; costs over the two that ran.
        assert_eq!(i1.metrics.as_deref(), Some(&vec![0.5; n][..]));
        assert_eq!(
            (i1.status.as_str(), i1.wall_ms, i1.n_calls),
            ("ok", 15.0, 2.0)
        );
        // A single trial is kept as it is.
        assert_eq!(run.rows[1], run.trials[3]);
    }

    #[test]
    fn missing_dirs_and_files_are_explained() {
        let e = load(Path::new("/nonexistent/run")).unwrap_err().to_string();
        assert!(e.contains("not found"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("instances.csv") && e.contains("navbench run"),
            "{e}"
        );
        std::fs::write(
            dir.path().join("instances.csv"),
            "instance_id,variant\na,b\n",
        )
        .unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("lacks column") && e.contains("file_acc_1"),
            "{e}"
        );
    }
}
