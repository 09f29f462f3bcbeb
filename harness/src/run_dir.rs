//! Reading finished run directories back for `report` and `compare`: `run.json`, and
//! `instances.csv` / `calls.csv` through polars lazy CSV scans that read only the
//! columns asked for (the `pred_*` / `gold_*` lists and error texts never load).
//!
//! The agent columns ([`crate::output::agent_columns`]) are read when the file has them:
//! a run written before they existed (the committed `results/baseline/`) reads as a
//! scripted run, every [`ResultRow::agent`] `None`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use crate::output::{RunInfo, STATUS_NO_GOLD, metric_columns, read_info};

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
    pub rows: Vec<ResultRow>,
}

fn polars_err(path: &Path) -> impl Fn(PolarsError) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("cannot read {}: {e}", path.display())
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

/// The header of a file `scan` will read, or why it cannot be read.
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

/// A lazy scan of `path` with the given columns typed as given (the rest as inferred),
/// after checking that its `header` has them.
fn scan(path: &Path, header: &[String], typed: &[(&str, DataType)]) -> anyhow::Result<LazyFrame> {
    let missing: Vec<&str> = typed
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !header.iter().any(|h| h == c))
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "{} lacks column(s) {}: was it written by an older navbench? Re-run it",
            path.display(),
            missing.join(", ")
        );
    }
    let schema: Schema = typed
        .iter()
        .map(|(c, t)| Field::new((*c).into(), t.clone()))
        .collect();
    let src = PlRefPath::try_from_path(path).map_err(polars_err(path))?;
    LazyCsvReader::new(src)
        .with_has_header(true)
        .with_dtype_overwrite(Some(Arc::new(schema)))
        .finish()
        .map_err(polars_err(path))
}

/// Lazily scans a run's `instances.csv`: identity, status, every metric, the cost
/// columns and those agent columns the file has, one row per instance × variant (the
/// last row of a retried pair wins, as in [`crate::output::read_instance_rows`]).
pub fn scan_instances(dir: &Path) -> anyhow::Result<LazyFrame> {
    let path = dir.join("instances.csv");
    let header = existing_header(&path)?;
    let mut typed: Vec<(String, DataType)> = ["instance_id", "repo", "variant", "status"]
        .iter()
        .map(|c| (c.to_string(), DataType::String))
        .collect();
    typed.extend(metric_columns().into_iter().map(|c| (c, DataType::Float64)));
    typed.extend(
        COST_COLUMNS
            .iter()
            .map(|c| (c.to_string(), DataType::Float64)),
    );
    // Optional: only those the file has (none in a run older than the agent policy).
    let has = |c: &str| header.iter().any(|h| h == c);
    typed.extend(
        AGENT_NUMBERS
            .iter()
            .filter(|c| has(c))
            .map(|c| (c.to_string(), DataType::Float64)),
    );
    typed.extend(
        AGENT_TEXTS
            .iter()
            .filter(|c| has(c))
            .map(|c| (c.to_string(), DataType::String)),
    );
    let typed_ref: Vec<(&str, DataType)> =
        typed.iter().map(|(c, t)| (c.as_str(), t.clone())).collect();
    let lf = scan(&path, &header, &typed_ref)?;
    let cols: Vec<Expr> = typed.iter().map(|(c, _)| col(c.as_str())).collect();
    Ok(lf.select(cols).unique_stable(
        Some(cols_selector(["instance_id", "variant"])),
        UniqueKeepStrategy::Last,
    ))
}

fn cols_selector<const N: usize>(names: [&str; N]) -> Selector {
    polars::prelude::cols(names)
}

/// Lazily scans a run's `calls.csv`: variant, tool and latency of every call.
pub fn scan_calls(dir: &Path) -> anyhow::Result<LazyFrame> {
    let path = dir.join("calls.csv");
    let typed = [
        ("instance_id", DataType::String),
        ("variant", DataType::String),
        ("tool", DataType::String),
        ("latency_ms", DataType::Float64),
    ];
    let header = existing_header(&path)?;
    let lf = scan(&path, &header, &typed)?;
    Ok(lf.select([
        col("instance_id"),
        col("variant"),
        col("tool"),
        col("latency_ms"),
    ]))
}

/// A text column of a collected frame (nulls as empty strings).
pub fn str_col(df: &DataFrame, name: &str) -> anyhow::Result<Vec<String>> {
    let c = df
        .column(name)
        .map_err(|e| anyhow::anyhow!("column {name} missing: {e}"))?;
    Ok(c.str()
        .map_err(|e| anyhow::anyhow!("column {name} is not text: {e}"))?
        .iter()
        .map(|v| v.unwrap_or("").to_string())
        .collect())
}

/// A float column of a collected frame.
pub fn f64_col(df: &DataFrame, name: &str) -> anyhow::Result<Vec<Option<f64>>> {
    let c = df
        .column(name)
        .map_err(|e| anyhow::anyhow!("column {name} missing: {e}"))?;
    Ok(c.f64()
        .map_err(|e| anyhow::anyhow!("column {name} is not numeric: {e}"))?
        .iter()
        .collect())
}

/// The agent columns of a collected frame; `None` when it has no `stop_reason` (a run
/// older than the agent policy).
struct AgentColumns {
    numbers: HashMap<&'static str, Vec<Option<f64>>>,
    estimated: Vec<String>,
    stop_reason: Vec<String>,
}

impl AgentColumns {
    fn of(df: &DataFrame) -> anyhow::Result<Option<AgentColumns>> {
        if df.column("stop_reason").is_err() {
            return Ok(None);
        }
        let mut numbers = HashMap::new();
        for c in AGENT_NUMBERS {
            if df.column(c).is_ok() {
                numbers.insert(c, f64_col(df, c)?);
            }
        }
        let estimated = if df.column("tokens_estimated").is_ok() {
            str_col(df, "tokens_estimated")?
        } else {
            Vec::new()
        };
        Ok(Some(AgentColumns {
            numbers,
            estimated,
            stop_reason: str_col(df, "stop_reason")?,
        }))
    }

    /// Row `i`'s figures; `None` for a scripted row (empty `stop_reason`).
    fn row(&self, i: usize) -> Option<AgentFigures> {
        let stop_reason = self.stop_reason.get(i).filter(|s| !s.is_empty())?.clone();
        let num = |c: &str| {
            self.numbers
                .get(c)
                .and_then(|v| v.get(i).copied().flatten())
        };
        Some(AgentFigures {
            llm_turns: num("llm_turns").unwrap_or(0.0),
            prompt_tokens: num("prompt_tokens").unwrap_or(0.0),
            cached_tokens: num("cached_tokens").unwrap_or(0.0),
            completion_tokens: num("completion_tokens").unwrap_or(0.0),
            tokens_estimated: self.estimated.get(i).is_some_and(|s| s == "true"),
            llm_ms: num("llm_ms").unwrap_or(0.0),
            cost_usd: num("cost_usd"),
            stop_reason,
        })
    }
}

/// Turns a collected instances frame into rows.
pub fn rows_from_frame(df: &DataFrame) -> anyhow::Result<Vec<ResultRow>> {
    let ids = str_col(df, "instance_id")?;
    let repos = str_col(df, "repo")?;
    let variants = str_col(df, "variant")?;
    let statuses = str_col(df, "status")?;
    let metric_names = metric_columns();
    let metrics: Vec<Vec<Option<f64>>> = metric_names
        .iter()
        .map(|m| f64_col(df, m))
        .collect::<anyhow::Result<_>>()?;
    let costs: HashMap<&str, Vec<Option<f64>>> = COST_COLUMNS
        .iter()
        .map(|c| Ok((*c, f64_col(df, c)?)))
        .collect::<anyhow::Result<_>>()?;
    let cost = |name: &str, i: usize| {
        costs
            .get(name)
            .and_then(|v| v.get(i).copied().flatten())
            .unwrap_or(0.0)
    };
    let agent = AgentColumns::of(df)?;
    let mut rows = Vec::with_capacity(ids.len());
    for i in 0..ids.len() {
        let m: Option<Vec<f64>> = metrics
            .iter()
            .map(|c| c.get(i).copied().flatten())
            .collect();
        rows.push(ResultRow {
            instance_id: ids[i].clone(),
            repo: repos[i].clone(),
            variant: variants[i].clone(),
            status: statuses[i].clone(),
            metrics: m,
            n_calls: cost("n_calls", i),
            tool_ms: cost("tool_ms", i),
            index_ms: cost("index_ms", i),
            wall_ms: cost("wall_ms", i),
            response_tokens: cost("response_tokens", i),
            schema_tokens: cost("schema_tokens", i),
            agent: agent.as_ref().and_then(|a| a.row(i)),
        });
    }
    Ok(rows)
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
    let df = scan_instances(dir)?
        .collect()
        .map_err(polars_err(&dir.join("instances.csv")))?;
    let rows = rows_from_frame(&df)?;
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(Run {
        dir: dir.to_path_buf(),
        label,
        info,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{InstanceRow, RunOutput, STATUS_ERROR, STATUS_OK};

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
                    tokens_estimated: true,
                    llm_ms: 1234.5,
                    cache_hits: 0,
                    cost_usd: None,
                    stop_reason: StopReason::Answered,
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
            .filter(|&i| !crate::output::agent_columns::COLUMNS.contains(&&header[i]))
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
