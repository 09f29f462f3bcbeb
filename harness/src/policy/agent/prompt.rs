//! The one system prompt and the one task prompt every agent gets, whatever the
//! variant, so that a difference between variants is the tools'.
//!
//! Written in our words after LocAgent's localization prompt (the original's
//! `util/prompts`): the agent extracts what the issue names (modules, classes,
//! functions, files, error messages, traceback frames), looks them up with its tools,
//! reads the promising code, follows it to where the change must go, and answers with
//! a ranked list of locations in the format [`super::answer`] reads. The server's own
//! `instructions` (from its MCP handshake) follow the system prompt, as an agent's
//! client places them.

use std::path::Path;

/// The system prompt, with the server's `instructions` appended when it sent any.
pub fn system(server_instructions: Option<&str>) -> String {
    let mut s = String::from(SYSTEM);
    if let Some(i) = server_instructions.map(str::trim).filter(|i| !i.is_empty()) {
        s.push_str("\n\n# About your tools\n");
        s.push_str(i);
    }
    s
}

/// The task: the repository's root, the issue, and the answer format.
pub fn task(root: &Path, problem_statement: &str) -> String {
    format!(
        "The repository is checked out at `{}`; paths in your answer are relative to it.\n\n<issue>\n{}\n</issue>\n\n{}",
        root.display(),
        problem_statement.trim(),
        ANSWER_FORMAT
    )
}

const SYSTEM: &str = "You are a software engineer localizing the code that must change to resolve an issue in a repository. You do not fix the issue: you find where the fix goes.

Work in steps:
1. Read the issue and pull out what it names: modules, classes, functions, files, error messages, and the frames of any traceback.
2. Look these up with your tools, and read the code of the most promising places.
3. Follow the code from there (callers, callees, base classes, where a value is produced) to the places that must be edited, not just where the symptom shows.
4. Stop as soon as you are confident, and answer.

Use only the tools you are given. Keep tool calls focused: each result costs time and context.";

/// How the final answer is written; [`super::answer`] reads exactly this.
pub const ANSWER_FORMAT: &str = "When you are done, reply without calling a tool. Your final reply lists the locations to edit, one per line, most likely first, and nothing else:
path/to/file.py                 (a file)
path/to/file.py:Class           (a class)
path/to/file.py:Class.method    (a method)
path/to/file.py:function        (a function)
List up to 10 locations; name functions and methods where you can.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_follow_the_system_prompt_when_sent() {
        assert_eq!(system(None), SYSTEM);
        assert_eq!(system(Some("  ")), SYSTEM);
        let s = system(Some("Call init_repository first."));
        assert!(s.starts_with(SYSTEM));
        assert!(s.ends_with("Call init_repository first."));
    }

    #[test]
    fn the_task_carries_root_issue_and_format() {
        let t = task(Path::new("/w/x"), "  Money.allocate overflows\n");
        assert!(t.contains("`/w/x`"));
        assert!(t.contains("<issue>\nMoney.allocate overflows\n</issue>"));
        assert!(t.ends_with(ANSWER_FORMAT));
    }
}
