//! Multi-SWE-bench records (ByteDance's multilingual benchmark: Java, TypeScript,
//! JavaScript, Go, Rust, C, C++), read into [`Instance`]s beside SWE-bench's.
//!
//! A Multi-SWE-bench line names its repository as `org` + `repo`, the pull request as
//! `number`, the issues it resolves as `resolved_issues` (each with a `title` and a
//! `body`), the fix as `fix_patch` (tests are in `test_patch`, which localization
//! ignores) and the base commit as `base.sha`. The mapping:
//! - `instance_id`: the record's own when it has one, else `{org}__{repo}-{number}`
//!   (the benchmark's naming);
//! - `repo`: `org/repo`; `base_commit`: `base.sha`; `patch`: `fix_patch`;
//! - `problem_statement`: each resolved issue's title and body, separated by a blank
//!   line, issues in the record's order; a record with no resolved issue falls back
//!   to the pull request's own `title` and `body`.
//!
//! [`is_multi_swe`] tells the two formats apart per line, so one file may mix them.

use serde::Deserialize;
use serde_json::Value;

use super::Instance;

/// One resolved issue of a record.
#[derive(Debug, Deserialize)]
struct Issue {
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: Option<String>,
}

/// The record's base: only the commit matters here.
#[derive(Debug, Deserialize)]
struct Base {
    sha: String,
}

/// The fields of a Multi-SWE-bench record that localization uses.
#[derive(Debug, Deserialize)]
struct Record {
    org: String,
    repo: String,
    number: u64,
    base: Base,
    fix_patch: String,
    #[serde(default)]
    instance_id: Option<String>,
    #[serde(default)]
    resolved_issues: Vec<Issue>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
}

/// Whether a parsed JSON line is a Multi-SWE-bench record rather than a SWE-bench
/// one: it has `fix_patch` and `org` and no `patch`.
pub fn is_multi_swe(v: &Value) -> bool {
    v.get("fix_patch").is_some() && v.get("org").is_some() && v.get("patch").is_none()
}

/// The instance of a Multi-SWE-bench record, or what is wrong with it.
pub fn instance(v: Value) -> Result<Instance, String> {
    let r: Record =
        serde_json::from_value(v).map_err(|e| format!("malformed Multi-SWE-bench record: {e}"))?;
    let statement = if r.resolved_issues.is_empty() {
        join(r.title.as_deref().unwrap_or(""), r.body.as_deref())
    } else {
        (r.resolved_issues.iter())
            .map(|i| join(&i.title, i.body.as_deref()))
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    Ok(Instance {
        instance_id: (r.instance_id)
            .unwrap_or_else(|| format!("{}__{}-{}", r.org, r.repo, r.number)),
        repo: format!("{}/{}", r.org, r.repo),
        base_commit: r.base.sha,
        problem_statement: statement,
        patch: r.fix_patch,
        ..Instance::default()
    })
}

/// `title`, a blank line, `body` (the body alone when there is no title, and so on).
fn join(title: &str, body: Option<&str>) -> String {
    let body = body.unwrap_or("").trim();
    match (title.trim(), body) {
        ("", b) => b.to_string(),
        (t, "") => t.to_string(),
        (t, b) => format!("{t}\n\n{b}"),
    }
}

#[cfg(test)]
mod tests {
    use crate::data::dataset::Dataset;

    const RECORD: &str = r#"{"org": "gin-gonic", "repo": "gin", "number": 3741, "state": "closed", "title": "fix(context): guard Next", "body": "Fixes #3740", "base": {"label": "gin-gonic:master", "ref": "master", "sha": "0123456789abcdef0123456789abcdef01234567"}, "resolved_issues": [{"number": 3740, "title": "Context.Next panics after Abort", "body": "Calling `c.Next()` after `c.Abort()` panics."}], "fix_patch": "diff --git a/context.go b/context.go\n", "test_patch": "diff --git a/context_test.go b/context_test.go\n"}"#;

    #[test]
    fn records_map_onto_instances() {
        let ds = Dataset::from_jsonl("multi", RECORD);
        assert!(ds.problems.is_empty(), "{:?}", ds.problems);
        let i = &ds.instances[0];
        assert_eq!(i.instance_id, "gin-gonic__gin-3741");
        assert_eq!(i.repo, "gin-gonic/gin");
        assert_eq!(i.base_commit, "0123456789abcdef0123456789abcdef01234567");
        assert_eq!(
            i.problem_statement,
            "Context.Next panics after Abort\n\nCalling `c.Next()` after `c.Abort()` panics."
        );
        assert!(i.patch.starts_with("diff --git a/context.go") && !i.patch.contains("_test"));
    }

    #[test]
    fn without_resolved_issues_the_pull_request_speaks_and_ids_are_kept() {
        let line = r#"{"instance_id": "own-id", "org": "o", "repo": "r", "number": 1, "title": "Fix A", "body": null, "base": {"sha": "abc"}, "fix_patch": "diff"}"#;
        let ds = Dataset::from_jsonl("multi", line);
        let i = &ds.instances[0];
        assert_eq!(
            (i.instance_id.as_str(), i.problem_statement.as_str()),
            ("own-id", "Fix A")
        );
    }

    #[test]
    fn broken_records_are_problems_that_name_the_field() {
        let no_base = r#"{"org": "o", "repo": "r", "number": 1, "fix_patch": "diff"}"#;
        let swe = r#"{"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc", "problem_statement": "p", "patch": "diff"}"#;
        let ds = Dataset::from_jsonl("mixed", &format!("{no_base}\n{swe}\n"));
        assert_eq!(
            ds.instances.len(),
            1,
            "a SWE-bench line in the same file still loads"
        );
        assert_eq!(ds.problems.len(), 1);
        assert_eq!(ds.problems[0].record, 1);
        assert!(
            ds.problems[0].message.contains("Multi-SWE-bench")
                && ds.problems[0].message.contains("base"),
            "{}",
            ds.problems[0].message
        );
    }
}
