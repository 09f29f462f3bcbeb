//! What the pipeline writes on a pair's row beyond its scores: the status settled from
//! the policy's result, a timed-out call and a dead server ([`settle_status`]); the
//! calls' costs ([`account_calls`]); and how a trial of `--repeats` is named in
//! progress lines and notes.

use crate::data::dataset::Locations;
use crate::policy::{CallRecord, Trial};
use crate::record::output::{InstanceRow, STATUS_ERROR, STATUS_OK};
use crate::run::config::{Policy, RunConfig};

/// The row's status and error from the policy's result, a timed-out call and a server
/// that died; returns the answer to score (empty when the policy failed).
pub(crate) fn settle_status(
    row: &mut InstanceRow,
    result: anyhow::Result<Locations>,
    records: &[CallRecord],
    died: Option<String>,
) -> Locations {
    let pred = match result {
        Ok(p) => {
            row.status = STATUS_OK.into();
            p
        }
        Err(e) => {
            row.status = STATUS_ERROR.into();
            row.error = format!("{e:#}");
            Locations::default()
        }
    };
    // A failed call (e.g. a timeout that killed the server) marks the row even when
    // the policy could answer with what it had.
    if row.status == STATUS_OK
        && let Some(bad) = records
            .iter()
            .find(|c| c.is_error && c.error.contains("timed out"))
    {
        row.status = STATUS_ERROR.into();
        row.error = format!("call {} ({}) {}", bad.step, bad.tool, bad.error);
    }
    if let Some(why) = died
        && !row.error.contains(&why)
    {
        row.status = STATUS_ERROR.into();
        row.error = if row.error.is_empty() {
            format!("the server failed: {why}")
        } else {
            format!("the server failed: {why}; then: {}", row.error)
        };
    }
    pred
}

/// The calls' counts, latencies and sizes on the row; calls to `setup_tools` are
/// index time, the rest of `policy_ms` is policy time.
pub(crate) fn account_calls(
    row: &mut InstanceRow,
    records: &[CallRecord],
    setup_tools: &[&str],
    policy_ms: f64,
) {
    row.n_calls = records.len();
    row.n_errors = records.iter().filter(|c| c.is_error).count();
    row.tool_ms = records.iter().map(|c| c.latency_ms).sum();
    // Indexing done through a tool (e.g. codegraph's init_repository) is index time.
    // A fold from +0.0: an empty f64 `sum` is -0.0, which the CSV would print as "-0.000".
    row.phases.init_ms = records
        .iter()
        .filter(|c| setup_tools.contains(&c.tool.as_str()))
        .fold(0.0, |ms, c| ms + c.latency_ms);
    row.index_ms += row.phases.init_ms;
    row.phases.policy_ms = (policy_ms - row.phases.init_ms).max(0.0);
    row.response_bytes = records.iter().map(|c| c.response_bytes).sum();
    row.response_tokens = records.iter().map(|c| c.response_tokens).sum();
}

/// `instance × variant` for progress lines, with `(trial N/K)` when K > 1.
pub(crate) fn pair_label(instance_id: &str, variant: &str, trial: Trial, repeats: u32) -> String {
    if repeats > 1 {
        format!("{instance_id} × {variant} (trial {trial}/{repeats})")
    } else {
        format!("{instance_id} × {variant}")
    }
}

/// Said once when a scripted run repeats: its policies are deterministic, so every
/// trial gives the same calls and answer, and only the times spread.
pub(crate) fn repeats_note(cfg: &RunConfig) -> Option<String> {
    (cfg.repeats > 1 && matches!(cfg.policy, Policy::Scripted)).then(|| {
        format!(
            "the scripted policies are deterministic: the {} trials of a pair make the same calls and answers, only their times differ (repeats matter for an --agent at temperature > 0)",
            cfg.repeats
        )
    })
}
