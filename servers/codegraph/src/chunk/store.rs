//! The chunk store: a file's BM25 chunks and their terms kept between builds, so that
//! indexing a tree that differs from an earlier one in a few files chunks and
//! tokenizes only those files.
//!
//! A file's chunks ([`super::chunk_source`]) and their terms ([`terms_of`]) are a
//! function of its repo-relative path, its bytes and the [`ChunkConfig`] alone. An entry is stored under the xxh3-128 of
//! those and of this build of the server (crate version and a hash of the executable,
//! [`crate::cache::build_identity`]), so it is found only for exactly that input and
//! chunker: an edited file, a rename (its chunks carry the path) or a rebuilt server
//! look up another entry. A file the chunker rejects is stored as no chunks, as
//! [`super::chunk_repo`] indexes it.
//!
//! Layout: `<dir>/<2 hex>/<32 hex>.chunks`, one file per entry:
//!
//! ```text
//! "NBCGCHNK" | format u32 | payload_len u64 | payload xxh3-64 u64 | payload
//! payload: path (str) | n u32 | n × (start u64, end u64, spans u32 × str, tokens u64, text str,
//!          terms str)
//! ```
//!
//! Entries are written to a temporary file and renamed into place, never modified;
//! one that is damaged, truncated, of another format, for another path or removed is
//! chunked again and rewritten. Concurrent servers sharing a store can therefore only
//! cost each other work, never correctness.
//!
//! The store is bounded: [`ChunkStore::evict`] (run by a build that stored something)
//! removes the least recently used entries beyond [`ChunkStore::max_bytes`] (reading an
//! entry marks it used), sparing those used within [`crate::cache::EVICTION_GRACE`]
//! (`navbench_server_support::lru`).
//!
//! ```
//! use navbench_codegraph::chunk::{ChunkConfig, ChunkStore};
//! let dir = tempfile::tempdir()?;
//! let store = ChunkStore::new(dir.path().to_path_buf());
//! let text = b"def f():\n    return 1\n";
//! let (fresh, hit) = store.chunks_of("m.py", text, &ChunkConfig::default());
//! assert_eq!(fresh[0].1, "file_path py categori implement span_id def return");
//! assert!(!hit);
//! assert_eq!(store.chunks_of("m.py", text, &ChunkConfig::default()), (fresh, true));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::path::PathBuf;

use navbench_server_support::lru;
use xxhash_rust::xxh3::Xxh3;

use super::{Chunk, ChunkConfig, FileChunks, chunk_source, files};
use crate::bm25::tokenize::Tokenizer;
use crate::cache::{CacheError, Reader, Writer, corrupt, frame, unframe};

const MAGIC: &[u8; 8] = b"NBCGCHNK";
/// Version of the entry layout above.
const ENTRY_FORMAT: u32 = 2;
/// File name extension of an entry.
const ENTRY_EXT: &str = "chunks";

/// Default bound of a store, 1 GiB. Measured on SWE-bench trees: an entry averages
/// ~26 kB and one tree's entries take ~75 MB for sympy (the largest), ~30 MB for
/// django or scikit-learn, and each further commit of a repository adds a few MB; so
/// 1 GiB holds the latest tree of every repository of a benchmark (a dozen), and a
/// run that interleaves repositories still reuses most files, while a 300-instance run
/// stays at 1 GiB instead of growing to several.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// A chunk and its BM25 terms ([`terms_of`]).
pub type TermedChunk = (Chunk, String);

/// The BM25 terms of a chunk: the tokens of the text the index holds for it
/// ([`Chunk::embed_text`]), joined by single spaces (a token is a run of word
/// characters, never a space): one string per chunk, not one per token, which
/// keeps a large repository's terms to tens of megabytes.
pub fn terms_of(chunk: &Chunk) -> String {
    thread_local! {
        static TOKENIZER: std::cell::RefCell<Tokenizer> = std::cell::RefCell::new(Tokenizer::new());
    }
    TOKENIZER.with(|t| {
        let mut t = t.borrow_mut();
        // Bound the stem cache of long-lived threads.
        if t.cache_len() > 100_000 {
            *t = Tokenizer::new();
        }
        t.tokenize(&chunk.embed_text()).join(" ")
    })
}

/// Chunks with their terms.
pub(crate) fn with_terms(chunks: Vec<Chunk>) -> Vec<TermedChunk> {
    chunks
        .into_iter()
        .map(|c| {
            let terms = terms_of(&c);
            (c, terms)
        })
        .collect()
}

/// A directory of cached per-file chunks (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkStore {
    /// The store's directory (created on the first write).
    pub dir: PathBuf,
    /// Total size of the entries [`ChunkStore::evict`] keeps, in bytes (entries used
    /// within the grace period are kept beyond it).
    pub max_bytes: u64,
}

impl ChunkStore {
    /// The store in `dir`, bounded by [`DEFAULT_MAX_BYTES`].
    pub fn new(dir: PathBuf) -> ChunkStore {
        ChunkStore {
            dir,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }

    /// Removes the least recently used entries beyond [`ChunkStore::max_bytes`], never
    /// one used within [`crate::cache::EVICTION_GRACE`]. It stats every entry, so it
    /// runs once per build that stored something, not per entry.
    pub fn evict(&self) -> lru::Eviction {
        lru::evict(
            &self.dir,
            ENTRY_EXT,
            self.max_bytes,
            crate::cache::EVICTION_GRACE,
        )
    }

    /// [`ChunkStore::evict`] on a thread of its own, so that a build does not wait.
    pub fn evict_in_background(&self) {
        lru::evict_in_background(
            self.dir.clone(),
            ENTRY_EXT,
            self.max_bytes,
            crate::cache::EVICTION_GRACE,
        );
    }

    /// Where the entry of file `rel` with contents `bytes` chunked with `cfg` lives.
    fn entry_path(&self, rel: &str, bytes: &[u8], cfg: &ChunkConfig) -> PathBuf {
        let mut h = Xxh3::new();
        let mut field = |b: &[u8]| {
            h.update(&(b.len() as u64).to_le_bytes());
            h.update(b);
        };
        field(crate::cache::build_identity().as_bytes());
        field(&ENTRY_FORMAT.to_le_bytes());
        for n in [
            cfg.min_chunk_size,
            cfg.chunk_size,
            cfg.max_chunk_size,
            cfg.hard_token_limit,
            cfg.max_chunks,
        ] {
            field(&(n as u64).to_le_bytes());
        }
        field(rel.as_bytes());
        field(bytes);
        let key = format!("{:032x}", h.digest128());
        self.dir.join(&key[..2]).join(format!("{key}.{ENTRY_EXT}"))
    }

    /// The chunks of file `rel` whose contents are `bytes` (decoded as the corpus
    /// reader decodes them) with their terms, and whether they came from the store. Chunked and stored
    /// when the store has no intact entry; a failure to store is logged, since the
    /// chunks do not depend on it.
    pub fn chunks_of(
        &self,
        rel: &str,
        bytes: &[u8],
        cfg: &ChunkConfig,
    ) -> (Vec<TermedChunk>, bool) {
        let path = self.entry_path(rel, bytes, cfg);
        match lru::read_touching(&path) {
            Ok(stored) => match decode(&stored, rel) {
                Ok(chunks) => return (chunks, true),
                Err(e) => {
                    tracing::debug!(file = rel, path = %path.display(), error = %e, "chunking again")
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::debug!(path = %path.display(), error = %e, "chunking again"),
        }
        let chunks = with_terms(chunk_file(rel, bytes, cfg));
        write(&path, rel, &chunks);
        (chunks, false)
    }

    /// Whether the store has an entry for file `rel` with contents `bytes` (intact
    /// or not: [`ChunkStore::chunks_of`] finds out).
    pub(crate) fn has(&self, rel: &str, bytes: &[u8], cfg: &ChunkConfig) -> bool {
        self.entry_path(rel, bytes, cfg).is_file()
    }

    /// Stores `chunks` as those of file `rel` with contents `bytes`, made elsewhere
    /// (from the graph builder's parse, `super::TreeChunks`); a failure is logged.
    pub(crate) fn put(&self, rel: &str, bytes: &[u8], cfg: &ChunkConfig, chunks: &[TermedChunk]) {
        write(&self.entry_path(rel, bytes, cfg), rel, chunks);
    }
}

/// Writes the entry at `path`; a failure is logged, since the chunks do not depend on it.
fn write(path: &std::path::Path, rel: &str, chunks: &[TermedChunk]) {
    if let Err(e) = lru::write_entry(path, &encode(rel, chunks)) {
        tracing::debug!(path = %path.display(), error = %e, "cannot store the file's chunks");
    }
}

/// The chunks of one file's bytes, as [`super::chunk_repo`] indexes them (none for a
/// file the chunker rejects).
pub(crate) fn chunk_file(rel: &str, bytes: &[u8], cfg: &ChunkConfig) -> Vec<Chunk> {
    let src = files::decode_utf8_ignore(bytes);
    indexed(rel, chunk_source(rel, &src, cfg))
}

/// What the index holds of a file's chunking: its chunks, none when the chunker
/// rejects the file (as the original indexes nothing for it).
pub(crate) fn indexed(rel: &str, chunks: FileChunks) -> Vec<Chunk> {
    match chunks {
        FileChunks::Chunks(c) => c,
        FileChunks::Rejected(e) => {
            tracing::debug!(file = %rel, error = %e, "file not chunked");
            Vec::new()
        }
    }
}

fn encode(rel: &str, chunks: &[TermedChunk]) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.str(rel);
    w.u32(chunks.len() as u32);
    for (c, terms) in chunks {
        w.u64(c.start_line as u64);
        w.u64(c.end_line as u64);
        w.u32(c.span_ids.len() as u32);
        for s in &c.span_ids {
            w.str(s);
        }
        w.u64(c.tokens as u64);
        w.str(&c.text);
        w.str(terms);
    }
    frame(MAGIC, ENTRY_FORMAT, &w.0)
}

fn decode(bytes: &[u8], rel: &str) -> Result<Vec<TermedChunk>, CacheError> {
    let payload = unframe(bytes, MAGIC, ENTRY_FORMAT)?;
    let mut r = Reader {
        buf: payload,
        pos: 0,
    };
    if r.str()? != rel {
        return Err(CacheError::Stale("an entry of another file".into()));
    }
    let n = r.u32()? as usize;
    let mut chunks = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let start_line = r.usize()?;
        let end_line = r.usize()?;
        let n_spans = r.u32()? as usize;
        let mut span_ids = Vec::with_capacity(n_spans.min(1 << 16));
        for _ in 0..n_spans {
            span_ids.push(r.str()?.to_string());
        }
        let tokens = r.usize()?;
        let text = r.str()?.to_string();
        let terms = r.str()?.to_string();
        let chunk = Chunk {
            file_path: rel.to_string(),
            start_line,
            end_line,
            span_ids,
            tokens,
            text,
        };
        chunks.push((chunk, terms));
    }
    if r.pos != payload.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;

    const TEXT: &[u8] = b"import os\n\nclass C:\n    '''Doc.'''\n    def m(self):\n        return os.sep\n\ndef f(x):\n    return x + 1\n";

    #[test]
    fn an_entry_is_read_back_only_for_the_same_path_text_and_settings() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = ChunkStore::new(dir.path().to_path_buf());
        let cfg = ChunkConfig::default();
        let (fresh, hit) = store.chunks_of("p/m.py", TEXT, &cfg);
        assert!(!hit && !fresh.is_empty());
        assert_eq!(fresh, with_terms(chunk_file("p/m.py", TEXT, &cfg)));
        assert_eq!(store.chunks_of("p/m.py", TEXT, &cfg), (fresh.clone(), true));
        let key = store.entry_path("p/m.py", TEXT, &cfg);
        assert_ne!(key, store.entry_path("q/m.py", TEXT, &cfg), "path");
        assert_ne!(key, store.entry_path("p/m.py", b"x = 1\n", &cfg), "text");
        let small = ChunkConfig {
            chunk_size: 50,
            ..cfg
        };
        assert_ne!(key, store.entry_path("p/m.py", TEXT, &small), "settings");
        // A renamed file is chunked under its new path, not read from the old entry.
        let (moved, hit) = store.chunks_of("q/m.py", TEXT, &cfg);
        assert!(!hit);
        assert!(moved.iter().all(|(c, _)| c.file_path == "q/m.py"));
    }

    /// Sets the modification time of `path` to `secs` seconds ago.
    fn age(path: &Path, secs: u64) {
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        navbench_server_support::lru::mark_used(path, t).expect("set mtime");
    }

    #[test]
    fn eviction_keeps_the_most_recently_used_entries_within_the_bound() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = ChunkConfig::default();
        let mut store = ChunkStore::new(dir.path().to_path_buf());
        let files: Vec<String> = (0..4).map(|i| format!("m{i}.py")).collect();
        let fresh: Vec<Vec<TermedChunk>> = files
            .iter()
            .map(|f| store.chunks_of(f, TEXT, &cfg).0)
            .collect();
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|f| store.entry_path(f, TEXT, &cfg))
            .collect();
        // Last used an hour ago and more, m0 the oldest; then m0 is read again.
        for (i, p) in paths.iter().enumerate() {
            age(p, 7200 - 600 * i as u64);
        }
        assert_eq!(
            store.chunks_of("m0.py", TEXT, &cfg),
            (fresh[0].clone(), true)
        );
        let size = fs::metadata(&paths[0]).expect("entry").len();
        store.max_bytes = 2 * size;
        let e = store.evict();
        assert_eq!((e.kept, e.removed), (2, 2));
        let left: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
        assert_eq!(left, [true, false, false, true]);
        // An evicted file is chunked again, to the same chunks.
        assert_eq!(
            store.chunks_of("m1.py", TEXT, &cfg),
            (fresh[1].clone(), false)
        );
        assert_eq!(
            store.chunks_of("m0.py", TEXT, &cfg),
            (fresh[0].clone(), true)
        );
    }

    #[test]
    fn entries_used_within_the_grace_period_are_never_evicted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = ChunkConfig::default();
        let store = ChunkStore {
            max_bytes: 0,
            ..ChunkStore::new(dir.path().to_path_buf())
        };
        let (fresh, _) = store.chunks_of("m.py", TEXT, &cfg);
        let _ = store.chunks_of("old.py", TEXT, &cfg);
        age(&store.entry_path("old.py", TEXT, &cfg), 3600);
        let e = store.evict();
        assert_eq!((e.kept, e.removed), (1, 1));
        assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh, true));
    }

    #[test]
    fn a_build_that_stores_entries_bounds_the_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tree = tempfile::tempdir().expect("tempdir");
        fs::write(tree.path().join("m.py"), TEXT).expect("write");
        let cfg = ChunkConfig::default();
        let store = ChunkStore {
            max_bytes: 0,
            ..ChunkStore::new(dir.path().to_path_buf())
        };
        let _ = store.chunks_of("old.py", TEXT, &cfg);
        let old = store.entry_path("old.py", TEXT, &cfg);
        age(&old, 3600);
        let chunks = super::super::chunk_repo_with_terms(
            tree.path(),
            &cfg,
            Some(&store),
            None,
            &navbench_lang::family::Selection::Auto,
        )
        .expect("chunk the tree");
        assert_eq!(chunks, with_terms(chunk_file("m.py", TEXT, &cfg)));
        // The eviction runs on a thread of its own: wait for it (a liveness bound only).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while old.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!old.exists(), "the least recently used entry is evicted");
        assert!(
            store.entry_path("m.py", TEXT, &cfg).exists(),
            "the fresh one stays"
        );
    }

    #[test]
    fn an_entry_removed_under_the_store_is_chunked_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = ChunkConfig::default();
        let store = ChunkStore::new(dir.path().to_path_buf());
        let (fresh, _) = store.chunks_of("m.py", TEXT, &cfg);
        // Another server's eviction, or a whole store deleted.
        fs::remove_file(store.entry_path("m.py", TEXT, &cfg)).expect("rm");
        assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh.clone(), false));
        fs::remove_dir_all(dir.path()).expect("rm -r");
        assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh.clone(), false));
        assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh, true));
    }

    #[test]
    fn a_damaged_or_misplaced_entry_is_chunked_again_and_repaired() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = ChunkStore::new(dir.path().to_path_buf());
        let cfg = ChunkConfig::default();
        let (fresh, _) = store.chunks_of("m.py", TEXT, &cfg);
        let path = store.entry_path("m.py", TEXT, &cfg);
        let good = fs::read(&path).expect("entry written");
        for cut in [
            0,
            7,
            navbench_server_support::frame::HEADER_LEN,
            good.len() - 1,
        ] {
            fs::write(&path, &good[..cut]).expect("truncate");
            assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh.clone(), false));
            assert_eq!(fs::read(&path).expect("rewritten"), good);
        }
        let mut flipped = good.clone();
        let last = flipped.len() - 2;
        flipped[last] ^= 0x20;
        fs::write(&path, &flipped).expect("flip");
        assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh.clone(), false));
        // Another file's entry at this place is not taken for this one.
        fs::write(&path, encode("other.py", &fresh)).expect("misplace");
        assert!(matches!(
            decode(&fs::read(&path).expect("read"), "m.py"),
            Err(CacheError::Stale(_))
        ));
        assert_eq!(store.chunks_of("m.py", TEXT, &cfg), (fresh, false));
    }
}
