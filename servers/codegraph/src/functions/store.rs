//! What one file gives the per-function corpus — its documents' metadata and
//! tokens, or that CPython would not parse it — kept between builds in a
//! [`FileStore`] (`<cache>/functions`), so that indexing a tree a few files apart
//! from one indexed before parses and tokenizes only the files that changed.
//!
//! A file's documents are a function of its repo-relative path and its text alone
//! ([`super::corpus::file_documents`], then the tokenizer), so an entry is keyed by
//! both ([`file_key`]) and is valid for any tree holding that file. The scoring
//! statistics (document frequencies, lengths, the mean length) are computed again
//! over the merged documents by [`crate::bm25::DocIndex::build`], in corpus order:
//! the index is the one a cold build gives, to the float.
//!
//! Entry encoding: `0` (unparsable), or `1 | n_vocab u32 | n_vocab × str | n_docs u32
//! | n_docs × (id str | start u64 | end u64 | n u32 | n × token u32)`: tokens as
//! indices into the file's own vocabulary, which keeps entries small and is how
//! [`FileDocs`] holds them in memory too.

use std::collections::HashMap;

use super::DocMeta;
use crate::builder::FileStore;
use crate::builder::reuse::file_key;
pub(crate) use crate::builder::reuse::{FileKey, Pack};
use crate::cache::{CacheError, Reader, Writer, corrupt};

/// Bump on any change of the encoding above or of what a file's documents and
/// tokens are (the corpus rules, the tokenizer): stores written with another value
/// are ignored.
const FUNCTIONS_FORMAT: u32 = 2;

/// The store of per-file corpus entries in `dir`.
pub(crate) fn store(dir: impl Into<std::path::PathBuf>) -> FileStore {
    FileStore::of_entries(dir, format!("functions/{FUNCTIONS_FORMAT}"))
}

/// The key of file `rel` with `text` (as [`super::corpus::read_source`] gives it).
pub(crate) fn key(rel: &str, text: &str) -> FileKey {
    file_key(rel, text)
}

/// One file's contribution to the corpus.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FileDocs {
    /// CPython would not parse it: no documents.
    Unparsable,
    /// Its documents, in corpus order, each with its tokens as indices into the
    /// file's vocabulary (tokens in first-use order): the index numbers each distinct
    /// token of a file once, not each occurrence.
    Docs {
        /// The file's distinct tokens, in first-use order.
        vocab: Vec<String>,
        /// Each document and its tokens (indices into `vocab`).
        docs: Vec<(DocMeta, Vec<u32>)>,
    },
}

impl FileDocs {
    /// The documents of one file from their token lists.
    pub(crate) fn from_tokens(list: Vec<(DocMeta, Vec<String>)>) -> FileDocs {
        let mut numbers: HashMap<String, u32> = HashMap::new();
        let mut vocab: Vec<String> = Vec::new();
        let docs = list
            .into_iter()
            .map(|(meta, tokens)| {
                let ids = tokens
                    .into_iter()
                    .map(|t| {
                        if let Some(&n) = numbers.get(&t) {
                            return n;
                        }
                        let n = vocab.len() as u32;
                        vocab.push(t.clone());
                        numbers.insert(t, n);
                        n
                    })
                    .collect();
                (meta, ids)
            })
            .collect();
        FileDocs::Docs { vocab, docs }
    }
}

/// Appends the encoding of `docs` to `w`.
pub(crate) fn encode(w: &mut Writer, docs: &FileDocs) {
    let FileDocs::Docs { vocab, docs } = docs else {
        w.u8(0);
        return;
    };
    w.u8(1);
    w.u32(vocab.len() as u32);
    for t in vocab {
        w.str(t);
    }
    w.u32(docs.len() as u32);
    for (meta, tokens) in docs {
        w.str(&meta.id);
        w.u64(meta.start_line as u64);
        w.u64(meta.end_line as u64);
        w.u32(tokens.len() as u32);
        for &t in tokens {
            w.u32(t);
        }
    }
}

/// Decodes an entry of file `rel` written by [`encode`].
pub(crate) fn decode(bytes: &[u8], rel: &str) -> Result<FileDocs, CacheError> {
    let mut r = Reader { buf: bytes, pos: 0 };
    match r.u8()? {
        0 => return Ok(FileDocs::Unparsable),
        1 => {}
        _ => return Err(corrupt("unknown entry tag")),
    }
    let n_vocab = r.u32()? as usize;
    let mut vocab: Vec<String> = Vec::with_capacity(n_vocab.min(bytes.len()));
    for _ in 0..n_vocab {
        vocab.push(r.str()?.to_string());
    }
    let n_docs = r.u32()? as usize;
    let mut docs = Vec::with_capacity(n_docs.min(bytes.len()));
    for _ in 0..n_docs {
        let id = r.str()?.to_string();
        let start_line = r.usize()?;
        let end_line = r.usize()?;
        let n = r.u32()? as usize;
        let mut tokens = Vec::with_capacity(n.min(bytes.len()));
        for _ in 0..n {
            let t = r.u32()?;
            if t as usize >= vocab.len() {
                return Err(corrupt("token outside the vocabulary"));
            }
            tokens.push(t);
        }
        let meta = DocMeta {
            id,
            file: rel.to_string(),
            start_line,
            end_line,
        };
        docs.push((meta, tokens));
    }
    if r.pos != bytes.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(FileDocs::Docs { vocab, docs })
}

/// The entry of `key` in `pack`, decoded; `None` (the file is read again) when the
/// pack has none or a damaged one.
pub(crate) fn lookup(pack: &Pack, key: FileKey, rel: &str) -> Option<FileDocs> {
    match decode(pack.blob(key)?, rel) {
        Ok(d) => Some(d),
        Err(e) => {
            tracing::warn!(file = rel, error = %e, "ignoring a damaged corpus entry; reading the file");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_store_entries_round_trip_and_damage_is_refused() {
        let meta = |id: &str, a, b| DocMeta {
            id: id.into(),
            file: "pkg/m.py".into(),
            start_line: a,
            end_line: b,
        };
        let toks = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let docs = FileDocs::from_tokens(vec![
            (meta("pkg/m.py/f", 1, 3), toks("cart total cart")),
            (meta("pkg/m.py/C/g", 5, 9), toks("total price")),
            (meta("pkg/m.py/h", 10, 10), Vec::new()),
        ]);
        let FileDocs::Docs { vocab, docs: list } = &docs else {
            panic!("documents")
        };
        assert_eq!(vocab, &["cart", "total", "price"]);
        assert_eq!(list[0].1, [0, 1, 0]);
        for d in [
            docs.clone(),
            FileDocs::Unparsable,
            FileDocs::from_tokens(Vec::new()),
        ] {
            let mut w = Writer(Vec::new());
            encode(&mut w, &d);
            assert_eq!(decode(&w.0, "pkg/m.py").unwrap(), d);
            if w.0.len() > 2 {
                assert!(decode(&w.0[..w.0.len() - 1], "pkg/m.py").is_err());
            }
        }
        assert!(decode(&[7], "x.py").is_err());
    }
}
