//! `navbench run`: the pipeline from dataset to CSVs.
//!
//! Instances are grouped by repository and `--jobs` lanes each take a whole group at a
//! time ([`repository_groups`]), so two instances of one repository never run at once.
//! For each instance: fetch the
//! repository's mirror, derive the gold locations from the patch at the base commit,
//! write the base tree into a work dir (taking over the tree of a finished instance of
//! the same repository and applying the diff between the two commits, when there is
//! one: see [`FinishedTrees`]); then for each variant: spawn its server, let the variant's policy localize,
//! shut the server down, score the answer and append the rows. Any failure is recorded
//! on that instance's rows and the run goes on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;

use crate::checkout::RepoCache;
use crate::data::dataset::{Dataset, Instance, Locations};
use crate::policy::agent::AgentStats;
use crate::policy::agent_cmd;
use crate::policy::{CallRecord, Driver, RecordSink, Task, Trial};
use crate::record::output::answer_columns::AnswerCounts;
use crate::record::output::init_columns::InitParts;
use crate::record::output::{
    self, InstanceRow, RunInfo, RunLock, RunOutput, STATUS_ANSWER_UNPARSED, STATUS_ERROR,
    STATUS_NO_GOLD, STATUS_OK,
};
use crate::run::inputs::{self, RunInputs};
use crate::run::phases::{PhaseTotals, Phases};
use crate::run::progress::RunProgress;
use crate::run::rows::{account_calls, pair_label, repeats_note, settle_status};
use crate::score::gold;
use crate::score::metrics::{Level, score_level};
use crate::session::mcp_client::McpSession;
use crate::session::proxy;
use crate::variants::{self, ReadyVariant, Variant};

pub use crate::run::config::{Policy, RunConfig};

/// What one instance's preparation produced: its tree, gold locations, the warnings
/// its checkout raised and the time its phases took.
pub(crate) struct PreparedInstance {
    pub(crate) workdir: PathBuf,
    pub(crate) gold: Locations,
    pub(crate) warnings: Vec<String>,
    pub(crate) phases: Phases,
}

/// Trees of finished instances, at most one per repository, that the next instance of
/// that repository takes over (the tree is moved, then updated by the diff between the
/// two base commits, after verification) instead of writing a whole tree. Only trees
/// whose instance is done with every variant are offered, and each is taken once, so
/// concurrent instances (`--jobs`) never share a tree.
#[derive(Debug, Default)]
pub(crate) struct FinishedTrees(Mutex<HashMap<String, String>>);

impl FinishedTrees {
    /// The finished instance whose tree `repo`'s next instance may take over.
    pub(crate) fn take(&self, repo: &str) -> Option<String> {
        let mut slots = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slots.remove(repo)
    }

    /// Offers `instance_id`'s tree (its instance is done) to the next instance of `repo`.
    pub(crate) fn offer(&self, repo: &str, instance_id: &str) {
        let mut slots = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slots.insert(repo.to_string(), instance_id.to_string());
    }
}

/// Prepares one instance: its mirror, the gold derived from its patch, and its base
/// tree (taken over from `reuse_from`'s finished tree when given).
pub(crate) fn prepare(
    cache: &RepoCache,
    inst: &Instance,
    reuse_from: Option<&str>,
) -> anyhow::Result<PreparedInstance> {
    let t_mirror = Instant::now();
    let mirror = cache.mirror(&inst.repo, &inst.base_commit)?;
    let mirror_ms = ms(t_mirror);
    let t_gold = Instant::now();
    let read = |p: &str| cache.read_file_at(&mirror, &inst.base_commit, p);
    let derived = gold::derive_gold(&inst.patch, &read).with_context(|| {
        format!(
            "cannot derive gold locations from the patch of {}",
            inst.instance_id
        )
    })?;
    drop(mirror);
    let gold_ms = ms(t_gold);
    let t_tree = Instant::now();
    let tree = cache.checkout_tree(&inst.repo, &inst.base_commit, &inst.instance_id, reuse_from)?;
    for w in &tree.warnings {
        tracing::warn!(instance_id = %inst.instance_id, "{w}");
    }
    tracing::debug!(instance_id = %inst.instance_id, how = ?tree.how, "tree ready");
    Ok(PreparedInstance {
        workdir: tree.dir,
        gold: derived.locations,
        warnings: tree.warnings,
        phases: Phases {
            checkout_ms: mirror_ms + ms(t_tree),
            gold_ms,
            ..Phases::default()
        },
    })
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Scores predictions at every level; `None` unless every level has gold.
pub fn score_all(gold: &Locations, pred: &Locations) -> Option<Vec<f64>> {
    let mut values = Vec::new();
    for level in Level::ALL {
        let (g, p) = match level {
            Level::File => (&gold.files, &pred.files),
            Level::Module => (&gold.modules, &pred.modules),
            Level::Function => (&gold.functions, &pred.functions),
        };
        values.extend(score_level(level, g, p)?.values());
    }
    Some(values)
}

/// Removes a server's per-tree state once its instance is done (see
/// [`Variant::per_tree_state`]). A failure costs disk space, not the row: it is logged.
pub(crate) async fn drop_tree_state(dir: PathBuf) {
    let shown = dir.display().to_string();
    let removed = tokio::task::spawn_blocking(move || match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    })
    .await;
    match removed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(dir = %shown, "cannot remove a finished tree's server state: {e}")
        }
        Err(e) => tracing::warn!(dir = %shown, "cannot remove a finished tree's server state: {e}"),
    }
}

async fn run_variant(
    cfg: &RunConfig,
    (rv, trial): Pending<'_>,
    inst: &Instance,
    prep: &PreparedInstance,
    progress: &RunProgress,
    sink: RecordSink,
) -> InstanceRow {
    let variant = rv.variant;
    let wall = Instant::now();
    let mut row = InstanceRow {
        instance_id: inst.instance_id.clone(),
        repo: inst.repo.clone(),
        variant: variant.name().to_string(),
        trial,
        gold_files: prep.gold.files.clone(),
        gold_functions: prep.gold.functions.clone(),
        warnings: prep.warnings.clone(),
        phases: prep.phases,
        ..InstanceRow::default()
    };
    let spec = variant.server_spec(rv.binary.clone(), &prep.workdir, &cfg.cache, &rv.prepared);
    let session = match McpSession::start(&spec, cfg.call_timeout).await {
        Ok(s) => s,
        Err(e) => {
            row.status = STATUS_ERROR.into();
            row.error = format!("server {} did not start: {e}", variant.binary());
            row.wall_ms = ms(wall);
            row.phases.start_ms = row.wall_ms;
            return row;
        }
    };
    row.index_ms = ms(wall);
    row.phases.start_ms = row.index_ms;
    row.schema_tokens = cfg.tokenizer.count(&session.tools_json());
    // What the server says while a long call (an index build) runs is shown.
    let (progress, label) = (
        progress.clone(),
        pair_label(&inst.instance_id, variant.name(), trial, cfg.repeats),
    );
    session.on_progress(Arc::new(move |line| progress.server_said(&label, &line)));
    let task = Task {
        instance: inst,
        workdir: &prep.workdir,
        knobs: &crate::policy::knobs::Knobs::default(),
        trial,
    };
    let t_policy = Instant::now();
    let Played {
        result,
        records,
        session,
        unparsed,
        stats,
        answer,
        warnings,
        init_parts,
    } = play(cfg, variant, session, &task, sink).await;
    let policy_ms = ms(t_policy);
    let t_score = Instant::now();
    // A server that crashed, hung or broke the protocol fails the row, whatever the
    // policy made of the calls that failed.
    let died = session.as_ref().and_then(|s| s.failure().map(String::from));
    if let Some(session) = session {
        session.shutdown().await;
    }
    if let Some(dir) = variant.per_tree_state(&prep.workdir, &cfg.cache) {
        drop_tree_state(dir).await;
    }
    row.warnings.extend(warnings);
    let pred = settle_status(&mut row, result, &records, died);
    if unparsed && row.status == STATUS_OK {
        row.status = STATUS_ANSWER_UNPARSED.into();
        row.error = match cfg.policy {
            Policy::Command(_) => "the command's output named no location (kept in agent-cmd/)",
            _ => "the answer named no location (its text is in the transcript)",
        }
        .into();
    }
    row.agent = stats;
    row.answer = answer;
    row.metrics = score_all(&prep.gold, &pred).unwrap_or_default();
    account_calls(&mut row, &records, variant.setup_tools(), policy_ms);
    row.init_parts = init_parts;
    row.pred_files = pred.files;
    row.pred_modules = pred.modules;
    row.pred_functions = pred.functions;
    row.phases.score_ms = ms(t_score);
    row.wall_ms = ms(wall);
    row
}

/// What a policy made of one pair.
struct Played {
    result: anyhow::Result<Locations>,
    records: Vec<CallRecord>,
    /// The server's session, still to be shut down (after the policy's time is taken).
    session: Option<McpSession>,
    /// An agent answered, but named no location.
    unparsed: bool,
    stats: Option<AgentStats>,
    /// What reading an agent's answer found.
    answer: Option<AnswerCounts>,
    warnings: Vec<String>,
    /// `init_ms` in parts, as the indexing calls reported them.
    init_parts: Option<InitParts>,
}

/// Lets the run's policy localize `task` on `session`: the scripted policy, the LLM
/// agent, or an external command through the recording proxy.
async fn play(
    cfg: &RunConfig,
    variant: &'static dyn Variant,
    mut session: McpSession,
    task: &Task<'_>,
    sink: RecordSink,
) -> Played {
    let settings = proxy::Settings {
        tokenizer: cfg.tokenizer,
        setup_tools: variant.setup_tools(),
        index_timeout: cfg.index_timeout,
    };
    if let Policy::Command(cmd) = &cfg.policy {
        let pair = agent_cmd::Pair {
            variant,
            task,
            run_dir: &cfg.out,
            settings,
            sink: Some(sink),
        };
        let done = agent_cmd::play(cmd, session, pair).await;
        return Played {
            result: done.result,
            records: done.records,
            session: done.session,
            unparsed: done.unparsed,
            stats: done.stats,
            answer: done.answer,
            warnings: Vec::new(),
            init_parts: None,
        };
    }
    let (tools, instructions) = (
        session.tools().to_vec(),
        session.server_instructions().map(String::from),
    );
    let mut warnings = Vec::new();
    let mut driver = Driver::new(&mut session, cfg.tokenizer)
        .with_setup_timeout(settings.setup_tools, settings.index_timeout)
        .with_sink(Some(sink));
    let (result, agent) = match &cfg.policy {
        Policy::Agent(agent) => {
            let done = agent
                .localize(variant, &mut driver, task, &tools, instructions.as_deref())
                .await;
            let (id, name) = (&task.instance.instance_id, variant.name());
            if let Err(e) = done.transcript.write(&cfg.out, id, name, task.trial) {
                warnings.push(format!("transcript not written: {e:#}"));
            }
            (done.result, Some((done.stats, done.unparsed, done.answer)))
        }
        Policy::Scripted | Policy::Command(_) => {
            let found = variant.localize(&mut driver, task).await;
            // As in `navbench tune`: source before tests and derived code, then the
            // variant's fitted ranker when it is on (`policy::fitted::finish`).
            let found = found.and_then(|loc| crate::policy::fitted::finish(variant, loc, task));
            (found, None)
        }
    };
    let records = std::mem::take(&mut driver.records);
    let init_parts = driver.init_parts.take();
    let (stats, unparsed, answer) = match agent {
        Some((stats, unparsed, answer)) => (Some(stats), unparsed, answer),
        None => (None, false, None),
    };
    Played {
        result,
        records,
        session: Some(session),
        unparsed,
        stats,
        answer,
        warnings,
        init_parts,
    }
}

async fn run_instance(
    cfg: Arc<RunConfig>,
    cache: Arc<RepoCache>,
    trees: Arc<FinishedTrees>,
    out: Arc<RunOutput>,
    variants: Arc<Vec<ReadyVariant>>,
    inst: Instance,
    progress: RunProgress,
) {
    // Trial by trial, every variant's first trial before any second one, so a run
    // stopped part-way has comparable trials.
    let pending: Vec<Pending> = Trial::up_to(cfg.repeats)
        .flat_map(|t| variants.iter().map(move |rv| (rv, t)))
        .filter(|(rv, t)| !out.is_done(&inst.instance_id, rv.variant.name(), *t))
        .collect();
    // Pairs finished by an earlier run with the same --out count as done.
    let all = variants.len() * cfg.repeats as usize;
    progress.already_done((all - pending.len()) as u64);
    // Once writing has failed (disk full), nothing more is run: see `run`.
    if pending.is_empty() || out.broken().is_some() {
        return;
    }
    let n_pending = pending.len() as u64;
    if let Policy::Agent(agent) = &cfg.policy
        && !agent.guard.may_start()
    {
        let why = "not started (agent stopped: see the end of the run)";
        progress.finished(n_pending, &inst.instance_id, why);
        return;
    }
    progress.working(&inst.instance_id);
    let prev = trees.take(&inst.repo);
    let prep = {
        let cache = cache.clone();
        let inst = inst.clone();
        let prev = prev.clone();
        tokio::task::spawn_blocking(move || prepare(&cache, &inst, prev.as_deref())).await
    };
    let prep = match prep {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            // The offered tree may still be whole (e.g. gold failed before the checkout);
            // if it is not, its verification sends the next taker to a full write.
            if let Some(prev) = &prev {
                trees.offer(&inst.repo, prev);
            }
            record_failure(&out, &inst, &pending, STATUS_ERROR, &format!("{e:#}"), None);
            progress.finished(n_pending, &inst.instance_id, STATUS_ERROR);
            return;
        }
        Err(join) => {
            record_failure(
                &out,
                &inst,
                &pending,
                STATUS_ERROR,
                &format!("preparation panicked: {join}"),
                None,
            );
            progress.finished(n_pending, &inst.instance_id, STATUS_ERROR);
            return;
        }
    };
    if prep.gold.functions.is_empty() {
        let msg = "the patch edits no existing function: left out of the scores, as in LocAgent";
        record_failure(&out, &inst, &pending, STATUS_NO_GOLD, msg, Some(&prep));
        progress.finished(n_pending, &inst.instance_id, STATUS_NO_GOLD);
        trees.offer(&inst.repo, &inst.instance_id);
        return;
    }
    for (rv, trial) in pending {
        let name = rv.variant.name();
        let label = pair_label(&inst.instance_id, name, trial, cfg.repeats);
        // The agent's run-wide limits: a cost cap reached or a streak of refusals
        // starts no new pair (the pair is left for a resume).
        if let Policy::Agent(agent) = &cfg.policy
            && !agent.guard.may_start()
        {
            progress.finished(
                1,
                &label,
                "not started (agent stopped: see the end of the run)",
            );
            continue;
        }
        progress.working(&label);
        // Each call reaches calls.csv as it is made, so a killed pair keeps them.
        let sink = out.call_sink(&inst.instance_id, name, trial);
        let row = run_variant(&cfg, (rv, trial), &inst, &prep, &progress, sink).await;
        if let Err(e) = out.write_instance(&row) {
            tracing::error!("cannot write instances.csv: {e:#}");
        }
        if row.status == STATUS_ERROR {
            progress.say(&format!("{label}: {}", row.error));
        }
        let mut outcome = format!(
            "{} in {:.1} s (index {:.1} s)",
            row.status,
            row.wall_ms / 1000.0,
            row.index_ms / 1000.0
        );
        if let Some(a) = &row.agent {
            outcome.push_str(&format!(
                ", {} turn(s), {} tokens, model {:.1} s, {}",
                a.llm_turns,
                a.prompt_tokens + a.completion_tokens,
                a.llm_ms / 1000.0,
                a.stop_reason.as_str()
            ));
            if let (Policy::Agent(agent), Some(_)) = (&cfg.policy, a.cost_usd) {
                outcome.push_str(&format!(", run cost ${:.4}", agent.guard.spent()));
                if let Some(cap) = agent.guard.max_cost() {
                    outcome.push_str(&format!(" of ${cap:.4}"));
                }
            }
        }
        progress.finished(1, &label, &outcome);
    }
    trees.offer(&inst.repo, &inst.instance_id);
}

/// One trial of a variant still to play on an instance.
type Pending<'a> = (&'a ReadyVariant, Trial);

fn record_failure(
    out: &RunOutput,
    inst: &Instance,
    pending: &[Pending],
    status: &str,
    msg: &str,
    prep: Option<&PreparedInstance>,
) {
    if status == STATUS_ERROR {
        eprintln!("{}: {msg}", inst.instance_id);
    }
    for (rv, trial) in pending {
        let row = InstanceRow {
            instance_id: inst.instance_id.clone(),
            repo: inst.repo.clone(),
            variant: rv.variant.name().to_string(),
            trial: *trial,
            status: status.to_string(),
            error: msg.to_string(),
            warnings: prep.map(|p| p.warnings.clone()).unwrap_or_default(),
            phases: prep.map(|p| p.phases).unwrap_or_default(),
            ..InstanceRow::default()
        };
        if let Err(e) = out.write_instance(&row) {
            tracing::error!("cannot write instances.csv: {e:#}");
        }
    }
}

/// The instances grouped by repository (dataset order within a group), largest group
/// first: `--jobs` lanes each take a whole group, and starting with the longest keeps
/// the lanes' ends close together.
pub(crate) fn repository_groups(
    instances: &[Instance],
) -> std::collections::VecDeque<Vec<Instance>> {
    let mut groups: Vec<Vec<Instance>> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for inst in instances {
        match at.get(inst.repo.as_str()) {
            Some(&g) => groups[g].push(inst.clone()),
            None => {
                at.insert(&inst.repo, groups.len());
                groups.push(vec![inst.clone()]);
            }
        }
    }
    groups.sort_by(|a, b| {
        b.len()
            .cmp(&a.len())
            .then_with(|| a[0].repo.cmp(&b[0].repo))
    });
    groups.into()
}

/// Dataset records that could not be read, with why, in `skipped.csv`.
fn write_skipped(out: &Path, ds: &Dataset) -> anyhow::Result<()> {
    if ds.problems.is_empty() {
        return Ok(());
    }
    let mut w = csv::Writer::from_path(out.join("skipped.csv"))?;
    w.write_record(["record", "message"])?;
    for p in &ds.problems {
        w.write_record([p.record.to_string(), p.message.clone()])?;
    }
    w.flush()?;
    Ok(())
}

/// After the last pair: where the time went (stderr and run.json) and `summary.csv`
/// over this run's instances.
fn finish_run(
    cfg: &RunConfig,
    ds: &Dataset,
    out: &RunOutput,
    mut info: RunInfo,
    wall_ms: f64,
) -> anyhow::Result<Vec<output::VariantSummary>> {
    let ids: Vec<&str> = ds
        .instances
        .iter()
        .map(|i| i.instance_id.as_str())
        .collect();
    let rows: Vec<InstanceRow> = output::read_instance_rows(&cfg.out.join("instances.csv"))?
        .into_iter()
        .filter(|r| ids.contains(&r.instance_id.as_str()))
        .collect();
    let totals = PhaseTotals::from_rows(rows.iter().map(|r| (r.instance_id.as_str(), &r.phases)));
    eprintln!("navbench: where the time went\n{}", totals.table(wall_ms));
    info.phases = Some(totals);
    info.wall_ms = Some(wall_ms);
    out.write_info(&info)?;
    let sums = output::summarize(&rows, &cfg.variants);
    output::write_summary(&cfg.out.join("summary.csv"), &sums)?;
    Ok(sums)
}

/// Refuses to resume into a run directory another player filled
/// ([`crate::record::resume`]).
fn check_resume(cfg: &RunConfig) -> anyhow::Result<()> {
    let agent = match &cfg.policy {
        Policy::Agent(a) => Some(a.cfg.info()),
        _ => None,
    };
    let agent_cmd = match &cfg.policy {
        Policy::Command(c) => Some(c.info()),
        _ => None,
    };
    crate::record::resume::check_player(
        &cfg.out,
        crate::record::resume::Player {
            agent: agent.as_ref(),
            agent_cmd: agent_cmd.as_ref(),
        },
    )
}

/// Runs the benchmark and returns the summary (also written to `summary.csv`).
///
/// In this order, so that a mistake is reported before anything slow or lasting
/// happens: every input read and checked, writing nothing ([`inputs::check`]);
/// the output directory locked (a second run on it is refused at once); the agent's
/// endpoint asked; then what costs: the selected variants' preparation (the retrieval
/// models, for those variants only), the `mini` repository, a declared variant's
/// preflight on a checked-out tree; then the instances.
pub async fn run(mut cfg: RunConfig) -> anyhow::Result<Vec<output::VariantSummary>> {
    let checked = inputs::check(&cfg)?;
    // A declaration file given by path runs (and is reported) under its declared name.
    cfg.variants = checked
        .variants
        .iter()
        .map(|rv| rv.variant.name().to_string())
        .collect();
    let lock = RunLock::acquire(&cfg.out)?;
    check_resume(&cfg)?;
    let (repeats, note) = crate::record::resume::check_repeats(&cfg.out, cfg.repeats)?;
    for note in note.iter().chain(repeats_note(&cfg).iter()) {
        eprintln!("navbench: {note}");
    }
    if let Some(note) = &checked.shard_note {
        eprintln!("navbench: {note}");
    }
    if let Policy::Agent(agent) = &cfg.policy {
        agent.check_endpoint().await?;
    }
    let RunInputs {
        dataset: ds,
        fingerprint,
        dataset_instances,
        repos: cache,
        mut variants,
    } = checked.build()?;
    variants::prepare_all(&mut variants, &cfg.cache);
    variants::declared::preflight(&variants, ds.instances.first(), &cache, &cfg).await?;
    let out = RunOutput::open_locked(lock)?;
    let run_start = Instant::now();
    let info = RunInfo {
        dataset: ds.name.clone(),
        variants: cfg.variants.clone(),
        tokenizer: cfg.tokenizer.name().to_string(),
        started: chrono::Utc::now().to_rfc3339(),
        navbench_version: env!("CARGO_PKG_VERSION").to_string(),
        dataset_fingerprint: fingerprint,
        dataset_instances,
        instance_filter: cfg.instances.clone(),
        limit: cfg.limit,
        repeats: (repeats > 1).then_some(repeats),
        shard: cfg.shard,
        timeout_secs: Some(cfg.call_timeout.as_secs_f64()),
        merged_from: Vec::new(),
        phases: None,
        wall_ms: None,
        agent: match &cfg.policy {
            Policy::Agent(a) => Some(a.cfg.info()),
            Policy::Scripted | Policy::Command(_) => None,
        },
        agent_cmd: match &cfg.policy {
            Policy::Command(c) => Some(c.info()),
            Policy::Scripted | Policy::Agent(_) => None,
        },
    };
    out.write_info(&info)?;
    write_skipped(&cfg.out, &ds)?;
    eprintln!(
        "navbench: {} instance(s) of '{}' × {} → {}",
        ds.instances.len(),
        ds.name,
        cfg.variants.join(","),
        cfg.out.display()
    );

    let total = (ds.instances.len() * variants.len() * cfg.repeats as usize) as u64;
    let progress = RunProgress::new(total);
    let cfg = Arc::new(cfg);
    let cache = Arc::new(cache);
    let out = Arc::new(out);
    let variants = Arc::new(variants);
    let trees = Arc::new(FinishedTrees::default());
    let queue = Arc::new(Mutex::new(repository_groups(&ds.instances)));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..cfg.jobs.max(1) {
        let (cfg, cache, trees, out, variants, progress, queue) = (
            cfg.clone(),
            cache.clone(),
            trees.clone(),
            out.clone(),
            variants.clone(),
            progress.clone(),
            queue.clone(),
        );
        tasks.spawn(async move {
            // A lane takes a whole repository at a time, so no two instances of one
            // repository (two builds of nearly the same tree) ever run at once, and
            // each instance takes over its predecessor's tree and warm caches.
            loop {
                let group = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some(group) = group else { break };
                for inst in group {
                    let (cfg, cache, trees, out) =
                        (cfg.clone(), cache.clone(), trees.clone(), out.clone());
                    let progress = progress.clone();
                    run_instance(cfg, cache, trees, out, variants.clone(), inst, progress).await;
                }
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        if let Err(e) = r {
            tracing::error!("an instance task failed: {e}");
        }
    }
    progress.finish();
    if let Some(why) = out.broken() {
        anyhow::bail!("the run stopped: {why}");
    }
    if let Policy::Agent(agent) = &cfg.policy {
        if let Some(why) = agent.guard.halted() {
            anyhow::bail!("{why}; the pairs not started are left for a resume");
        }
        if agent.guard.cost_cap_reached() {
            eprintln!(
                "navbench: --max-cost-usd {:.4} reached (spent ${:.4}): pairs not started are left for a resume with a higher cap",
                agent.guard.max_cost().unwrap_or(0.0),
                agent.guard.spent()
            );
        }
    }

    finish_run(&cfg, &ds, &out, info, ms(run_start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(id: &str, repo: &str) -> Instance {
        Instance {
            instance_id: id.into(),
            repo: repo.into(),
            ..Instance::default()
        }
    }

    #[test]
    fn groups_keep_dataset_order_within_a_repository_and_put_the_largest_first() {
        let ds = [
            inst("b1", "o/b"),
            inst("a1", "o/a"),
            inst("b2", "o/b"),
            inst("c1", "o/c"),
            inst("a2", "o/a"),
            inst("b3", "o/b"),
        ];
        let ids: Vec<Vec<String>> = repository_groups(&ds)
            .into_iter()
            .map(|g| g.into_iter().map(|i| i.instance_id).collect())
            .collect();
        assert_eq!(ids, [vec!["b1", "b2", "b3"], vec!["a1", "a2"], vec!["c1"]]);
    }
}
