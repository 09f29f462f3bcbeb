//! `navbench tune`: how much the scripted policies' fitted constants are worth, and
//! whether they hold on a repository they were not fitted on.
//!
//! For every instance of a dataset and every selected variant, the server is started
//! and indexed once ([`crate::variants::Variant::setup`]); then the variant's policy
//! plays the instance once per setting of its knobs ([`grid::settings`]: the
//! defaults, then each constant alone switched off, halved and doubled), on the same
//! session, its repeated calls answered from the first result ([`Driver::with_memo`]:
//! the tools are deterministic, so only the ranking is redone). Each answer is scored
//! at LocAgent's headline cut-offs ([`loo::accs`]). From those scores, [`loo`] makes
//! the leave-one-repository-out table: tune on all repositories but one, score the
//! one left out, for each in turn.
//!
//! Everything that depends on the tree alone is computed once per instance and shared
//! by the settings: the server's answers (the memo), the files parsed to map lines to
//! ids ([`Driver::take_entities`]), the response tokens counted, and which files are
//! tests or derived code ([`crate::policy::secondary::source_first_cached`]).
//!
//! Data flow: dataset → [`crate::run::pipeline::prepare`] (mirror, gold, tree) → server
//! session → settings × policy → [`loo::Scored`] rows, each appended to `scores.csv`
//! as soon as it is scored ([`progress`]: a rerun into the same output resumes) →
//! `settings.csv`, `loo.csv` and `tune.md` ([`table`]) in the output directory.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use navbench::run::tune::{TuneConfig, tune};
//! let cfg = TuneConfig {
//!     variants: vec!["codegraph".into()],
//!     ..TuneConfig::new("dev", "results/tune-dev".into())
//! };
//! let tables = tune(cfg).await?;
//! println!("{}", tables.markdown);
//! # Ok(()) }
//! ```

pub mod fit;
pub mod grid;
pub mod loo;
pub mod progress;
pub mod table;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::checkout::RepoCache;
use crate::data::dataset::{Instance, Locations};
use crate::policy::{Driver, Task};
use crate::record::output::RunLock;
use crate::run::pipeline::{self, FinishedTrees, PreparedInstance};
use crate::score::tokens::Tokenizer;
use crate::session::mcp_client::McpSession;
use crate::variants::{self, ReadyVariant};
use grid::{GridOverrides, Setting};
use loo::Scored;
use progress::{Manifest, ScoresFile, VariantGrid};

/// What `navbench tune` was asked to do.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    pub dataset: String,
    pub variants: Vec<String>,
    pub repo_url: String,
    pub cache: PathBuf,
    pub out: PathBuf,
    pub instances: Vec<String>,
    pub limit: Option<usize>,
    pub grid: GridOverrides,
    pub tokenizer: Tokenizer,
    pub call_timeout: Duration,
    pub index_timeout: Duration,
    pub server_dir: Option<PathBuf>,
}

impl TuneConfig {
    /// The defaults for `dataset` into `out`: codegraph, retrieval-static and text,
    /// GitHub URLs, the default cache.
    pub fn new(dataset: &str, out: PathBuf) -> TuneConfig {
        TuneConfig {
            dataset: dataset.to_string(),
            variants: ["codegraph", "retrieval-static", "text"]
                .map(String::from)
                .to_vec(),
            repo_url: crate::checkout::DEFAULT_URL_TEMPLATE.to_string(),
            cache: crate::cli::default_cache(),
            out,
            instances: Vec::new(),
            limit: None,
            grid: GridOverrides::default(),
            tokenizer: Tokenizer::Cl100kBase,
            call_timeout: Duration::from_secs(120),
            index_timeout: Duration::from_secs(3600),
            server_dir: None,
        }
    }
}

/// One variant's settings and what its instances scored under them.
pub struct VariantScores {
    pub name: String,
    pub settings: Vec<Setting>,
    pub rows: Vec<Scored>,
    /// Instances left out, with why (no tree, no server, no index).
    pub failed: Vec<(String, String)>,
}

/// What a tuning run wrote.
pub struct Tables {
    pub variants: Vec<VariantScores>,
    /// `tune.md`'s text.
    pub markdown: String,
}

/// Runs the tuning (see the module doc) and writes its tables under `cfg.out`.
pub async fn tune(cfg: TuneConfig) -> anyhow::Result<Tables> {
    let mut ready = variants::resolve(&cfg.variants, cfg.server_dir.as_deref())?;
    let knobs: Vec<(&str, &[crate::policy::knobs::Knob])> = ready
        .iter()
        .map(|rv| (rv.variant.name(), rv.variant.knobs()))
        .collect();
    cfg.grid.check(&knobs)?;
    let (ds, cache) = selected_dataset(&cfg, None)?;
    let mut scores: Vec<VariantScores> = ready
        .iter()
        .map(|rv| VariantScores {
            name: rv.variant.name().to_string(),
            settings: grid::settings(rv.variant.knobs(), &cfg.grid),
            rows: Vec::new(),
            failed: Vec::new(),
        })
        .collect();
    let grids: Vec<VariantGrid> = (ready.iter().zip(&scores))
        .map(|(rv, vs)| VariantGrid::new(&vs.name, rv.variant.knobs(), &vs.settings))
        .collect();
    let _lock = RunLock::acquire(&cfg.out)?;
    Manifest::new(&ds.name, &ds.instances, grids.clone()).record_or_check(&cfg.out)?;
    let mut file = ScoresFile::open(&cfg.out, &grids)?;
    variants::prepare_all(&mut ready, &cfg.cache);
    let total = ds.instances.len();
    eprintln!(
        "navbench tune: {total} instance(s) of '{}' × {} → {}",
        ds.name,
        cfg.variants.join(","),
        cfg.out.display()
    );
    let trees = FinishedTrees::default();
    let mut done = 0;
    for group in pipeline::repository_groups(&ds.instances) {
        for inst in group {
            done += 1;
            let t = Instant::now();
            let recorded: Vec<Option<Scored>> = (scores.iter())
                .map(|vs| file.recorded(&inst.instance_id, &vs.name).cloned())
                .collect();
            if recorded.iter().all(Option::is_some) {
                for (vs, r) in scores.iter_mut().zip(recorded) {
                    vs.rows.extend(r);
                }
                eprintln!("[{done}/{total}] {}: recorded earlier", inst.instance_id);
                continue;
            }
            let prep = match prepare(&cache, &trees, &inst).await {
                Ok(p) if p.gold.functions.is_empty() => {
                    // As `run` and LocAgent do: no function to find, no score.
                    trees.offer(&inst.repo, &inst.instance_id);
                    Err(anyhow::anyhow!("the patch edits no existing function"))
                }
                other => other,
            };
            let prep = match prep {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("[{done}/{total}] {}: left out: {e:#}", inst.instance_id);
                    for vs in &mut scores {
                        vs.failed.push((inst.instance_id.clone(), format!("{e:#}")));
                    }
                    continue;
                }
            };
            for ((rv, vs), r) in ready.iter().zip(scores.iter_mut()).zip(recorded) {
                match r {
                    Some(r) => vs.rows.push(r),
                    None => play_settings(&cfg, rv, (&inst, &prep), vs, &mut file).await?,
                }
            }
            trees.offer(&inst.repo, &inst.instance_id);
            eprintln!(
                "[{done}/{total}] {} ({:.1} s)",
                inst.instance_id,
                t.elapsed().as_secs_f64()
            );
        }
    }
    let markdown = table::write_all(&cfg.out, &ds.name, &scores)?;
    Ok(Tables {
        variants: scores,
        markdown,
    })
}

/// The dataset `cfg` names and its repository cache, the instances narrowed as asked:
/// `--instances`, then at most `per_repo` per repository (when given), then `--limit`.
fn selected_dataset(
    cfg: &TuneConfig,
    per_repo: Option<usize>,
) -> anyhow::Result<(crate::data::dataset::Dataset, Arc<RepoCache>)> {
    let (mut ds, cache) =
        crate::run::inputs::load_dataset(&cfg.dataset, &cfg.cache, &cfg.repo_url)?;
    if !cfg.instances.is_empty() {
        ds.select_ids(&cfg.instances)?;
    }
    if let Some(n) = per_repo {
        let mut seen: HashMap<String, usize> = HashMap::new();
        ds.instances.retain(|i| {
            let c = seen.entry(i.repo.clone()).or_default();
            *c += 1;
            *c <= n
        });
    }
    if let Some(n) = cfg.limit {
        ds.instances.truncate(n);
    }
    Ok((ds, Arc::new(cache)))
}

/// The instance's tree ([`pipeline::prepare`], off the async threads: it hashes and
/// writes whole trees), written from its repository's last finished tree in `trees`
/// when there is one; that tree is offered back when this one cannot be prepared, so
/// the next instance still starts from it.
async fn prepare(
    cache: &Arc<RepoCache>,
    trees: &FinishedTrees,
    inst: &Instance,
) -> anyhow::Result<PreparedInstance> {
    let reuse = trees.take(&inst.repo);
    let (cache, owned, from) = (cache.clone(), inst.clone(), reuse.clone());
    let prepared =
        tokio::task::spawn_blocking(move || pipeline::prepare(&cache, &owned, from.as_deref()))
            .await
            .unwrap_or_else(|join| Err(anyhow::anyhow!("preparation panicked: {join}")));
    if let (Err(_), Some(prev)) = (&prepared, &reuse) {
        trees.offer(&inst.repo, prev);
    }
    prepared
}

/// Starts `rv`'s server on the instance's tree, indexes it, and scores every setting,
/// appending each to `file`. A server that does not start or index leaves the instance
/// out of this variant's table, with the reason. Fails only when `file` cannot be
/// written (which would fail every later row too).
async fn play_settings(
    cfg: &TuneConfig,
    rv: &ReadyVariant,
    (inst, prep): (&Instance, &PreparedInstance),
    vs: &mut VariantScores,
    file: &mut ScoresFile,
) -> anyhow::Result<()> {
    let variant = rv.variant;
    let spec = variant.server_spec(rv.binary.clone(), &prep.workdir, &cfg.cache, &rv.prepared);
    let mut session = match McpSession::start(&spec, cfg.call_timeout).await {
        Ok(s) => s,
        Err(e) => {
            let why = format!("server {} did not start: {e:#}", variant.binary());
            eprintln!("  {} × {}: left out: {why}", inst.instance_id, vs.name);
            vs.failed.push((inst.instance_id.clone(), why));
            return Ok(());
        }
    };
    let defaults = crate::policy::knobs::Knobs::default();
    let task = Task {
        instance: inst,
        workdir: &prep.workdir,
        knobs: &defaults,
        trial: crate::policy::Trial::FIRST,
    };
    let setup = {
        let mut driver = Driver::new(&mut session, cfg.tokenizer)
            .with_setup_timeout(variant.setup_tools(), cfg.index_timeout);
        variant.setup(&mut driver, &task).await
    };
    if let Err(e) = setup {
        let why = format!("setup failed: {e:#}");
        eprintln!("  {} × {}: left out: {why}", inst.instance_id, vs.name);
        vs.failed.push((inst.instance_id.clone(), why));
    } else {
        let mut driver = Driver::new(&mut session, cfg.tokenizer)
            .with_setup_timeout(variant.setup_tools(), cfg.index_timeout)
            .with_memo();
        let mut by_setting = Vec::with_capacity(vs.settings.len());
        let mut judged = HashMap::new();
        let mut written = Ok(());
        for setting in &vs.settings {
            let task = Task {
                knobs: &setting.knobs,
                ..task
            };
            // A policy that fails answers nothing and scores zero, as in a run.
            // As in a run: source before tests and derived code, then the fitted
            // ranker when the setting turns it on (`policy::fitted::finish`).
            let pred = variant
                .localize(&mut driver, &task)
                .await
                .and_then(|loc| {
                    crate::policy::fitted::finish_cached(variant, loc, &task, &mut judged)
                })
                .unwrap_or_else(|_| Locations::default());
            driver.records.clear();
            let accs = loo::accs(&prep.gold, &pred);
            written = file.append(&vs.name, inst, &setting.label, &accs);
            if written.is_err() {
                break;
            }
            by_setting.push(accs);
        }
        drop(driver);
        // A server that died part-way answered some settings with errors: not a score.
        match (written, session.failure()) {
            (Err(e), _) => {
                session.shutdown().await;
                return Err(e);
            }
            (Ok(()), Some(why)) => {
                let why = format!("the server failed: {why}");
                eprintln!("  {} × {}: left out: {why}", inst.instance_id, vs.name);
                vs.failed.push((inst.instance_id.clone(), why));
                file.discard(&inst.instance_id, &vs.name)?;
            }
            (Ok(()), None) => vs.rows.push(Scored {
                instance: inst.instance_id.clone(),
                repo: inst.repo.clone(),
                by_setting,
            }),
        }
    }
    session.shutdown().await;
    if let Some(dir) = variant.per_tree_state(&prep.workdir, &cfg.cache) {
        pipeline::drop_tree_state(dir).await;
    }
    Ok(())
}
