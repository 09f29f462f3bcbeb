//! Chunks made from the graph builder's parse: one tree-sitter parse per file feeds
//! both the graph and the BM25 content index.
//!
//! An init that builds both gives the builder a [`TreeChunks`] (as its
//! `crate::builder::TreeSink`). For every corpus file the builder parses from the
//! file's exact bytes, it chunks that tree ([`super::chunk_parsed`]) and keeps the
//! chunks with their terms; [`super::chunk_repo_with_terms`] then takes them instead
//! of parsing the file again. The chunks are the same as a parse of their own would
//! give: the chunker reads a file as lossy UTF-8 without newline translation, which is
//! the builder's text exactly when the builder calls the sink (valid UTF-8, no
//! carriage return, no numeric table blanked). Chunks are taken only for the same
//! bytes (a file edited between the two reads is chunked again), and not made for
//! files the chunk store already holds, nor while the tokenizer is still being built
//! (the graph build does not wait for it; those files are parsed again instead).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use xxhash_rust::xxh3::xxh3_128;

use super::store::{self, TermedChunk};
use super::{ChunkConfig, ChunkStore, files, tokens};
use crate::builder::TreeSink;

/// Chunks (with terms) of the corpus files whose trees the graph builder handed over,
/// by repo-relative path (see the module docs).
#[derive(Debug)]
pub struct TreeChunks {
    cfg: ChunkConfig,
    /// Files whose entries this store holds are left to it.
    store: Option<ChunkStore>,
    /// The corpus files: others are not indexed.
    corpus: HashSet<String>,
    /// Path → (xxh3-128 of the bytes chunked, chunks).
    made: Mutex<HashMap<String, (u128, Vec<TermedChunk>)>>,
}

impl TreeChunks {
    /// Ready to chunk the corpus files of the tree at `root` with `cfg`, leaving
    /// those `store` holds to it. Starts loading the tokenizer.
    pub fn new(
        root: &Path,
        cfg: ChunkConfig,
        store: Option<ChunkStore>,
    ) -> Result<TreeChunks, files::FilesError> {
        tokens::warm_up();
        let corpus = files::list_corpus_files(root)?
            .into_iter()
            .map(|f| f.rel_path)
            .collect();
        Ok(TreeChunks {
            cfg,
            store,
            corpus,
            made: Mutex::new(HashMap::new()),
        })
    }

    /// The chunks made for file `rel` if they were made from exactly `bytes`
    /// (removed: each is taken once).
    pub(crate) fn take(&self, rel: &str, bytes: &[u8]) -> Option<Vec<TermedChunk>> {
        let (hash, chunks) = self.lock().remove(rel)?;
        (hash == xxh3_128(bytes)).then_some(chunks)
    }

    /// How many files' chunks are waiting to be taken.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no file's chunks are waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The map, even if a thread panicked while holding it (it only ever holds
    /// whole entries).
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u128, Vec<TermedChunk>)>> {
        self.made.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TreeSink for TreeChunks {
    fn parsed(&self, id: &str, text: &str, tree: &tree_sitter::Tree) {
        // Chunking counts tokens: until the tokenizer is built, the graph build goes
        // on, and the files it parses meanwhile are chunked by a parse of their own.
        if !self.corpus.contains(id) || !tokens::ready() {
            return;
        }
        let bytes = text.as_bytes();
        if self
            .store
            .as_ref()
            .is_some_and(|s| s.has(id, bytes, &self.cfg))
        {
            return;
        }
        let chunks = super::chunk_parsed(id, text, tree, &self.cfg);
        let termed = store::with_terms(store::indexed(id, chunks));
        self.lock()
            .insert(id.to_string(), (xxh3_128(bytes), termed));
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::Arc;

    use super::*;
    use crate::builder::{BuildOptions, build_graph_with};
    use crate::chunk::chunk_repo_with_terms;

    /// A tree with the files the sink must leave alone beside ordinary ones.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let table: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let files: [(&str, Vec<u8>); 8] = [
            ("pkg/__init__.py", b"from .a import f\n".to_vec()),
            ("pkg/a.py", b"import os\n\nclass C:\n    def m(self):\n        return os.sep\n\ndef f(x):\n    return C().m() + x\n".to_vec()),
            ("pkg/crlf.py", b"def g():\r\n    return 1\r\n".to_vec()),
            ("pkg/table.py", format!("T = [{}]\n\ndef h():\n    return T\n", table.join(", ")).into_bytes()),
            ("pkg/latin1.py", b"s = '\xe9'\n".to_vec()),
            ("pkg/py2.py", b"print 'x'\n\ndef k():\n    pass\n".to_vec()),
            ("tests/test_a.py", b"def test_f():\n    assert True\n".to_vec()),
            ("setup.py", b"from setuptools import setup\nsetup(name='x')\n".to_vec()),
        ];
        for (rel, bytes) in files {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, bytes).expect("write");
        }
        dir
    }

    /// A sink for `root` once the tokenizer is built (before, it makes nothing).
    fn ready_sink(root: &Path, store: Option<ChunkStore>) -> Arc<TreeChunks> {
        let sink = Arc::new(TreeChunks::new(root, ChunkConfig::default(), store).expect("corpus"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !tokens::ready() {
            assert!(std::time::Instant::now() < deadline, "tokenizer not built");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        sink
    }

    #[test]
    fn chunks_from_the_graph_builders_parse_equal_a_parse_of_their_own() {
        let dir = tree();
        let root = dir.path();
        let cfg = ChunkConfig::default();
        let sink = ready_sink(root, None);
        let options = BuildOptions {
            trees: Some(sink.clone()),
            ..Default::default()
        };
        let (shared_graph, _) = build_graph_with(root, &options).expect("graph");
        // Corpus files parsed from their exact bytes: not the CRLF, table, Latin-1
        // or test files.
        let mut made: Vec<String> = sink.lock().keys().cloned().collect();
        made.sort();
        assert_eq!(
            made,
            ["pkg/__init__.py", "pkg/a.py", "pkg/py2.py", "setup.py"]
        );
        let shared = corpus_chunks(root, &cfg, None, Some(&sink));
        assert!(sink.is_empty(), "every made chunk list was taken");
        let own = corpus_chunks(root, &cfg, None, None);
        assert_eq!(shared, own);
        // The files left out were chunked by a parse of their own (the CRLF file is
        // one the chunker rejects, as the original does).
        assert!(own.iter().any(|(c, _)| c.file_path == "pkg/table.py"));
        assert!(own.iter().any(|(c, _)| c.file_path == "pkg/latin1.py"));

        let (own_graph, _) = build_graph_with(root, &BuildOptions::default()).expect("graph");
        let tsv = |g: &crate::graph::CodeGraph| {
            let (mut nodes, mut edges) = (Vec::new(), Vec::new());
            crate::export::write_nodes(g, &mut nodes).expect("nodes");
            crate::export::write_edges(g, &mut edges).expect("edges");
            (nodes, edges)
        };
        assert_eq!(tsv(&shared_graph), tsv(&own_graph));
    }

    /// The tree's chunks with their terms, over the repository's languages.
    fn corpus_chunks(
        root: &Path,
        cfg: &ChunkConfig,
        store: Option<&ChunkStore>,
        shared: Option<&TreeChunks>,
    ) -> Vec<TermedChunk> {
        let auto = navbench_lang::family::Selection::Auto;
        chunk_repo_with_terms(root, cfg, store, shared, &auto).expect("chunks")
    }

    #[test]
    fn stored_files_and_edited_files_are_not_taken() {
        let dir = tree();
        let root = dir.path();
        let cfg = ChunkConfig::default();
        let store_dir = tempfile::tempdir().expect("tempdir");
        let store = ChunkStore::new(store_dir.path().to_path_buf());
        let a = fs::read(root.join("pkg/a.py")).expect("read");
        let _ = store.chunks_of("pkg/a.py", &a, &cfg);
        let sink = ready_sink(root, Some(store.clone()));
        let options = BuildOptions {
            trees: Some(sink.clone()),
            ..Default::default()
        };
        build_graph_with(root, &options).expect("graph");
        assert!(!sink.lock().contains_key("pkg/a.py"), "left to the store");
        // Edited after the graph read it: chunked again from the new bytes.
        fs::write(root.join("setup.py"), b"x = 1\n").expect("write");
        let shared = corpus_chunks(root, &cfg, Some(&store), Some(&sink));
        let own = corpus_chunks(root, &cfg, None, None);
        assert_eq!(shared, own);
        // What came from the graph's parse was stored like any other file's chunks.
        let init = fs::read(root.join("pkg/__init__.py")).expect("read");
        assert!(store.has("pkg/__init__.py", &init, &cfg));
    }
}
