//! Repository management: `init_repository` (build or load the graph and indexes of
//! a directory under the allowed roots) and `reset_repository`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use navbench_lang::family::{Families, Selection};
use navbench_server_support::sandbox::Sandbox;
use navbench_server_support::timings::{Part, TimingsRecorder};

use super::*;
use crate::bm25::{Bm25Error, Bm25Index};
use crate::cache::{CacheEntry, CacheError, CacheKey};
use crate::fuzzy::FuzzyIndex;
use crate::traverse::{RepoGraph, RepoGraphParts};

/// A content index (and whether it was loaded rather than built), or why there is none.
type ContentIndex = Result<(Bm25Index, bool), Bm25Error>;

/// What the tools precompute from a graph besides the content index: the traversal
/// parts ([`RepoGraphParts`]), the fuzzy index and the entity-id retriever. Each is
/// one pass over the graph; they are computed side by side, and beside the content
/// index, as soon as the graph is there.
struct GraphIndexes {
    parts: RepoGraphParts,
    fuzzy: FuzzyIndex,
    modules: Arc<dyn crate::retrievers::ModuleRetriever>,
}

impl GraphIndexes {
    /// The indexes of `graph`, in parallel.
    fn of(graph: &crate::graph::CodeGraph, t: &TimingsRecorder) -> GraphIndexes {
        let ((parts, fuzzy), modules) = rayon::join(
            || {
                rayon::join(
                    || t.time(Part::Graph, || RepoGraphParts::of(graph)),
                    || t.time(Part::Text, || FuzzyIndex::build(graph)),
                )
            },
            || t.time(Part::Text, || crate::retrievers::module_retriever(graph)),
        );
        GraphIndexes {
            parts,
            fuzzy,
            modules,
        }
    }
}

/// What [`CodegraphTools::graph_and_content`] gives: the graph, its indexes, how the
/// graph cache was used, and the content index.
type GraphAndContent = (
    crate::graph::CodeGraph,
    GraphIndexes,
    &'static str,
    ContentIndex,
);

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
        // The stores' build identity hashes the executable (tens of MB, once per
        // process): started now, it overlaps the fingerprint's and the walk's reads
        // instead of waiting at the first store read.
        std::thread::spawn(crate::cache::build_identity);
        let mut phases = InitPhases::start();
        let t = TimingsRecorder::default();
        let entry = t.time(Part::Fingerprint, || {
            CacheEntry::new(
                &self.cache_dir,
                CacheKey::of(&root).with_languages(&self.languages),
            )
        });
        phases.mark("key");
        let (graph, indexes, cache, content) = self.graph_and_content(&root, &entry, force, &t)?;
        phases.mark("graph+indexes");
        let retrievers = crate::retrievers::with_modules(indexes.modules, content);
        let rg = RepoGraph::from_parts(graph, indexes.parts);
        let fuzzy = indexes.fuzzy;
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
            cache: cache.to_string(),
            fingerprint: entry.key.fingerprint.clone(),
            languages: crate::retrievers::graph_families(rg.graph())
                .names()
                .iter()
                .map(|f| f.to_string())
                .collect(),
            content_search: retrievers.content.is_some(),
            content_index: match (&retrievers.content, retrievers.cache_hit) {
                (None, _) => "unavailable",
                (Some(_), true) => "cached",
                (Some(_), false) => "built",
            }
            .to_string(),
            next_step: NEXT_STEP.to_string(),
        };
        // The build time and its parts are in `_meta` only: neither the text an agent
        // reads nor the structured result holds a wall-clock value, so a recorded
        // agent run replays and the result's size is reproducible.
        let build_ms = (started.elapsed().as_secs_f64() * 1e4).round() / 10.0;
        let meta = serde_json::json!({"build_ms": build_ms, "timings_ms": t.snapshot()});
        let mut text = format!(
            "Initialized repository {}\ngraph: {} nodes, {} edges ({} directories, {} files, {} classes, {} functions); languages: {}\ncache: {} ({}); BM25 code index: {}\n",
            data.root,
            data.nodes,
            data.edges,
            data.directories,
            data.files,
            data.classes,
            data.functions,
            data.languages.join(", "),
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
        tracing::info!(root = %data.root, cache = %data.cache, ms = build_ms, phases = %phases, "repository initialized");
        Ok(ToolOutput::ok(text, data).with_meta(meta))
    }

    /// The graph, its indexes ([`GraphIndexes`]) and the BM25 content index of the
    /// tree at `root`: the graph loaded from `entry` when it is there and current,
    /// else built; with how the graph cache was used (`hit`, `miss`, `forced`,
    /// `corrupt`). The content index is built in memory either way, every unchanged
    /// file's chunks and terms taken from the chunk store, beside the graph's
    /// assembly and indexes.
    ///
    /// When the graph must be built, the graph builder's parse of each file also
    /// gives the file's chunks ([`crate::chunk::TreeChunks`]), so each changed file
    /// is parsed once, and the content index is built while the graph is assembled
    /// and saved. Chunks, like parse results, are shared by every tree built with
    /// this cache.
    fn graph_and_content(
        &self,
        root: &Path,
        entry: &CacheEntry,
        force: bool,
        t: &TimingsRecorder,
    ) -> Result<GraphAndContent, ToolError> {
        let chunk_store = crate::chunk::ChunkStore::new(self.cache_dir.join("chunks"));
        // The content index reads the graph's languages: `search_code` then finds code
        // in the graph's files only (a Python project's JS assets in neither). It is
        // built in memory from the chunk store (only files it lacks are chunked) and
        // not saved: the store is what the next tree reuses.
        let build_content = |shared: Option<&crate::chunk::TreeChunks>, families: Families| {
            let started = Instant::now();
            let languages = Selection::Only(families);
            let content = Bm25Index::build_in_memory(root, Some(&chunk_store), shared, &languages);
            t.add(Part::Text, started.elapsed());
            tracing::debug!(elapsed = ?started.elapsed(), "BM25 content index built");
            content
        };
        let why = match t.time(Part::Graph, || self.cached_graph(entry, force)) {
            Ok(graph) => {
                let families = crate::retrievers::graph_families(&graph);
                let (indexes, content) = rayon::join(
                    || GraphIndexes::of(&graph, t),
                    || build_content(None, families),
                );
                return Ok((graph, indexes, "hit", content));
            }
            Err(why) => why,
        };
        let shared = crate::chunk::TreeChunks::new(
            root,
            crate::chunk::ChunkConfig::default(),
            Some(chunk_store.clone()),
        )
        .map_err(|e| tracing::debug!(error = %e, "chunks not made from the graph's parse"))
        .ok()
        .map(Arc::new);
        let sink = shared
            .clone()
            .map(|s| s as Arc<dyn crate::builder::TreeSink>);
        let extraction = t.time(Part::Parse, || self.extract(root, sink))?;
        let families = extraction.languages().clone();
        let ((graph, indexes), content) = rayon::join(
            || self.assemble_and_save(extraction, entry, t),
            || build_content(shared.as_deref(), families),
        );
        Ok((graph, indexes, why, content))
    }

    /// The graph saved in `entry`, or why it must be built: `forced`, `miss` (none, or
    /// of another tree or build) or `corrupt`.
    fn cached_graph(
        &self,
        entry: &CacheEntry,
        force: bool,
    ) -> Result<crate::graph::CodeGraph, &'static str> {
        if force {
            return Err("forced");
        }
        match entry.load_graph() {
            Ok(g) => Ok(g),
            Err(CacheError::Missing) => Err("miss"),
            Err(e @ (CacheError::Corrupt(_) | CacheError::Io(_))) => {
                tracing::warn!(error = %e, path = %entry.graph_path().display(), "rebuilding");
                Err("corrupt")
            }
            Err(e @ CacheError::Stale(_)) => {
                tracing::info!(error = %e, "rebuilding");
                Err("miss")
            }
        }
    }

    /// The options of this server's graph builds: per-file parse results shared by
    /// every tree built with this cache (the next commit of a repository parses only
    /// the files that changed), and `trees` given each parsed tree.
    fn build_options(
        &self,
        trees: Option<Arc<dyn crate::builder::TreeSink>>,
    ) -> crate::builder::BuildOptions {
        crate::builder::BuildOptions {
            reuse: Some(crate::builder::FileStore::new(self.cache_dir.join("files"))),
            trees,
            languages: self.languages.clone(),
            ..Default::default()
        }
    }

    /// The walk and per-file extraction of a graph build of `root` (see
    /// [`crate::builder::Extraction`]).
    fn extract(
        &self,
        root: &Path,
        trees: Option<Arc<dyn crate::builder::TreeSink>>,
    ) -> Result<crate::builder::Extraction, ToolError> {
        crate::builder::Extraction::run(root, &self.build_options(trees)).map_err(|e| {
            ToolError::Init(format!(
                "building the graph of {} failed: {e}",
                root.display()
            ))
        })
    }

    /// The graph from an extraction and its indexes, the graph saved in `entry`
    /// beside the indexing (a failure to save is logged).
    fn assemble_and_save(
        &self,
        extraction: crate::builder::Extraction,
        entry: &CacheEntry,
        t: &TimingsRecorder,
    ) -> (crate::graph::CodeGraph, GraphIndexes) {
        let (graph, report) = t.time(Part::Graph, || {
            extraction.assemble(&self.build_options(None))
        });
        tracing::info!(
            parsed = report.parsed,
            reused = report.reused,
            build_ms = format!("{:.1}", report.elapsed.as_secs_f64() * 1000.0),
            "graph built"
        );
        let save = || {
            let saving = Instant::now();
            let bytes = crate::cache::encode(&graph, &entry.key);
            if let Err(e) = entry.save_encoded(&bytes) {
                tracing::warn!(error = %e, dir = %entry.dir.display(), "cannot write the graph cache");
            }
            t.add(Part::Write, saving.elapsed());
            tracing::debug!(elapsed = ?saving.elapsed(), "graph cache written");
        };
        let (indexes, ()) = rayon::join(|| GraphIndexes::of(&graph, t), save);
        (graph, indexes)
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
