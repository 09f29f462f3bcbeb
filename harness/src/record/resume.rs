//! Resuming into a run directory: the player of the new run must be the one
//! `run.json` records, or the rows of two models (or of a model and the scripted
//! policies) would mix under one name. [`check_player`] compares them before anything
//! is asked or written, and refuses naming both.
//!
//! Compared: whether an LLM agent, an external command or the scripted policies play;
//! for an LLM agent every setting `run.json` keeps (name, model, sampling —
//! temperature, seed —, max turns, token budget, length limits, and whatever later
//! settings [`AgentInfo`] gains) except the endpoint's address, since the same model
//! served at another address (another port, a replay from a copied `--llm-cache`) is
//! the same agent; for a command its template and timeout.
//!
//! [`check_repeats`] settles `--repeats` against what the directory holds: a larger K
//! adds the missing trials (the resume key is instance × variant × trial), a smaller
//! K plays only its trials and keeps the rest.

use std::path::Path;

use crate::policy::agent::config::AgentInfo;
use crate::policy::agent_cmd::template::AgentCommandInfo;
use crate::record::output::{RunInfo, TRIAL_COLUMN, read_info};

/// Who plays a run, as `run.json` records it.
#[derive(Debug, Clone, Copy)]
pub struct Player<'a> {
    pub agent: Option<&'a AgentInfo>,
    pub agent_cmd: Option<&'a AgentCommandInfo>,
}

impl<'a> Player<'a> {
    /// The player `info` records.
    pub fn of(info: &'a RunInfo) -> Player<'a> {
        Player {
            agent: info.agent.as_ref(),
            agent_cmd: info.agent_cmd.as_ref(),
        }
    }

    /// True when both are the same player (the endpoint's address aside).
    fn same(&self, other: &Player<'_>) -> bool {
        let addressless = |a: &AgentInfo| AgentInfo {
            base_url: String::new(),
            ..a.clone()
        };
        self.agent.map(addressless) == other.agent.map(addressless)
            && self.agent_cmd == other.agent_cmd
    }

    /// The player for a message: the agent's settings as JSON, the command, or
    /// "the scripted policies".
    fn describe(&self) -> String {
        match (self.agent, self.agent_cmd) {
            (Some(a), _) => format!(
                "agent {}",
                serde_json::to_string(a).unwrap_or_else(|_| a.name.clone())
            ),
            (None, Some(c)) => format!(
                "--agent-cmd '{}' (timeout {} s)",
                c.template, c.timeout_secs
            ),
            (None, None) => "the scripted policies".to_string(),
        }
    }
}

/// Refuses to resume into `dir` when its `run.json` names another player than `new`
/// (see the module doc); a directory without `run.json` is a new run.
pub fn check_player(dir: &Path, new: Player<'_>) -> anyhow::Result<()> {
    let Some(old) = read_info(dir)? else {
        return Ok(());
    };
    let was = Player::of(&old);
    if was.same(&new) {
        return Ok(());
    }
    anyhow::bail!(
        "{} holds a run played by {}, but this run is played by {}: resuming would mix their rows. Pass another --out for this player, or the same agent settings to resume",
        dir.display(),
        was.describe(),
        new.describe()
    )
}

/// What a run with `--repeats repeats` does in `dir`: the trials `run.json` should
/// record (the most any run asked of the directory: a resume with a smaller K keeps
/// the trials already played, and reports go by the rows, not by this number), and a
/// note for the user when the directory asked for more. Refuses K > 1 on a directory
/// whose CSVs were written before the `trial` column: its rows could not tell the
/// trials apart.
pub fn check_repeats(dir: &Path, repeats: u32) -> anyhow::Result<(u32, Option<String>)> {
    if repeats > 1 {
        for name in ["instances.csv", "calls.csv"] {
            let path = dir.join(name);
            if let Some(header) = first_line(&path)?
                && !header.split(',').any(|c| c == TRIAL_COLUMN)
            {
                anyhow::bail!(
                    "{} was written by a navbench without the trial column: resume {} with --repeats 1, or pass another --out for --repeats {repeats}",
                    path.display(),
                    dir.display()
                );
            }
        }
    }
    let before = read_info(dir)?.map_or(1, |i| i.repeats());
    if before > repeats {
        let note = format!(
            "{} holds up to {before} trial(s) per pair; this run plays trials 1..={repeats} and keeps the others",
            dir.display()
        );
        return Ok((before, Some(note)));
    }
    Ok((repeats, None))
}

/// The first line of `path`; `None` when the file is absent or empty.
fn first_line(path: &Path) -> anyhow::Result<Option<String>> {
    use std::io::BufRead as _;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    let mut line = String::new();
    std::io::BufReader::new(file)
        .read_line(&mut line)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let line = line.trim_end();
    Ok((!line.is_empty()).then(|| line.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::output::RunOutput;

    fn agent(model: &str, temperature: f64, url: &str) -> AgentInfo {
        AgentInfo {
            name: "local".into(),
            model: model.into(),
            base_url: url.into(),
            temperature: Some(temperature),
            seed: Some(1),
            max_turns: 8,
            token_budget: 1000,
            max_completion_tokens: 100,
            max_tool_result_tokens: 100,
            provider: String::new(),
            extra_body: Default::default(),
        }
    }

    fn run_with(dir: &Path, a: Option<AgentInfo>) {
        let out = RunOutput::open(dir).unwrap();
        out.write_info(&RunInfo {
            agent: a,
            ..RunInfo::default()
        })
        .unwrap();
    }

    #[test]
    fn another_model_or_sampling_is_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let a = agent("smollm2", 0.0, "http://127.0.0.1:1/v1");
        run_with(dir.path(), Some(a.clone()));
        let same = |x: &AgentInfo| {
            check_player(
                dir.path(),
                Player {
                    agent: Some(x),
                    agent_cmd: None,
                },
            )
        };
        same(&a).unwrap();
        // The same agent at another address resumes.
        same(&agent("smollm2", 0.0, "http://127.0.0.1:2/v1")).unwrap();
        let e = same(&agent("qwen", 0.0, "http://127.0.0.1:1/v1"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"model\":\"smollm2\"") && e.contains("\"model\":\"qwen\""),
            "{e}"
        );
        let e = same(&agent("smollm2", 0.7, "http://127.0.0.1:1/v1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"temperature\":0.7"), "{e}");
        // Another reasoning effort ([extra_body]) is another player too.
        let mut effort = a.clone();
        effort
            .extra_body
            .insert("reasoning_effort".into(), "high".into());
        let e = same(&effort).unwrap_err().to_string();
        assert!(e.contains("\"reasoning_effort\":\"high\""), "{e}");
        let scripted = Player {
            agent: None,
            agent_cmd: None,
        };
        let e = check_player(dir.path(), scripted).unwrap_err().to_string();
        assert!(e.contains("the scripted policies"), "{e}");
    }

    #[test]
    fn repeats_grow_keep_the_most_and_old_files_refuse_trials() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(check_repeats(dir.path(), 3).unwrap(), (3, None));
        let out = RunOutput::open(dir.path()).unwrap();
        out.write_info(&RunInfo {
            repeats: Some(3),
            ..RunInfo::default()
        })
        .unwrap();
        drop(out);
        assert_eq!(check_repeats(dir.path(), 5).unwrap(), (5, None));
        let (kept, note) = check_repeats(dir.path(), 2).unwrap();
        assert_eq!(kept, 3);
        assert!(note.unwrap().contains("keeps the others"));
        // A directory written before the trial column takes only trial 1.
        let old = tempfile::tempdir().unwrap();
        std::fs::write(old.path().join("instances.csv"), "instance_id,variant\n").unwrap();
        assert_eq!(check_repeats(old.path(), 1).unwrap(), (1, None));
        let e = check_repeats(old.path(), 2).unwrap_err().to_string();
        assert!(
            e.contains("without the trial column") && e.contains("--repeats 1"),
            "{e}"
        );
    }

    #[test]
    fn a_new_directory_and_the_same_scripted_run_resume() {
        let dir = tempfile::tempdir().unwrap();
        let scripted = Player {
            agent: None,
            agent_cmd: None,
        };
        check_player(dir.path(), scripted).unwrap();
        run_with(dir.path(), None);
        check_player(dir.path(), scripted).unwrap();
    }
}
