//! `navbench tune --features`: each instance × variant played once, every candidate
//! of the policy's pool written with its features, so fitting never runs a server.
//!
//! Per instance and variant the server is started and indexed, the policy answers
//! its pool ([`crate::policy::fitted::POOL_LEN`] per level; `bm25`, the untuned
//! reference, every document it ranked), and two orders are kept:
//! the hand-weighted answer a run gives with the fitted ranker off (`hand_rank`, the
//! rank in it, empty past [`ANSWER_LEN`]) and the pool with tests and derived code
//! last, whose [`features`] a fitted model scores. `features.csv` has one row per
//! candidate and level; `feature_instances.csv` one row per instance × variant with
//! its gold counts (the accuracy of an order needs every gold entry, found or not)
//! and its status.

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;

use crate::data::dataset::{Instance, Locations};
use crate::policy::fitted::{ANSWER_LEN, cut, features};
use crate::policy::knobs::Knobs;
use crate::policy::{Driver, Task, secondary};
use crate::run::pipeline::{self, FinishedTrees, PreparedInstance};
use crate::session::mcp_client::McpSession;
use crate::variants::{self, ReadyVariant};

use super::super::{TuneConfig, prepare, selected_dataset};

/// The level names, as `features.csv` writes them.
pub const LEVELS: [&str; 3] = ["file", "module", "function"];

/// Plays every instance of `cfg` (at most `per_repo` per repository when given) with
/// every variant and writes `features.csv` and `feature_instances.csv` under
/// `cfg.out`; returns the seconds it took.
pub async fn extract(cfg: &TuneConfig, per_repo: Option<usize>) -> anyhow::Result<f64> {
    let t0 = Instant::now();
    let mut ready = variants::resolve(&cfg.variants, cfg.server_dir.as_deref())?;
    let (ds, cache) = selected_dataset(cfg, per_repo)?;
    std::fs::create_dir_all(&cfg.out)
        .with_context(|| format!("cannot create {}", cfg.out.display()))?;
    let _lock = crate::record::output::RunLock::acquire(&cfg.out)?;
    variants::prepare_all(&mut ready, &cfg.cache);
    let mut out = Writers::create(&cfg.out)?;
    let total = ds.instances.len();
    eprintln!(
        "navbench tune --features: {total} instance(s) of '{}' × {} → {}",
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
            let prep = match prepare(&cache, &trees, &inst).await {
                Ok(p) => p,
                Err(e) => {
                    for rv in &ready {
                        out.instance(&ds.name, &inst, rv.variant.name(), Err(&e))?;
                    }
                    eprintln!("[{done}/{total}] {}: left out: {e:#}", inst.instance_id);
                    continue;
                }
            };
            for rv in &ready {
                match play(cfg, rv, &inst, &prep).await {
                    Ok(pool) => {
                        out.instance(&ds.name, &inst, rv.variant.name(), Ok(&prep.gold))?;
                        out.rows(&ds.name, &inst, rv.variant.name(), &prep, pool)?;
                    }
                    Err(e) => {
                        eprintln!(
                            "  {} × {}: left out: {e:#}",
                            inst.instance_id,
                            rv.variant.name()
                        );
                        out.instance(&ds.name, &inst, rv.variant.name(), Err(&e))?
                    }
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
    out.flush()?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Starts `rv`'s server on the instance's tree, indexes it and plays the policy once
/// with its defaults; the pool it answered.
async fn play(
    cfg: &TuneConfig,
    rv: &ReadyVariant,
    inst: &Instance,
    prep: &PreparedInstance,
) -> anyhow::Result<Locations> {
    let variant = rv.variant;
    let spec = variant.server_spec(rv.binary.clone(), &prep.workdir, &cfg.cache, &rv.prepared);
    let mut session = McpSession::start(&spec, cfg.call_timeout)
        .await
        .with_context(|| format!("server {} did not start", variant.binary()))?;
    let knobs = Knobs::default();
    let task = Task {
        instance: inst,
        workdir: &prep.workdir,
        knobs: &knobs,
        trial: crate::policy::Trial::FIRST,
    };
    let found = {
        let mut driver = Driver::new(&mut session, cfg.tokenizer)
            .with_setup_timeout(variant.setup_tools(), cfg.index_timeout);
        match variant.setup(&mut driver, &task).await {
            Ok(()) => variant.localize(&mut driver, &task).await,
            Err(e) => Err(e.context("setup failed")),
        }
    };
    let failure = session
        .failure()
        .map(|why| anyhow::anyhow!("the server failed: {why}"));
    session.shutdown().await;
    if let Some(dir) = variant.per_tree_state(&prep.workdir, &cfg.cache) {
        pipeline::drop_tree_state(dir).await;
    }
    match failure {
        Some(e) => Err(e),
        None => found,
    }
}

/// The two CSV files being written.
struct Writers {
    rows: csv::Writer<std::fs::File>,
    instances: csv::Writer<std::fs::File>,
}

impl Writers {
    fn create(dir: &Path) -> anyhow::Result<Writers> {
        let open = |name: &str| {
            let p = dir.join(name);
            csv::Writer::from_path(&p).with_context(|| format!("cannot write {}", p.display()))
        };
        let mut rows = open("features.csv")?;
        let mut head = vec![
            "dataset",
            "repo",
            "instance",
            "variant",
            "level",
            "id",
            "hand_rank",
            "label",
        ];
        head.extend(features::NAMES);
        rows.write_record(&head)?;
        let mut instances = open("feature_instances.csv")?;
        instances.write_record([
            "dataset",
            "repo",
            "instance",
            "variant",
            "status",
            "gold_files",
            "gold_modules",
            "gold_functions",
            "error",
        ])?;
        Ok(Writers { rows, instances })
    }

    /// One instance × variant: its gold when it was played, else why not.
    fn instance(
        &mut self,
        ds: &str,
        inst: &Instance,
        variant: &str,
        played: Result<&Locations, &anyhow::Error>,
    ) -> anyhow::Result<()> {
        let gold = played.ok();
        let n = |v: fn(&Locations) -> usize| gold.map_or(String::new(), |g| v(g).to_string());
        let row = [
            ds.to_string(),
            inst.repo.clone(),
            inst.instance_id.clone(),
            variant.to_string(),
            (if gold.is_some() { "ok" } else { "failed" }).to_string(),
            n(|g| g.files.len()),
            n(|g| g.modules.len()),
            n(|g| g.functions.len()),
            played.err().map_or(String::new(), |e| format!("{e:#}")),
        ];
        self.instances.write_record(&row)?;
        self.instances.flush()?;
        Ok(())
    }

    /// The candidates of one played instance.
    fn rows(
        &mut self,
        ds: &str,
        inst: &Instance,
        variant: &str,
        prep: &PreparedInstance,
        pool: Locations,
    ) -> anyhow::Result<()> {
        let issue = &inst.problem_statement;
        // The hand-weighted answer as a run gives it (`fitted::finish`, knob off):
        // source first over the pool, then the cut.
        let pool = secondary::source_first(pool, &prep.workdir, issue);
        let hand = cut(pool.clone(), ANSWER_LEN);
        let words = features::IssueWords::new(issue);
        let levels = features::rows(&pool, &prep.workdir, &words);
        let hand_levels = [&hand.files, &hand.modules, &hand.functions];
        let gold = [&prep.gold.files, &prep.gold.modules, &prep.gold.functions];
        for (i, rows) in levels.iter().enumerate() {
            for (id, x) in rows {
                let rank = hand_levels[i].iter().position(|h| h == id);
                let mut rec = vec![
                    ds.to_string(),
                    inst.repo.clone(),
                    inst.instance_id.clone(),
                    variant.to_string(),
                    LEVELS[i].to_string(),
                    id.clone(),
                    rank.map_or(String::new(), |r| (r + 1).to_string()),
                    (if gold[i].contains(id) { "1" } else { "0" }).to_string(),
                ];
                rec.extend(x.iter().map(|v| format!("{v:.6}")));
                self.rows.write_record(&rec)?;
            }
        }
        self.rows.flush()?;
        Ok(())
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        self.rows.flush()?;
        self.instances.flush()?;
        Ok(())
    }
}
