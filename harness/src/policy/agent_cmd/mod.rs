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
//! 4. the proxy stops, its records become the pair's `calls.csv` rows, and the
//!    command's stdout is read as the built-in agent's answer is
//!    ([`crate::policy::agent::answer`]): locations one per line; none is
//!    `answer_unparsed`.
//!
//! A command that cannot start, exits with a failure status or outlives
//! `--agent-timeout` (then killed with everything it started) makes the row an `error`
//! with the end of its stderr, as a crashing server does; the run goes on, and a
//! resumed run retries it. The command's stdout, stderr's end and exit are kept in the
//! pair's directory (`stdout.txt`, `stderr.txt`, `command.json`).
//!
//! Why a proxy over HTTP started per pair rather than `navbench proxy` over stdio
//! launched by the agent: the harness keeps the server, its session and the records
//! in its own process (no file to hand back, no second navbench to find), the setup
//! happens before the agent starts instead of inside its MCP handshake, and every
//! agent that takes a URL can connect. `navbench proxy` ([`crate::session::proxy::command`]) is
//! the same proxy for agents run by hand.

pub mod files;
pub mod process;
pub mod template;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::json;

pub use template::AgentCommand;

use crate::data::dataset::Locations;
use crate::policy::agent::answer;
use crate::policy::{CallRecord, Task};
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
}

/// What the command made of one pair.
#[derive(Debug)]
pub struct Played {
    /// The parsed answer; `Err` when the row is an error.
    pub result: anyhow::Result<Locations>,
    /// The command answered, but named no location.
    pub unparsed: bool,
    /// What reading its stdout found (`None` when the row is an error).
    pub answer: Option<AnswerCounts>,
    /// Every call through the proxy, setup included.
    pub records: Vec<CallRecord>,
    /// The server's session, back from the proxy, for the caller to shut down.
    pub session: Option<McpSession>,
}

/// Plays one pair with the command (see the module doc).
pub async fn play(cmd: &AgentCommand, session: McpSession, pair: Pair<'_>) -> Played {
    let proxy = Proxy::new(pair.variant.name(), session, pair.settings);
    let outcome = drive(cmd, &proxy, &pair).await;
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
        answer,
        records,
        session,
    }
}

/// The pair's directory: `<run>/agent-cmd/<instance>__<variant>/`, emptied of an
/// earlier attempt's files, absolute (the command runs there and is given its paths).
pub fn pair_dir(run_dir: &Path, instance_id: &str, variant: &str) -> anyhow::Result<PathBuf> {
    let safe = |s: &str| s.replace(['/', '\\'], "_");
    let dir = run_dir
        .join("agent-cmd")
        .join(format!("{}__{}", safe(instance_id), safe(variant)));
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
) -> anyhow::Result<answer::Answer> {
    let inst = pair.task.instance;
    let dir = pair_dir(pair.run_dir, &inst.instance_id, pair.variant.name())?;
    proxy
        .setup(pair.variant, pair.task)
        .await
        .context("the variant's setup failed before the agent command started")?;
    let serving = proxy::http::serve(proxy.clone(), "127.0.0.1:0", false).await?;
    let answered = run_command(cmd, proxy, pair, &dir, &serving.url).await;
    serving.stop().await;
    answered
}

async fn run_command(
    cmd: &AgentCommand,
    proxy: &Proxy,
    pair: &Pair<'_>,
    dir: &Path,
    url: &str,
) -> anyhow::Result<answer::Answer> {
    let (inst, root) = (pair.task.instance, pair.task.workdir);
    let prompt = files::prompt_text(root, &inst.problem_statement, proxy.instructions());
    let f = files::write(dir, pair.variant.name(), url, &prompt)?;
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
    let env: Vec<(String, String)> = PLACEHOLDERS
        .iter()
        .map(|(n, _)| (env_name(n), value(n)))
        .collect();
    let done = process::run(&line, dir, &env, cmd.timeout).await;
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
        Ended::Exited(status) if !status.success() => anyhow::bail!(
            "the agent command failed ({status}){stderr}; its output is in {}",
            dir.display()
        ),
        Ended::Exited(_) => {}
    }
    Ok(answer::read(&done.stdout, root))
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
