//! Benchmark instances: SWE-bench-style JSONL (SWE-bench, SWE-bench Multilingual,
//! Loc-Bench; Multi-SWE-bench's records too, [`multi_swe`]) and parquet, and the
//! embedded `mini` set.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod multi_swe;
mod parquet_file;

/// Ranked or gold locations at LocAgent's three levels.
///
/// Ids follow LocAgent's graph: files are repo-relative paths (`pkg/mod.py`), modules
/// are `pkg/mod.py:Class` or `pkg/mod.py:func`, functions are `pkg/mod.py:Class.method`
/// or `pkg/mod.py:func` (a class's `__init__` is attributed to the class itself).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Locations {
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub functions: Vec<String>,
}

impl Locations {
    /// LocAgent's notebook path: gold from a list of edited function ids
    /// (`edit_functions` in `czlll/SWE-bench_Lite` and Loc-Bench). Files are the unique
    /// `split(':')[0]`, modules `file:` + the first dotted component, functions verbatim.
    pub fn from_edit_functions(ids: &[String]) -> Locations {
        let mut loc = Locations::default();
        for id in ids {
            let (file, qual) = id.split_once(':').unwrap_or((id.as_str(), ""));
            push_unique(&mut loc.files, file.to_string());
            if !qual.is_empty() {
                let first = qual.split('.').next().unwrap_or(qual);
                push_unique(&mut loc.modules, format!("{file}:{first}"));
            }
            push_unique(&mut loc.functions, id.clone());
        }
        loc
    }

    /// True when no level has a location.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.modules.is_empty() && self.functions.is_empty()
    }
}

/// Appends `item` unless it is already present (keeps first-seen order).
pub fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// Ranked predictions in LocAgent's output format (`found_files`, `found_modules`,
/// `found_entities`), as the dev dataset's `locagent_claude35` field carries them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FoundLocations {
    #[serde(default)]
    pub found_files: Vec<String>,
    #[serde(default)]
    pub found_modules: Vec<String>,
    #[serde(default)]
    pub found_entities: Vec<String>,
}

impl From<FoundLocations> for Locations {
    fn from(f: FoundLocations) -> Self {
        Locations {
            files: f.found_files,
            modules: f.found_modules,
            functions: f.found_entities,
        }
    }
}

/// One localization task: a repository at a commit, an issue text, and the patch that
/// fixed it (the source of the gold locations).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    pub base_commit: String,
    pub problem_statement: String,
    pub patch: String,
    /// Gold locations shipped with the dataset, if any (checked against our derivation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<Locations>,
    /// LocAgent's `edit_functions` field (czlll/SWE-bench_Lite, Loc-Bench), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_functions: Option<Vec<String>>,
    /// Published LocAgent + Claude-3.5 predictions (dev dataset only): a metric fixture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locagent_claude35: Option<FoundLocations>,
}

impl Instance {
    /// The dataset's own gold: the `gold` object, else one derived from `edit_functions`.
    pub fn dataset_gold(&self) -> Option<Locations> {
        self.gold.clone().or_else(|| {
            self.edit_functions
                .as_deref()
                .map(Locations::from_edit_functions)
        })
    }

    /// `(owner, name)` of `repo`; errors when `repo` is not `owner/name`.
    pub fn owner_name(&self) -> Result<(&str, &str), DatasetError> {
        match self.repo.split_once('/') {
            Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => Ok((o, n)),
            _ => Err(DatasetError::Invalid(format!(
                "instance {}: repo '{}' is not of the form owner/name",
                self.instance_id, self.repo
            ))),
        }
    }
}

/// Why a dataset could not be read at all (single bad records are [`Problem`]s instead).
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error(
        "dataset file {path} not found: pass --dataset with a .jsonl or .parquet file, or `mini` or `dev` for an embedded dataset"
    )]
    NotFound { path: PathBuf },
    #[error("cannot read dataset {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read parquet dataset {path}: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("dataset {path} has extension '{ext}': use a .jsonl, .json or .parquet file")]
    UnknownFormat { path: PathBuf, ext: String },
    #[error("{0}")]
    Invalid(String),
}

/// A record that was skipped, with where it was and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// 1-based line (JSONL) or row (parquet) number.
    pub record: usize,
    pub message: String,
}

/// A loaded dataset: the valid instances in file order, and the records that were skipped.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// A short name for reports (`mini`, or the file's stem).
    pub name: String,
    pub instances: Vec<Instance>,
    pub problems: Vec<Problem>,
}

impl Dataset {
    /// Reads a `.jsonl`/`.json` (one object a line) or `.parquet` file.
    pub fn load(path: &Path) -> Result<Dataset, DatasetError> {
        if !path.exists() {
            return Err(DatasetError::NotFound {
                path: path.to_path_buf(),
            });
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "dataset".into());
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "jsonl" | "json" | "ndjson" => {
                let text = std::fs::read_to_string(path).map_err(|source| DatasetError::Io {
                    path: path.to_path_buf(),
                    source,
                })?;
                Ok(Dataset::from_jsonl(&name, &text))
            }
            "parquet" => parquet_file::read(path).map(|(instances, problems)| Dataset {
                name,
                instances,
                problems,
            }),
            _ => Err(DatasetError::UnknownFormat {
                path: path.to_path_buf(),
                ext,
            }),
        }
    }

    /// Parses JSONL text; malformed lines become [`Problem`]s with their line number.
    pub fn from_jsonl(name: &str, text: &str) -> Dataset {
        let mut ds = Dataset {
            name: name.to_string(),
            ..Dataset::default()
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<serde_json::Value>(line)
                .map_err(|e| format!("malformed JSON record: {e}"))
                .and_then(|v| {
                    if multi_swe::is_multi_swe(&v) {
                        multi_swe::instance(v)
                    } else {
                        serde_json::from_value::<Instance>(v)
                            .map_err(|e| format!("malformed JSON record: {e}"))
                    }
                });
            match parsed {
                Ok(inst) => ds.push_checked(i + 1, inst),
                Err(message) => ds.problems.push(Problem {
                    record: i + 1,
                    message,
                }),
            }
        }
        ds
    }

    fn push_checked(&mut self, record: usize, inst: Instance) {
        let mut missing = Vec::new();
        for (field, value) in [
            ("instance_id", &inst.instance_id),
            ("repo", &inst.repo),
            ("base_commit", &inst.base_commit),
            ("patch", &inst.patch),
        ] {
            if value.trim().is_empty() {
                missing.push(field);
            }
        }
        let message = if !missing.is_empty() {
            Some(format!("empty required field(s): {}", missing.join(", ")))
        } else if let Err(e) = inst.owner_name() {
            Some(e.to_string())
        } else if self
            .instances
            .iter()
            .any(|x| x.instance_id == inst.instance_id)
        {
            Some(format!(
                "duplicate instance_id '{}': kept the first",
                inst.instance_id
            ))
        } else {
            None
        };
        match message {
            Some(message) => self.problems.push(Problem { record, message }),
            None => self.instances.push(inst),
        }
    }

    /// Keeps only the named instances (in dataset order); unknown ids are an error that
    /// lists a few valid ones.
    pub fn select_ids(&mut self, ids: &[String]) -> Result<(), DatasetError> {
        let unknown: Vec<&String> = ids
            .iter()
            .filter(|id| !self.instances.iter().any(|x| &x.instance_id == *id))
            .collect();
        if !unknown.is_empty() {
            let some: Vec<&str> = self
                .instances
                .iter()
                .take(5)
                .map(|x| x.instance_id.as_str())
                .collect();
            return Err(DatasetError::Invalid(format!(
                "unknown instance id(s) {unknown:?} in dataset '{}'; valid ids look like {some:?} (run `navbench gold --dataset …` to list them)",
                self.name
            )));
        }
        self.instances.retain(|x| ids.contains(&x.instance_id));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc", "problem_statement": "p", "patch": "diff"}"#;

    #[test]
    fn malformed_lines_are_reported_with_line_numbers_and_skipped() {
        let text = format!(
            "{GOOD}\n{{not json\n\n{}\n{}\n",
            r#"{"instance_id": "o__r-2", "repo": "noslash", "base_commit": "a", "problem_statement": "", "patch": "d"}"#,
            GOOD
        );
        let ds = Dataset::from_jsonl("t", &text);
        assert_eq!(ds.instances.len(), 1);
        let lines: Vec<usize> = ds.problems.iter().map(|p| p.record).collect();
        assert_eq!(lines, vec![2, 4, 5]);
        assert!(ds.problems[0].message.contains("malformed JSON"));
        assert!(ds.problems[1].message.contains("owner/name"));
        assert!(ds.problems[2].message.contains("duplicate"));
    }

    #[test]
    fn missing_file_says_what_to_pass() {
        let err = Dataset::load(Path::new("/nonexistent/x.jsonl")).unwrap_err();
        assert!(err.to_string().contains("--dataset"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.csv");
        std::fs::write(&p, "a").unwrap();
        let err = Dataset::load(&p).unwrap_err();
        assert!(err.to_string().contains(".parquet"), "{err}");
    }

    #[test]
    fn edit_functions_give_locagent_gold() {
        let ids = vec![
            "a/b.py:Cls.meth".to_string(),
            "a/b.py:func".to_string(),
            "c.py:Outer.Inner.m".to_string(),
        ];
        let loc = Locations::from_edit_functions(&ids);
        assert_eq!(loc.files, vec!["a/b.py", "c.py"]);
        assert_eq!(loc.modules, vec!["a/b.py:Cls", "a/b.py:func", "c.py:Outer"]);
        assert_eq!(loc.functions, ids);
    }

    #[test]
    fn dev_dataset_loads_whole() {
        let ds = Dataset::from_jsonl("dev", crate::run::inputs::DEV_DATASET);
        assert_eq!(ds.instances.len(), 24, "{:?}", ds.problems);
        assert!(ds.problems.is_empty());
        assert!(
            ds.instances
                .iter()
                .all(|i| i.gold.is_some() && i.locagent_claude35.is_some())
        );
    }
}
