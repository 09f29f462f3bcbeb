//! [`Roots`]: what the built-in agent sees of the checkout's place on disk. The model
//! reads the repository at one fixed virtual root, [`VIRTUAL_ROOT`] (`/repo`), never
//! at `<cache>/worktrees/<instance>`: in its task prompt, in every tool result, and in
//! the arguments `calls.csv` records. So a conversation is the same text whatever
//! `--cache` directory, machine or user ran it, the `--llm-cache` keys are the same,
//! and a recorded run replays anywhere ([`super::cache`]).
//!
//! Data flow of one tool call: the model's arguments go to the server with the virtual
//! root mapped back to the real one ([`Roots::to_server`]); the server's text, its
//! error and the call's record come back with the real root (and its canonical form,
//! which servers may print instead) rewritten to the virtual one
//! ([`Roots::to_model`]). Answers under the virtual root are read like answers under
//! the real one ([`super::answer`]).

use std::path::Path;

use serde_json::Value;

pub use super::answer::VIRTUAL_ROOT;

/// The checkout's real root and the virtual root the model sees (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The root as the run names it and, when different, its canonical form; longest
    /// first, so a longer spelling is rewritten before a prefix of it.
    real: Vec<String>,
    /// The root as the run names it: what the servers get.
    given: String,
}

impl Roots {
    /// The roots of the checkout at `workdir`.
    pub fn new(workdir: &Path) -> Roots {
        let given = trimmed(&workdir.to_string_lossy());
        let mut real = vec![given.clone()];
        if let Ok(c) = std::fs::canonicalize(workdir) {
            let c = trimmed(&c.to_string_lossy());
            if !real.contains(&c) {
                real.push(c);
            }
        }
        real.retain(|r| !r.is_empty());
        real.sort_by_key(|r| std::cmp::Reverse(r.len()));
        Roots { real, given }
    }

    /// `text` with every occurrence of the real root rewritten to [`VIRTUAL_ROOT`]
    /// (an occurrence followed by more of a name, `<root>x`, is another path and kept).
    pub fn to_model(&self, text: &str) -> String {
        let mut out = text.to_string();
        for r in &self.real {
            if out.contains(r.as_str()) {
                out = replace_root(&out, r);
            }
        }
        out
    }

    /// The model's arguments as the server gets them: each string that is the virtual
    /// root or starts with `/repo/` names the real root instead.
    pub fn to_server(&self, args: &Value) -> Value {
        let real = &self.given;
        match args {
            Value::String(s) => match s.strip_prefix(VIRTUAL_ROOT) {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                    Value::String(format!("{real}{rest}"))
                }
                _ => args.clone(),
            },
            Value::Array(items) => Value::Array(items.iter().map(|v| self.to_server(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.to_server(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// `text` with `root` rewritten to the virtual root where it ends a name.
fn replace_root(text: &str, root: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(root) {
        let after = &rest[i + root.len()..];
        let ends = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')));
        out.push_str(&rest[..i]);
        out.push_str(if ends { VIRTUAL_ROOT } else { root });
        rest = after;
    }
    out.push_str(rest);
    out
}

fn trimmed(s: &str) -> String {
    s.trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_reads_the_virtual_root_and_arguments_go_back_to_the_real_one() {
        let dir = tempfile::tempdir().unwrap();
        let r = Roots::new(dir.path());
        let real = dir.path().to_string_lossy().to_string();
        let text = format!("{real}/pkg/a.py:3: x\nsee {real}\n{real}2/b.py\n");
        assert_eq!(
            r.to_model(&text),
            format!("/repo/pkg/a.py:3: x\nsee /repo\n{real}2/b.py\n")
        );
        let args = json!({"path": "/repo/pkg/a.py", "paths": ["/repo", "pkg/b.py", "/repository"], "n": 3});
        let back = r.to_server(&args);
        assert_eq!(back["path"], json!(format!("{real}/pkg/a.py")));
        assert_eq!(
            back["paths"],
            json!([real.clone(), "pkg/b.py", "/repository"])
        );
        assert_eq!(back["n"], json!(3));
        // What the model sent is what the record shows.
        assert_eq!(r.to_model(&back.to_string()), args.to_string());
    }

    #[test]
    fn a_symlinked_root_is_rewritten_in_both_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real");
        std::fs::create_dir(&target).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let r = Roots::new(&link);
        let canon = std::fs::canonicalize(&target).unwrap();
        let text = format!("{}/a.py and {}/b.py", link.display(), canon.display());
        assert_eq!(r.to_model(&text), "/repo/a.py and /repo/b.py");
    }
}
