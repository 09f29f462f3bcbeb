//! Named agent commands: `--agent-cmd NAME` reads `agents/cmd/NAME.toml` (or a path to
//! a `.toml` file), a sealed invocation of an agent CLI ([`resolve`]). They live in a
//! directory of their own so `--agent NAME` (`agents/NAME.toml`, the built-in loop's
//! agent files) never mistakes one for an agent file.
//!
//! A command file holds:
//! - `template`: the command line, with the placeholders of a raw template
//!   ([`super::template::PLACEHOLDERS`]);
//! - `report`: how its stdout is read ([`ReportFormat`]: `claude-stream-json`,
//!   `codex-json`, `gemini-json` or `text`);
//! - `program`: the executable the template runs, looked up on `PATH` when the run
//!   starts (a missing CLI would fail every row);
//! - `needs_env`: variables that must be set, `A|B` meaning either (the API key): an
//!   unset one stops the run before its first row, saying what to export;
//! - `[env]`: variables set for the command, placeholders filled (unquoted), e.g. a
//!   per-run home under `{dir}` so the user's settings and MCP servers stay out;
//! - `description`: one line for messages.
//!
//! Unknown keys are refused, as in agent files. Anything else given to `--agent-cmd`
//! (a value with a space, a `/`, or a placeholder) is a raw template.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::template::{AgentCommand, ReportFormat, check_fields};
use crate::policy::agent::config::agents_dir;

/// A command file's keys, as serde reads them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandFile {
    description: Option<String>,
    template: String,
    #[serde(default)]
    report: ReportFormat,
    program: Option<String>,
    #[serde(default)]
    needs_env: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// The suffix of a command file.
pub const SUFFIX: &str = ".toml";

/// The directory of the named commands: `cmd/` under the agents directory.
pub fn commands_dir() -> PathBuf {
    agents_dir().join("cmd")
}

/// True when `spec` names a command file rather than being a raw template: a bare
/// name (letters, digits, `-`, `_`, `.`) or a path ending in [`SUFFIX`] (no space).
pub fn is_named(spec: &str) -> bool {
    (spec.ends_with(SUFFIX) && !spec.contains(char::is_whitespace))
        || (!spec.is_empty()
            && spec
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
}

/// `--agent-cmd SPEC`: a named command ([`is_named`]) loaded and checked, else the raw
/// template.
pub fn resolve(spec: &str, timeout: Duration) -> anyhow::Result<AgentCommand> {
    if !is_named(spec) {
        return AgentCommand::new(spec, timeout);
    }
    let path = locate(spec)?;
    let loaded = load(&path, timeout)?;
    check_ready(&path, &loaded)?;
    Ok(loaded.cmd)
}

/// A command file read: the command, and what it needs of the machine.
#[derive(Debug)]
pub struct Loaded {
    pub cmd: AgentCommand,
    /// The executable the template runs (checked on `PATH`).
    pub program: Option<String>,
    /// Variables that must be set (`A|B`: either).
    pub needs_env: Vec<String>,
    /// The file's one-line description.
    pub description: Option<String>,
}

/// The file a named command is in.
pub fn locate(spec: &str) -> anyhow::Result<PathBuf> {
    if spec.ends_with(SUFFIX) {
        let p = PathBuf::from(spec);
        if !p.is_file() {
            anyhow::bail!("agent command file {} does not exist", p.display());
        }
        return Ok(p);
    }
    let dir = commands_dir();
    let p = dir.join(format!("{spec}{SUFFIX}"));
    if p.is_file() {
        return Ok(p);
    }
    anyhow::bail!(
        "no agent command named '{spec}' in {}: choose from {}, pass a path to a {SUFFIX} file, \
         or give a raw command template (with a space or a placeholder, e.g. '{spec} {{prompt_file}}')",
        dir.display(),
        names(&dir).join(", ")
    )
}

/// The named commands under `dir`.
pub fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_suffix(SUFFIX).map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    if out.is_empty() {
        out.push("(none)".into());
    }
    out
}

/// Reads a command file (no check of the machine: see [`check_ready`]).
pub fn load(path: &Path, timeout: Duration) -> anyhow::Result<Loaded> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let f: CommandFile = toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}; the keys are template, report, program, needs_env, [env], description",
            path.display()
        )
    })?;
    let mut cmd = AgentCommand::new(f.template.trim(), timeout)
        .map_err(|e| anyhow::anyhow!("{}: template: {e:#}", path.display()))?;
    for (k, v) in &f.env {
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            anyhow::bail!(
                "{}: [env] key '{k}' is not a variable name (letters, digits, _)",
                path.display()
            );
        }
        check_fields(v).map_err(|e| anyhow::anyhow!("{}: [env] {k}: {e:#}", path.display()))?;
    }
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(SUFFIX).to_string());
    cmd.name = stem;
    cmd.report = f.report;
    cmd.env = f.env.into_iter().collect();
    Ok(Loaded {
        cmd,
        program: f.program,
        needs_env: f.needs_env,
        description: f.description,
    })
}

/// Refuses the run when the command's program is not on `PATH` or a variable it needs
/// is unset, saying what to install or export.
fn check_ready(path: &Path, loaded: &Loaded) -> anyhow::Result<()> {
    let name = loaded.cmd.name.as_deref().unwrap_or_default();
    if let Some(program) = &loaded.program
        && find_on_path(program).is_none()
    {
        anyhow::bail!(
            "--agent-cmd {name} runs `{program}`, which is not on PATH; install it (agents/cli-agents.sh install, then \
             export PATH=\"$(agents/cli-agents.sh path):$PATH\"; see docs/cli-agents.md), or edit {}",
            path.display()
        );
    }
    for need in &loaded.needs_env {
        let any: Vec<&str> = need.split('|').map(str::trim).collect();
        if !any
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
        {
            anyhow::bail!(
                "--agent-cmd {name} needs {} in the environment (docs/cli-agents.md says what each CLI reads)",
                any.join(" or ")
            );
        }
    }
    Ok(())
}

/// `program` as `PATH` finds it (a name with a `/` is taken as a path).
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn names_and_raw_templates_are_told_apart() {
        assert!(is_named("claude-code"));
        assert!(is_named("x/y.toml"));
        assert!(!is_named("tool --config x.toml"));
        assert!(!is_named("claude -p hi"));
        assert!(!is_named("./agent.sh"));
        assert!(!is_named("run {prompt_file}"));
        let e = resolve("no-such-agent-xyz", T).unwrap_err().to_string();
        assert!(
            e.contains("claude-code") && e.contains("raw command template"),
            "{e}"
        );
    }

    #[test]
    fn a_command_file_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mine.toml");
        std::fs::write(
            &p,
            "template = 'sh -c \"echo $X\" {dir}'\nreport = 'codex-json'\nprogram = 'sh'\n[env]\nX = '{dir}/home'\n",
        )
        .unwrap();
        let cmd = resolve(p.to_str().unwrap(), T).unwrap();
        assert_eq!(cmd.name.as_deref(), Some("mine"));
        assert_eq!(cmd.report, ReportFormat::CodexJson);
        let env = cmd.fill_env(|n| {
            if n == "dir" {
                "/a b".into()
            } else {
                String::new()
            }
        });
        assert_eq!(env, vec![("X".to_string(), "/a b/home".to_string())]);

        std::fs::write(&p, "template = 'x {nope}'\n").unwrap();
        let e = resolve(p.to_str().unwrap(), T).unwrap_err().to_string();
        assert!(e.contains("{nope}"), "{e}");
        std::fs::write(&p, "template = 'x'\ncolour = 1\n").unwrap();
        let e = resolve(p.to_str().unwrap(), T).unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
        std::fs::write(&p, "template = 'x'\nprogram = 'no-such-cli-xyz'\n").unwrap();
        let e = resolve(p.to_str().unwrap(), T).unwrap_err().to_string();
        assert!(
            e.contains("not on PATH") && e.contains("cli-agents.sh"),
            "{e}"
        );
        std::fs::write(
            &p,
            "template = 'x'\nneeds_env = ['NAVBENCH_NO_SUCH_A|NAVBENCH_NO_SUCH_B']\n",
        )
        .unwrap();
        let e = resolve(p.to_str().unwrap(), T).unwrap_err().to_string();
        assert!(
            e.contains("NAVBENCH_NO_SUCH_A or NAVBENCH_NO_SUCH_B"),
            "{e}"
        );
    }

    #[test]
    fn the_shipped_commands_load() {
        for name in ["claude-code", "codex", "gemini-cli"] {
            let p = locate(name).unwrap();
            let loaded = load(&p, T).unwrap();
            assert!(
                loaded.description.is_some() && loaded.program.is_some(),
                "{name}"
            );
            let cmd = loaded.cmd;
            assert_ne!(cmd.report, ReportFormat::Text, "{name}");
            assert!(!cmd.env.is_empty(), "{name}");
        }
    }
}
