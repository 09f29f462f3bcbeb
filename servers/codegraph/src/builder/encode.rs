//! The binary encoding of one file's extraction ([`Extracted`]), as the per-file
//! store ([`super::reuse`]) keeps it between builds.
//!
//! Decoding is checked against the file's text: a byte range that does not fit the
//! text makes the entry unusable (the file is then parsed again), so a cached entry
//! can never produce a node whose code cannot be sliced.

use std::collections::BTreeSet;

use super::extract::{EntityAnalysis, EntityDef, Extracted, ParsedFile};
use super::imports::{FromNames, ImportStmt};
use crate::cache::{CacheError, Reader, Writer, corrupt};
use crate::graph::NodeKind;

/// Bump on any change of the encoding below or of what [`super::extract`] computes:
/// stores written with another value are ignored.
pub(crate) const EXTRACT_FORMAT: u32 = 1;

/// Appends the encoding of `e` to `w`.
pub(crate) fn encode(w: &mut Writer, e: &Extracted) {
    match e {
        Extracted::Rejected(reason) => {
            w.u8(0);
            w.str(reason);
        }
        Extracted::Parsed(p) => {
            w.u8(1);
            w.u32(p.entities.len() as u32);
            for d in &p.entities {
                encode_entity(w, d);
            }
            encode_imports(w, &p.imports);
        }
    }
}

fn encode_entity(w: &mut Writer, d: &EntityDef) {
    w.str(&d.qualname);
    w.u8(match d.kind {
        NodeKind::Class => 0,
        _ => 1,
    });
    w.u32(d.lines.0);
    w.u32(d.lines.1);
    w.u64(d.range.start as u64);
    w.u64(d.range.end as u64);
    match &d.analysis {
        None => w.u8(0),
        Some(a) => {
            w.u8(1);
            encode_imports(w, &a.imports);
            encode_names(w, &a.invokes);
            encode_names(w, &a.inherits);
        }
    }
}

fn encode_names(w: &mut Writer, names: &BTreeSet<String>) {
    w.u32(names.len() as u32);
    for n in names {
        w.str(n);
    }
}

fn encode_pairs(w: &mut Writer, pairs: &[(String, Option<String>)]) {
    w.u32(pairs.len() as u32);
    for (name, alias) in pairs {
        w.str(name);
        match alias {
            None => w.u8(0),
            Some(a) => {
                w.u8(1);
                w.str(a);
            }
        }
    }
}

fn encode_imports(w: &mut Writer, imports: &[ImportStmt]) {
    w.u32(imports.len() as u32);
    for imp in imports {
        match imp {
            ImportStmt::Import(names) => {
                w.u8(0);
                encode_pairs(w, names);
            }
            ImportStmt::From {
                module,
                names: FromNames::Star,
            } => {
                w.u8(1);
                w.str(module);
            }
            ImportStmt::From {
                module,
                names: FromNames::Names(names),
            } => {
                w.u8(2);
                w.str(module);
                encode_pairs(w, names);
            }
        }
    }
}

/// Decodes one entry written by [`encode`] for a file whose text is `text`; the
/// whole of `bytes` must be consumed.
pub(crate) fn decode(bytes: &[u8], text: &str) -> Result<Extracted, CacheError> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let e = match r.u8()? {
        0 => Extracted::Rejected(r.str()?.to_string()),
        1 => {
            let n = r.u32()? as usize;
            let mut entities = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                entities.push(decode_entity(&mut r, text)?);
            }
            let imports = decode_imports(&mut r)?;
            Extracted::Parsed(ParsedFile { entities, imports })
        }
        _ => return Err(corrupt("bad extraction tag")),
    };
    if r.pos != bytes.len() {
        return Err(corrupt("trailing bytes in an extraction"));
    }
    Ok(e)
}

fn decode_entity(r: &mut Reader<'_>, text: &str) -> Result<EntityDef, CacheError> {
    let qualname = r.str()?.to_string();
    let kind = match r.u8()? {
        0 => NodeKind::Class,
        1 => NodeKind::Function,
        _ => return Err(corrupt("bad entity kind")),
    };
    let lines = (r.u32()?, r.u32()?);
    let range = r.usize()?..r.usize()?;
    if range.start > range.end || text.get(range.clone()).is_none() {
        return Err(corrupt("entity range outside the file's text"));
    }
    let analysis = match r.u8()? {
        0 => None,
        1 => Some(EntityAnalysis {
            imports: decode_imports(r)?,
            invokes: decode_names(r)?,
            inherits: decode_names(r)?,
        }),
        _ => return Err(corrupt("bad analysis flag")),
    };
    Ok(EntityDef {
        qualname,
        kind,
        lines,
        range,
        analysis,
    })
}

fn decode_names(r: &mut Reader<'_>) -> Result<BTreeSet<String>, CacheError> {
    let n = r.u32()?;
    (0..n).map(|_| Ok(r.str()?.to_string())).collect()
}

fn decode_pairs(r: &mut Reader<'_>) -> Result<Vec<(String, Option<String>)>, CacheError> {
    let n = r.u32()?;
    (0..n)
        .map(|_| {
            let name = r.str()?.to_string();
            let alias = match r.u8()? {
                0 => None,
                1 => Some(r.str()?.to_string()),
                _ => return Err(corrupt("bad alias flag")),
            };
            Ok((name, alias))
        })
        .collect()
}

fn decode_imports(r: &mut Reader<'_>) -> Result<Vec<ImportStmt>, CacheError> {
    let n = r.u32()?;
    (0..n)
        .map(|_| {
            Ok(match r.u8()? {
                0 => ImportStmt::Import(decode_pairs(r)?),
                1 => ImportStmt::From {
                    module: r.str()?.to_string(),
                    names: FromNames::Star,
                },
                2 => ImportStmt::From {
                    module: r.str()?.to_string(),
                    names: FromNames::Names(decode_pairs(r)?),
                },
                _ => return Err(corrupt("bad import tag")),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::extract::extract;

    /// Every field of an extraction, for comparison (the types have no `PartialEq`).
    fn show(e: &Extracted) -> String {
        format!("{e:?}")
    }

    #[test]
    fn round_trip_of_a_rich_file_and_a_rejected_one() {
        let src = "\
import os.path as p, sys
from . import sib as s
from .m import *
class A(B, mod.C):
    from x import y
    def __init__(self):
        import z
        self.setup()
    @property
    def v(self):
        return helper()
def f():
    g()
";
        for (id, text) in [("pkg/a.py", src), ("b.py", "print 'py2'\n")] {
            let e = extract(id, text);
            let mut w = Writer(Vec::new());
            encode(&mut w, &e);
            let back = decode(&w.0, text).expect("decode");
            assert_eq!(show(&back), show(&e));
        }
    }

    #[test]
    fn a_range_that_does_not_fit_the_text_is_refused() {
        let src = "def f():\n    pass\n";
        let mut w = Writer(Vec::new());
        encode(&mut w, &extract("a.py", src));
        assert!(decode(&w.0, "x = 1\n").is_err());
        assert!(decode(&w.0[..w.0.len() - 1], src).is_err());
    }
}
