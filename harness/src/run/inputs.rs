//! What `navbench run` was given, read and checked before the run writes, fetches,
//! installs or starts anything ([`check`]): the dataset (a built-in name, or a file
//! that exists and parses), the instance selection (`--instances`, `--limit`,
//! `--shard`), the `--repo-url` template, and the variants (names, declaration files,
//! server binaries). A typo then costs an instant error instead of following the
//! minutes a first run spends installing and distilling the retrieval models.
//!
//! [`CheckedInputs::build`] then writes what reading avoided (the embedded `mini`
//! repository), once the run holds its output directory.

use std::collections::HashSet;
use std::path::Path;

use crate::checkout::{RepoCache, check_template};
use crate::data::dataset::Dataset;
use crate::data::mini;
use crate::run::config::RunConfig;
use crate::run::shard::dataset_fingerprint;
use crate::variants::{self, ReadyVariant};

/// The dev dataset (24 SWE-bench Lite instances), embedded for `--dataset dev`.
pub const DEV_DATASET: &str = include_str!("../../../datasets/dev/swe-bench-lite-dev.jsonl");

/// A run's inputs, checked; nothing written yet.
pub struct CheckedInputs {
    /// The selected instances, in dataset order (the unbuilt `mini` tasks' commits are
    /// stand-ins until [`CheckedInputs::build`]).
    dataset: Dataset,
    /// `--dataset mini`, its repository still to be built.
    unbuilt_mini: bool,
    /// Fingerprint of the whole dataset (empty while `mini` is unbuilt: its commits
    /// are part of it).
    fingerprint: String,
    /// Valid instances in the whole dataset, before the selection.
    dataset_instances: usize,
    /// What the shard kept of the selection, to tell the user.
    pub shard_note: Option<String>,
    repos: RepoCache,
    /// The variants, resolved: names and declaration files valid, binaries found.
    pub variants: Vec<ReadyVariant>,
}

/// A run's inputs, ready to run: the dataset's repositories can be reached.
pub struct RunInputs {
    /// The selected instances, in dataset order; `problems` are the skipped records.
    pub dataset: Dataset,
    /// Fingerprint of the whole dataset ([`dataset_fingerprint`]).
    pub fingerprint: String,
    /// Valid instances in the whole dataset, before the selection.
    pub dataset_instances: usize,
    pub repos: RepoCache,
    /// The variants, not yet prepared.
    pub variants: Vec<ReadyVariant>,
}

/// Reads and checks everything `cfg` names without writing, fetching, installing or
/// starting anything (see the module doc). Each error says what to pass instead.
pub fn check(cfg: &RunConfig) -> anyhow::Result<CheckedInputs> {
    if cfg.variants.is_empty() {
        anyhow::bail!(
            "no variants given: pass --variants with one or more of {}",
            variants::names()
        );
    }
    let (mut dataset, unbuilt_mini) = read_dataset(&cfg.dataset)?;
    let fingerprint = if unbuilt_mini {
        String::new()
    } else {
        dataset_fingerprint(&dataset.instances)
    };
    let dataset_instances = dataset.instances.len();
    let shard_note = select_instances(&mut dataset, cfg)?;
    // The embedded dataset's repository never comes from the template.
    let fetched = dataset.instances.iter().filter(|i| !mini::is_mini(i));
    check_template(&cfg.repo_url, fetched.map(|i| i.repo.as_str()))?;
    let variants = variants::resolve(&cfg.variants, cfg.server_dir.as_deref())?;
    Ok(CheckedInputs {
        dataset,
        unbuilt_mini,
        fingerprint,
        dataset_instances,
        shard_note,
        repos: RepoCache::new(&cfg.cache, cfg.repo_url.as_str()),
        variants,
    })
}

impl CheckedInputs {
    /// Builds the embedded `mini` repository under the cache when the run uses it, and
    /// gives its tasks their real base commit.
    pub fn build(self) -> anyhow::Result<RunInputs> {
        let CheckedInputs {
            mut dataset,
            unbuilt_mini,
            mut fingerprint,
            dataset_instances,
            shard_note: _,
            mut repos,
            variants,
        } = self;
        if unbuilt_mini {
            let all = build_mini(&mut repos)?;
            fingerprint = dataset_fingerprint(&all.instances);
            let selected: HashSet<&str> = dataset
                .instances
                .iter()
                .map(|i| i.instance_id.as_str())
                .collect();
            let instances = all
                .instances
                .into_iter()
                .filter(|i| selected.contains(i.instance_id.as_str()))
                .collect();
            dataset.instances = instances;
        }
        Ok(RunInputs {
            dataset,
            fingerprint,
            dataset_instances,
            repos,
            variants,
        })
    }
}

/// Reads a dataset by name or path, writing nothing: `mini` comes back with stand-in
/// commits (true) until its repository is built. Skipped records are reported on
/// stderr with their line numbers.
fn read_dataset(spec: &str) -> anyhow::Result<(Dataset, bool)> {
    let (ds, unbuilt_mini) = match spec {
        "mini" => (mini::dataset_unbuilt()?, true),
        "dev" => (Dataset::from_jsonl("dev", DEV_DATASET), false),
        path => (Dataset::load(Path::new(path))?, false),
    };
    for p in &ds.problems {
        tracing::warn!(
            "dataset {} record {}: {} (skipped)",
            ds.name,
            p.record,
            p.message
        );
        eprintln!(
            "warning: dataset {} record {}: {} (skipped)",
            ds.name, p.record, p.message
        );
    }
    Ok((ds, unbuilt_mini))
}

/// Builds the `mini` repositories under `repos`' cache, points `repos` at them whatever
/// the template says, and returns the tasks with their commits.
fn build_mini(repos: &mut RepoCache) -> anyhow::Result<Dataset> {
    let built = mini::materialize(&repos.root().join("mini"))?;
    for b in &built {
        repos.add_override(b.repo, b.path.to_string_lossy().into_owned());
    }
    Ok(mini::dataset_of(&built)?)
}

/// Loads a dataset by name or path and prepares the repository cache for it (the
/// embedded `mini` repository is built under the cache and used whatever the URL
/// template says), for commands that read the repositories at once (`gold`).
pub fn load_dataset(
    spec: &str,
    cache_dir: &Path,
    repo_url: &str,
) -> anyhow::Result<(Dataset, RepoCache)> {
    let (ds, unbuilt_mini) = read_dataset(spec)?;
    let fetched = ds.instances.iter().filter(|i| !mini::is_mini(i));
    check_template(repo_url, fetched.map(|i| i.repo.as_str()))?;
    let mut repos = RepoCache::new(cache_dir, repo_url);
    let ds = if unbuilt_mini {
        build_mini(&mut repos)?
    } else {
        ds
    };
    Ok((ds, repos))
}

/// Keeps the instances the run asks for: `--instances`, then `--limit`, then the
/// shard (last, so the union of the shards is exactly the unsharded run). Returns what
/// the shard kept, as a line for the user.
fn select_instances(ds: &mut Dataset, cfg: &RunConfig) -> anyhow::Result<Option<String>> {
    if !cfg.instances.is_empty() {
        ds.select_ids(&cfg.instances)?;
    }
    match cfg.limit {
        Some(0) => anyhow::bail!("--limit 0 leaves no instance to run: pass --limit 1 or more"),
        Some(n) => ds.instances.truncate(n),
        None => {}
    }
    if ds.instances.is_empty() {
        anyhow::bail!("dataset '{}' has no valid instance to run", ds.name);
    }
    let Some(shard) = cfg.shard else {
        return Ok(None);
    };
    let before = ds.instances.len();
    shard.select(&mut ds.instances);
    Ok(Some(format!(
        "shard {shard}: {} of {before} instance(s)",
        ds.instances.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::config::Policy;
    use crate::run::shard::Shard;

    /// A run of `text` on `dataset`, its cache `work/cache`, its server binary a
    /// stand-in (nothing is started).
    fn cfg(dataset: &str, work: &Path) -> RunConfig {
        use std::os::unix::fs::PermissionsExt as _;
        let bin = work.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("navbench-text");
        std::fs::write(&exe, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        RunConfig {
            dataset: dataset.into(),
            variants: vec!["text".into()],
            repo_url: crate::checkout::DEFAULT_URL_TEMPLATE.into(),
            cache: work.join("cache"),
            out: work.join("out"),
            jobs: 1,
            instances: Vec::new(),
            limit: None,
            tokenizer: crate::score::tokens::Tokenizer::default(),
            call_timeout: std::time::Duration::from_secs(1),
            index_timeout: std::time::Duration::from_secs(1),
            server_dir: Some(bin),
            shard: None,
            policy: Policy::Scripted,
            repeats: 1,
        }
    }

    fn error(cfg: &RunConfig) -> String {
        match check(cfg) {
            Ok(_) => String::new(),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn a_bad_input_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        let nope = work.join("nope.jsonl");
        let e = error(&cfg(nope.to_str().unwrap(), work));
        assert!(e.contains("nope.jsonl") && e.contains("not found"), "{e}");

        let mut c = cfg("mini", work);
        c.repo_url = "https://github.com/{owner}/{repo}.git".into();
        assert!(error(&c).contains("unknown placeholder {repo}"));
        let mut c = cfg("mini", work);
        c.limit = Some(0);
        assert!(error(&c).contains("--limit 0"));
        let mut c = cfg("mini", work);
        c.instances = vec!["nosuch".into()];
        assert!(error(&c).contains("unknown instance id"));
        let mut c = cfg("mini", work);
        c.variants = vec!["nosuch".into()];
        assert!(error(&c).contains("unknown variant 'nosuch'"));
        c.variants.clear();
        assert!(error(&c).contains("no variants given"));
        assert!(check(&cfg("mini", work)).is_ok());
        assert!(!work.join("cache").exists(), "checking wrote to the cache");
        assert!(!work.join("out").exists(), "checking wrote the output");
    }

    /// The selection made on the unbuilt `mini` tasks is the one the run gets, with the
    /// real commit, and the fingerprint is the whole built dataset's (what `compare`
    /// matches runs by).
    #[test]
    fn building_mini_keeps_the_selection_and_fingerprints_the_real_commits() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg("mini", dir.path());
        c.limit = Some(5);
        c.shard = Some(Shard { index: 1, count: 2 });
        let checked = check(&c).unwrap();
        let ids = |ds: &Dataset| -> Vec<String> {
            ds.instances.iter().map(|i| i.instance_id.clone()).collect()
        };
        let chosen = ids(&checked.dataset);
        assert!(checked.shard_note.as_deref().unwrap_or("").contains("of 5"));
        let built = checked.build().unwrap();
        assert_eq!(ids(&built.dataset), chosen);
        let (all, _) = load_dataset("mini", &dir.path().join("cache"), "unused").unwrap();
        assert_eq!(built.fingerprint, dataset_fingerprint(&all.instances));
        assert_eq!(built.dataset_instances, all.instances.len());
        let commit = &all.instances[0].base_commit;
        assert!(
            built
                .dataset
                .instances
                .iter()
                .all(|i| &i.base_commit == commit)
        );
    }
}
