//! Reading finished run directories back for `report` and `compare`: `run.json`, and
//! `instances.csv` / `calls.csv` through polars lazy CSV scans that read only the
//! columns asked for (the `pred_*` / `gold_*` lists and error texts never load).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use crate::output::{RunInfo, STATUS_NO_GOLD, metric_columns, read_info};

/// Cost columns of `instances.csv` that reports and comparisons use.
pub const COST_COLUMNS: [&str; 5] = [
    "n_calls",
    "tool_ms",
    "index_ms",
    "response_tokens",
    "schema_tokens",
];

/// One instance × variant result, as far as statistics need it.
#[derive(Debug, Clone, PartialEq)]
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
    pub response_tokens: f64,
    pub schema_tokens: f64,
}

impl ResultRow {
    /// True when the server ran for this row (it made calls and had gold), so its costs
    /// count in means — the same rule as `summary.csv`.
    pub fn ran(&self) -> bool {
        self.status != STATUS_NO_GOLD && self.n_calls > 0.0
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

/// A lazy scan of `path` with the given columns typed as given (the rest as inferred),
/// after checking that the file has them.
fn scan(path: &Path, typed: &[(&str, DataType)]) -> anyhow::Result<LazyFrame> {
    if !path.exists() {
        anyhow::bail!(
            "{} not found: is {} a navbench run directory (made by `navbench run --out`)?",
            path.display(),
            path.parent().unwrap_or(path).display()
        );
    }
    let header = csv_header(path)?;
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

/// Lazily scans a run's `instances.csv`: identity, status, every metric and the cost
/// columns, one row per instance × variant (the last row of a retried pair wins, as in
/// [`crate::output::read_instance_rows`]).
pub fn scan_instances(dir: &Path) -> anyhow::Result<LazyFrame> {
    let path = dir.join("instances.csv");
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
    let typed_ref: Vec<(&str, DataType)> =
        typed.iter().map(|(c, t)| (c.as_str(), t.clone())).collect();
    let lf = scan(&path, &typed_ref)?;
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
    let lf = scan(&path, &typed)?;
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
            response_tokens: cost("response_tokens", i),
            schema_tokens: cost("schema_tokens", i),
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
