//! Repository management: `init_repository` (build or load the graph and indexes of
//! a directory under the allowed roots) and `reset_repository`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use navbench_server_support::sandbox::Sandbox;

use super::*;
use crate::cache::{CacheEntry, CacheError, CacheKey};
use crate::fuzzy::FuzzyIndex;
use crate::traverse::RepoGraph;

/// Where to go after `init_repository`.
const NEXT_STEP: &str = "Next: explore_tree(path='/') for the layout; search_code / search_entities with names and keywords from the issue; get_dependencies on candidates (callers: direction='upstream'); get_code for their full code.";

/// Wall time of each step of `init_repository`, for the log line that says where an
/// initialization went (`key=12 graph=840 bm25=2100 ...`, in ms).
struct InitPhases {
    last: Instant,
    done: Vec<(&'static str, f64)>,
}

impl InitPhases {
    fn start() -> InitPhases {
        InitPhases {
            last: Instant::now(),
            done: Vec::new(),
        }
    }

    /// Ends the step called `name`.
    fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.done
            .push((name, (now - self.last).as_secs_f64() * 1000.0));
        self.last = now;
    }
}

impl std::fmt::Display for InitPhases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, ms)) in self.done.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{name}={ms:.0}")?;
        }
        Ok(())
    }
}

impl CodegraphTools {
    /// `init_repository`: builds (or loads from the cache) the graph and indexes.
    pub fn init_repository(
        &self,
        args: &InitRepositoryArgs,
    ) -> Result<ToolOutput<InitOutput>, ToolError> {
        let started = Instant::now();
        let path = args.repo_path.trim();
        if path.is_empty() {
            return Err(invalid(
                "repo_path is empty; pass the absolute path of the repository checkout",
            ));
        }
        // Checked before the path is opened, so a refused path is not even probed.
        self.allowed_roots
            .check("init_repository", Path::new(path))
            .map_err(|e| invalid(e.to_string()))?;
        let sandbox = Sandbox::new(path).map_err(|e| {
            invalid(format!(
                "{e}. repo_path must be an existing directory (the repository checkout)"
            ))
        })?;
        let root = sandbox.root().to_path_buf();
        let force = args.force_rebuild.unwrap_or(false);
        let mut phases = InitPhases::start();
        let entry = CacheEntry::new(&self.cache_dir, CacheKey::of(&root));
        phases.mark("key");
        // The graph and the BM25 content index depend only on the tree: build both at
        // once, so one's sequential steps overlap the other's parallel ones. Chunks,
        // like parse results, are shared by every tree built with this cache.
        let chunk_store = crate::chunk::ChunkStore::new(self.cache_dir.join("chunks"));
        let (graph, content) = rayon::join(
            || self.load_or_build(&root, &entry, force),
            || {
                let started = Instant::now();
                let index_dir = entry.dir.join("bm25");
                let content = crate::retrievers::open_or_build_content(
                    &root,
                    &index_dir,
                    force,
                    Some(&chunk_store),
                );
                tracing::debug!(elapsed = ?started.elapsed(), "BM25 content index ready");
                content
            },
        );
        let (graph, cache) = graph?;
        phases.mark("graph+bm25");
        let retrievers = crate::retrievers::with_content(&graph, content);
        phases.mark("modules");
        let rg = RepoGraph::new(graph);
        let fuzzy = FuzzyIndex::build(rg.graph());
        phases.mark("fuzzy");
        let all_files: Vec<String> = rg
            .graph()
            .node_indices()
            .filter(|&ix| rg.kind(ix) == NodeKind::File && !rg.is_test(ix))
            .map(|ix| rg.id(ix).to_string())
            .collect();
        let counts = rg.graph().node_counts();
        let count = |k: NodeKind| counts.iter().find(|(kk, _)| *kk == k).map_or(0, |c| c.1);
        let data = InitOutput {
            root: root.to_string_lossy().into_owned(),
            nodes: rg.graph().node_count(),
            edges: rg.graph().edge_count(),
            directories: count(NodeKind::Directory),
            files: count(NodeKind::File),
            classes: count(NodeKind::Class),
            functions: count(NodeKind::Function),
            build_ms: (started.elapsed().as_secs_f64() * 1e4).round() / 10.0,
            cache: cache.to_string(),
            fingerprint: entry.key.fingerprint.clone(),
            content_search: retrievers.content.is_some(),
            content_index: match (&retrievers.content, retrievers.cache_hit) {
                (None, _) => "unavailable",
                (Some(_), true) => "cached",
                (Some(_), false) => "built",
            }
            .to_string(),
            next_step: NEXT_STEP.to_string(),
        };
        let mut text = format!(
            "Initialized repository {}\ngraph: {} nodes, {} edges ({} directories, {} files, {} classes, {} functions)\nbuild time: {:.1} ms; cache: {} ({}); BM25 code index: {}\n",
            data.root,
            data.nodes,
            data.edges,
            data.directories,
            data.files,
            data.classes,
            data.functions,
            data.build_ms,
            data.cache,
            data.fingerprint,
            data.content_index
        );
        if let Some(note) = &retrievers.note {
            text += &format!("note: {note}\n");
        }
        text += NEXT_STEP;
        let repo = Repository {
            sandbox,
            graph: rg,
            fuzzy,
            retrievers,
            all_files,
        };
        let mut guard = self.state.write().map_err(|_| {
            ToolError::Init("internal state lock poisoned; restart the server".into())
        })?;
        *guard = Some(Arc::new(repo));
        phases.mark("rest");
        tracing::info!(root = %data.root, cache = %data.cache, ms = data.build_ms, phases = %phases, "repository initialized");
        Ok(ToolOutput::ok(text, data))
    }

    /// The graph from the cache, or built (and saved) when forced, missing, corrupt or
    /// stale; with how the cache was used (`hit`, `miss`, `forced`, `corrupt`).
    fn load_or_build(
        &self,
        root: &Path,
        entry: &CacheEntry,
        force: bool,
    ) -> Result<(crate::graph::CodeGraph, &'static str), ToolError> {
        Ok(if force {
            (self.build_and_save(root, entry)?, "forced")
        } else {
            match entry.load_graph() {
                Ok(g) => (g, "hit"),
                Err(CacheError::Missing) => (self.build_and_save(root, entry)?, "miss"),
                Err(e @ (CacheError::Corrupt(_) | CacheError::Io(_))) => {
                    tracing::warn!(error = %e, path = %entry.graph_path().display(), "rebuilding");
                    (self.build_and_save(root, entry)?, "corrupt")
                }
                Err(e @ CacheError::Stale(_)) => {
                    tracing::info!(error = %e, "rebuilding");
                    (self.build_and_save(root, entry)?, "miss")
                }
            }
        })
    }

    fn build_and_save(
        &self,
        root: &Path,
        entry: &CacheEntry,
    ) -> Result<crate::graph::CodeGraph, ToolError> {
        // Per-file parse results are shared by every tree built with this cache:
        // the next commit of a repository parses only the files that changed.
        let options = crate::builder::BuildOptions {
            reuse: Some(crate::builder::FileStore::new(self.cache_dir.join("files"))),
            ..Default::default()
        };
        let (graph, report) = crate::builder::build_graph_with(root, &options).map_err(|e| {
            ToolError::Init(format!(
                "building the graph of {} failed: {e}",
                root.display()
            ))
        })?;
        tracing::info!(
            parsed = report.parsed,
            reused = report.reused,
            build_ms = format!("{:.1}", report.elapsed.as_secs_f64() * 1000.0),
            "graph built"
        );
        let saving = Instant::now();
        if let Err(e) = entry.save_graph(&graph) {
            tracing::warn!(error = %e, dir = %entry.dir.display(), "cannot write the graph cache");
        }
        tracing::debug!(elapsed = ?saving.elapsed(), "graph cache written");
        Ok(graph)
    }

    /// `reset_repository`: forgets the current repository.
    pub fn reset_repository(&self) -> Result<ToolOutput<ResetOutput>, ToolError> {
        let mut guard = self.state.write().map_err(|_| {
            ToolError::Init("internal state lock poisoned; restart the server".into())
        })?;
        let previous = guard
            .take()
            .map(|r| r.sandbox.root().to_string_lossy().into_owned());
        let text = match &previous {
            Some(r) => format!(
                "Repository context reset (was {r}). Call init_repository to work on a repository again."
            ),
            None => "No repository was initialized; nothing to reset.".to_string(),
        };
        Ok(ToolOutput::ok(
            text,
            ResetOutput {
                previous_root: previous,
            },
        ))
    }
}
