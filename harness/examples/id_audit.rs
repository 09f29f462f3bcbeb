//! Which gold function ids each scripted variant can express at all: for every
//! instance of a dataset and every gold function id (derived from the patch at the
//! base commit), whether the id is in
//! - the line space of `text`, `codegraph` and `retrieval(-static)`: the function ids
//!   [`EntityIndex::ids_at`] gives any line of the file, and the ids
//!   [`EntityIndex::answer_ids_of`] gives any definition of it (a graph node);
//! - the `bm25` space: the per-function corpus ids (`navbench-codegraph`'s
//!   `functions::corpus`, whose id rule is restated here: the harness links no server
//!   crate) read back by [`docs_locations`]; a file with `test` in its path is not in
//!   the corpus;
//! - codegraph's graph: the file's language family among the repository's
//!   ([`Families::of`] over the base tree's files).
//!
//! ```text
//! cargo run -p navbench --example id_audit -- datasets/tuning/polyglot.jsonl \
//!     '/path/to/mirrors/{owner}+{name}/repo' > audit.csv
//! ```
//!
//! One CSV row per gold function id: `instance,repo,language,gold,kind,line_space,
//! bm25_space,graph_language,shape`, `kind` the definition the id names (`method`,
//! `constructor-class`, `type`, `function`, …) and `shape` a hint at why it is missed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use navbench::data::dataset::Dataset;
use navbench::policy::entities::EntityIndex;
use navbench::score::gold::derive_gold;
use navbench::variants::bm25::docs_locations;
use navbench_lang::family::Families;
use navbench_lang::{DefKind, language_for_path};

fn git(dir: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The bm25 corpus ids of one non-Python file, as `functions::corpus::lang_documents`
/// writes them.
fn bm25_ids(rel: &str, text: &str) -> Vec<String> {
    let Some(lang) = language_for_path(rel) else {
        return Vec::new();
    };
    let parsed = lang.parse(text);
    parsed
        .definitions
        .iter()
        .filter(|d| d.kind.is_callable())
        .map(|d| {
            let owner = match d.kind {
                DefKind::Method | DefKind::Constructor => d.container.as_deref(),
                _ => None,
            };
            match owner {
                Some(t) if d.kind == DefKind::Constructor => format!("{rel}/{t}"),
                Some(t) => format!("{rel}/{t}/{}", d.name),
                None if d.module_level => format!("{rel}/{}", d.qualname),
                None => format!("{rel}/{}", d.name),
            }
        })
        .collect()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dataset), Some(pattern)) = (args.get(1), args.get(2)) else {
        anyhow::bail!(
            "usage: id_audit DATASET.jsonl MIRROR_TEMPLATE (a bare mirror per repository, \
             e.g. '/path/to/mirrors/{{owner}}+{{name}}/repo')"
        );
    };
    let dataset = Dataset::load(Path::new(dataset))?;
    let scratch = tempfile::tempdir()?;
    println!(
        "instance,repo,language,gold,kind,line_space,node_space,bm25_space,graph_language,shape"
    );
    for inst in &dataset.instances {
        let (owner, name) = inst.owner_name()?;
        let dir = pattern.replace("{owner}", owner).replace("{name}", name);
        let base = &inst.base_commit;
        let read = |p: &str| git(&dir, &["show", &format!("{base}:{p}")]);
        let gold = match derive_gold(&inst.patch, &read) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{}: {e}", inst.instance_id);
                continue;
            }
        };
        let tree = git(&dir, &["ls-tree", "-r", "--name-only", base]).unwrap_or_default();
        let families = Families::of(tree.lines());
        // The gold files at the base commit, written under a scratch root for the
        // entity index.
        let root = scratch.path().join(&inst.instance_id);
        let mut index = EntityIndex::default();
        for gold_id in &gold.locations.functions {
            let (file, qual) = gold_id.split_once(':').unwrap_or((gold_id, ""));
            let Some(text) = read(file) else { continue };
            let abs = root.join(file);
            std::fs::create_dir_all(abs.parent().unwrap_or(&root))?;
            std::fs::write(&abs, &text)?;
            let language = language_for_path(file).map_or("python", |l| l.name());
            let lines = text.lines().count();
            let mut lines_space: BTreeSet<String> = BTreeSet::new();
            for line in 1..=lines {
                lines_space.extend(index.ids_at(&root, file, line).function);
            }
            let mut space = lines_space.clone();
            let spans = index.entities(&root, file);
            for e in &spans {
                space.extend(index.answer_ids_of(&root, file, &e.qualname).function);
            }
            let bm25: BTreeSet<String> = if file.to_lowercase().contains("test") {
                BTreeSet::new()
            } else if file.ends_with(".py") {
                BTreeSet::from([String::from("(python: not audited)")])
            } else {
                // One id at a time: the conversion cuts its answer at ten.
                bm25_ids(file, &text)
                    .into_iter()
                    .flat_map(|id| docs_locations(&[id]).functions)
                    .collect()
            };
            // What the gold id names.
            let parsed = language_for_path(file).map(|l| l.parse(&text));
            let kind = parsed
                .as_ref()
                .map(|p| {
                    let defs: Vec<_> = p
                        .definitions
                        .iter()
                        .filter(|d| d.qualname == qual)
                        .map(|d| format!("{:?}", d.kind).to_lowercase())
                        .collect();
                    let ctor = p.definitions.iter().any(|d| {
                        d.kind == DefKind::Constructor && d.container.as_deref() == Some(qual)
                    });
                    let mut k = defs.join("+");
                    if ctor {
                        k.push_str("(ctor)");
                    }
                    if k.is_empty() { "none".into() } else { k }
                })
                .unwrap_or_else(|| "python".into());
            let line_ok = lines_space.contains(gold_id);
            let node_ok = space.contains(gold_id);
            let bm25_ok = bm25.contains(gold_id) || bm25.iter().any(|b| b.starts_with('('));
            let graph_ok = families.contains(file);
            let mut shape = Vec::new();
            if file.to_lowercase().contains("test") {
                shape.push("test-path");
            }
            if !bm25_ok && kind.contains("ctor") {
                shape.push("constructor");
            }
            if !bm25_ok && kind.contains("impl") {
                shape.push("impl-body");
            }
            if !bm25_ok
                && (kind.contains("class")
                    || kind.contains("struct")
                    || kind.contains("enum")
                    || kind.contains("interface"))
            {
                shape.push("type-body");
            }
            println!(
                "{},{},{},{},{},{},{},{},{},{}",
                inst.instance_id,
                inst.repo,
                language,
                gold_id,
                kind,
                line_ok,
                node_ok,
                bm25_ok,
                graph_ok,
                shape.join("+")
            );
        }
    }
    Ok(())
}
