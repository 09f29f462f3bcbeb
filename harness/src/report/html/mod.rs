//! `report/index.html`: the report as one self-contained page, to open from a CI
//! artifact or an email: no server, nothing fetched (a Content-Security-Policy of
//! `default-src 'none'` forbids it), the CSS, script, plots (SVG) and data inlined.
//!
//! Data flow: [`summary::to_html`] turns `report.md` into the summary (the same tables,
//! intervals, "does the tool help?" and cost tables) with the plots' SVG inlined; the
//! page's head and tail are minijinja templates (`head.html`, `tail.html`, with
//! `style.css` and `app.js`); between them [`data`] streams every run's
//! `instances.csv`, `calls.csv` and agent transcripts into JSON blocks, record by
//! record. The page's small plain script (`app.js`) builds the filterable, sortable
//! instances × variants table from the rows and renders an instance's drill-down
//! (issue, gold beside each variant's ranked predictions, calls, transcript) only when
//! it is opened, by a click or by a URL ending in `#open=<instance>`.
//!
//! Issue texts come from the dataset: `--dataset` of `navbench report`, else the runs'
//! own when they are the embedded `mini` or `dev`; for an agent's run the drill-down
//! falls back on the task prompt in the transcript.

pub mod data;
pub mod summary;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::json;

use crate::data::dataset::Dataset;
use crate::report::ReportData;
use crate::report::tables::{acc_columns, pretty_metric};

const HEAD: &str = include_str!("head.html");
const TAIL: &str = include_str!("tail.html");
const CSS: &str = include_str!("style.css");
const JS: &str = include_str!("app.js");

/// The name of the page in the report directory.
pub const FILE_NAME: &str = "index.html";

/// Reads the dataset `spec` (`mini`, `dev` or a file, as `run --dataset` takes).
fn read_dataset(spec: &str) -> anyhow::Result<Dataset> {
    Ok(match spec {
        "mini" => crate::data::mini::dataset_unbuilt()?,
        "dev" => Dataset::from_jsonl("dev", crate::run::inputs::DEV_DATASET),
        path => Dataset::load(Path::new(path))
            .with_context(|| format!("cannot read --dataset {path} for the issue texts"))?,
    })
}

/// Issue text per instance of the report: from `dataset` when given, else from each
/// run's dataset when it is embedded (`mini`, `dev`); other runs' instances have none.
fn issue_texts(
    data: &ReportData,
    dataset: Option<&str>,
) -> anyhow::Result<BTreeMap<String, String>> {
    let wanted: BTreeSet<&str> = data.rows.iter().map(|r| r.instance_id.as_str()).collect();
    let specs: BTreeSet<&str> = match dataset {
        Some(d) => BTreeSet::from([d]),
        None => data
            .runs
            .iter()
            .map(|r| r.dataset.as_str())
            .filter(|d| matches!(*d, "mini" | "dev"))
            .collect(),
    };
    let mut texts = BTreeMap::new();
    for spec in specs {
        for i in read_dataset(spec)?.instances {
            if wanted.contains(i.instance_id.as_str()) {
                texts.insert(i.instance_id, i.problem_statement);
            }
        }
    }
    Ok(texts)
}

/// The page's title: the datasets and run directories.
fn title(data: &ReportData) -> String {
    let datasets: BTreeSet<&str> = data.runs.iter().map(|r| r.dataset.as_str()).collect();
    let dirs: Vec<String> = data
        .runs
        .iter()
        .map(|r| {
            r.dir.file_name().map_or_else(
                || r.dir.display().to_string(),
                |n| n.to_string_lossy().into(),
            )
        })
        .collect();
    format!(
        "{} ({})",
        datasets.into_iter().collect::<Vec<_>>().join(", "),
        dirs.join(", ")
    )
}

/// The agent(s) that played the runs, for the header; `None` for scripted runs.
fn agents(data: &ReportData) -> Option<String> {
    let names: BTreeSet<String> = data
        .runs
        .iter()
        .filter_map(|r| r.agent.as_ref())
        .map(|a| crate::report::agent::describe(Some(a)))
        .collect();
    (!names.is_empty()).then(|| names.into_iter().collect::<Vec<_>>().join("; "))
}

/// Renders the head or tail template.
fn render(
    name: &'static str,
    source: &'static str,
    ctx: minijinja::Value,
) -> anyhow::Result<String> {
    let mut env = minijinja::Environment::new();
    env.add_template(name, source)
        .with_context(|| format!("the report template {name} does not parse"))?;
    env.get_template(name)
        .and_then(|t| t.render(ctx))
        .with_context(|| format!("cannot render the report template {name}"))
}

/// Writes `index.html` into `out`: `markdown` is `report.md`'s text, `plots` the
/// figures written beside it (their SVGs are inlined), `dataset` where issue texts
/// come from (see [`issue_texts`]). Returns the page's path.
pub fn write(
    data: &ReportData,
    markdown: &str,
    plots: &[PathBuf],
    out: &Path,
    dataset: Option<&str>,
) -> anyhow::Result<PathBuf> {
    let mut svgs = BTreeMap::new();
    for p in plots
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
    {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("cannot read the plot {}", p.display()))?;
        svgs.insert(stem.unwrap_or_default(), text);
    }
    let instances: BTreeSet<&str> = data.rows.iter().map(|r| r.instance_id.as_str()).collect();
    let head = render(
        "head.html",
        HEAD,
        minijinja::context! {
            version => env!("CARGO_PKG_VERSION"),
            title => title(data),
            rows => data.rows.len(),
            instances => instances.len(),
            variants => data.variants,
            agent => agents(data),
            css => CSS,
            summary => summary::to_html(markdown, &svgs),
        },
    )?;
    let tail = render("tail.html", TAIL, minijinja::context! { js => JS })?;
    let issues = issue_texts(data, dataset)?;

    let path = out.join(FILE_NAME);
    let tmp = out.join(format!("{FILE_NAME}.tmp"));
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut w = std::io::BufWriter::new(file);
    w.write_all(head.as_bytes())?;
    let mut found = Vec::new();
    data::csv_block(
        &mut w,
        "nb-rows",
        &data.runs,
        "instances.csv",
        |_| data::MAX_FIELD_CHARS,
        |ri, instance, variant, trial| {
            if let Some(t) = data::find_transcript(&data.runs[ri], instance, variant, trial) {
                found.push(t);
            }
        },
    )?;
    data::csv_block(
        &mut w,
        "nb-calls",
        &data.runs,
        "calls.csv",
        |col| match col {
            "args" | "error" => data::MAX_CALL_FIELD_CHARS,
            _ => data::MAX_FIELD_CHARS,
        },
        |_, _, _, _| {},
    )?;
    // A retried pair's rows name the same transcript twice: one block each.
    let mut seen = BTreeSet::new();
    found.retain(|t| seen.insert(t.path.clone()));
    for (n, t) in found.iter().enumerate() {
        data::transcript_block(&mut w, n, t)?;
    }
    let acc = acc_columns();
    let pretty: BTreeMap<String, String> =
        acc.iter().map(|a| (a.clone(), pretty_metric(a))).collect();
    data::meta_block(
        &mut w,
        &json!({
            "variants": data.variants,
            "acc": acc,
            "pretty": pretty,
            "issues": issues,
            "transcripts": data::transcript_ids(&found),
        }),
    )?;
    w.write_all(tail.as_bytes())?;
    w.into_inner()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?
        .sync_all()
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
