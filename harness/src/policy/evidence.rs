//! Evidence arithmetic the policies share: what one name match is worth when the name
//! is defined in several places, how entity scores roll up to modules and files, how
//! much of the issue's vocabulary a piece of code uses, and which repository file a
//! path quoted in an issue (often absolute, from another machine) refers to.
//!
//! All of it is deterministic: inputs come in rank order and [`Scores`] breaks ties
//! by first appearance.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::ranking::Scores;
use super::terms::Term;

static IDENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").expect("valid regex"));

/// Weight of one definition of a name that `defs` entities define: `1/√defs`. A name
/// defined once points at one place; a name every class defines says little alone.
pub fn specificity(defs: usize) -> f64 {
    if defs == 0 {
        0.0
    } else {
        1.0 / (defs as f64).sqrt()
    }
}

/// Rolls item scores up to groups (entities to their file or module): a group scores
/// `Σ sᵢ / (i + 1)` over its items' scores in descending order, so its best item
/// counts fully and further items add with diminishing weight (evidence spread over a
/// file counts, but fifty weak hits do not beat one strong one). Items whose group is
/// `None` are skipped. Groups are first seen in the order of `items`.
pub fn roll_up<F>(items: &[(String, f64)], group_of: F) -> Scores
where
    F: Fn(&str) -> Option<String>,
{
    let mut order: Vec<String> = Vec::new();
    let mut members: HashMap<String, Vec<f64>> = HashMap::new();
    for (id, s) in items {
        if let Some(g) = group_of(id) {
            if !members.contains_key(&g) {
                order.push(g.clone());
            }
            members.entry(g).or_default().push(*s);
        }
    }
    let mut out = Scores::default();
    for g in order {
        let mut v = members.remove(&g).unwrap_or_default();
        v.sort_by(|a, b| b.total_cmp(a));
        let total: f64 = v.iter().enumerate().map(|(i, s)| s / (i + 1) as f64).sum();
        out.add(&g, total);
    }
    out
}

/// Share of the terms' weight whose term occurs in `code` as a whole identifier
/// (0 to 1): code that uses much of the issue's vocabulary is more likely the place.
pub fn term_coverage(code: &str, terms: &[Term]) -> f64 {
    let total: f64 = terms.iter().map(|t| t.weight).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let idents: HashSet<&str> = IDENT.find_iter(code).map(|m| m.as_str()).collect();
    let found: f64 = terms
        .iter()
        .filter(|t| idents.contains(t.text.as_str()))
        .map(|t| t.weight)
        .sum();
    found / total
}

/// The repository file (relative to `root`) that a source path quoted in an issue
/// names: the longest suffix of the quoted path that is a file under `root`.
/// Tracebacks quote absolute paths from the reporter's machine
/// (`/usr/lib/python3/site-packages/pkg/a.py`, `/home/u/go/pkg/mod/…/gin/context.go`)
/// whose tail is the repository path. A Java frame gives the package path instead
/// (`com/pkg/Type.java`), a tail of the repository path
/// (`src/main/java/com/pkg/Type.java`): when no suffix is a file, the first file of
/// the tree (in sorted order) whose path ends with it is taken.
pub fn resolve_path(root: &Path, quoted: &str) -> Option<String> {
    let quoted = quoted.trim().trim_start_matches("./").replace('\\', "/");
    super::languages::family_of(&quoted)?;
    let parts: Vec<&str> = quoted.split('/').filter(|p| !p.is_empty()).collect();
    let by_suffix = (0..parts.len())
        .map(|i| parts[i..].join("/"))
        .find(|rel| !rel.split('/').any(|p| p == "..") && root.join(rel).is_file());
    if by_suffix.is_some() || !quoted.ends_with(".java") || parts.contains(&"..") {
        return by_suffix;
    }
    file_ending_with(root, "", &format!("/{}", parts.join("/")))
}

/// The first file under `root/dir` (sorted walk, hidden and dependency directories
/// skipped) whose `/`-prefixed relative path ends with `tail`.
fn file_ending_with(root: &Path, dir: &str, tail: &str) -> Option<String> {
    let mut entries: Vec<(String, bool)> = std::fs::read_dir(root.join(dir))
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            Some((name, e.file_type().ok()?.is_dir()))
        })
        .collect();
    entries.sort();
    for (name, is_dir) in entries {
        let rel = if dir.is_empty() {
            name.clone()
        } else {
            format!("{dir}/{name}")
        };
        if is_dir {
            if name.starts_with('.') || matches!(name.as_str(), "node_modules" | "target") {
                continue;
            }
            if let Some(found) = file_ending_with(root, &rel, tail) {
                return Some(found);
            }
        } else if format!("/{rel}").ends_with(tail) {
            return Some(rel);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str, weight: f64) -> Term {
        Term {
            text: text.to_string(),
            weight,
            count: 1,
        }
    }

    #[test]
    fn a_name_defined_once_outweighs_a_common_one() {
        assert_eq!(specificity(0), 0.0);
        assert_eq!(specificity(1), 1.0);
        assert!((specificity(4) - 0.5).abs() < 1e-12);
        assert!(specificity(2) > specificity(3));
    }

    #[test]
    fn roll_up_counts_the_best_item_fully_and_the_rest_less() {
        // Graph ids as the codegraph policy scores them.
        let items = vec![
            (
                "src/flask/scaffold.py:Scaffold.add_url_rule".to_string(),
                1.0,
            ),
            (
                "src/flask/blueprints.py:Blueprint.add_url_rule".to_string(),
                0.9,
            ),
            ("src/flask/blueprints.py:Blueprint".to_string(), 0.8),
            (
                "src/flask/blueprints.py:Blueprint.register".to_string(),
                0.4,
            ),
        ];
        let files = roll_up(&items, |id| id.split(':').next().map(String::from));
        assert_eq!(
            files.ranked(),
            vec!["src/flask/blueprints.py", "src/flask/scaffold.py"]
        );
        let expected = 0.9 + 0.8 / 2.0 + 0.4 / 3.0;
        assert!((files.get("src/flask/blueprints.py") - expected).abs() < 1e-12);
        // Skipped items and an empty input give nothing.
        assert!(roll_up(&items, |_| None).is_empty());
        assert!(roll_up(&[], |id| Some(id.to_string())).is_empty());
    }

    #[test]
    fn coverage_counts_whole_identifiers_by_weight() {
        let code = "def from_file(self, filename, load, silent=False):\n    with open(filename) as f:\n        obj = load(f)\n";
        let terms = vec![term("from_file", 1.0), term("load", 0.5), term("mode", 0.5)];
        // `mode` is not an identifier of the code (it only occurs inside nothing).
        assert!((term_coverage(code, &terms) - 0.75).abs() < 1e-12);
        assert_eq!(term_coverage(code, &[term("fil", 1.0)]), 0.0);
        assert_eq!(term_coverage(code, &[]), 0.0);
    }

    #[test]
    fn quoted_paths_resolve_to_the_longest_repository_suffix() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("seaborn/_core")).unwrap();
        std::fs::write(root.join("seaborn/_oldcore.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("seaborn/_core/plot.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("plot.py"), "x = 1\n").unwrap();
        let site = "/home/u/.venv/lib/python3.9/site-packages/seaborn/_oldcore.py";
        assert_eq!(
            resolve_path(root, site).as_deref(),
            Some("seaborn/_oldcore.py")
        );
        assert_eq!(
            resolve_path(root, "./seaborn/_core/plot.py").as_deref(),
            Some("seaborn/_core/plot.py")
        );
        assert_eq!(
            resolve_path(root, "other/plot.py").as_deref(),
            Some("plot.py")
        );
        assert_eq!(resolve_path(root, "missing.py"), None);
        assert_eq!(resolve_path(root, "seaborn/_core"), None);
        assert_eq!(
            resolve_path(root, "../seaborn/_oldcore.py").as_deref(),
            Some("seaborn/_oldcore.py")
        );
    }

    #[test]
    fn java_package_paths_resolve_under_a_source_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("gson/src/main/java/com/google/gson")).unwrap();
        std::fs::create_dir_all(root.join("gson/src/test/java/com/google/gson")).unwrap();
        std::fs::write(
            root.join("gson/src/main/java/com/google/gson/Gson.java"),
            "",
        )
        .unwrap();
        std::fs::write(
            root.join("gson/src/test/java/com/google/gson/GsonTest.java"),
            "",
        )
        .unwrap();
        assert_eq!(
            resolve_path(root, "com/google/gson/Gson.java").as_deref(),
            Some("gson/src/main/java/com/google/gson/Gson.java")
        );
        assert_eq!(resolve_path(root, "com/google/gson/Missing.java"), None);
        // Other languages' tails are not searched for: a Python path must be a suffix.
        std::fs::create_dir_all(root.join("examples")).unwrap();
        std::fs::write(root.join("examples/app.py"), "").unwrap();
        assert_eq!(resolve_path(root, "app.py"), None);
        // Go module cache paths resolve by their tail.
        std::fs::write(root.join("context.go"), "").unwrap();
        assert_eq!(
            resolve_path(
                root,
                "/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/context.go"
            )
            .as_deref(),
            Some("context.go")
        );
    }
}
