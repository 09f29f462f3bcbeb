//! Tests of [`super`]: rows round-trip, resumes, summaries, calls as they happen.

use super::*;

fn row(id: &str, status: &str, metrics: Vec<f64>) -> InstanceRow {
    InstanceRow {
        instance_id: id.into(),
        repo: "o/r".into(),
        variant: "text".into(),
        status: status.into(),
        metrics,
        n_calls: 3,
        pred_files: vec!["a.py".into(), "b.py".into()],
        ..InstanceRow::default()
    }
}

#[test]
fn summary_means_the_agents_figures_over_rows_that_ran() {
    use crate::policy::agent::{AgentStats, StopReason};
    let n = metric_columns().len();
    let agent = |prompt: u64| AgentStats {
        llm_turns: 2,
        prompt_tokens: prompt,
        cached_tokens: prompt / 2,
        completion_tokens: 10,
        llm_ms: 100.0,
        stop_reason: StopReason::Answered,
        ..AgentStats::default()
    };
    // The model answered without calling a tool: no calls, but it ran.
    let no_calls = InstanceRow {
        n_calls: 0,
        agent: Some(agent(1000)),
        ..row("i1", STATUS_OK, vec![1.0; n])
    };
    let with_calls = InstanceRow {
        agent: Some(agent(3000)),
        ..row("i2", STATUS_OK, vec![0.0; n])
    };
    // Setup failed before the first turn: did not run.
    let failed = InstanceRow {
        n_calls: 0,
        agent: Some(AgentStats {
            stop_reason: StopReason::SetupFailed,
            ..AgentStats::default()
        }),
        ..row("i3", STATUS_ERROR, vec![])
    };
    let sums = summarize(&[no_calls, with_calls, failed], &["text".to_string()]);
    let s = &sums[0];
    assert_eq!(
        (s.mean_prompt_tokens, s.mean_cached_tokens),
        (2000.0, 1000.0)
    );
    assert_eq!((s.mean_llm_turns, s.mean_calls), (2.0, 1.5));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("summary.csv");
    write_summary(&p, &sums).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.contains("llm_turns,prompt_tokens,cached_tokens,completion_tokens,llm_ms,cost_usd"),
        "{text}"
    );
    assert!(
        text.contains(",2.00,2000.00,1000.00,10.00,100.00,0.000000"),
        "{text}"
    );
}

#[test]
fn old_run_json_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(read_info(dir.path()).unwrap(), None);
    std::fs::write(
        dir.path().join("run.json"),
        r#"{"dataset":"mini","variants":["text"],"tokenizer":"cl100k_base","started":"2025-01-01T00:00:00Z","navbench_version":"0.1.0"}"#,
    )
    .unwrap();
    let info = read_info(dir.path()).unwrap().unwrap();
    assert_eq!(info.dataset, "mini");
    assert_eq!(info.dataset_fingerprint, "");
    assert_eq!(info.shard, None);
    std::fs::write(dir.path().join("run.json"), "not json").unwrap();
    let e = read_info(dir.path()).unwrap_err().to_string();
    assert!(e.contains("run.json"), "{e}");
}

fn call(step: usize) -> CallRecord {
    CallRecord {
        step,
        tool: "grep".into(),
        args: "{}".into(),
        latency_ms: 1.0,
        response_bytes: 10,
        response_tokens: 2,
        is_error: false,
        error: String::new(),
    }
}

#[test]
fn calls_are_written_as_they_happen_and_a_cut_pairs_go_aside_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let n = metric_columns().len();
    let calls_of = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap_or_default();
        text.lines()
            .skip(1)
            .map(|l| l[..l.find(',').unwrap_or(0)].to_string())
            .collect()
    };
    {
        let out = Arc::new(RunOutput::open(dir.path()).unwrap());
        let sink = out.call_sink("i1", "text", Trial::FIRST);
        sink(&call(1));
        sink(&call(2));
        // In the file at once, before any row of the pair.
        assert_eq!(calls_of("calls.csv"), ["i1", "i1"]);
        out.call_sink("i2", "text", Trial::FIRST)(&call(1));
        out.write_instance(&row("i2", STATUS_OK, vec![1.0; n]))
            .unwrap();
        // i1 is "killed" here: its calls have no row.
    }
    let out = RunOutput::open(dir.path()).unwrap();
    assert_eq!(calls_of("calls.csv"), ["i2"]);
    assert_eq!(calls_of("calls-superseded.csv"), ["i1", "i1"]);
    assert!(out.is_done("i2", "text", Trial::FIRST) && !out.is_done("i1", "text", Trial::FIRST));
    // An error row's calls stay until the pair's next attempt writes.
    out.append_call("i3", "text", Trial::FIRST, &call(1))
        .unwrap();
    out.write_instance(&row("i3", STATUS_ERROR, vec![]))
        .unwrap();
    drop(out);
    let out = RunOutput::open(dir.path()).unwrap();
    assert_eq!(calls_of("calls.csv"), ["i2", "i3"]);
    out.append_call("i3", "text", Trial::FIRST, &call(1))
        .unwrap();
    out.write_instance(&row("i3", STATUS_OK, vec![1.0; n]))
        .unwrap();
    assert_eq!(calls_of("calls.csv"), ["i2", "i3"]);
    assert_eq!(calls_of("calls-superseded.csv"), ["i1", "i1", "i3"]);
    assert_eq!(calls_of("instances-superseded.csv"), ["i3"]);
}

#[test]
fn rows_round_trip_and_resume_skips_finished() {
    let dir = tempfile::tempdir().unwrap();
    let n = metric_columns().len();
    {
        let out = RunOutput::open(dir.path()).unwrap();
        out.write_instance(&row("i1", STATUS_OK, vec![1.0; n]))
            .unwrap();
        out.write_instance(&row("i2", STATUS_ERROR, vec![]))
            .unwrap();
        out.write_instance(&row("i3", STATUS_NO_GOLD, vec![]))
            .unwrap();
    }
    let out = RunOutput::open(dir.path()).unwrap();
    let first = Trial::FIRST;
    assert!(out.is_done("i1", "text", first));
    assert!(!out.is_done("i2", "text", first));
    assert!(out.is_done("i3", "text", first));
    // Another trial of a finished pair is still to play, and its row is its own.
    let second = Trial::new(2).unwrap();
    assert!(!out.is_done("i1", "text", second));
    out.write_instance(&InstanceRow {
        trial: second,
        ..row("i1", STATUS_OK, vec![0.0; n])
    })
    .unwrap();
    let rows = read_instance_rows(&dir.path().join("instances.csv")).unwrap();
    let i1: Vec<(u32, f64)> = rows
        .iter()
        .filter(|r| r.instance_id == "i1")
        .map(|r| (r.trial.get(), r.metrics[0]))
        .collect();
    assert_eq!(i1, [(1, 1.0), (2, 0.0)]);
    // A retried error: the last row wins.
    out.write_instance(&row("i2", STATUS_OK, vec![0.0; n]))
        .unwrap();
    let rows: Vec<InstanceRow> = read_instance_rows(&dir.path().join("instances.csv"))
        .unwrap()
        .into_iter()
        .filter(|r| r.trial.is_first())
        .collect();
    assert_eq!(rows.len(), 3);
    let i2 = rows.iter().find(|r| r.instance_id == "i2").unwrap();
    assert_eq!(i2.status, STATUS_OK);
    assert_eq!(rows[0].pred_files, vec!["a.py", "b.py"]);
    let sums = summarize(&rows, &["text".to_string()]);
    assert_eq!(sums[0].n_scored, 2);
    assert_eq!(sums[0].metrics[0], 0.5);
    assert!(format_table(&sums).contains("50.0"));
}
