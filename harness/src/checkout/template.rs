//! `--repo-url` templates checked before a run touches anything: a typo in a template
//! (`{repo}` for `{name}`, `htps://`) would otherwise surface only as a failed fetch on
//! every instance's row, after the run has installed models and started servers.

use std::collections::BTreeSet;

use super::CheckoutError;

/// The placeholders a template may hold, filled from a repository's `owner/name`.
const PLACEHOLDERS: [&str; 2] = ["{owner}", "{name}"];

/// URL schemes git fetches from (libgit2's transports); anything else is a typo.
const SCHEMES: [&str; 7] = ["file", "http", "https", "ssh", "git", "git+ssh", "ssh+git"];

/// Checks `template` on its own (not empty; only `{owner}` and `{name}` in braces; a
/// scheme git knows) and against `repos`, the repositories it will be asked for: a
/// template naming neither placeholder sends every repository to the same place,
/// which is right for one repository (`--repo-url ../myproject`) and wrong for more.
pub fn check_template<'a>(
    template: &str,
    repos: impl IntoIterator<Item = &'a str>,
) -> Result<(), CheckoutError> {
    let bad = |why: String| CheckoutError::BadTemplate {
        template: template.to_string(),
        why,
    };
    if template.trim().is_empty() {
        return Err(bad("it is empty".into()));
    }
    check_braces(template).map_err(bad)?;
    if let Some((scheme, _)) = template.split_once("://")
        && !SCHEMES.contains(&scheme.to_ascii_lowercase().as_str())
    {
        return Err(bad(format!(
            "git cannot fetch from scheme '{scheme}://' (use one of {})",
            SCHEMES.map(|s| format!("{s}://")).join(", ")
        )));
    }
    let repos: BTreeSet<&str> = repos.into_iter().collect();
    if repos.len() > 1 && !PLACEHOLDERS.iter().any(|p| template.contains(p)) {
        let some: Vec<&str> = repos.iter().take(3).copied().collect();
        return Err(bad(format!(
            "it names neither {{owner}} nor {{name}}, so all {} repositories of the dataset ({}, …) would be fetched from the same place",
            repos.len(),
            some.join(", ")
        )));
    }
    Ok(())
}

/// Every `{` opens `{owner}` or `{name}`, and every `}` closes one.
fn check_braces(template: &str) -> Result<(), String> {
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        let tail = &rest[i..];
        if tail.starts_with('}') {
            return Err(format!(
                "a '}}' at byte {} closes no placeholder",
                template.len() - tail.len()
            ));
        }
        match PLACEHOLDERS.iter().find(|p| tail.starts_with(**p)) {
            Some(p) => rest = &tail[p.len()..],
            None => {
                let shown = match tail.find('}') {
                    Some(end) => format!("unknown placeholder {}", &tail[..=end]),
                    None => format!(
                        "'{{' at byte {} is never closed",
                        template.len() - tail.len()
                    ),
                };
                return Err(shown);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(template: &str, repos: &[&str]) -> String {
        match check_template(template, repos.iter().copied()) {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_templates_the_readme_shows_pass() {
        for t in [
            super::super::DEFAULT_URL_TEMPLATE,
            "file:///path/to/mirrors/{owner}+{name}/repo",
            "/srv/mirrors/{owner}/{name}.git",
            "git@github.com:{owner}/{name}.git",
            "SSH://host/{name}",
        ] {
            assert_eq!(why(t, &["a/b", "c/d"]), "", "{t}");
        }
        // One repository may come from a template without placeholders.
        assert_eq!(why("../myproject", &["local/myproject"]), "");
        assert_eq!(why("../myproject", &[]), "");
    }

    #[test]
    fn typos_are_refused_saying_what_is_wrong_and_how_to_write_one() {
        let e = why("https://github.com/{owner}/{repo}.git", &["a/b"]);
        assert!(e.contains("unknown placeholder {repo}"), "{e}");
        assert!(e.contains("--repo-url") && e.contains("{owner}"), "{e}");
        let e = why("https://github.com/{owner/{name}", &["a/b"]);
        assert!(e.contains("unknown placeholder {owner/{name}"), "{e}");
        assert!(why("/m/{owner}/{name", &[]).contains("never closed"));
        assert!(why("/m/owner}/{name}", &[]).contains("closes no placeholder"));
        let e = why("htps://github.com/{owner}/{name}.git", &[]);
        assert!(e.contains("scheme 'htps://'"), "{e}");
        assert!(why("  ", &[]).contains("empty"));
    }

    #[test]
    fn a_template_without_placeholders_serves_one_repository_only() {
        let e = why("/srv/one.git", &["a/b", "c/d", "a/b"]);
        assert!(e.contains("all 2 repositories"), "{e}");
        assert!(e.contains("a/b, c/d"), "{e}");
    }
}
