//! [`AgentCommand`]: the `--agent-cmd` template and its timeout, checked when the run
//! starts, and filled per instance × variant.
//!
//! Placeholders ([`PLACEHOLDERS`]) are `{name}`; `{{` and `}}` are literal braces. A
//! value goes in as is when it is made only of characters no shell treats specially
//! (paths and URLs the harness makes are), else single-quoted for `sh`, so a path
//! with a space stays one word: write `{root}`, never `'{root}'`. The same values are
//! also in the command's environment (`NAVBENCH_PROMPT_FILE`, …: [`env_name`]), for
//! commands that prefer `"$NAVBENCH_ROOT"`.
//!
//! This file imports nothing else of the crate, so the run's settings
//! (`crate::run::config`) can hold an [`AgentCommand`] without depending on the code
//! that runs it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Every placeholder a template may name, and what it stands for.
pub const PLACEHOLDERS: [(&str, &str); 9] = [
    (
        "prompt_file",
        "the prompt (system guidance + task), a Markdown file",
    ),
    (
        "mcp_config",
        "Claude Code's --mcp-config JSON ({\"mcpServers\": …})",
    ),
    (
        "mcp_list",
        "a plain JSON list of the servers: name, variant, transport, url",
    ),
    ("mcp_url", "the proxy's Streamable HTTP URL"),
    (
        "gemini_settings",
        "a Gemini CLI settings.json with the server",
    ),
    ("root", "the checked-out tree"),
    (
        "dir",
        "the pair's own directory, the command's working directory",
    ),
    ("instance_id", "the instance's id"),
    ("variant", "the variant's name"),
];

/// `--agent-cmd` and `--agent-timeout`.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCommand {
    pub template: String,
    /// The command is killed (with its process group) after this long.
    pub timeout: Duration,
    /// The named command it came from (`agents/cmd/NAME.toml`); `None` for a raw template.
    pub name: Option<String>,
    /// How its stdout is read (`crate::policy::agent_cmd::report`).
    pub report: ReportFormat,
    /// Variables set for the command, their values templates like the command's
    /// (placeholders filled, never quoted: they are not parsed by a shell).
    pub env: Vec<(String, String)>,
}

/// How a command's stdout is read: as the answer's text, or as an agent CLI's JSON
/// report (its final message, turns, tokens, cost and the tools it ran).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ReportFormat {
    /// The answer, as text (a raw `--agent-cmd` template).
    #[default]
    #[serde(rename = "text")]
    Text,
    /// Claude Code's `--output-format stream-json --verbose`.
    #[serde(rename = "claude-stream-json")]
    ClaudeStreamJson,
    /// `codex exec --json`.
    #[serde(rename = "codex-json")]
    CodexJson,
    /// Gemini CLI's `--output-format json`.
    #[serde(rename = "gemini-json")]
    GeminiJson,
}

impl ReportFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportFormat::Text => "text",
            ReportFormat::ClaudeStreamJson => "claude-stream-json",
            ReportFormat::CodexJson => "codex-json",
            ReportFormat::GeminiJson => "gemini-json",
        }
    }
}

/// The command as `run.json` records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentCommandInfo {
    pub template: String,
    pub timeout_secs: f64,
    /// The named command (`--agent-cmd NAME`), if it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub report: ReportFormat,
    /// The variables the command set (as templates), e.g. its per-run home.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

/// One piece of a template.
enum Piece<'a> {
    Text(&'a str),
    Brace(char),
    Field(&'a str),
}

impl AgentCommand {
    /// The command, refused with what to write when the template names an unknown
    /// placeholder or has an unmatched brace.
    pub fn new(template: &str, timeout: Duration) -> anyhow::Result<AgentCommand> {
        if template.trim().is_empty() {
            anyhow::bail!(
                "--agent-cmd is empty: name a sealed agent command (claude-code, codex, gemini-cli) \
or give the command that runs your agent, e.g. my-agent --prompt {{prompt_file}} --mcp {{mcp_url}}"
            );
        }
        if timeout.is_zero() {
            anyhow::bail!("--agent-timeout must be a positive number of seconds");
        }
        check_fields(template)?;
        Ok(AgentCommand {
            template: template.to_string(),
            timeout,
            name: None,
            report: ReportFormat::Text,
            env: Vec::new(),
        })
    }

    /// What `run.json` says about the command.
    pub fn info(&self) -> AgentCommandInfo {
        AgentCommandInfo {
            template: self.template.clone(),
            timeout_secs: self.timeout.as_secs_f64(),
            name: self.name.clone(),
            report: self.report,
            env: self.env.clone(),
        }
    }

    /// The command line with `value(name)` in place of each placeholder, quoted for
    /// `sh` where needed.
    pub fn fill(&self, value: impl Fn(&str) -> String) -> String {
        fill_with(&self.template, &value, shell_word)
    }

    /// The command's own variables with their placeholders filled (unquoted).
    pub fn fill_env(&self, value: impl Fn(&str) -> String) -> Vec<(String, String)> {
        self.env
            .iter()
            .map(|(k, v)| (k.clone(), fill_with(v, &value, |s| s.to_string())))
            .collect()
    }
}

/// Refuses a template naming an unknown placeholder or with an unmatched brace.
pub fn check_fields(template: &str) -> anyhow::Result<()> {
    {
        let pieces = pieces(template)?;
        for p in &pieces {
            if let Piece::Field(name) = p
                && !PLACEHOLDERS.iter().any(|(n, _)| n == name)
            {
                anyhow::bail!(
                    "--agent-cmd names {{{name}}}, which is not a placeholder; use one of {} (write {{{{ and }}}} for literal braces, e.g. ${{{{HOME}}}})",
                    PLACEHOLDERS
                        .iter()
                        .map(|(n, _)| format!("{{{n}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    Ok(())
}

/// `template` with each placeholder's value, passed through `quote`.
fn fill_with(
    template: &str,
    value: &dyn Fn(&str) -> String,
    quote: impl Fn(&str) -> String,
) -> String {
    let Ok(pieces) = pieces(template) else {
        // `new` checked the template; an unchecked one runs as written.
        return template.to_string();
    };
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Brace(c) => out.push(c),
            Piece::Field(name) => out.push_str(&quote(&value(name))),
        }
    }
    out
}

/// The environment variable carrying a placeholder's value: `NAVBENCH_` + its name in
/// upper case (`NAVBENCH_PROMPT_FILE`, `NAVBENCH_MCP_URL`, …).
pub fn env_name(placeholder: &str) -> String {
    format!("NAVBENCH_{}", placeholder.to_ascii_uppercase())
}

fn pieces(template: &str) -> anyhow::Result<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        if at > 0 {
            out.push(Piece::Text(&rest[..at]));
        }
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push(Piece::Brace(if tail.starts_with('{') { '{' } else { '}' }));
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            anyhow::bail!(
                "--agent-cmd has a '}}' that closes nothing (at byte {}); write '}}}}' for a literal brace",
                template.len() - tail.len()
            );
        }
        let Some(end) = tail.find('}') else {
            anyhow::bail!(
                "--agent-cmd has a '{{' that is never closed (at byte {}); write '{{{{' for a literal brace",
                template.len() - tail.len()
            );
        };
        out.push(Piece::Field(&tail[1..end]));
        rest = &tail[end + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// `s` as one `sh` word: as is when every character is safe, else single-quoted.
fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:=@%,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn placeholders_are_filled_and_quoted_only_when_needed() {
        let cmd = AgentCommand::new(
            r#"claude -p "$(cat {prompt_file})" --mcp-config {mcp_config} --x '{{"a": 1}}' {root}"#,
            T,
        )
        .unwrap();
        let filled = cmd.fill(|name| match name {
            "prompt_file" => "/w/p q/prompt.md".into(),
            "mcp_config" => "/w/mcp.json".into(),
            "root" => "/t/it's".into(),
            _ => String::new(),
        });
        assert_eq!(
            filled,
            r#"claude -p "$(cat '/w/p q/prompt.md')" --mcp-config /w/mcp.json --x '{"a": 1}' '/t/it'\''s'"#
        );
    }

    #[test]
    fn unknown_placeholders_and_stray_braces_are_refused_with_what_to_write() {
        let e = AgentCommand::new("echo ${HOME}", T)
            .unwrap_err()
            .to_string();
        assert!(e.contains("{HOME}") && e.contains("{prompt_file}"), "{e}");
        let e = AgentCommand::new("echo {root", T).unwrap_err().to_string();
        assert!(e.contains("never closed"), "{e}");
        let e = AgentCommand::new("echo root}", T).unwrap_err().to_string();
        assert!(e.contains("closes nothing"), "{e}");
        assert!(AgentCommand::new("  ", T).is_err());
        assert!(AgentCommand::new("true", Duration::ZERO).is_err());
        assert!(AgentCommand::new("echo ${{HOME}} {dir}", T).is_ok());
    }

    #[test]
    fn env_names_follow_the_placeholders() {
        assert_eq!(env_name("prompt_file"), "NAVBENCH_PROMPT_FILE");
        assert_eq!(shell_word(""), "''");
        assert_eq!(
            shell_word("http://127.0.0.1:80/mcp"),
            "http://127.0.0.1:80/mcp"
        );
    }
}
