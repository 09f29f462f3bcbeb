//! Run outputs: `calls.csv`, `instances.csv`, `summary.csv` and `run.json` in the run
//! directory. Rows are appended and flushed as the run goes, so an interrupted run keeps
//! what it measured; [`RunOutput::open`] reads back finished pairs so a re-run with the
//! same `--out` skips them, and holds the directory's [`RunLock`] so that no second run
//! appends to it at the same time.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::policy::{CallRecord, RecordSink, Trial};
use crate::run::phases::{PhaseTotals, Phases};
use crate::score::metrics::{Level, column_names};

pub mod agent_columns;
pub mod answer_columns;
pub(crate) mod append;
pub mod init_columns;
mod lock;

use append::{AppendCsv, Pair};
pub use lock::{LOCK_FILE, RunLock};

/// Status of one instance × variant row.
pub const STATUS_OK: &str = "ok";
/// The patch edits no existing function: reported, left out of the scores (as LocAgent).
pub const STATUS_NO_GOLD: &str = "no_gold";
/// Something failed (checkout, server, policy); `error` says what.
pub const STATUS_ERROR: &str = "error";
/// An agent answered, but its answer named no location: scored as empty, the raw
/// answer kept in its transcript.
pub const STATUS_ANSWER_UNPARSED: &str = "answer_unparsed";

/// True for a status that finishes a pair (a resumed run skips it; errors are retried).
pub fn is_finished(status: &str) -> bool {
    matches!(status, STATUS_OK | STATUS_NO_GOLD | STATUS_ANSWER_UNPARSED)
}

/// One row of `instances.csv`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstanceRow {
    pub instance_id: String,
    pub repo: String,
    pub variant: String,
    /// Which play of the pair (`run --repeats`); the last column, 1 without repeats.
    pub trial: Trial,
    pub status: String,
    pub error: String,
    /// Metric values in [`metric_columns`] order; empty when the instance is not scored.
    pub metrics: Vec<f64>,
    pub n_calls: usize,
    pub n_errors: usize,
    pub tool_ms: f64,
    pub index_ms: f64,
    pub wall_ms: f64,
    pub response_bytes: usize,
    pub response_tokens: usize,
    pub schema_tokens: usize,
    pub gold_files: Vec<String>,
    pub gold_functions: Vec<String>,
    pub pred_files: Vec<String>,
    pub pred_modules: Vec<String>,
    pub pred_functions: Vec<String>,
    /// What went wrong without failing the row (e.g. a file a partial mirror lacks).
    pub warnings: Vec<String>,
    /// Where the row's time went.
    pub phases: Phases,
    /// `init_ms` split into its parts, when the server's indexing calls report them.
    pub init_parts: Option<init_columns::InitParts>,
    /// What the LLM agent cost, for an agent's row (`None` for a scripted policy).
    pub agent: Option<crate::policy::agent::AgentStats>,
    /// What reading the agent's answer found (built-in agent and `--agent-cmd`);
    /// `None` for a scripted policy and an agent that never answered.
    pub answer: Option<answer_columns::AnswerCounts>,
}

/// Every metric column, levels in order.
pub fn metric_columns() -> Vec<String> {
    Level::ALL.iter().flat_map(|l| column_names(*l)).collect()
}

/// The header of `instances.csv`.
pub fn instance_header() -> Vec<String> {
    let mut h: Vec<String> = ["instance_id", "repo", "variant", "status", "error"]
        .map(String::from)
        .to_vec();
    h.extend(metric_columns());
    h.extend(
        [
            "n_calls",
            "n_errors",
            "tool_ms",
            "index_ms",
            "wall_ms",
            "response_bytes",
            "response_tokens",
            "schema_tokens",
            "gold_files",
            "gold_functions",
            "pred_files",
            "pred_modules",
            "pred_functions",
            "warnings",
        ]
        .map(String::from),
    );
    h.extend(Phases::columns());
    h.extend(init_columns::COLUMNS.map(String::from));
    h.extend(agent_columns::COLUMNS.map(String::from));
    h.extend(answer_columns::COLUMNS.map(String::from));
    // Last, so a directory written before it still takes appended rows: its readers
    // find every column by name, and a row's extra last cell is read as nothing.
    h.push(TRIAL_COLUMN.to_string());
    h
}

/// The column of `instances.csv` and `calls.csv` naming the play of the pair
/// ([`Trial`]); absent in files written before `--repeats`, read as trial 1.
pub const TRIAL_COLUMN: &str = crate::policy::trial::COLUMN;

/// The header of `calls.csv` (`trial` last, as in `instances.csv`).
pub const CALL_HEADER: [&str; 11] = [
    "instance_id",
    "variant",
    "step",
    "tool",
    "args",
    "latency_ms",
    "response_bytes",
    "response_tokens",
    "is_error",
    "error",
    TRIAL_COLUMN,
];

/// The cells of one call's `calls.csv` row before its `trial` (the [`CALL_HEADER`]
/// order): one writer for a run's rows and the standalone proxy's.
pub fn call_cells(instance_id: &str, variant: &str, c: &CallRecord) -> Vec<String> {
    vec![
        instance_id.to_string(),
        variant.to_string(),
        c.step.to_string(),
        c.tool.clone(),
        c.args.clone(),
        format!("{:.3}", c.latency_ms),
        c.response_bytes.to_string(),
        c.response_tokens.to_string(),
        c.is_error.to_string(),
        c.error.clone(),
    ]
}

/// Run settings saved as `run.json`, so later commands know what a run measured and
/// `compare` / `merge` can refuse runs that measured different things. Fields added
/// after the first release default to empty when an older `run.json` lacks them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RunInfo {
    /// Dataset name (`mini`, `dev`, or the file's stem).
    pub dataset: String,
    pub variants: Vec<String>,
    pub tokenizer: String,
    /// RFC 3339 start time (for a merged run, the earliest shard's).
    pub started: String,
    pub navbench_version: String,
    /// Content fingerprint of the whole dataset ([`crate::run::shard::dataset_fingerprint`]),
    /// before `--instances`, `--limit` and `--shard` select from it.
    #[serde(default)]
    pub dataset_fingerprint: String,
    /// Valid instances in the whole dataset.
    #[serde(default)]
    pub dataset_instances: usize,
    /// The `--instances` filter (empty: all).
    #[serde(default)]
    pub instance_filter: Vec<String>,
    /// The `--limit`, if any.
    #[serde(default)]
    pub limit: Option<usize>,
    /// `--repeats`: the most trials of each pair the directory was asked for; absent
    /// for one (see [`RunInfo::repeats`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// The `--shard` this run covered, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::run::shard::Shard>,
    /// Per-call timeout in seconds.
    #[serde(default)]
    pub timeout_secs: Option<f64>,
    /// For a run made by `navbench merge`: the runs it combines (`dir (shard I/N)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// Where the run's time went (written when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<PhaseTotals>,
    /// The run's wall time in milliseconds (written when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// The LLM agent that played every variant (`--agent`); absent: scripted policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::policy::agent::config::AgentInfo>,
    /// The external agent's command that played every variant (`--agent-cmd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_cmd: Option<crate::policy::agent_cmd::template::AgentCommandInfo>,
}

impl RunInfo {
    /// Trials asked for per pair: `repeats`, or 1 for a run without it.
    pub fn repeats(&self) -> u32 {
        self.repeats.unwrap_or(1).max(1)
    }
}

/// Reads `run.json` from a run directory; `None` when the file is absent.
pub fn read_info(dir: &Path) -> anyhow::Result<Option<RunInfo>> {
    let path = dir.join("run.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let info = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not a navbench run.json: {e}", path.display()))?;
    Ok(Some(info))
}

/// Appending CSV writers of one run directory, crash-safe (see [`append`]): whole rows
/// appended, a torn last row repaired on open, and the rows of a pair that did not
/// finish (an error, or a run killed between its calls and its row) replaced by the
/// next attempt's, so each pair's rows in both files come from one attempt; replaced
/// rows are moved to `calls-superseded.csv` / `instances-superseded.csv`, never
/// deleted. Call rows are written as the calls happen ([`RunOutput::call_sink`]) and
/// synced with the pair's `instances.csv` row; calls of a pair that has no row when
/// the directory is opened (a killed run) are moved aside at once, so `calls.csv`
/// holds only the calls of `instances.csv`'s rows and of the pairs being played.
/// After a failed write (disk full, `--out` not writable) every later write is refused
/// with the same message, so the run can stop with nothing already written damaged.
pub struct RunOutput {
    dir: PathBuf,
    /// Held for the output's life: no other run writes this directory meanwhile.
    _lock: RunLock,
    calls: Mutex<AppendCsv>,
    instances: Mutex<AppendCsv>,
    done: HashSet<Pair>,
    /// Why writing failed, once it has.
    broken: Mutex<Option<String>>,
}

fn open_append(path: &Path, header: &[String]) -> anyhow::Result<(AppendCsv, HashSet<Pair>)> {
    AppendCsv::open(path, header).map_err(|e| {
        anyhow::anyhow!(
            "cannot open {} for appending: {e}; --out must be a writable directory with free space (pass another --out, or fix it and re-run)",
            path.display()
        )
    })
}

fn join(v: &[String]) -> String {
    v.join(";")
}

fn fmt_f(x: f64) -> String {
    format!("{x:.4}")
}

impl RunOutput {
    /// Locks (creating) `dir` and opens its CSVs; rows already there with status `ok`
    /// or `no_gold` mark finished pairs (errors are retried). Fails at once, naming the
    /// holder, when another run has the directory.
    pub fn open(dir: &Path) -> anyhow::Result<RunOutput> {
        RunOutput::open_locked(RunLock::acquire(dir)?)
    }

    /// [`RunOutput::open`] on a directory already locked (a run locks its `--out`
    /// first, before any slow preparation, so a second run is refused at once).
    pub fn open_locked(lock: RunLock) -> anyhow::Result<RunOutput> {
        let dir = lock.dir().to_path_buf();
        let dir = dir.as_path();
        // Repairing a torn row is only safe with the lock held: a torn row of a live
        // run is a row still being written.
        let inst_path = dir.join("instances.csv");
        // Repaired before it is read, so a torn row never counts as finished.
        let (mut instances, inst_pairs) = open_append(&inst_path, &instance_header())?;
        let mut done = HashSet::new();
        for row in read_instance_rows(&inst_path)? {
            if is_finished(&row.status) {
                done.insert((row.instance_id, row.variant, row.trial));
            }
        }
        let calls_path = dir.join("calls.csv");
        let (mut calls, call_pairs) =
            open_append(&calls_path, CALL_HEADER.map(String::from).as_ref())?;
        // Calls of pairs without a row: a killed attempt. They go aside now (the pair
        // runs again), so reports never count them beside the next attempt's.
        let cut: HashSet<Pair> = &call_pairs - &inst_pairs;
        let moved = calls.supersede(&cut).map_err(|e| {
            anyhow::anyhow!(
                "cannot move the calls of interrupted pairs out of {}: {e}; --out must be a writable directory with free space",
                calls_path.display()
            )
        })?;
        if moved > 0 {
            eprintln!(
                "navbench: {}: moved {moved} call(s) of {} pair(s) an interrupted run left unfinished to {}; those pairs run again",
                calls_path.display(),
                cut.len(),
                append::superseded_path(&calls_path).display()
            );
        }
        instances.set_replaceable(&inst_pairs - &done);
        calls.set_replaceable(&(&call_pairs & &inst_pairs) - &done);
        Ok(RunOutput {
            dir: dir.to_path_buf(),
            _lock: lock,
            calls: Mutex::new(calls),
            instances: Mutex::new(instances),
            done,
            broken: Mutex::new(None),
        })
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when a previous run already finished this trial of the pair.
    pub fn is_done(&self, instance_id: &str, variant: &str, trial: Trial) -> bool {
        self.done
            .contains(&(instance_id.to_string(), variant.to_string(), trial))
    }

    /// Appends one call of an instance × variant as it happens, unsynced (a killed
    /// run keeps it; [`RunOutput::write_instance`] syncs the pair's calls before its
    /// row). The first call of a retried pair moves the earlier attempt's aside.
    pub fn append_call(
        &self,
        instance_id: &str,
        variant: &str,
        trial: Trial,
        c: &CallRecord,
    ) -> anyhow::Result<()> {
        let mut row = call_cells(instance_id, variant, c);
        row.push(trial.to_string());
        let pair = (instance_id.to_string(), variant.to_string(), trial);
        self.append_with(&self.calls, &pair, [row], false)
    }

    /// A sink that appends each call of one trial of `instance_id` × `variant` to
    /// `calls.csv` as the [`crate::policy::Driver`] records it. A failed write is
    /// logged once here and stops the run through [`RunOutput::broken`].
    pub fn call_sink(
        self: &Arc<Self>,
        instance_id: &str,
        variant: &str,
        trial: Trial,
    ) -> RecordSink {
        let (out, id, variant) = (self.clone(), instance_id.to_string(), variant.to_string());
        Arc::new(move |c: &CallRecord| {
            let first_failure = out.broken().is_none();
            if let Err(e) = out.append_call(&id, &variant, trial, c)
                && first_failure
            {
                tracing::error!("cannot write calls.csv: {e:#}");
            }
        })
    }

    /// Why writing failed, once it has (every later write is refused).
    pub fn broken(&self) -> Option<String> {
        self.broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Appends `rows` of `pair` to one file (synced when `sync`), unless writing
    /// already failed; a failure is remembered so the run can stop.
    fn append_with(
        &self,
        file: &Mutex<AppendCsv>,
        pair: &Pair,
        rows: impl IntoIterator<Item = Vec<String>>,
        sync: bool,
    ) -> anyhow::Result<()> {
        if let Some(why) = self.broken() {
            anyhow::bail!("{why}");
        }
        let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
        let written = append::encode(rows).and_then(|bytes| {
            if sync {
                f.append_pair(pair, &bytes)
            } else {
                f.append_pair_unsynced(pair, &bytes)
            }
        });
        if let Err(e) = written {
            let why = format!(
                "cannot write {}: {e}. Rows already written are intact (a row cut by the failure was taken back). Free disk space or make --out writable, then re-run with the same --out to resume",
                f.path().display()
            );
            *self.broken.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
            anyhow::bail!("{why}");
        }
        Ok(())
    }

    /// Appends one instance × variant row.
    pub fn write_instance(&self, r: &InstanceRow) -> anyhow::Result<()> {
        let mut rec: Vec<String> = vec![
            r.instance_id.clone(),
            r.repo.clone(),
            r.variant.clone(),
            r.status.clone(),
            r.error.clone(),
        ];
        let n_metrics = metric_columns().len();
        if r.metrics.len() == n_metrics {
            rec.extend(r.metrics.iter().map(|x| fmt_f(*x)));
        } else {
            rec.extend(std::iter::repeat_n(String::new(), n_metrics));
        }
        rec.extend([
            r.n_calls.to_string(),
            r.n_errors.to_string(),
            format!("{:.3}", r.tool_ms),
            format!("{:.3}", r.index_ms),
            format!("{:.3}", r.wall_ms),
            r.response_bytes.to_string(),
            r.response_tokens.to_string(),
            r.schema_tokens.to_string(),
            join(&r.gold_files),
            join(&r.gold_functions),
            join(&r.pred_files),
            join(&r.pred_modules),
            join(&r.pred_functions),
            join(&r.warnings),
        ]);
        rec.extend(r.phases.values().iter().map(|x| format!("{x:.3}")));
        rec.extend(init_columns::cells(r.init_parts.as_ref()));
        rec.extend(agent_columns::cells(r.agent.as_ref()));
        rec.extend(answer_columns::cells(r.answer.as_ref()));
        rec.push(r.trial.to_string());
        let pair = (r.instance_id.clone(), r.variant.clone(), r.trial);
        {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            // A row without calls (e.g. the server did not start) still replaces the
            // calls an earlier, unfinished attempt left.
            if let Err(e) = calls.forget(&pair) {
                tracing::warn!(
                    "cannot move the calls of an earlier attempt of {pair:?} aside: {e}"
                );
            }
            // The pair's calls reach the disk before the row that marks it finished.
            if let Err(e) = calls.sync() {
                tracing::warn!("cannot sync calls.csv: {e}");
            }
        }
        self.append_with(&self.instances, &pair, [rec], true)
    }

    /// Writes `run.json`.
    pub fn write_info(&self, info: &RunInfo) -> anyhow::Result<()> {
        let path = self.dir.join("run.json");
        append::write_atomic(&path, serde_json::to_string_pretty(info)?.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
    }
}

/// Reads `instances.csv` back (empty when absent). When a trial of a pair appears more
/// than once (an error retried), the last row wins; a file without the `trial`
/// column reads as trial 1, a row whose trial is not a positive number is skipped.
pub fn read_instance_rows(path: &Path) -> anyhow::Result<Vec<InstanceRow>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let header: Vec<String> = rdr.headers()?.iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let metric_idx: Vec<Option<usize>> = metric_columns().iter().map(|m| col(m)).collect();
    let mut by_pair: BTreeMap<Pair, (usize, InstanceRow)> = BTreeMap::new();
    for (i, rec) in rdr.records().enumerate() {
        let Ok(rec) = rec else { continue };
        let get = |name: &str| col(name).and_then(|c| rec.get(c)).unwrap_or("").to_string();
        let num = |name: &str| get(name).parse::<f64>().unwrap_or(0.0);
        let list = |name: &str| {
            let s = get(name);
            if s.is_empty() {
                Vec::new()
            } else {
                s.split(';').map(String::from).collect()
            }
        };
        let metrics: Vec<f64> = metric_idx
            .iter()
            .map(|c| {
                c.and_then(|c| rec.get(c))
                    .and_then(|v| v.parse::<f64>().ok())
            })
            .collect::<Option<Vec<f64>>>()
            .unwrap_or_default();
        let Some(trial) = Trial::parse_cell(&get(TRIAL_COLUMN)) else {
            continue;
        };
        let row = InstanceRow {
            instance_id: get("instance_id"),
            repo: get("repo"),
            variant: get("variant"),
            trial,
            status: get("status"),
            error: get("error"),
            metrics,
            n_calls: num("n_calls") as usize,
            n_errors: num("n_errors") as usize,
            tool_ms: num("tool_ms"),
            index_ms: num("index_ms"),
            wall_ms: num("wall_ms"),
            response_bytes: num("response_bytes") as usize,
            response_tokens: num("response_tokens") as usize,
            schema_tokens: num("schema_tokens") as usize,
            gold_files: list("gold_files"),
            gold_functions: list("gold_functions"),
            pred_files: list("pred_files"),
            pred_modules: list("pred_modules"),
            pred_functions: list("pred_functions"),
            warnings: list("warnings"),
            phases: Phases::from_values(
                &Phases::columns().iter().map(|c| num(c)).collect::<Vec<_>>(),
            ),
            init_parts: init_columns::read(get),
            agent: agent_columns::read(get),
            answer: answer_columns::read(get),
        };
        by_pair.insert(
            (row.instance_id.clone(), row.variant.clone(), row.trial),
            (i, row),
        );
    }
    let mut rows: Vec<(usize, InstanceRow)> = by_pair.into_values().collect();
    rows.sort_by_key(|(i, _)| *i);
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

/// Per-variant means, as `summary.csv` and the printed table show them.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantSummary {
    pub variant: String,
    pub n_rows: usize,
    pub n_scored: usize,
    pub n_no_gold: usize,
    pub n_errors: usize,
    /// Means of [`metric_columns`] over scored rows, LocAgent rounding (fractions).
    pub metrics: Vec<f64>,
    pub mean_calls: f64,
    pub mean_tool_ms: f64,
    pub mean_index_ms: f64,
    pub mean_wall_ms: f64,
    pub mean_response_tokens: f64,
    pub mean_schema_tokens: f64,
    /// Means over the agent's rows that ran (zero for a scripted variant): model turns,
    /// prompt (of them cached) and completion tokens, model time, and the cost when
    /// prices were given.
    pub mean_llm_turns: f64,
    pub mean_prompt_tokens: f64,
    pub mean_cached_tokens: f64,
    pub mean_completion_tokens: f64,
    pub mean_llm_ms: f64,
    pub mean_cost_usd: f64,
}

/// Summarizes rows per variant, in `variants` order.
pub fn summarize(rows: &[InstanceRow], variants: &[String]) -> Vec<VariantSummary> {
    let n_metrics = metric_columns().len();
    variants
        .iter()
        .map(|v| {
            let mine: Vec<&InstanceRow> = rows.iter().filter(|r| &r.variant == v).collect();
            let scored: Vec<&&InstanceRow> = mine
                .iter()
                .filter(|r| r.metrics.len() == n_metrics)
                .collect();
            // The policy ran: calls made or, for an agent, model turns (a model may
            // answer without calling a tool); `run_dir::ResultRow::ran` is the same rule.
            let ran: Vec<&&InstanceRow> = mine
                .iter()
                .filter(|r| {
                    r.status != STATUS_NO_GOLD
                        && (r.n_calls > 0 || r.agent.as_ref().is_some_and(|a| a.llm_turns > 0))
                })
                .collect();
            let mean = |f: &dyn Fn(&InstanceRow) -> f64| {
                if ran.is_empty() {
                    0.0
                } else {
                    ran.iter().map(|r| f(r)).sum::<f64>() / ran.len() as f64
                }
            };
            let agent_rows: Vec<&crate::policy::agent::AgentStats> =
                ran.iter().filter_map(|r| r.agent.as_ref()).collect();
            let agent_mean = |f: &dyn Fn(&crate::policy::agent::AgentStats) -> f64| {
                if agent_rows.is_empty() {
                    0.0
                } else {
                    agent_rows.iter().map(|a| f(a)).sum::<f64>() / agent_rows.len() as f64
                }
            };
            let metrics = (0..n_metrics)
                .map(|i| {
                    let vals: Vec<f64> = scored.iter().map(|r| r.metrics[i]).collect();
                    crate::score::metrics::locagent_mean(&vals).unwrap_or(0.0)
                })
                .collect();
            VariantSummary {
                variant: v.clone(),
                n_rows: mine.len(),
                n_scored: scored.len(),
                n_no_gold: mine.iter().filter(|r| r.status == STATUS_NO_GOLD).count(),
                n_errors: mine.iter().filter(|r| r.status == STATUS_ERROR).count(),
                metrics,
                mean_calls: mean(&|r| r.n_calls as f64),
                mean_tool_ms: mean(&|r| r.tool_ms),
                mean_index_ms: mean(&|r| r.index_ms),
                mean_wall_ms: mean(&|r| r.wall_ms),
                mean_response_tokens: mean(&|r| r.response_tokens as f64),
                mean_schema_tokens: mean(&|r| r.schema_tokens as f64),
                mean_llm_turns: agent_mean(&|a| a.llm_turns as f64),
                mean_prompt_tokens: agent_mean(&|a| a.prompt_tokens as f64),
                mean_cached_tokens: agent_mean(&|a| a.cached_tokens as f64),
                mean_completion_tokens: agent_mean(&|a| a.completion_tokens as f64),
                mean_llm_ms: agent_mean(&|a| a.llm_ms),
                mean_cost_usd: agent_mean(&|a| a.cost_usd.unwrap_or(0.0)),
            }
        })
        .collect()
}

/// Writes `summary.csv`.
pub fn write_summary(path: &Path, sums: &[VariantSummary]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "variant",
        "n_instances",
        "n_scored",
        "n_no_gold",
        "n_errors",
    ]
    .map(String::from)
    .to_vec();
    header.extend(metric_columns());
    header.extend(
        [
            "n_calls",
            "tool_ms",
            "index_ms",
            "wall_ms",
            "response_tokens",
            "schema_tokens",
            "llm_turns",
            "prompt_tokens",
            "cached_tokens",
            "completion_tokens",
            "llm_ms",
            "cost_usd",
        ]
        .map(String::from),
    );
    w.write_record(&header)?;
    for s in sums {
        let mut rec = vec![
            s.variant.clone(),
            s.n_rows.to_string(),
            s.n_scored.to_string(),
            s.n_no_gold.to_string(),
            s.n_errors.to_string(),
        ];
        rec.extend(s.metrics.iter().map(|x| fmt_f(*x)));
        rec.extend(
            [
                s.mean_calls,
                s.mean_tool_ms,
                s.mean_index_ms,
                s.mean_wall_ms,
                s.mean_response_tokens,
                s.mean_schema_tokens,
                s.mean_llm_turns,
                s.mean_prompt_tokens,
                s.mean_cached_tokens,
                s.mean_completion_tokens,
                s.mean_llm_ms,
            ]
            .map(|x| format!("{x:.2}")),
        );
        rec.push(format!("{:.6}", s.mean_cost_usd));
        w.write_record(&rec)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    // Whole or not at all: a run killed while writing it keeps the previous summary.
    append::write_atomic(path, &bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// The summary as a fixed-width table (accuracies in percent, as the paper prints them).
pub fn format_table(sums: &[VariantSummary]) -> String {
    let cols = metric_columns();
    let pick = |s: &VariantSummary, name: &str| {
        cols.iter()
            .position(|c| c == name)
            .and_then(|i| s.metrics.get(i))
            .map_or("-".to_string(), |v| format!("{:.1}", v * 100.0))
    };
    let mut out = format!(
        "{:<10} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>7} {:>9} {:>9}\n",
        "variant",
        "n",
        "file@1",
        "file@3",
        "file@5",
        "mod@5",
        "mod@10",
        "fn@5",
        "fn@10",
        "calls",
        "resp_tok",
        "schema",
        "tool_ms",
        "wall_ms"
    );
    for s in sums {
        out.push_str(&format!(
            "{:<10} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6.1} {:>9.0} {:>7.0} {:>9.1} {:>9.1}\n",
            s.variant,
            s.n_scored,
            pick(s, "file_acc_1"),
            pick(s, "file_acc_3"),
            pick(s, "file_acc_5"),
            pick(s, "module_acc_5"),
            pick(s, "module_acc_10"),
            pick(s, "function_acc_5"),
            pick(s, "function_acc_10"),
            s.mean_calls,
            s.mean_response_tokens,
            s.mean_schema_tokens,
            s.mean_tool_ms,
            s.mean_wall_ms,
        ));
        if s.n_errors > 0 || s.n_no_gold > 0 {
            out.push_str(&format!(
                "{:<10} ({} error(s), {} without edited functions; see instances.csv)\n",
                "", s.n_errors, s.n_no_gold
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
