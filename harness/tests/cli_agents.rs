//! The real agent CLIs, end to end: `navbench run --agent-cmd NAME` runs Claude Code,
//! Codex CLI and Gemini CLI (installed from npm at pinned versions by
//! `agents/cli-agents.sh install`) on the embedded `mini` dataset × `text` and
//! `codegraph`, each against a scripted model of the tests' own that speaks the CLI's
//! wire protocol (`common/cli_model.rs`). Only the model is scripted: the CLIs, the
//! harness, the proxy and the servers are real.
//!
//! The scripted model calls one of the variant's MCP tools, then one of the CLI's own
//! built-in tools, then answers. Checked, for the shipped (sealed) commands: every
//! request offered the model exactly the variant's MCP tools (for Codex, plus the
//! MCP-resource helpers it cannot turn off); `calls.csv` holds exactly the scripted
//! MCP call after the variant's setup; the built-in call was refused, so the row is
//! `ok`; the agent columns equal what the endpoint reported, marked `usage_source =
//! cli`. For an unsealed command (the README's earlier templates, reporting in JSON),
//! the built-in tool runs and the row is an `error` naming it (`agent_used_own_tools`).
//!
//! Each test prints what it measured (tools offered, the command's time beside the
//! model's and the tools'): `cargo test --test cli_agents -- --include-ignored
//! --nocapture`. Without the CLIs installed the tests are ignored; `.ci/run` installs
//! them and runs these tests by name. Needs every binary built.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

mod common;

use common::cli_model::{self, Model, Turn, USAGE};
use common::navbench;
use common::repo::read_csv;

const ANSWER: &str = "shopkeep/models/money.py:Money.allocate";

/// One CLI under test.
struct Cli {
    /// The named command (`agents/cmd/NAME.toml`).
    name: &'static str,
    exe: &'static str,
    /// How the CLI names a tool of the `navbench` server.
    mcp: fn(&str) -> String,
    /// One of its own tools, and arguments for it.
    builtin: (&'static str, fn(&Path) -> Value),
    /// Variables pointing the CLI at the scripted model.
    env: fn(&str) -> Vec<(&'static str, String)>,
    /// Tools the CLI offers that it has no switch for (beside the variant's).
    residual: &'static [&'static str],
}

const CLAUDE: Cli = Cli {
    name: "claude-code",
    exe: "claude",
    mcp: |t| format!("mcp__navbench__{t}"),
    builtin: ("Read", |pair| json!({"file_path": pair.join("prompt.md")})),
    env: |url| {
        vec![
            ("ANTHROPIC_BASE_URL", url.to_string()),
            ("ANTHROPIC_API_KEY", "sk-scripted".into()),
        ]
    },
    residual: &[],
};

const CODEX: Cli = Cli {
    name: "codex",
    exe: "codex",
    mcp: |t| format!("mcp__navbench__{t}"),
    builtin: ("exec_command", |_| json!({"cmd": "cat prompt.md"})),
    env: |url| {
        vec![
            ("OPENAI_BASE_URL", format!("{url}/v1")),
            ("OPENAI_API_KEY", "sk-scripted".into()),
            // A model Codex does not know: its classic tool list, not "code mode".
            ("CODEX_MODEL", "navbench-scripted".into()),
        ]
    },
    residual: &[
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
        "request_user_input",
    ],
};

const GEMINI: Cli = Cli {
    name: "gemini-cli",
    exe: "gemini",
    mcp: |t| format!("mcp_navbench_{t}"),
    builtin: (
        "read_file",
        |pair| json!({"file_path": pair.join("prompt.md")}),
    ),
    env: |url| {
        vec![
            ("GOOGLE_GEMINI_BASE_URL", url.to_string()),
            ("GEMINI_API_KEY", "scripted".into()),
            ("GEMINI_MODEL", "gemini-2.5-flash".into()),
        ]
    },
    residual: &[],
};

/// `PATH` with the installed CLIs first; panics with the install command when one is
/// missing (these tests run only when asked for).
fn cli_path(cli: &Cli) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../agents/cli-agents.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg("path")
        .output()
        .unwrap();
    let dirs = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        std::env::split_paths(&dirs).any(|d| d.join(cli.exe).is_file()),
        "{} is not installed under {dirs}: run agents/cli-agents.sh install",
        cli.exe
    );
    format!("{dirs}:{}", std::env::var("PATH").unwrap_or_default())
}

/// The scripted model: the variant's MCP tool, then the CLI's own tool, then the answer.
/// When no MCP tool is offered (Claude Code unsealed hides them behind ToolSearch), the
/// CLI's own tool comes first.
fn script(cli: &'static Cli, pair: PathBuf) -> Model {
    cli_model::start(move |req| {
        let mcp_tool =
            cli_model::offered(req, "grep").or_else(|| cli_model::offered(req, "search_entities"));
        let builtin = || Turn::Call(cli.builtin.0.to_string(), (cli.builtin.1)(&pair));
        match (req.results, mcp_tool) {
            (0, Some(t)) if t.ends_with("grep") => {
                Turn::Call(t, json!({"pattern": "def allocate"}))
            }
            (0, Some(t)) => Turn::Call(t, json!({"query": ["allocate"]})),
            (0, None) => builtin(),
            (1, Some(_)) => builtin(),
            _ => Turn::Answer(ANSWER.to_string()),
        }
    })
}

/// A run of `mini` (first instance) × `variants` with `agent_cmd`.
fn run(cli: &Cli, model: &Model, work: &Path, variants: &str, agent_cmd: &str) -> PathBuf {
    let out = work.join("out");
    let mut cmd = navbench();
    cmd.args([
        "run",
        "--dataset",
        "mini",
        "--limit",
        "1",
        "--variants",
        variants,
    ])
    .arg("--cache")
    .arg(work.join("cache"))
    .arg("--out")
    .arg(&out)
    .args(["--agent-cmd", agent_cmd, "--agent-timeout", "300"])
    .env("PATH", cli_path(cli));
    for (k, v) in (cli.env)(&model.base_url) {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// The directory of the first `mini` instance × `text` in a run under `work`: the
/// unsealed CLIs' own tools read its `prompt.md` (a file in their working directory,
/// which they may read without asking).
fn text_pair(work: &Path) -> PathBuf {
    work.join("out/agent-cmd/mini__shopkeep-1__text")
}

fn pair_dir(out: &Path, row: &HashMap<String, String>) -> PathBuf {
    out.join("agent-cmd")
        .join(format!("{}__{}", row["instance_id"], row["variant"]))
}

/// The variant's tools as the proxy offered them (the pair's Gemini allowlist lists
/// them all, as `mcp_navbench_<tool>`).
fn variant_tools(pair: &Path) -> Vec<String> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(pair.join("gemini-settings.json")).unwrap())
            .unwrap();
    v["tools"]["core"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t.as_str()
                .unwrap()
                .trim_start_matches("mcp_navbench_")
                .to_string()
        })
        .collect()
}

/// The pair's `calls.csv` rows after the variant's setup: (tool, args, latency ms).
fn agent_calls(out: &Path, row: &HashMap<String, String>) -> Vec<(String, Value, f64)> {
    let mut calls: Vec<_> = read_csv(&out.join("calls.csv"))
        .into_iter()
        .filter(|c| c["instance_id"] == row["instance_id"] && c["variant"] == row["variant"])
        .collect();
    calls.sort_by_key(|c| c["step"].parse::<usize>().unwrap());
    calls
        .iter()
        .filter(|c| c["tool"] != "init_repository")
        .map(|c| {
            let args = serde_json::from_str(&c["args"]).unwrap();
            (c["tool"].clone(), args, c["latency_ms"].parse().unwrap())
        })
        .collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}: {row:?}"))
}

/// What a pair cost: the command's time, the model's, the tools' (the agent's calls;
/// the variant's setup ran before the command).
fn timing(out: &Path, row: &HashMap<String, String>, model_ms: f64) -> String {
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(pair_dir(out, row).join("command.json")).unwrap(),
    )
    .unwrap();
    let cmd_ms = meta["elapsed_ms"].as_f64().unwrap();
    let tool_ms: f64 = agent_calls(out, row).iter().map(|c| c.2).sum();
    format!(
        "command {cmd_ms:.0} ms = model {model_ms:.0} ms + tools {tool_ms:.0} ms + CLI/proxy {:.0} ms",
        cmd_ms - model_ms - tool_ms
    )
}

/// Runs `cli`'s named command on mini × text, codegraph and checks everything the
/// module doc lists.
fn sealed(cli: &'static Cli) {
    let work = tempfile::tempdir().unwrap();
    let model = script(cli, text_pair(work.path()));
    let out = run(cli, &model, work.path(), "text,codegraph", cli.name);
    let rows = read_csv(&out.join("instances.csv"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    let turns = model.turns();
    let offered = |t: &cli_model::Request| t.tools.iter().cloned().collect::<BTreeSet<String>>();
    // Three turns per pair: the MCP call, the refused built-in call, the answer.
    assert_eq!(
        turns.len(),
        6,
        "{:?}",
        turns.iter().map(offered).collect::<Vec<_>>()
    );
    for row in &rows {
        let pair = pair_dir(&out, row);
        let report = std::fs::read_to_string(pair.join("report.json")).unwrap();
        assert_eq!(row["status"], "ok", "{row:?}\n{report}");
        assert!(row["pred_functions"].contains("Money.allocate"), "{row:?}");
        // Every request of the pair offered exactly the variant's tools.
        let want: BTreeSet<String> = variant_tools(&pair)
            .iter()
            .map(|t| (cli.mcp)(t))
            .chain(cli.residual.iter().map(|s| s.to_string()))
            .collect();
        let mine: Vec<_> = turns.iter().filter(|t| offered(t) == want).collect();
        assert_eq!(
            mine.len(),
            3,
            "{}: want {want:?}, offered {:?}",
            row["variant"],
            turns.iter().map(offered).collect::<Vec<_>>()
        );
        let model_ms: f64 = mine.iter().map(|t| t.took.as_secs_f64() * 1000.0).sum();
        check_calls(&out, row);
        let r: Value = serde_json::from_str(&report).unwrap();
        let refused: Vec<_> = r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["ran"] == false)
            .collect();
        assert!(
            cli.name == "codex" || refused.len() == 1,
            "the built-in call is reported refused: {report}"
        );
        check_account(cli, row, &r);
        eprintln!(
            "{} × {}: offered {:?}; {}",
            cli.name,
            row["variant"],
            want,
            timing(&out, row, model_ms)
        );
    }
}

/// `calls.csv` holds exactly the MCP call the scripted model made after the variant's
/// setup; the built-in call never reached the proxy.
fn check_calls(out: &Path, row: &HashMap<String, String>) {
    let made = agent_calls(out, row);
    assert_eq!(made.len(), 1, "{made:?}");
    let (tool, args, _) = made[0].clone();
    let scripted = match tool.as_str() {
        "grep" => json!({"pattern": "def allocate"}),
        _ => json!({"query": ["allocate"]}),
    };
    assert!(
        ["grep", "search_entities"].contains(&tool.as_str()),
        "{made:?}"
    );
    assert_eq!(args, scripted, "{made:?}");
}

/// The row's agent columns are the CLI's account, equal to what the endpoint reported
/// over the pair's three turns.
fn check_account(cli: &Cli, row: &HashMap<String, String>, r: &Value) {
    let per_prompt = if cli.name == "claude-code" {
        USAGE.fresh + USAGE.cached + USAGE.cache_write
    } else {
        USAGE.fresh + USAGE.cached
    };
    assert_eq!(row["usage_source"], "cli", "{row:?}");
    assert_eq!(row["stop_reason"], "answered", "{row:?}");
    assert_eq!(
        num(row, "prompt_tokens"),
        (3 * per_prompt) as f64,
        "{row:?}"
    );
    assert_eq!(
        num(row, "cached_tokens"),
        (3 * USAGE.cached) as f64,
        "{row:?}"
    );
    assert_eq!(
        num(row, "completion_tokens"),
        (3 * USAGE.completion) as f64,
        "{row:?}"
    );
    if cli.name != "codex" {
        assert_eq!(num(row, "llm_turns"), 3.0, "{row:?}");
    }
    if cli.name == "claude-code" {
        // As Claude Code reported it (the column keeps 6 decimals).
        let reported = r["cost_usd"].as_f64().unwrap();
        assert!((num(row, "cost_usd") - reported).abs() < 1e-6, "{row:?}");
        assert!(num(row, "cost_usd") > 0.0);
    }
}

/// Runs an unsealed command (the CLI with its own tools, reporting in JSON) on mini ×
/// text: the scripted built-in call runs, and the row says so.
fn unsealed(cli: &'static Cli, template: &str, report: &str) {
    let work = tempfile::tempdir().unwrap();
    let model = script(cli, text_pair(work.path()));
    let file = work.path().join(format!("{}-unsealed.toml", cli.name));
    std::fs::write(
        &file,
        format!("report = '{report}'\ntemplate = '''{template}'''\n[env]\nCLAUDE_CONFIG_DIR = '{{dir}}/claude-home'\nCODEX_HOME = '{{dir}}/codex-home'\nGEMINI_CLI_HOME = '{{dir}}/gemini-home'\nHOME = '{{dir}}/gemini-home'\n"),
    )
    .unwrap();
    let out = run(cli, &model, work.path(), "text", file.to_str().unwrap());
    let rows = read_csv(&out.join("instances.csv"));
    let row = &rows[0];
    let offered: BTreeSet<String> = model
        .turns()
        .first()
        .map(|t| t.tools.iter().cloned().collect())
        .unwrap_or_default();
    eprintln!("{} unsealed × text: offered {offered:?}", cli.name);
    assert_eq!(row["status"], "error", "{row:?}");
    assert!(row["error"].starts_with("agent_used_own_tools"), "{row:?}");
    let named = match cli.name {
        "codex" => "command_execution",
        _ => cli.builtin.0,
    };
    assert!(row["error"].contains(named), "{row:?}");
    assert_eq!(row["usage_source"], "cli", "{row:?}");
}

#[test]
#[ignore = "needs Claude Code, Codex CLI and Gemini CLI: agents/cli-agents.sh install (.ci/run does)"]
fn claude_code_is_sealed_to_the_variants_tools() {
    sealed(&CLAUDE);
}

#[test]
#[ignore = "needs Claude Code, Codex CLI and Gemini CLI: agents/cli-agents.sh install (.ci/run does)"]
fn codex_is_sealed_to_the_variants_tools() {
    sealed(&CODEX);
}

#[test]
#[ignore = "needs Claude Code, Codex CLI and Gemini CLI: agents/cli-agents.sh install (.ci/run does)"]
fn gemini_cli_is_sealed_to_the_variants_tools() {
    sealed(&GEMINI);
}

#[test]
#[ignore = "needs Claude Code, Codex CLI and Gemini CLI: agents/cli-agents.sh install (.ci/run does)"]
fn claude_code_unsealed_runs_its_own_tools_and_the_row_says_so() {
    // The README's earlier template, reporting in stream-json: built-in tools on.
    unsealed(
        &CLAUDE,
        r#"claude -p "$(cat {prompt_file})" --mcp-config {mcp_config} --strict-mcp-config --allowedTools "mcp__navbench__*" --output-format stream-json --verbose"#,
        "claude-stream-json",
    );
}

#[test]
#[ignore = "needs Claude Code, Codex CLI and Gemini CLI: agents/cli-agents.sh install (.ci/run does)"]
fn codex_unsealed_runs_its_own_tools_and_the_row_says_so() {
    unsealed(
        &CODEX,
        r#"mkdir -p "$CODEX_HOME" && codex exec --json --skip-git-repo-check --sandbox read-only -m "$CODEX_MODEL" -c model_provider=nb -c model_providers.nb.name=nb -c model_providers.nb.base_url="$OPENAI_BASE_URL" -c model_providers.nb.env_key=OPENAI_API_KEY -c model_providers.nb.wire_api=responses -c mcp_servers.navbench.url={mcp_url} -c mcp_servers.navbench.default_tools_approval_mode=approve "$(cat {prompt_file})""#,
        "codex-json",
    );
}

#[test]
#[ignore = "needs Claude Code, Codex CLI and Gemini CLI: agents/cli-agents.sh install (.ci/run does)"]
fn gemini_cli_unsealed_runs_its_own_tools_and_the_row_says_so() {
    // The pair's settings without the tools.core allowlist: Gemini's own tools on.
    unsealed(
        &GEMINI,
        r#"mkdir -p "$GEMINI_CLI_HOME/.gemini" && printf '{{"security": {{"auth": {{"selectedType": "gemini-api-key"}}}}, "mcpServers": {{"navbench": {{"httpUrl": "%s", "trust": true}}}}}}' {mcp_url} > "$GEMINI_CLI_HOME/.gemini/settings.json" && gemini -p "$(cat {prompt_file})" --skip-trust -m "$GEMINI_MODEL" --allowed-mcp-server-names navbench --output-format json"#,
        "gemini-json",
    );
}
