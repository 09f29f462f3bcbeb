//! The refusals that need the server: before the run, each declared variant's server
//! is started on the first instance's tree, its `tools/list` must hold every tool the
//! file calls, and the policy is run once there: a step whose extractor finds no file
//! of the tree in any of its responses is refused, with the step's line and the start
//! of what the server did answer (so the pointer or regex can be fixed against it).
//! A step with no call on that instance (e.g. `for_each = "frames"` on an issue
//! without a traceback) cannot be judged and is let through.

use anyhow::Context;

use super::policy::{base_values, normalize, plan, run_setup};
use super::validate::refuse;
use super::{Declared, template};
use crate::checkout::RepoCache;
use crate::data::dataset::Instance;
use crate::policy::terms;
use crate::policy::{Driver, Task};
use crate::run::config::RunConfig;
use crate::session::mcp_client::McpSession;
use crate::variants::ReadyVariant;

/// Checks every declared variant of `variants` on `first` (see the module doc).
pub async fn preflight(
    variants: &[ReadyVariant],
    first: Option<&Instance>,
    repos: &RepoCache,
    cfg: &RunConfig,
) -> anyhow::Result<()> {
    let Some(inst) = first else { return Ok(()) };
    let declared: Vec<(&ReadyVariant, &Declared)> = variants
        .iter()
        .filter_map(|rv| rv.variant.declared().map(|d| (rv, d)))
        .collect();
    if declared.is_empty() {
        return Ok(());
    }
    let tree = repos
        .checkout_tree(&inst.repo, &inst.base_commit, &inst.instance_id, None)
        .with_context(|| {
            format!(
                "preflight of declared variants: cannot check out {}",
                inst.instance_id
            )
        })?;
    for (rv, d) in declared {
        let spec = rv
            .variant
            .server_spec(rv.binary.clone(), &tree.dir, &cfg.cache, &rv.prepared);
        let mut session = McpSession::start(&spec, cfg.call_timeout)
            .await
            .with_context(|| {
                format!(
                    "variant '{}' ({}): its server did not start on {}",
                    d.name,
                    d.source.display(),
                    inst.instance_id
                )
            })?;
        let tools: Vec<String> = session.tools().iter().map(|t| t.name.to_string()).collect();
        let r = check_tools(d, &tools);
        let r = match r {
            Ok(()) => {
                let task = Task {
                    instance: inst,
                    workdir: &tree.dir,
                    knobs: &crate::policy::knobs::Knobs::default(),
                    trial: crate::policy::Trial::FIRST,
                };
                let mut driver = Driver::new(&mut session, cfg.tokenizer)
                    .with_setup_timeout(d.setup_tools, cfg.index_timeout);
                check_extractors(d, &mut driver, &task).await
            }
            Err(e) => Err(e),
        };
        session.shutdown().await;
        r?;
    }
    Ok(())
}

/// Every called tool must be in the server's `tools/list`.
pub fn check_tools(d: &Declared, tools: &[String]) -> anyhow::Result<()> {
    for c in d.setup.iter().chain(d.steps.iter().map(|s| &s.call)) {
        if !tools.contains(&c.tool) {
            return Err(refuse(
                &d.source,
                &d.text,
                c.tool_line,
                format!(
                    "tool \"{}\" is not among the server's tools after tools/list; write one of {}",
                    c.tool,
                    tools.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Runs the setup and every step once; refuses a step whose responses give no file.
async fn check_extractors(
    d: &Declared,
    driver: &mut Driver<'_>,
    task: &Task<'_>,
) -> anyhow::Result<()> {
    let ex = terms::extract(&task.instance.problem_statement);
    let base = base_values(task, &ex);
    run_setup(d, driver, &base).await.with_context(|| {
        format!(
            "variant '{}': preflight on {}",
            d.name, task.instance.instance_id
        )
    })?;
    for step in &d.steps {
        let (mut calls, mut raw, mut files) = (0, 0, 0);
        let mut first_text = String::new();
        let mut first_error = None;
        for p in plan(step, &ex, &base) {
            let args =
                template::render_args(&step.call.args, &p.values).map_err(anyhow::Error::msg)?;
            let out = driver.call(&step.call.tool, args).await;
            calls += 1;
            if out.is_error {
                first_error.get_or_insert(out.error.unwrap_or_default());
                continue;
            }
            let locs = step.extractor.extract(out.structured.as_ref(), &out.text);
            raw += locs.len();
            files += locs
                .iter()
                .filter(|l| normalize(task.workdir, &l.path).is_some())
                .count();
            if first_text.is_empty() {
                first_text = match &out.structured {
                    Some(v) => v.to_string(),
                    None => out.text.clone(),
                };
            }
        }
        if calls == 0 || files > 0 {
            continue;
        }
        let seen: String = first_text.chars().take(300).collect();
        let id = &task.instance.instance_id;
        let what = if seen.is_empty() {
            // Nothing answered: the server, not the extractor, is what to fix.
            format!(
                "every one of its {calls} call(s) on the first instance ({id}) failed: {}; make the server answer (install, launch, setup) before the run",
                first_error.unwrap_or_default()
            )
        } else {
            let why = if raw > 0 {
                format!(
                    "its {raw} location(s) name no file of the tree (paths must be relative to the root or under it)"
                )
            } else {
                format!("it matched nothing; the first response began: {seen}")
            };
            format!(
                "the extractor found no location in {calls} call(s) on the first instance ({id}): {why}; fix `extract` (items/path/line pointers, or the regex) to match that response"
            )
        };
        return Err(refuse(
            &d.source,
            &d.text,
            step.extract_line,
            format!("step \"{}\": {what}", step.call.tool),
        ));
    }
    Ok(())
}
