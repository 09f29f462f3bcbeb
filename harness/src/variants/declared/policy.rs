//! Running a declared policy on one instance: the setup calls, then every step (one
//! call, or one per extracted identifier / path / frame), each response turned into
//! locations by the step's extractor, mapped to LocAgent's file, module and function
//! ids the way the built-in policies map them ([`EntityIndex`]), and fused over all
//! calls by weighted reciprocal rank: a call of weight `w` gives its `r`-th file,
//! module and function `w / (k + r)`. A call's weight is the step's weight times, for
//! `for_each = "identifiers"`, the term's own weight from [`terms::extract`] (how
//! strongly the issue marks it as code). Test files are scaled by the file's
//! `test_file_weight`. The answer is the fused pool; the run moves tests, derived
//! code, docs and examples below its source and cuts it to `answer_len`
//! (`policy::fitted::finish`), as for every built-in policy.

use std::collections::BTreeMap;
use std::path::Path;

use super::extract::Location;
use super::{Declared, Step, template};
use crate::data::dataset::Locations;
use crate::policy::entities::EntityIndex;
use crate::policy::fitted::POOL_LEN;
use crate::policy::ranking::Scores;
use crate::policy::terms::{self, Extracted};
use crate::policy::{Driver, Task, is_test_file};

/// One call of a step: its template values and its weight in the fusion.
pub struct Planned {
    pub values: BTreeMap<&'static str, String>,
    pub weight: f64,
}

/// The calls `step` makes on an instance whose issue gave `ex`.
pub fn plan(step: &Step, ex: &Extracted, base: &BTreeMap<&'static str, String>) -> Vec<Planned> {
    let with = |extra: Vec<(&'static str, String)>, weight: f64| {
        let mut values = base.clone();
        values.extend(extra);
        Planned {
            values,
            weight: step.weight * weight,
        }
    };
    match step.for_each.as_deref() {
        Some("identifiers") => ex
            .terms
            .iter()
            .take(step.limit)
            .map(|t| {
                with(
                    vec![
                        ("identifier", t.text.clone()),
                        ("identifier_regex", regex::escape(&t.text)),
                    ],
                    t.weight,
                )
            })
            .collect(),
        Some("words") => {
            let issue = base.get("problem_statement").map_or("", String::as_str);
            terms::words_to_search(ex, issue)
                .into_iter()
                .take(step.limit)
                .map(|w| {
                    let regex = regex::escape(&w);
                    with(vec![("word", w), ("word_regex", regex)], 1.0)
                })
                .collect()
        }
        Some("paths") => ex
            .paths
            .iter()
            .take(step.limit)
            .map(|p| {
                let name = p.rsplit('/').next().unwrap_or(p).to_string();
                with(vec![("path", p.clone()), ("path_name", name)], 1.0)
            })
            .collect(),
        Some("frames") => ex
            .frames
            .iter()
            .take(step.limit)
            .map(|f| {
                with(
                    vec![
                        ("frame_path", f.path.clone()),
                        ("frame_line", f.line.to_string()),
                        ("frame_func", f.func.clone()),
                    ],
                    1.0,
                )
            })
            .collect(),
        _ => vec![with(Vec::new(), 1.0)],
    }
}

/// The values every template of `task` may use.
pub fn base_values(task: &Task<'_>, ex: &Extracted) -> BTreeMap<&'static str, String> {
    let ids: Vec<&str> = ex.terms.iter().map(|t| t.text.as_str()).take(10).collect();
    BTreeMap::from([
        ("root", task.workdir.to_string_lossy().into_owned()),
        ("problem_statement", task.instance.problem_statement.clone()),
        ("identifiers", ids.join(" ")),
        (
            "identifiers_regex",
            ids.iter()
                .map(|i| regex::escape(i))
                .collect::<Vec<_>>()
                .join("|"),
        ),
    ])
}

/// `path` as a file of the tree at `root` (relative, `/`-separated), if it is one.
pub fn normalize(root: &Path, path: &str) -> Option<String> {
    let p = Path::new(path.trim());
    let rel = if p.is_absolute() {
        p.strip_prefix(root).ok()?
    } else {
        p
    };
    let rel = rel.to_string_lossy().trim_start_matches("./").to_string();
    (!rel.is_empty() && !rel.contains("..") && root.join(&rel).is_file()).then_some(rel)
}

/// The fused scores of the three levels.
#[derive(Default)]
pub struct Fused {
    pub files: Scores,
    pub modules: Scores,
    pub functions: Scores,
}

impl Fused {
    /// Adds one call's locations with weight `w`.
    pub fn add(
        &mut self,
        d: &Declared,
        root: &Path,
        index: &mut EntityIndex,
        locs: &[Location],
        w: f64,
    ) {
        let (mut files, mut modules, mut functions) = (Vec::new(), Vec::new(), Vec::new());
        let push = |v: &mut Vec<String>, id: String| {
            if !v.contains(&id) {
                v.push(id);
            }
        };
        for loc in locs {
            let Some(rel) = normalize(root, &loc.path) else {
                continue;
            };
            let ids = match (&loc.line, &loc.symbol) {
                (Some(line), _) => index.ids_at(root, &rel, *line),
                (None, Some(sym)) => symbol_ids(index, root, &rel, sym),
                (None, None) => Default::default(),
            };
            if let Some(f) = ids.function {
                push(&mut functions, f);
            }
            if let Some(m) = ids.module {
                push(&mut modules, m);
            }
            push(&mut files, rel);
        }
        let k = d.fusion.k;
        let tw = d.fusion.test_file_weight;
        for (ranking, scores) in [
            (files, &mut self.files),
            (modules, &mut self.modules),
            (functions, &mut self.functions),
        ] {
            for (i, id) in ranking.iter().enumerate() {
                let file = id.split(':').next().unwrap_or(id);
                let t = if is_test_file(file) { tw } else { 1.0 };
                scores.add(id, w * t / (k + (i + 1) as f64));
            }
        }
    }
}

/// The ids of a symbol named in a response: a qualified name (`Cls.meth`) or a short
/// one; the first definition with that name wins.
fn symbol_ids(
    index: &mut EntityIndex,
    root: &Path,
    rel: &str,
    sym: &str,
) -> crate::policy::entities::LineIds {
    let exact = index.ids_of(root, rel, sym);
    if exact.module.is_some() {
        return exact;
    }
    let short = sym.rsplit(['.', ':']).next().unwrap_or(sym);
    let line = (index.entities(root, rel).into_iter())
        .find(|e| e.name == short)
        .map(|e| e.start_line);
    line.map(|l| index.ids_at(root, rel, l)).unwrap_or_default()
}

/// Runs the setup calls; the first that fails stops the policy with its message.
pub async fn run_setup(
    d: &Declared,
    driver: &mut Driver<'_>,
    base: &BTreeMap<&'static str, String>,
) -> anyhow::Result<()> {
    for c in &d.setup {
        let args = template::render_args(&c.args, base).map_err(anyhow::Error::msg)?;
        let out = match c.timeout {
            Some(t) => driver.call_within(&c.tool, args, t).await,
            None => driver.call(&c.tool, args).await,
        };
        if out.is_error {
            anyhow::bail!(
                "setup call {} failed: {}",
                c.tool,
                out.error.unwrap_or_else(|| out.text.clone())
            );
        }
    }
    Ok(())
}

/// The policy (see the module doc). Failing calls are recorded by the driver and add
/// nothing; the answer is what the other calls found.
pub async fn localize(
    d: &Declared,
    driver: &mut Driver<'_>,
    task: &Task<'_>,
) -> anyhow::Result<Locations> {
    let ex = terms::extract(&task.instance.problem_statement);
    let base = base_values(task, &ex);
    run_setup(d, driver, &base).await?;
    let mut fused = Fused::default();
    let mut index = EntityIndex::default();
    for step in &d.steps {
        for p in plan(step, &ex, &base) {
            let args =
                template::render_args(&step.call.args, &p.values).map_err(anyhow::Error::msg)?;
            let out = driver.call(&step.call.tool, args).await;
            if out.is_error {
                continue;
            }
            let locs = step.extractor.extract(out.structured.as_ref(), &out.text);
            fused.add(d, task.workdir, &mut index, &locs, p.weight);
        }
    }
    // The fused pool: the run moves tests and derived code below its source and
    // cuts it to `answer_len` (`policy::fitted::finish`), as for a built-in policy,
    // so a test in the top `answer_len` gives its place to the next source entry.
    let n = POOL_LEN.max(d.fusion.answer_len);
    let pool = |s: &Scores| s.ranked().into_iter().take(n).collect();
    Ok(Locations {
        files: pool(&fused.files),
        modules: pool(&fused.modules),
        functions: pool(&fused.functions),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_to_files_of_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("pkg/a.py"), "x = 1\n").unwrap();
        let abs = dir.path().join("pkg/a.py").to_string_lossy().into_owned();
        assert_eq!(normalize(dir.path(), &abs).as_deref(), Some("pkg/a.py"));
        assert_eq!(
            normalize(dir.path(), "./pkg/a.py").as_deref(),
            Some("pkg/a.py")
        );
        assert_eq!(normalize(dir.path(), "pkg/b.py"), None);
        assert_eq!(normalize(dir.path(), "/elsewhere/pkg/a.py"), None);
        assert_eq!(normalize(dir.path(), "pkg"), None);
    }

    #[test]
    fn locations_map_to_locagent_ids_and_fuse_by_rank() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg/tests")).unwrap();
        let src = "class Cart:\n    def total(self):\n        return 1\n\ndef top():\n    pass\n";
        std::fs::write(dir.path().join("pkg/a.py"), src).unwrap();
        std::fs::write(
            dir.path().join("pkg/tests/test_a.py"),
            "def test_x():\n    pass\n",
        )
        .unwrap();
        let file = "name = \"f\"\n[server]\ncommand = \"x\"\n[fusion]\ntest_file_weight = 0.5\n[[step]]\ntool = \"t\"\nextract = { regex = '(?P<path>\\S+)' }\n";
        let d = Declared::from_str(file, Path::new("f.toml")).unwrap();
        let loc = |path: &str, line: Option<usize>, symbol: Option<&str>| Location {
            path: path.into(),
            line,
            symbol: symbol.map(Into::into),
        };
        let abs = dir.path().join("pkg/a.py").to_string_lossy().into_owned();
        let mut fused = Fused::default();
        let mut index = EntityIndex::default();
        let call = [
            loc("pkg/tests/test_a.py", Some(1), None),
            loc(&abs, None, Some("Cart.total")),
            loc("pkg/a.py", None, Some("top")),
            loc("gone.py", Some(1), None),
        ];
        fused.add(&d, dir.path(), &mut index, &call, 1.0);
        assert_eq!(
            fused.functions.ranked(),
            [
                "pkg/a.py:Cart.total",
                "pkg/a.py:top",
                "pkg/tests/test_a.py:test_x"
            ]
        );
        assert_eq!(fused.modules.ranked()[0], "pkg/a.py:Cart");
        // File ranks: the test file came first but is scaled by 0.5: 0.5/61 < 1/62.
        assert_eq!(fused.files.ranked(), ["pkg/a.py", "pkg/tests/test_a.py"]);
        // A second call's first place adds 1/(k+1).
        fused.add(
            &d,
            dir.path(),
            &mut index,
            &[loc("pkg/a.py", Some(5), None)],
            2.0,
        );
        assert_eq!(fused.functions.ranked()[0], "pkg/a.py:top");
    }
}
