//! The persisted graph cache.
//!
//! Layout: `<cache dir>/<repo name>-<hash of the canonical root>/<hash of the
//! fingerprint>/graph.bin`, with room for the retrieval indexes next to it
//! ([`CacheEntry::dir`]). The fingerprint is `git:<commit>` when the root is the
//! work tree of a git repository with no changes and no untracked files, and
//! otherwise `content:<xxh3>` over every directory path and every `.py` file
//! (path, size, bytes) the graph builder can see. A second initialization of the
//! same tree therefore finds the same entry; any edit finds another one (older
//! entries of the same root are removed when a new one is written).
//!
//! Roots are bounded too: a benchmark run checks every instance out into a tree of
//! its own, so writing an entry removes the least recently used roots beyond
//! [`MAX_ROOTS`] (loading an entry marks it used), sparing roots written in the last
//! [`EVICTION_GRACE`], whose indexes another server may still be writing. The
//! builder's per-file store (`builder::FileStore`, in `<cache dir>/files`) keeps what
//! these graphs were parsed from, so an evicted tree costs the global phases only;
//! the chunk store (`chunk::ChunkStore`, in `<cache dir>/chunks`, bounded in size
//! likewise) keeps files' BM25 chunks and terms, so its content index costs one
//! indexing pass.
//!
//! `graph.bin` is a compact binary encoding of the [`CodeGraph`] (nodes and edges in
//! insertion order, so indices and neighbour order survive). File texts are stored
//! by reference (the file's id, length and xxh3-64): a hit's fingerprint says the
//! tree holds the same files, so they are read back from the tree (in parallel) and
//! checked against the hash, any difference making the entry stale; this keeps a
//! large repository's entry to a fifth of its size (sympy: 31 MB with texts), which
//! every tree's init writes. It sits behind a header with a
//! magic string, a format version, the payload length and an xxh3-64 checksum. The
//! payload repeats the root, the fingerprint and the build identity (crate version
//! and a hash of the executable). Any mismatch or decoding problem is a
//! [`CacheError`]; the caller rebuilds and overwrites, never trusting a damaged file.
//! Writes go to a temporary file renamed into place.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use navbench_lang::family::{Selection, family_of};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::graph::{Code, CodeGraph, Edge, EdgeKind, Node, NodeIndex, NodeKind};

const MAGIC: &[u8; 8] = b"NBCGRAPH";
/// Version of the file format; bump on any change of the encoding.
pub const FORMAT_VERSION: u32 = 2;
pub(crate) use navbench_server_support::frame::frame;
/// Roots whose entries are kept at most.
pub const MAX_ROOTS: usize = 32;
/// Roots written more recently than this are never evicted.
pub const EVICTION_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

/// What wrote a cache file: the crate version and a hash of the running executable,
/// so that any rebuild of the tool (a changed extractor, say, with the same version
/// number) ignores what an earlier build cached. Falls back to the version alone
/// when the executable cannot be read.
pub(crate) fn build_identity() -> &'static str {
    static IDENTITY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    IDENTITY.get_or_init(|| match navbench_server_support::cache::executable_hash() {
        Some(h) => format!("{} exe:{h:016x}", env!("CARGO_PKG_VERSION")),
        None => env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Why a cache file was not used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// There is no cache file.
    #[error("no cache file")]
    Missing,
    /// The file exists but is damaged, truncated or of another format version.
    #[error("corrupt cache file: {0}")]
    Corrupt(String),
    /// The file is intact but describes another tree or another build of the tool.
    #[error("stale cache file: {0}")]
    Stale(String),
    /// The file could not be read.
    #[error("cannot read cache file: {0}")]
    Io(#[from] io::Error),
}

/// The identity of a tree: what a cache entry is keyed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    /// Canonical repository root.
    pub root: PathBuf,
    /// `git:<commit>` or `content:<hex>`.
    pub fingerprint: String,
}

impl CacheKey {
    /// Computes the key of the tree at `root` (canonical).
    pub fn of(root: &Path) -> CacheKey {
        let fingerprint = match clean_git_commit(root) {
            Some(commit) => format!("git:{commit}"),
            None => format!("content:{:016x}", content_hash(root)),
        };
        CacheKey {
            root: root.to_path_buf(),
            fingerprint,
        }
    }

    /// The key of a graph built of the families `languages` chooses: `auto`, the
    /// default, decides from the tree itself and keeps the key as it is; any other
    /// choice is appended (`;languages=all`), so graphs of one tree with different
    /// languages are cached apart.
    pub fn with_languages(mut self, languages: &Selection) -> CacheKey {
        if *languages != Selection::Auto {
            self.fingerprint = format!("{};languages={languages}", self.fingerprint);
        }
        self
    }
}

/// The HEAD commit when `root` is the work tree of a git repository without
/// modified, staged or untracked (non-ignored) files.
fn clean_git_commit(root: &Path) -> Option<String> {
    let repo = git2::Repository::open(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    if workdir != root {
        return None;
    }
    let head = repo.head().ok()?.peel_to_commit().ok()?.id();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut opts)).ok()?;
    statuses.is_empty().then(|| head.to_string())
}

/// xxh3 over the sorted directory paths and source files (`.py` and the other
/// languages the builder reads: path, size, bytes) under
/// `root`, skipping symbolic links and paths containing `.git` (as the builder does).
fn content_hash(root: &Path) -> u64 {
    let mut dirs: Vec<String> = Vec::new();
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_symlink() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if child.contains(".git") {
                continue;
            }
            if ft.is_dir() {
                dirs.push(child.clone());
                stack.push((entry.path(), child));
            } else if family_of(&name).is_some() {
                files.push((child, entry.path()));
            }
        }
    }
    dirs.sort_unstable();
    files.sort_unstable();
    let file_hashes: Vec<u64> = files
        .par_iter()
        .map(|(_, p)| match fs::read(p) {
            Ok(bytes) => xxh3_64(&bytes) ^ (bytes.len() as u64).rotate_left(17),
            Err(_) => 0,
        })
        .collect();
    let mut acc = Vec::with_capacity(dirs.len() * 16 + files.len() * 48);
    for d in &dirs {
        acc.extend_from_slice(b"d:");
        acc.extend_from_slice(d.as_bytes());
        acc.push(0);
    }
    for ((rel, _), h) in files.iter().zip(&file_hashes) {
        acc.extend_from_slice(b"f:");
        acc.extend_from_slice(rel.as_bytes());
        acc.push(0);
        acc.extend_from_slice(&h.to_le_bytes());
    }
    xxh3_64(&acc)
}

/// Where one tree's cached artifacts live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// The key.
    pub key: CacheKey,
    /// `<cache dir>/<name>-<root hash>`: all entries of this root.
    pub root_dir: PathBuf,
    /// `<root_dir>/<fingerprint hash>`: this entry.
    pub dir: PathBuf,
}

impl CacheEntry {
    /// The entry of `key` under `cache_dir`.
    pub fn new(cache_dir: &Path, key: CacheKey) -> CacheEntry {
        let name: String = key
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".to_string())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let root_hash = xxh3_64(key.root.to_string_lossy().as_bytes());
        let root_dir = cache_dir.join(format!("{name}-{root_hash:016x}"));
        let dir = root_dir.join(format!("{:016x}", xxh3_64(key.fingerprint.as_bytes())));
        CacheEntry { key, root_dir, dir }
    }

    /// The graph file.
    pub fn graph_path(&self) -> PathBuf {
        self.dir.join("graph.bin")
    }

    /// Loads the cached graph, checking header, checksum and key.
    pub fn load_graph(&self) -> Result<CodeGraph, CacheError> {
        let bytes = match fs::read(self.graph_path()) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(CacheError::Missing),
            Err(e) => return Err(CacheError::Io(e)),
        };
        let graph = decode(&bytes, &self.key)?;
        // Mark the root used for eviction; a failure only makes it look older.
        let _ = fs::File::options()
            .append(true)
            .open(self.graph_path())
            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
        Ok(graph)
    }

    /// Writes the graph atomically and removes the other entries of the same root.
    ///
    /// The file is not synced to disk before the rename (tens of megabytes for a
    /// large repository, waited for on every tree of a run): a file cut short by a
    /// crash fails its checksum when read and is rebuilt, like any damaged file.
    pub fn save_graph(&self, graph: &CodeGraph) -> io::Result<()> {
        self.save_encoded(&encode(graph, &self.key))
    }

    /// [`CacheEntry::save_graph`] of a graph already encoded with this entry's key
    /// ([`encode`]), so that the encoding can run beside other work on the graph.
    pub fn save_encoded(&self, bytes: &[u8]) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let tmp = self
            .dir
            .join(format!("graph.bin.tmp-{}", std::process::id()));
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(bytes)?;
        }
        fs::rename(&tmp, self.graph_path())?;
        if let Ok(siblings) = fs::read_dir(&self.root_dir) {
            for s in siblings.flatten() {
                let p = s.path();
                if p != self.dir && p.is_dir() {
                    let _ = fs::remove_dir_all(&p);
                }
            }
        }
        if let Some(cache_dir) = self.root_dir.parent() {
            evict_roots(cache_dir, &self.root_dir, MAX_ROOTS, EVICTION_GRACE);
        }
        Ok(())
    }
}

/// True for the directory names [`CacheEntry::new`] gives roots: `<name>-<16 hex>`.
fn is_root_dir_name(name: &str) -> bool {
    name.rsplit_once('-')
        .is_some_and(|(_, h)| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Removes the least recently used root directories of `cache_dir` beyond `keep`
/// (recency: the newest `graph.bin` inside), never `current` nor a root used within
/// `grace`. Errors are ignored: a root that cannot be removed stays.
fn evict_roots(cache_dir: &Path, current: &Path, keep: usize, grace: std::time::Duration) {
    let Ok(entries) = fs::read_dir(cache_dir) else {
        return;
    };
    let mut roots: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| is_root_dir_name(&e.file_name().to_string_lossy()))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            let used = fs::read_dir(e.path())
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|fp| {
                    fs::metadata(fp.path().join("graph.bin"))
                        .ok()?
                        .modified()
                        .ok()
                })
                .chain(e.metadata().ok().and_then(|m| m.modified().ok()))
                .max()
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            (used, e.path())
        })
        .collect();
    roots.sort_by_key(|r| std::cmp::Reverse(r.0));
    for (used, path) in roots.into_iter().skip(keep) {
        let recent = used.elapsed().map_or(true, |age| age < grace);
        if path != current && !recent {
            tracing::debug!(path = %path.display(), "evicting a cached root");
            let _ = fs::remove_dir_all(&path);
        }
    }
}

// ---------------------------------------------------------------------------------
// Encoding

/// A little-endian byte writer (shared with the builder's per-file store).
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
}

fn kind_code(k: NodeKind) -> u8 {
    match k {
        NodeKind::Directory => 0,
        NodeKind::File => 1,
        NodeKind::Class => 2,
        NodeKind::Function => 3,
    }
}

fn kind_from(c: u8) -> Option<NodeKind> {
    Some(match c {
        0 => NodeKind::Directory,
        1 => NodeKind::File,
        2 => NodeKind::Class,
        3 => NodeKind::Function,
        _ => return None,
    })
}

/// Encodes `graph` with its key into the file format.
pub fn encode(graph: &CodeGraph, key: &CacheKey) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.str(&key.root.to_string_lossy());
    w.str(&key.fingerprint);
    w.str(build_identity());
    // Distinct file texts, in first-use order.
    let mut text_ix: HashMap<usize, u32> = HashMap::new();
    // Each with the file it was read from (the file part of its first node's id).
    let mut texts: Vec<(&Arc<str>, &str)> = Vec::new();
    for ix in graph.node_indices() {
        let n = graph.node(ix);
        if let Some(code) = &n.code {
            let ptr = Arc::as_ptr(code.file_text()) as *const u8 as usize;
            text_ix.entry(ptr).or_insert_with(|| {
                texts.push((code.file_text(), n.file_part()));
                (texts.len() - 1) as u32
            });
        }
    }
    w.u32(texts.len() as u32);
    for (t, file) in &texts {
        w.str(file);
        w.u64(t.len() as u64);
        w.u64(xxh3_64(t.as_bytes()));
    }
    w.u32(graph.node_count() as u32);
    for ix in graph.node_indices() {
        let n = graph.node(ix);
        w.str(&n.id);
        w.u8(kind_code(n.kind));
        match n.lines {
            Some((s, e)) => {
                w.u8(1);
                w.u32(s);
                w.u32(e);
            }
            None => w.u8(0),
        }
        match &n.code {
            Some(code) => {
                let ptr = Arc::as_ptr(code.file_text()) as *const u8 as usize;
                let r = code.byte_range();
                w.u8(1);
                w.u32(text_ix.get(&ptr).copied().unwrap_or(0));
                w.u64(r.start as u64);
                w.u64(r.end as u64);
            }
            None => w.u8(0),
        }
    }
    w.u32(graph.edge_count() as u32);
    for (s, t, e) in graph.edges() {
        w.u32(s.index() as u32);
        w.u32(t.index() as u32);
        w.u8(e.kind.key() as u8);
        match &e.alias {
            Some(a) => {
                w.u8(1);
                w.str(a);
            }
            None => w.u8(0),
        }
    }
    frame(MAGIC, FORMAT_VERSION, &w.0)
}

/// The payload of a file written by [`frame`] (the graph cache and the chunk store
/// share the frame), or why it is damaged.
pub(crate) fn unframe<'a>(
    bytes: &'a [u8],
    magic: &[u8; 8],
    version: u32,
) -> Result<&'a [u8], CacheError> {
    navbench_server_support::frame::unframe(bytes, magic, version)
        .map_err(|e| corrupt(&e.to_string()))
}

/// The reader of what [`Writer`] wrote; any overrun is a [`CacheError::Corrupt`].
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

pub(crate) fn corrupt(what: &str) -> CacheError {
    CacheError::Corrupt(what.to_string())
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], CacheError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| corrupt("truncated payload"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, CacheError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, CacheError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, CacheError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub(crate) fn usize(&mut self) -> Result<usize, CacheError> {
        usize::try_from(self.u64()?).map_err(|_| corrupt("length out of range"))
    }
    pub(crate) fn str(&mut self) -> Result<&'a str, CacheError> {
        let n = self.usize()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| corrupt("invalid UTF-8"))
    }
}

/// The texts `refs` (file id, length, xxh3-64) refer to, read from the tree at
/// `root` as the builder reads them; a file missing, unreadable or different makes
/// the entry [`CacheError::Stale`].
fn read_texts(root: &Path, refs: &[(&str, usize, u64)]) -> Result<Vec<Arc<str>>, CacheError> {
    refs.par_iter()
        .map(|&(file, len, hash)| {
            crate::builder::file_text(&root.join(file))
                .filter(|t| t.len() == len && xxh3_64(t.as_bytes()) == hash)
                .ok_or_else(|| {
                    CacheError::Stale(format!("{file} is not the file the graph was built from"))
                })
        })
        .collect()
}

/// Decodes a cache file, checking it against `key` (and the file texts it refers to
/// against the tree at `key.root`).
pub fn decode(bytes: &[u8], key: &CacheKey) -> Result<CodeGraph, CacheError> {
    let payload = unframe(bytes, MAGIC, FORMAT_VERSION)?;
    let mut r = Reader {
        buf: payload,
        pos: 0,
    };
    let root = r.str()?;
    let fingerprint = r.str()?;
    let version = r.str()?;
    if root != key.root.to_string_lossy() || fingerprint != key.fingerprint {
        return Err(CacheError::Stale(format!(
            "built for {root} at {fingerprint}"
        )));
    }
    if version != build_identity() {
        return Err(CacheError::Stale(format!(
            "written by another build of the tool ({version})"
        )));
    }
    let n_texts = r.u32()? as usize;
    let mut refs: Vec<(&str, usize, u64)> = Vec::with_capacity(n_texts.min(1 << 20));
    for _ in 0..n_texts {
        refs.push((r.str()?, r.usize()?, r.u64()?));
    }
    let texts = read_texts(&key.root, &refs)?;
    let n_nodes = r.u32()? as usize;
    let mut graph = CodeGraph::new();
    for i in 0..n_nodes {
        let id = r.str()?.to_string();
        let kind = kind_from(r.u8()?).ok_or_else(|| corrupt("bad node type"))?;
        let lines = match r.u8()? {
            0 => None,
            1 => Some((r.u32()?, r.u32()?)),
            _ => return Err(corrupt("bad line flag")),
        };
        let code = match r.u8()? {
            0 => None,
            1 => {
                let t = r.u32()? as usize;
                let start = r.usize()?;
                let end = r.usize()?;
                let text = texts.get(t).ok_or_else(|| corrupt("bad text index"))?;
                if start > end || text.get(start..end).is_none() {
                    return Err(corrupt("bad code range"));
                }
                Some(Code::new(Arc::clone(text), start..end))
            }
            _ => return Err(corrupt("bad code flag")),
        };
        let ix = graph.upsert_node(Node {
            id,
            kind,
            lines,
            code,
        });
        if ix.index() != i {
            return Err(corrupt("duplicate node id"));
        }
    }
    let n_edges = r.u32()? as usize;
    for _ in 0..n_edges {
        let s = r.u32()? as usize;
        let t = r.u32()? as usize;
        if s >= n_nodes || t >= n_nodes {
            return Err(corrupt("bad edge endpoint"));
        }
        let kind = *EdgeKind::ALL
            .get(r.u8()? as usize)
            .ok_or_else(|| corrupt("bad edge type"))?;
        let alias = match r.u8()? {
            0 => None,
            1 => Some(r.str()?.to_string()),
            _ => return Err(corrupt("bad alias flag")),
        };
        graph.add_edge(NodeIndex::new(s), NodeIndex::new(t), Edge { kind, alias });
    }
    if r.pos != payload.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (tempfile::TempDir, CodeGraph) {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("pkg")).expect("mkdir");
        fs::write(
            dir.path().join("pkg/a.py"),
            "import os as o\nclass A:\n    def f(self):\n        g()\n\ndef g():\n    pass\n",
        )
        .expect("write");
        fs::write(dir.path().join("pkg/__init__.py"), "").expect("write");
        let g = crate::builder::build_graph(dir.path()).expect("graph");
        (dir, g)
    }

    fn dump(g: &CodeGraph) -> String {
        let mut s = String::new();
        for ix in g.node_indices() {
            let n = g.node(ix);
            s += &format!(
                "{} {} {:?} {:?}\n",
                n.id,
                n.kind,
                n.lines,
                n.code.as_ref().map(|c| c.as_str())
            );
        }
        for (a, b, e) in g.edges() {
            s += &format!("{} {} {:?}\n", a.index(), b.index(), e);
        }
        s
    }

    #[test]
    fn round_trip_keeps_everything() {
        let (dir, g) = sample();
        let root = dir.path().canonicalize().expect("canon");
        let key = CacheKey::of(&root);
        assert!(key.fingerprint.starts_with("content:"));
        let bytes = encode(&g, &key);
        let back = decode(&bytes, &key).expect("decode");
        assert_eq!(dump(&g), dump(&back));
        // Same tree, same key; an edit changes it.
        assert_eq!(CacheKey::of(&root), key);
        fs::write(root.join("pkg/__init__.py"), "x = 1\n").expect("write");
        assert_ne!(CacheKey::of(&root), key);
    }

    #[test]
    fn least_recently_used_roots_beyond_the_bound_are_evicted() {
        let (dir, g) = sample();
        let cache = tempfile::tempdir().expect("cache");
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let entries: Vec<CacheEntry> = (0..4)
            .map(|i| {
                // Each root holds the files the graph's texts refer to.
                let root = dir.path().join(format!("tree{i}"));
                for f in ["pkg/a.py", "pkg/__init__.py"] {
                    fs::create_dir_all(root.join("pkg")).expect("mkdir");
                    fs::copy(dir.path().join(f), root.join(f)).expect("copy");
                }
                let key = CacheKey {
                    root,
                    fingerprint: "content:0".into(),
                };
                let entry = CacheEntry::new(cache.path(), key);
                fs::create_dir_all(&entry.dir).expect("mkdir");
                fs::write(entry.graph_path(), encode(&g, &entry.key)).expect("write");
                let t = old + std::time::Duration::from_secs(i);
                for p in [
                    entry.graph_path(),
                    entry.dir.clone(),
                    entry.root_dir.clone(),
                ] {
                    let f = fs::File::open(&p).expect("open");
                    f.set_modified(t).expect("set mtime");
                }
                entry
            })
            .collect();
        fs::create_dir_all(cache.path().join("files")).expect("mkdir");
        // tree0 is loaded (used) now: it survives, and so does the newest other one.
        entries[0].load_graph().expect("load");
        evict_roots(cache.path(), &entries[1].root_dir, 2, EVICTION_GRACE);
        let left: Vec<bool> = entries.iter().map(|e| e.root_dir.exists()).collect();
        // tree1 is the current root; tree3 is the newest unused; tree2 goes.
        assert_eq!(left, [true, true, false, true]);
        assert!(
            cache.path().join("files").exists(),
            "not a root: never evicted"
        );
        // Within the grace period nothing is removed.
        evict_roots(cache.path(), &entries[1].root_dir, 0, EVICTION_GRACE);
        assert!(entries[0].root_dir.exists());
    }

    #[test]
    fn texts_are_read_back_from_the_tree_and_checked() {
        let (dir, g) = sample();
        let key = CacheKey::of(dir.path());
        let bytes = encode(&g, &key);
        let text = fs::read(dir.path().join("pkg/a.py")).expect("read");
        assert!(
            !bytes.windows(text.len()).any(|w| w == text.as_slice()),
            "texts are stored by reference"
        );
        assert_eq!(dump(&decode(&bytes, &key).expect("decode")), dump(&g));
        // A file edited behind the entry's back (same fingerprint): stale, not trusted.
        fs::write(dir.path().join("pkg/a.py"), "def g():\n    pass\n").expect("write");
        assert!(matches!(decode(&bytes, &key), Err(CacheError::Stale(_))));
        fs::remove_file(dir.path().join("pkg/a.py")).expect("rm");
        assert!(matches!(decode(&bytes, &key), Err(CacheError::Stale(_))));
    }

    #[test]
    fn damage_is_detected() {
        let (dir, g) = sample();
        let key = CacheKey::of(dir.path());
        let bytes = encode(&g, &key);
        for cut in [
            0,
            7,
            navbench_server_support::frame::HEADER_LEN,
            bytes.len() - 1,
        ] {
            assert!(matches!(
                decode(&bytes[..cut], &key),
                Err(CacheError::Corrupt(_))
            ));
        }
        let mut flipped = bytes.clone();
        let last = flipped.len() - 3;
        flipped[last] ^= 0x55;
        assert!(matches!(
            decode(&flipped, &key),
            Err(CacheError::Corrupt(_))
        ));
        let other = CacheKey {
            root: key.root.clone(),
            fingerprint: "content:0".into(),
        };
        assert!(matches!(decode(&bytes, &other), Err(CacheError::Stale(_))));
    }
}
