//! Building the dependency graph of a repository (LocAgent's `build_graph`,
//! SPEC.md §1), deterministically and in parallel.
//!
//! Data flow:
//! 1. [`walk`]: the sorted, `os.walk`-like traversal with the original's skip and
//!    pruning rules → directories and `.py` files in insertion order.
//! 2. [`extract`] (parallel, one file per task): read as Python's text mode does,
//!    parse with the Python front end (`navbench_python`), decide with its
//!    `rejection` whether CPython's `ast.parse` would accept it,
//!    and extract definitions, imports, and per-definition call/base names. With a
//!    [`FileStore`] ([`BuildOptions::reuse`]), files whose path and text an earlier
//!    build already extracted are taken from it instead ([`reuse`]), and this
//!    build's results are stored for the next one.
//! 3. Assembly (sequential, walk order): directory, file, class and function nodes
//!    and `contains` edges.
//! 4. File-level `imports` edges ([`imports`]).
//! 5. Per class/function (resolved in parallel, added in node order): entity-level
//!    `imports` edges, then `invokes` and `inherits` edges ([`callees`]).
//!
//! Files of other languages (TS/JS, Java, Go, Rust) are read by `navbench-lang`'s
//! front ends in step 2 and become nodes in step 3 ([`polyglot`]); their `imports`
//! edges follow the Python files' in step 4, their `invokes` and `inherits` edges
//! the Python entities' in step 5 ([`polyglot_links`], [`polyglot_paths`]). Python
//! name resolution never sees their nodes, so a Python-only tree's graph is the
//! original's.
//!
//! Steps 3 to 5 always run over the whole tree, so a build that reuses stored
//! extractions gives the same graph as a fresh one.
//!
//! Where the original depends on hash or directory-listing order, this builder
//! uses a fixed order (sorted walk, sorted names); the edge multiset is the same.

mod callees;
mod encode;
mod extract;
mod imports;
pub mod polyglot;
mod polyglot_links;
mod polyglot_paths;
pub(crate) mod reuse;
mod tables;
mod walk;

#[cfg(test)]
mod reuse_tests;

pub use reuse::FileStore;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use navbench_lang::family::{Families, Selection};
use rayon::prelude::*;
use tracing::debug;

use crate::graph::{Code, CodeGraph, Edge, EdgeKind, Node, NodeIndex, NodeKind};
use extract::{EntityAnalysis, Extracted, ParsedFile};

/// Options of [`build_graph_with`].
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Link names that resolve to no local candidate to every node in the
    /// repository with that short name (`global_import=True`, the setting LocAgent
    /// runs with; the default).
    pub global_import: bool,
    /// Where to reuse per-file extraction results from (and store this build's);
    /// `None` (the default) parses every file.
    pub reuse: Option<FileStore>,
    /// Who else wants the syntax tree of each file this build parses (`None`, the
    /// default: nobody).
    pub trees: Option<Arc<dyn TreeSink>>,
    /// Which language families become nodes ([`walk`]): by default the
    /// repository's languages, so a Python project's graph is the original's.
    pub languages: Selection,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            global_import: true,
            reuse: None,
            trees: None,
            languages: Selection::Auto,
        }
    }
}

/// Something that wants the syntax tree of each file the builder parses, while the
/// builder holds it: the BM25 chunker (`crate::chunk::TreeChunks`), so that an init
/// that builds both the graph and the content index parses each file once.
pub trait TreeSink: Send + Sync + std::fmt::Debug {
    /// File `id`, whose bytes on disk are exactly `text` (valid UTF-8 without a
    /// carriage return), parsed into `tree` by the builder's parse of `text` itself.
    /// Called from the builder's worker threads, once per file it parses; never for
    /// a file whose extraction was reused, is not UTF-8, holds a carriage return, or
    /// was parsed with its numeric tables blanked.
    fn parsed(&self, id: &str, text: &str, tree: &tree_sitter::Tree);
}

/// What happened while building, for logs and diagnostics.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    /// `.py` files that became nodes (parsed or not).
    pub files: usize,
    /// Files `ast.parse` would reject, with the reason: orphan file nodes.
    pub rejected: Vec<(String, String)>,
    /// Files that are not valid UTF-8: no node at all.
    pub undecodable: Vec<String>,
    /// Files whose extraction came from the [`FileStore`].
    pub reused: usize,
    /// Files parsed and extracted by this build.
    pub parsed: usize,
    /// Wall time of the whole build.
    pub elapsed: Duration,
    /// The language families whose files became nodes (`python`, `ecma`, …).
    pub languages: Vec<&'static str>,
}

/// Why a graph could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The root is missing or not a directory.
    #[error("repository root {0} is not a directory")]
    NotADirectory(PathBuf),
    /// The root directory could not be listed.
    #[error("cannot list repository root {path}: {source}")]
    Walk {
        /// The root.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A `.py` file exists but could not be read (the original crashes here too).
    #[error("cannot read {path}: {source} (check permissions)")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Builds the graph of the repository at `root` with the default options
/// (`global_import` on).
pub fn build_graph(root: &Path) -> Result<CodeGraph, BuildError> {
    build_graph_with(root, &BuildOptions::default()).map(|(g, _)| g)
}

/// A `.py` file's text as the builder reads it ([`read_text`]).
struct FileText {
    text: Arc<str>,
    /// The text is the file's bytes unchanged (no newline was translated).
    verbatim: bool,
}

/// What reading and extracting one file produced.
enum FileOutcome {
    Undecodable,
    /// A file of another language, read by its `navbench-lang` front end (never
    /// stored nor reused).
    Source {
        text: Arc<str>,
        lang: &'static dyn navbench_lang::Language,
        parsed: navbench_lang::ParsedFile,
    },
    Read {
        text: Arc<str>,
        extracted: Extracted,
        /// Taken from the store rather than parsed.
        reused: bool,
    },
}

/// Builds the graph of the repository at `root`, returning it with a report.
pub fn build_graph_with(
    root: &Path,
    options: &BuildOptions,
) -> Result<(CodeGraph, BuildReport), BuildError> {
    Ok(Extraction::run(root, options)?.assemble(options))
}

/// A build's steps 1 and 2 (the walk, every file read and extracted), which
/// [`Extraction::assemble`] turns into the graph. Split so that a caller can do other
/// work beside the (mostly sequential) assembly, such as indexing the chunks a
/// [`TreeSink`] made during the extraction.
pub struct Extraction {
    root: PathBuf,
    items: Vec<walk::WalkItem>,
    outcomes: Vec<Option<FileOutcome>>,
    families: Families,
    start: Instant,
}

impl Extraction {
    /// Walks `root` and reads and extracts every file in parallel (results keep walk
    /// order), giving each parsed tree to `options.trees`.
    pub fn run(root: &Path, options: &BuildOptions) -> Result<Extraction, BuildError> {
        let start = Instant::now();
        if !root.is_dir() {
            return Err(BuildError::NotADirectory(root.to_path_buf()));
        }
        let (items, families) =
            walk::walk(root, &options.languages).map_err(|source| BuildError::Walk {
                path: root.to_path_buf(),
                source,
            })?;
        debug!(items = items.len(), languages = %families, elapsed = ?start.elapsed(), "walked");
        let outcomes = extract_all(&items, options.reuse.as_ref(), options.trees.as_deref())?;
        debug!(elapsed = ?start.elapsed(), "files read and extracted");
        Ok(Extraction {
            root: root.to_path_buf(),
            items,
            outcomes,
            families,
            start,
        })
    }

    /// The language families whose files this build reads (its
    /// [`BuildOptions::languages`], resolved by the walk).
    pub fn languages(&self) -> &Families {
        &self.families
    }

    /// Steps 3 to 5: the graph from the extracted files, with the build's report
    /// (its time counted from [`Extraction::run`]'s start).
    pub fn assemble(self, options: &BuildOptions) -> (CodeGraph, BuildReport) {
        let Extraction {
            root,
            items,
            outcomes,
            families,
            start,
        } = self;
        // 3. Nodes and contains edges, in the original's insertion order.
        let mut graph = CodeGraph::new();
        let mut report = BuildReport {
            languages: families.names().to_vec(),
            ..BuildReport::default()
        };
        for o in outcomes.iter().flatten() {
            match o {
                FileOutcome::Read { reused: true, .. } => report.reused += 1,
                FileOutcome::Read { reused: false, .. } | FileOutcome::Source { .. } => {
                    report.parsed += 1
                }
                FileOutcome::Undecodable => {}
            }
        }
        let (parsed_files, analyses, sources) =
            add_nodes(&mut graph, &mut report, &items, &outcomes);
        debug!(nodes = graph.node_count(), elapsed = ?start.elapsed(), "nodes added");

        // 4. File-level imports.
        let mut resolver = imports::Resolver::new(&root);
        for &(file_ix, parsed) in &parsed_files {
            for (t, alias) in resolver.edges(&graph, &parsed.imports) {
                graph.add_edge(file_ix, t, edge(EdgeKind::Imports, alias));
            }
        }
        let source_imports = polyglot_links::add_file_imports(&mut graph, &root, &sources);
        debug!(elapsed = ?start.elapsed(), "file imports resolved");

        // 5. Entity-level imports, invokes, inherits.
        add_entity_edges(&mut graph, &mut resolver, &parsed_files, &analyses, options);
        polyglot_links::add_entity_edges(
            &mut graph,
            &sources,
            &source_imports,
            options.global_import,
        );
        report.elapsed = start.elapsed();
        (graph, report)
    }
}

/// An edge of `kind` (only `imports` edges carry an alias).
fn edge(kind: EdgeKind, alias: Option<String>) -> Edge {
    Edge { kind, alias }
}

/// Python files that parsed (with their node), for each entity node the analysis of
/// its last definition (indexed by node index), and the files of other languages.
type Assembled<'o> = (
    Vec<(NodeIndex, &'o ParsedFile)>,
    Vec<Option<&'o EntityAnalysis>>,
    Vec<polyglot::SourceFile<'o>>,
);

/// Step 3: directory, file, class and function nodes and `contains` edges, in walk
/// order (the original's insertion order).
fn add_nodes<'o>(
    graph: &mut CodeGraph,
    report: &mut BuildReport,
    items: &'o [walk::WalkItem],
    outcomes: &'o [Option<FileOutcome>],
) -> Assembled<'o> {
    graph.upsert_node(Node {
        id: "/".to_string(),
        kind: NodeKind::Directory,
        lines: None,
        code: None,
    });
    let mut parsed_files: Vec<(NodeIndex, &ParsedFile)> = Vec::new();
    let mut analyses: Vec<Option<&EntityAnalysis>> = Vec::new();
    let mut sources = Vec::new();
    for (item, outcome) in items.iter().zip(outcomes) {
        match (item, outcome) {
            (walk::WalkItem::Dir { id, parent }, _) => {
                let ix = graph.upsert_node(Node {
                    id: id.clone(),
                    kind: NodeKind::Directory,
                    lines: None,
                    code: None,
                });
                let p = graph.index_of(parent).unwrap_or(ix);
                graph.add_edge(p, ix, edge(EdgeKind::Contains, None));
            }
            (walk::WalkItem::File { id, dir, .. }, Some(outcome)) => {
                let text = match outcome {
                    FileOutcome::Undecodable => {
                        report.undecodable.push(id.clone());
                        continue;
                    }
                    FileOutcome::Source { text, .. } | FileOutcome::Read { text, .. } => text,
                };
                report.files += 1;
                let file_ix = graph.upsert_node(Node {
                    id: id.clone(),
                    kind: NodeKind::File,
                    lines: None,
                    code: Some(Code::whole(text.clone())),
                });
                match outcome {
                    FileOutcome::Source { lang, parsed, .. } => sources.push(polyglot::add_file(
                        graph, id, dir, file_ix, text, *lang, parsed,
                    )),
                    FileOutcome::Read {
                        extracted: Extracted::Rejected(reason),
                        ..
                    } => report.rejected.push((id.clone(), reason.clone())),
                    FileOutcome::Read {
                        extracted: Extracted::Parsed(parsed),
                        ..
                    } => {
                        parsed_files.push((file_ix, parsed));
                        add_entities(graph, &mut analyses, id, dir, file_ix, text, parsed);
                    }
                    FileOutcome::Undecodable => {}
                }
            }
            (walk::WalkItem::File { .. }, None) => {}
        }
    }
    (parsed_files, analyses, sources)
}

/// The class and function nodes of one parsed file, the file's `contains` edge from its
/// directory, and each entity's `contains` edge from its file or enclosing entity.
fn add_entities<'o>(
    graph: &mut CodeGraph,
    analyses: &mut Vec<Option<&'o EntityAnalysis>>,
    id: &str,
    dir: &str,
    file_ix: NodeIndex,
    text: &Arc<str>,
    parsed: &'o ParsedFile,
) {
    let mut entity_ixs = Vec::with_capacity(parsed.entities.len());
    for e in &parsed.entities {
        let ix = graph.upsert_node(Node {
            id: format!("{id}:{}", e.qualname),
            kind: e.kind,
            lines: Some(e.lines),
            code: Some(Code::new(text.clone(), e.range.clone())),
        });
        if analyses.len() <= ix.index() {
            analyses.resize(ix.index() + 1, None);
        }
        if let Some(a) = &e.analysis {
            analyses[ix.index()] = Some(a);
        }
        entity_ixs.push(ix);
    }
    if let Some(d) = graph.index_of(dir) {
        graph.add_edge(d, file_ix, edge(EdgeKind::Contains, None));
    }
    for (e, &ix) in parsed.entities.iter().zip(&entity_ixs) {
        let parent = match e.qualname.rfind('.') {
            None => Some(file_ix),
            Some(i) => graph.index_of(&format!("{id}:{}", &e.qualname[..i])),
        };
        if let Some(p) = parent {
            graph.add_edge(p, ix, edge(EdgeKind::Contains, None));
        }
    }
}

/// Step 5: per class/function (resolved in parallel, added in node order), entity-level
/// `imports` edges, then `invokes` and `inherits` edges.
fn add_entity_edges(
    graph: &mut CodeGraph,
    resolver: &mut imports::Resolver,
    parsed_files: &[(NodeIndex, &ParsedFile)],
    analyses: &[Option<&EntityAnalysis>],
    options: &BuildOptions,
) {
    let entities: Vec<(NodeIndex, &EntityAnalysis)> = graph
        .node_indices()
        .filter_map(|ix| Some((ix, *analyses.get(ix.index())?.as_ref()?)))
        .filter(|(ix, _)| graph.node(*ix).kind.is_entity())
        .collect();
    let entity_imports: Vec<Vec<(NodeIndex, Option<String>)>> = entities
        .iter()
        .map(|(_, a)| resolver.edges(graph, &a.imports))
        .collect();
    let resolved: Vec<(Vec<NodeIndex>, Vec<NodeIndex>)> = {
        let scopes = callees::Scopes::new(graph);
        // Every `__init__.py`'s contribution once, for all the files that reach it.
        let inits: rustc_hash::FxHashMap<NodeIndex, callees::InitScope<'_>> = graph
            .node_indices()
            .filter(|&ix| {
                let n = graph.node(ix);
                n.kind == NodeKind::File && n.id.ends_with("__init__.py")
            })
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|ix| (ix, scopes.init_scope(ix)))
            .collect();
        let file_scopes: Vec<(NodeIndex, callees::FileScope<'_>)> = parsed_files
            .par_iter()
            .map(|&(f, parsed)| (f, scopes.file_scope(f, &needed_names(parsed), &inits)))
            .collect();
        let scope_of = |f: NodeIndex| {
            file_scopes
                .binary_search_by_key(&f, |(ix, _)| *ix)
                .ok()
                .map(|i| &file_scopes[i].1)
        };
        entities
            .par_iter()
            .map(|&(ix, a)| {
                let (local, file) = scopes.local(ix);
                let scope = file.and_then(scope_of);
                let inv = scopes.resolve_names(&local, scope, &a.invokes, options.global_import);
                let inh = scopes.resolve_names(&local, scope, &a.inherits, options.global_import);
                (inv, inh)
            })
            .collect()
    };
    for (((ix, _), imps), (inv, inh)) in entities.iter().zip(entity_imports).zip(resolved) {
        for (t, alias) in imps {
            graph.add_edge(*ix, t, edge(EdgeKind::Imports, alias));
        }
        for t in inv {
            graph.add_edge(*ix, t, edge(EdgeKind::Invokes, None));
        }
        for t in inh {
            graph.add_edge(*ix, t, edge(EdgeKind::Inherits, None));
        }
    }
}

/// The names the entities of `parsed` call or inherit from: all that entity
/// resolution looks up in the file's scope.
fn needed_names(parsed: &ParsedFile) -> rustc_hash::FxHashSet<&str> {
    parsed
        .entities
        .iter()
        .filter_map(|e| e.analysis.as_ref())
        .flat_map(|a| a.invokes.iter().chain(&a.inherits))
        .map(String::as_str)
        .collect()
}

/// Step 2: every file read and extracted (or its extraction taken from `store`), in
/// parallel, in walk order (`None` for directories). With a store, this build's
/// extractions are saved to it when some file had to be parsed; a failure to save
/// is logged, since the graph does not depend on it.
fn extract_all(
    items: &[walk::WalkItem],
    store: Option<&FileStore>,
    trees: Option<&dyn TreeSink>,
) -> Result<Vec<Option<FileOutcome>>, BuildError> {
    let texts: Vec<Option<Option<FileText>>> = items
        .par_iter()
        .map(|item| match item {
            walk::WalkItem::File { path, .. } => read_text(path).map(Some),
            walk::WalkItem::Dir { .. } => Ok(None),
        })
        .collect::<Result<_, _>>()?;
    let Some(store) = store else {
        return Ok(items
            .par_iter()
            .zip(texts)
            .map(|(item, text)| Some(extract_one(item, text?, None, trees)))
            .collect());
    };
    let keys: Vec<Option<reuse::FileKey>> = items
        .par_iter()
        .zip(&texts)
        .map(|(item, text)| match (item, text) {
            (walk::WalkItem::File { id, .. }, Some(Some(t))) if other_language(id).is_none() => {
                Some(reuse::file_key(id, &t.text))
            }
            _ => None,
        })
        .collect();
    let present: Vec<reuse::FileKey> = keys.iter().flatten().copied().collect();
    let started = Instant::now();
    let pack = store.best_pack(&present);
    debug!(elapsed = ?started.elapsed(), "pack chosen and read");
    let outcomes: Vec<Option<FileOutcome>> = items
        .par_iter()
        .zip(texts)
        .zip(&keys)
        .map(|((item, text), key)| Some(extract_one(item, text?, pack.as_ref().zip(*key), trees)))
        .collect();
    let parsed = outcomes
        .iter()
        .flatten()
        .any(|o| matches!(o, FileOutcome::Read { reused: false, .. }));
    if parsed {
        let entries: Vec<(reuse::FileKey, Vec<u8>)> = outcomes
            .par_iter()
            .zip(&keys)
            .filter_map(|(o, k)| match (o, k) {
                (
                    Some(FileOutcome::Read {
                        extracted, reused, ..
                    }),
                    Some(k),
                ) => {
                    // A reused entry is copied as it is (it decoded to this
                    // extraction); only the parsed files are encoded.
                    if let Some(blob) = pack.as_ref().filter(|_| *reused).and_then(|p| p.blob(*k)) {
                        return Some((*k, blob.to_vec()));
                    }
                    let mut w = crate::cache::Writer(Vec::new());
                    encode::encode(&mut w, extracted);
                    Some((*k, w.0))
                }
                _ => None,
            })
            .collect();
        debug!(elapsed = ?started.elapsed(), "files extracted, new pack encoded");
        if let Err(e) = store.save(entries) {
            tracing::warn!(dir = %store.dir.display(), error = %e, "cannot write the per-file store; the next build parses every file again");
        }
        debug!(elapsed = ?started.elapsed(), "new pack saved");
    }
    Ok(outcomes)
}

/// One file's outcome from its text (`None`: not UTF-8), taken from the pack when
/// it has the extraction of this key; a file parsed from its verbatim text also
/// gives its tree to `trees`.
fn extract_one(
    item: &walk::WalkItem,
    text: Option<FileText>,
    stored: Option<(&reuse::Pack, reuse::FileKey)>,
    trees: Option<&dyn TreeSink>,
) -> FileOutcome {
    let (walk::WalkItem::File { id, .. }, Some(FileText { text, verbatim })) = (item, text) else {
        return FileOutcome::Undecodable;
    };
    if let Some(lang) = other_language(id) {
        let parsed = lang.parse(&text);
        return FileOutcome::Source { text, lang, parsed };
    }
    if let Some(extracted) = stored.and_then(|(pack, key)| pack.get(key, &text)) {
        return FileOutcome::Read {
            text,
            extracted,
            reused: true,
        };
    }
    let extracted = match trees.filter(|_| verbatim) {
        Some(sink) => extract::extract_with(id, &text, |tree| sink.parsed(id, &text, tree)),
        None => extract::extract(id, &text),
    };
    FileOutcome::Read {
        extracted,
        text,
        reused: false,
    }
}

/// The front end of a walked file that is not a `.py` file (the walk yields only
/// `.py` files and files with a front end).
fn other_language(id: &str) -> Option<&'static dyn navbench_lang::Language> {
    if id.ends_with(".py") {
        return None;
    }
    navbench_lang::language_for_path(id)
}

/// The text the builder gives the file at `path` (its nodes' code), as
/// [`read_text`] reads it; `None` when it cannot be read or is not UTF-8. The graph
/// cache stores file texts by reference and reads them back with this.
pub(crate) fn file_text(path: &Path) -> Option<Arc<str>> {
    read_text(path).ok().flatten().map(|t| t.text)
}

/// Reads a file as Python's `open(path, 'r')` does under a UTF-8 locale (strict
/// UTF-8, universal newlines); `None` if it is not UTF-8.
fn read_text(path: &Path) -> Result<Option<FileText>, BuildError> {
    let bytes = std::fs::read(path).map_err(|source| BuildError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let Ok(raw) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    Ok(Some(match navbench_python::universal_newlines(&raw) {
        std::borrow::Cow::Owned(text) => FileText {
            text: text.into(),
            verbatim: false,
        },
        std::borrow::Cow::Borrowed(_) => FileText {
            text: raw.into(),
            verbatim: true,
        },
    }))
}
