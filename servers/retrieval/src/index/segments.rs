//! The chunk store's segment files: each file's chunks, with their content hashes and
//! vectors, as one checked record, so an index persists what changed by appending
//! records for the changed files to a new segment instead of rewriting everything.
//!
//! A segment (`seg-<seq>.bin`, `seq` in hex) is a run of records, each one
//! `navbench_server_support::frame`'s frame (magic, version, length, xxh3-64 checksum)
//! around one file's payload ([`encode_file`]): the chunks in a compact binary form
//! (lengths and bytes, no JSON to parse), each chunk's content hash (the embedding
//! cache's key) and then the file's vectors, row after row. A segment is written under
//! a temporary name and renamed once complete ([`SegmentWriter`]), and never written
//! again: an index directory seeded from a base shares the base's segments by hard
//! link. Which records are live is the store's live set (`store.rs`), which names each
//! live file's [`Loc`]; a record that fails its frame (a torn or flipped write) is
//! never served: [`record_at`] refuses it and the index is rebuilt.
//!
//! [`salvage`] reads every intact record of a directory's segments, live or not, in
//! order: a cold build in a directory whose store is damaged starts from those vectors,
//! so only the damaged files' chunks are embedded again.

use std::collections::HashMap;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use navbench_server_support::frame::{self, HEADER_LEN};
use serde::{Deserialize, Serialize};

use super::{IndexError, io_err};
use crate::chunk::{Chunk, ChunkKind, ChunkMeta};

/// Magic of a segment record's frame.
const MAGIC: &[u8; 8] = b"NBRSEG01";
/// Version of a record's payload; bump when [`encode_file`] changes.
const VERSION: u32 = 1;

/// Where a file's record lies: segment, byte offset and framed length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Loc {
    /// The segment's sequence number.
    pub(super) seg: u64,
    /// Offset of the record's frame in the segment.
    pub(super) offset: u64,
    /// Length of the frame (header and payload).
    pub(super) len: u64,
}

/// The file name of segment `seq`.
pub(super) fn seg_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("seg-{seq:016x}.bin"))
}

/// The sequence numbers of the segments in `dir` (complete ones: renamed into place).
pub(super) fn segments_in(dir: &Path) -> Vec<u64> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<u64> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let hex = name.strip_prefix("seg-")?.strip_suffix(".bin")?;
            u64::from_str_radix(hex, 16).ok()
        })
        .collect();
    v.sort_unstable();
    v
}

/// Writes one new segment: records appended, then renamed into place by
/// [`SegmentWriter::finish`] (a writer dropped unfinished leaves only its temporary
/// file, which no live set names).
pub(super) struct SegmentWriter {
    seq: u64,
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<fs::File>,
    offset: u64,
}

impl SegmentWriter {
    /// Starts segment `seq` in `dir`.
    pub(super) fn create(dir: &Path, seq: u64) -> Result<SegmentWriter, IndexError> {
        let path = seg_path(dir, seq);
        let tmp = path.with_extension(format!("bin.{}.tmp", std::process::id()));
        let f = fs::File::create(&tmp).map_err(io_err(&tmp))?;
        Ok(SegmentWriter {
            seq,
            path,
            tmp,
            out: BufWriter::with_capacity(1 << 20, f),
            offset: 0,
        })
    }

    /// Appends one file's record (a payload of [`encode_file`]).
    pub(super) fn append(&mut self, payload: &[u8]) -> Result<Loc, IndexError> {
        let framed = frame::frame(MAGIC, VERSION, payload);
        self.out.write_all(&framed).map_err(io_err(&self.tmp))?;
        let loc = Loc {
            seg: self.seq,
            offset: self.offset,
            len: framed.len() as u64,
        };
        self.offset += loc.len;
        Ok(loc)
    }

    /// Flushes and renames the segment into place; returns its size in bytes.
    pub(super) fn finish(self) -> Result<u64, IndexError> {
        let f = self.out.into_inner().map_err(|e| IndexError::Io {
            path: self.tmp.clone(),
            source: e.into_error(),
        })?;
        f.sync_data().map_err(io_err(&self.tmp))?;
        drop(f);
        fs::rename(&self.tmp, &self.path).map_err(io_err(&self.path))?;
        Ok(self.offset)
    }
}

/// The payload of the record at `loc` in `segment` (the segment's bytes), after its
/// frame's checks; `Err` says what is wrong (cut short, checksum).
pub(super) fn record_at(segment: &[u8], loc: Loc) -> Result<&[u8], String> {
    let start = usize::try_from(loc.offset).map_err(|e| e.to_string())?;
    let end = start
        .checked_add(usize::try_from(loc.len).map_err(|e| e.to_string())?)
        .filter(|&e| e <= segment.len())
        .ok_or_else(|| format!("record at {} cut short", loc.offset))?;
    frame::unframe(&segment[start..end], MAGIC, VERSION)
        .map_err(|e| format!("record at {}: {e}", loc.offset))
}

/// Content hash → vector of every intact record in `dir`'s segments (a record failing
/// its frame is skipped; a segment ends where a record cannot be delimited).
pub(super) fn salvage(dir: &Path, dim: usize) -> HashMap<u128, Box<[f32]>> {
    let mut map = HashMap::new();
    for seq in segments_in(dir) {
        let Ok(bytes) = fs::read(seg_path(dir, seq)) else {
            continue;
        };
        let mut at = 0usize;
        while at + HEADER_LEN <= bytes.len() {
            let mut len = [0u8; 8];
            len.copy_from_slice(&bytes[at + 12..at + 20]);
            let Some(framed) = usize::try_from(u64::from_le_bytes(len))
                .ok()
                .and_then(|l| l.checked_add(HEADER_LEN))
            else {
                break;
            };
            let loc = Loc {
                seg: seq,
                offset: at as u64,
                len: framed as u64,
            };
            // A damaged record is skipped by its header's length (if that is what was
            // damaged, the next "record" fails its magic and the segment ends here).
            let Some(file) = record_at(&bytes, loc)
                .ok()
                .and_then(|payload| decode_file(payload, dim).ok())
            else {
                if loc
                    .offset
                    .checked_add(loc.len)
                    .is_none_or(|end| end > bytes.len() as u64)
                {
                    break;
                }
                at += framed;
                continue;
            };
            let mut vectors = vec![0f32; file.hashes.len() * dim];
            file.vectors_into(&mut vectors);
            for (i, h) in file.hashes.iter().enumerate() {
                map.entry(*h)
                    .or_insert_with(|| vectors[i * dim..(i + 1) * dim].into());
            }
            at += framed;
        }
    }
    map
}

/// One file's chunks as stored: chunks, their content hashes, and their vectors
/// (row-major, `chunks.len() × dim`, little-endian bytes of the record).
pub(super) struct FileRecord<'a> {
    pub(super) chunks: Vec<Chunk>,
    pub(super) hashes: Vec<u128>,
    pub(super) vectors: &'a [u8],
}

impl FileRecord<'_> {
    /// Writes the vectors into `out` (`chunks.len() × dim` floats), in one copy on a
    /// little-endian machine.
    pub(super) fn vectors_into(&self, out: &mut [f32]) {
        #[cfg(target_endian = "little")]
        bytemuck::cast_slice_mut::<f32, u8>(out).copy_from_slice(self.vectors);
        #[cfg(not(target_endian = "little"))]
        for (x, b) in out.iter_mut().zip(self.vectors.chunks_exact(4)) {
            *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
}

/// The payload of one file's record: chunk count, then each chunk (hash, id, file,
/// lines, kind, name, content, metadata), then the vectors.
pub(super) fn encode_file(chunks: &[Chunk], hashes: &[u128], vectors: &[f32]) -> Vec<u8> {
    let text: usize = chunks.iter().map(|c| c.content.len() + 64).sum();
    let mut out = Vec::with_capacity(8 + text + 4 * vectors.len());
    put_u64(&mut out, chunks.len() as u64);
    for (c, h) in chunks.iter().zip(hashes) {
        out.extend_from_slice(&h.to_le_bytes());
        put_str(&mut out, &c.id);
        put_str(&mut out, &c.file);
        put_u64(&mut out, c.start_line as u64);
        put_u64(&mut out, c.end_line as u64);
        out.push(kind_code(c.kind));
        match &c.name {
            Some(n) => {
                out.push(1);
                put_str(&mut out, n);
            }
            None => out.push(0),
        }
        put_str(&mut out, &c.content);
        let m = &c.meta;
        for list in [&m.calls, &m.imports_used, &m.exceptions_handled, &m.types] {
            put_u64(&mut out, list.len() as u64);
            for s in list {
                put_str(&mut out, s);
            }
        }
        put_u64(&mut out, m.complexity as u64);
    }
    for x in vectors {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Reads a payload of [`encode_file`] with vectors of `dim`.
pub(super) fn decode_file(payload: &[u8], dim: usize) -> Result<FileRecord<'_>, String> {
    let mut r = Reader { bytes: payload };
    let n = r.len()?;
    let mut chunks = Vec::with_capacity(n);
    let mut hashes = Vec::with_capacity(n);
    for _ in 0..n {
        hashes.push(u128::from_le_bytes(r.take_array()?));
        let id = r.string()?;
        let file = r.string()?;
        let start_line = r.len()?;
        let end_line = r.len()?;
        let kind = kind_of(r.take(1)?[0])?;
        let name = match r.take(1)?[0] {
            0 => None,
            _ => Some(r.string()?),
        };
        let content = r.string()?;
        let mut lists: [Vec<String>; 4] = Default::default();
        for list in &mut lists {
            let k = r.len()?;
            *list = (0..k).map(|_| r.string()).collect::<Result<_, _>>()?;
        }
        let [calls, imports_used, exceptions_handled, types] = lists;
        let complexity = r.len()?;
        chunks.push(Chunk {
            id,
            file,
            start_line,
            end_line,
            kind,
            name,
            content,
            meta: ChunkMeta {
                calls,
                imports_used,
                exceptions_handled,
                complexity,
                types,
            },
        });
    }
    let floats = r.bytes;
    if floats.len() != 4 * n * dim {
        return Err(format!(
            "{} bytes of vectors for {n} chunks of dimension {dim}",
            floats.len()
        ));
    }
    Ok(FileRecord {
        chunks,
        hashes,
        vectors: floats,
    })
}

fn kind_code(k: ChunkKind) -> u8 {
    match k {
        ChunkKind::Function => 0,
        ChunkKind::Method => 1,
        ChunkKind::Class => 2,
        ChunkKind::Module => 3,
        ChunkKind::Text => 4,
    }
}

fn kind_of(b: u8) -> Result<ChunkKind, String> {
    Ok(match b {
        0 => ChunkKind::Function,
        1 => ChunkKind::Method,
        2 => ChunkKind::Class,
        3 => ChunkKind::Module,
        4 => ChunkKind::Text,
        other => return Err(format!("unknown chunk kind {other}")),
    })
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A cursor over a payload; every read checks the bounds.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err("record cut short".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn len(&mut self) -> Result<usize, String> {
        usize::try_from(u64::from_le_bytes(self.take_array()?)).map_err(|e| e.to_string())
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(file: &str, start: usize, name: Option<&str>) -> Chunk {
        Chunk {
            id: format!("{file}:{start}-{}", start + 2),
            file: file.into(),
            start_line: start,
            end_line: start + 2,
            kind: if name.is_some() {
                ChunkKind::Function
            } else {
                ChunkKind::Module
            },
            name: name.map(String::from),
            content: format!("def f{start}():\n    return 'é'\n"),
            meta: ChunkMeta {
                calls: vec!["os.path.join".into()],
                imports_used: vec![],
                exceptions_handled: vec!["KeyError".into(), "ValueError".into()],
                complexity: 3,
                types: vec!["int".into()],
            },
        }
    }

    #[test]
    fn a_record_reads_back_exactly_and_a_damaged_one_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let chunks = vec![chunk("a.py", 1, Some("f")), chunk("a.py", 4, None)];
        let hashes = vec![7u128 << 70 | 3, 9];
        let vectors = vec![0.5, -1.25, 3.0, 1e-7, f32::MIN_POSITIVE, 2.0];
        let mut w = SegmentWriter::create(tmp.path(), 3).unwrap();
        let first = w.append(&encode_file(&chunks[..1], &hashes[..1], &vectors[..3]));
        let second = w.append(&encode_file(&chunks, &hashes, &vectors)).unwrap();
        assert_eq!(w.finish().unwrap(), second.offset + second.len);
        assert_eq!(segments_in(tmp.path()), vec![3]);
        let bytes = fs::read(seg_path(tmp.path(), 3)).unwrap();
        let back = decode_file(record_at(&bytes, second).unwrap(), 3).unwrap();
        assert_eq!(back.chunks, chunks);
        assert_eq!(back.hashes, hashes);
        let mut floats = vec![0f32; vectors.len()];
        back.vectors_into(&mut floats);
        assert_eq!(floats, vectors);
        assert_eq!(salvage(tmp.path(), 3).len(), 2);

        // A flipped bit in the second record: refused, and salvage keeps the first.
        let mut bad = bytes.clone();
        bad[(second.offset + second.len - 5) as usize] ^= 0x10;
        assert!(record_at(&bad, second).unwrap_err().contains("checksum"));
        assert!(record_at(&bad, first.unwrap()).is_ok());
        fs::write(seg_path(tmp.path(), 3), &bad).unwrap();
        assert_eq!(salvage(tmp.path(), 3).len(), 1);
        // A flipped bit in the first: salvage skips it and keeps the second's two.
        let mut bad = bytes.clone();
        bad[HEADER_LEN + 3] ^= 0x10;
        fs::write(seg_path(tmp.path(), 3), &bad).unwrap();
        assert_eq!(salvage(tmp.path(), 3).len(), 2);
        // Cut short (a torn write): refused.
        let torn = &bytes[..bytes.len() - 9];
        assert!(record_at(torn, second).unwrap_err().contains("cut short"));
        // Vectors of another dimension do not decode.
        assert!(decode_file(record_at(&bytes, second).unwrap(), 4).is_err());
    }
}
