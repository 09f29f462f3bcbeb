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
//! indices into the file's own vocabulary, which keeps entries small.

use std::collections::HashMap;

use super::DocMeta;
use crate::builder::FileStore;
use crate::builder::reuse::file_key;
pub(crate) use crate::builder::reuse::{FileKey, Pack};
use crate::cache::{CacheError, Reader, Writer, corrupt};

/// Bump on any change of the encoding above or of what a file's documents and
/// tokens are (the corpus rules, the tokenizer): stores written with another value
/// are ignored.
const FUNCTIONS_FORMAT: u32 = 1;

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
    /// Its documents, in corpus order, with their tokens.
    Docs(Vec<(DocMeta, Vec<String>)>),
}

/// Appends the encoding of `docs` to `w`.
pub(crate) fn encode(w: &mut Writer, docs: &FileDocs) {
    let FileDocs::Docs(list) = docs else {
        w.u8(0);
        return;
    };
    w.u8(1);
    let mut vocab: HashMap<&str, u32> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (_, tokens) in list {
        for t in tokens {
            vocab.entry(t.as_str()).or_insert_with(|| {
                order.push(t.as_str());
                (order.len() - 1) as u32
            });
        }
    }
    w.u32(order.len() as u32);
    for t in &order {
        w.str(t);
    }
    w.u32(list.len() as u32);
    for (meta, tokens) in list {
        w.str(&meta.id);
        w.u64(meta.start_line as u64);
        w.u64(meta.end_line as u64);
        w.u32(tokens.len() as u32);
        for t in tokens {
            w.u32(vocab[t.as_str()]);
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
    let mut vocab: Vec<&str> = Vec::with_capacity(n_vocab.min(bytes.len()));
    for _ in 0..n_vocab {
        vocab.push(r.str()?);
    }
    let n_docs = r.u32()? as usize;
    let mut list = Vec::with_capacity(n_docs.min(bytes.len()));
    for _ in 0..n_docs {
        let id = r.str()?.to_string();
        let start_line = r.usize()?;
        let end_line = r.usize()?;
        let n = r.u32()? as usize;
        let mut tokens = Vec::with_capacity(n.min(bytes.len()));
        for _ in 0..n {
            let t = vocab
                .get(r.u32()? as usize)
                .ok_or_else(|| corrupt("token outside the vocabulary"))?;
            tokens.push((*t).to_string());
        }
        let meta = DocMeta {
            id,
            file: rel.to_string(),
            start_line,
            end_line,
        };
        list.push((meta, tokens));
    }
    if r.pos != bytes.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(FileDocs::Docs(list))
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
        let docs = FileDocs::Docs(vec![
            (meta("pkg/m.py/f", 1, 3), toks("cart total cart")),
            (meta("pkg/m.py/C/g", 5, 9), toks("total price")),
            (meta("pkg/m.py/h", 10, 10), Vec::new()),
        ]);
        for d in [docs, FileDocs::Unparsable, FileDocs::Docs(Vec::new())] {
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
