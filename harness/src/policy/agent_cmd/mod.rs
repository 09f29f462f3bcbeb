//! `navbench run --agent-cmd 'TEMPLATE'`: any external agent (Claude Code, Codex CLI,
//! Gemini CLI, a script) plays every variant, through the recording proxy.
//!
//! For one instance × variant ([`play`]), on the tree and server the pipeline started:
//! 1. the server goes behind a [`Proxy`], and the variant's setup (codegraph's
//!    `init_repository`, …) runs through the proxy's session before anything else:
//!    recorded like any call, it is index time, and the agent starts on an indexed
//!    repository, as the built-in agent does;
//! 2. the proxy serves Streamable HTTP on a free loopback port, for this pair only;
//! 3. the pair's directory (`<out>/agent-cmd/<instance>__<variant>/`) receives the
//!    prompt and the MCP configurations ([`files`]), and the command, the template
//!    filled ([`template`]), runs there with a deadline ([`process`]);
//! 4. the proxy stops (each call reached `calls.csv` as it was made, through the
//!    pair's [`RecordSink`]), and the
//!    command's stdout is read: for a raw template, as the built-in agent's answer is
//!    ([`crate::policy::agent::answer`]): locations one per line; none is
//!    `answer_unparsed`. For a named command ([`named`]: `agents/cmd/NAME.toml`, an
//!    agent CLI sealed to the variant's tools), as the CLI's JSON report
//!    ([`report`]): its final message goes to the same parser, its turns, tokens and
//!    cost become the row's agent columns (`usage_source = cli`), and a tool it ran
//!    that is not the proxy's makes the row an error (`agent_used_own_tools`).
//!
//! A command that cannot start, exits with a failure status or outlives
//! `--agent-timeout` (then killed with everything it started) makes the row an `error`
//! with the end of its stderr, as a crashing server does; the run goes on, and a
//! resumed run retries it. The command's stdout, stderr's end and exit are kept in the
//! pair's directory (`stdout.txt`, `stderr.txt`, `command.json`; `report.json` for a
//! CLI's report as read).
//!
//! Why a proxy over HTTP started per pair rather than `navbench proxy` over stdio
//! launched by the agent: the harness keeps the server, its session and the records
//! in its own process (no file to hand back, no second navbench to find), the setup
//! happens before the agent starts instead of inside its MCP handshake, and every
//! agent that takes a URL can connect. `navbench proxy` ([`crate::session::proxy::command`]) is
//! the same proxy for agents run by hand.

pub mod files;
pub mod named;
pub mod process;
pub mod report;
pub mod template;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::json;

pub use template::{AgentCommand, ReportFormat};

use crate::data::dataset::Locations;
use crate::policy::agent::{AgentStats, answer};
use crate::policy::{CallRecord, RecordSink, Task, Trial};
use crate::record::output::answer_columns::AnswerCounts;
use crate::session::mcp_client::McpSession;
use crate::session::proxy::{self, Proxy};
use crate::variants::Variant;
use process::Ended;
use template::{PLACEHOLDERS, env_name};

/// One pair as the pipeline hands it over.
pub struct Pair<'a> {
    pub variant: &'a dyn Variant,
    pub task: &'a Task<'a>,
    /// The run's directory: the pair's files go under `agent-cmd/`.
    pub run_dir: &'a Path,
    pub settings: proxy::Settings,
    /// Receives each call as the proxy makes it (the run's `calls.csv`).
    pub sink: Option<RecordSink>,
}

/// What the command made of one pair.
#[derive(Debug)]
pub struct Played {
    /// The parsed answer; `Err` when the row is an error.
    pub result: anyhow::Result<Locations>,
    /// The command answered, but named no location.
    pub unparsed: bool,
    /// The CLI's own account (turns, tokens, cost), when its report was read.
    pub stats: Option<AgentStats>,
    /// What reading its stdout found (`None` when the row is an error).
    pub answer: Option<AnswerCounts>,
    /// Every call through the proxy, setup included.
    pub records: Vec<CallRecord>,
    /// The server's session, back from the proxy, for the caller to shut down.
    pub session: Option<McpSession>,
}

/// Plays one pair with the command (see the module doc).
pub async fn play(cmd: &AgentCommand, session: McpSession, pair: Pair<'_>) -> Played {
    let proxy = match pair.sink.clone() {
        Some(sink) => Proxy::on_record(pair.variant.name(), session, pair.settings, sink),
        None => Proxy::new(pair.variant.name(), session, pair.settings),
    };
    let mut stats = None;
    let outcome = drive(cmd, &proxy, &pair, &mut stats).await;
    let (records, session) = match proxy.finish().await {
        Some(up) => (up.records, Some(up.session)),
        None => (Vec::new(), None),
    };
    let (result, unparsed, answer) = match outcome {
        Ok(a) => (
            Ok(a.locations.clone()),
            a.named.is_empty(),
            Some(AnswerCounts::of(&a)),
        ),
        Err(e) => (Err(e), false, None),
    };
    Played {
        result,
        unparsed,
        stats,
        answer,
        records,
        session,
    }
}

/// The pair's directory: `<run>/agent-cmd/<instance>__<variant>/` (later trials of
/// `--repeats`: `<instance>__<variant>__trial<N>/`), emptied of an earlier attempt's
/// files, absolute (the command runs there and is given its paths).
pub fn pair_dir(
    run_dir: &Path,
    instance_id: &str,
    variant: &str,
    trial: Trial,
) -> anyhow::Result<PathBuf> {
    let safe = |s: &str| s.replace(['/', '\\'], "_");
    let dir = run_dir.join("agent-cmd").join(format!(
        "{}__{}{}",
        safe(instance_id),
        safe(variant),
        trial.name_suffix()
    ));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| anyhow::anyhow!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::canonicalize(&dir))
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot create {}: {e}; --out must be writable",
                dir.display()
            )
        })
}

/// Setup, serve, run the command, stop serving: the answer read from its stdout.
async fn drive(
    cmd: &AgentCommand,
    proxy: &Proxy,
    pair: &Pair<'_>,
    stats: &mut Option<AgentStats>,
) -> anyhow::Result<answer::Answer> {
    let inst = pair.task.instance;
    let dir = pair_dir(
        pair.run_dir,
        &inst.instance_id,
        pair.variant.name(),
        pair.task.trial,
    )?;
    proxy
        .setup(pair.variant, pair.task)
        .await
        .context("the variant's setup failed before the agent command started")?;
    let serving = proxy::http::serve(proxy.clone(), "127.0.0.1:0", false).await?;
    let answered = run_command(cmd, proxy, pair, &dir, &serving.url, stats).await;
    serving.stop().await;
    answered
}

async fn run_command(
    cmd: &AgentCommand,
    proxy: &Proxy,
    pair: &Pair<'_>,
    dir: &Path,
    url: &str,
    stats: &mut Option<AgentStats>,
) -> anyhow::Result<answer::Answer> {
    let (inst, root) = (pair.task.instance, pair.task.workdir);
    let prompt = files::prompt_text(root, &inst.problem_statement, proxy.instructions());
    let tools: Vec<String> = proxy.tools().iter().map(|t| t.name.to_string()).collect();
    let f = files::write(dir, pair.variant.name(), url, &prompt, &tools)?;
    let path = |p: &Path| p.display().to_string();
    let value = |name: &str| match name {
        "prompt_file" => path(&f.prompt),
        "mcp_config" => path(&f.mcp_config),
        "mcp_list" => path(&f.mcp_list),
        "mcp_url" => url.to_string(),
        "gemini_settings" => path(&f.gemini_settings),
        "root" => path(root),
        "dir" => path(dir),
        "instance_id" => inst.instance_id.clone(),
        "variant" => pair.variant.name().to_string(),
        _ => String::new(),
    };
    let line = cmd.fill(value);
    let mut env: Vec<(String, String)> = PLACEHOLDERS
        .iter()
        .map(|(n, _)| (env_name(n), value(n)))
        .collect();
    env.extend(cmd.fill_env(value));
    let limit = match cmd.report {
        ReportFormat::Text => process::STDOUT_LIMIT,
        _ => process::REPORT_STDOUT_LIMIT,
    };
    let done = process::run(&line, dir, &env, cmd.timeout, limit).await;
    keep_output(dir, &line, &done);
    let stderr = crate::session::mcp_client::stderr_suffix(&done.stderr);
    match &done.ended {
        Ended::NotStarted(e) => anyhow::bail!(
            "the agent command could not be run with sh: {e}; check that sh is installed"
        ),
        Ended::TimedOut => anyhow::bail!(
            "the agent command did not finish within --agent-timeout ({:.0} s); it was killed with everything it started{stderr}",
            cmd.timeout.as_secs_f64()
        ),
        Ended::Exited(status) if !status.success() => {
            // A CLI that failed may still have said why in its report.
            let why = match report::parse(cmd.report, &done.stdout) {
                Ok(Some(r)) => {
                    *stats = Some(r.stats.clone());
                    r.failure.map(|w| format!(": {w}")).unwrap_or_default()
                }
                _ => String::new(),
            };
            anyhow::bail!(
                "the agent command failed ({status}){why}{stderr}; its output is in {}",
                dir.display()
            )
        }
        Ended::Exited(_) => {}
    }
    if done.stdout_cut && cmd.report != ReportFormat::Text {
        anyhow::bail!(
            "the agent's report outgrew {} MiB and its start was cut: the tools it ran first cannot be checked; its end is in {}",
            process::REPORT_STDOUT_LIMIT >> 20,
            dir.display()
        );
    }
    let text = match read_report(cmd, dir, &done)? {
        Some(r) => {
            *stats = Some(r.stats.clone());
            if let Some(why) = r.failure {
                anyhow::bail!("{why}; its output is in {}", dir.display());
            }
            let own = report::own_tools(&r);
            if !own.is_empty() {
                anyhow::bail!(
                    "agent_used_own_tools: the agent ran {} besides the variant's MCP tools, so its figures are not the variant's; \
                     seal the command to the `{}` server's tools (see docs/cli-agents.md); its output is in {}",
                    own.join(", "),
                    crate::session::proxy::SERVER_NAME,
                    dir.display()
                );
            }
            r.answer
        }
        None => done.stdout.clone(),
    };
    Ok(answer::read(&text, root))
}

/// The CLI's report read from its stdout (`None` for a text command), also written to
/// `report.json` in the pair's directory: the final message, the account, and every
/// tool it ran or was refused.
fn read_report(
    cmd: &AgentCommand,
    dir: &Path,
    done: &process::Finished,
) -> anyhow::Result<Option<report::Report>> {
    let parsed = report::parse(cmd.report, &done.stdout).map_err(|e| {
        anyhow::anyhow!(
            "the agent's report ({}) could not be read: {e:#}; its output is in {}",
            cmd.report.as_str(),
            dir.display()
        )
    })?;
    if let Some(r) = &parsed {
        let s = &r.stats;
        let tools: Vec<_> = r
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "server_tool": t.server_tool, "ran": t.ran}))
            .collect();
        let kept = json!({
            "format": cmd.report.as_str(), "answer": r.answer, "failure": r.failure,
            "llm_turns": s.llm_turns, "prompt_tokens": s.prompt_tokens,
            "cached_tokens": s.cached_tokens, "completion_tokens": s.completion_tokens,
            "llm_ms": s.llm_ms, "cost_usd": s.cost_usd, "stop_reason": s.stop_reason.as_str(),
            "tools": tools, "stdout_cut": done.stdout_cut,
        });
        let p = dir.join("report.json");
        if let Err(e) = std::fs::write(&p, format!("{kept:#}\n")) {
            tracing::warn!("cannot write {}: {e}", p.display());
        }
    }
    Ok(parsed)
}

/// The command's stdout, stderr's end and how it ended, in the pair's directory. A
/// failure to write them costs the record, not the row: it is logged.
fn keep_output(dir: &Path, line: &str, done: &process::Finished) {
    let ended = match &done.ended {
        Ended::Exited(s) => s.to_string(),
        Ended::TimedOut => "timed out; killed".to_string(),
        Ended::NotStarted(e) => format!("not started: {e}"),
    };
    let meta = json!({
        "command": line, "ended": ended,
        "elapsed_ms": done.elapsed.as_secs_f64() * 1000.0, "stdout_cut": done.stdout_cut,
    });
    for (name, text) in [
        ("stdout.txt", done.stdout.clone()),
        ("stderr.txt", done.stderr.clone()),
        ("command.json", format!("{meta:#}\n")),
    ] {
        let p = dir.join(name);
        if let Err(e) = std::fs::write(&p, text) {
            tracing::warn!("cannot write {}: {e}", p.display());
        }
    }
}
