//! A checked frame for cache files: an 8-byte magic string, the format version, the
//! payload's length and its xxh3-64 checksum, then the payload. A file that fails any
//! check (another format, a truncated write, a flipped bit) is reported as damaged, so
//! a cache rebuilds the entry instead of serving it.
//!
//! Files of many costly, independent entries (retrieval's embedding vectors: hours of
//! transformer time) use [`RecordWriter`] / [`RecordReader`] instead: the same header,
//! with the record length where the payload length goes and a checksum of the header
//! itself, then fixed-size records each followed by its own checksum, so a flipped bit
//! costs one record, not the file.
//!
//! ```
//! use navbench_server_support::frame::{FrameError, frame, unframe};
//! let bytes = frame(b"EXAMPLE1", 3, b"payload");
//! assert_eq!(unframe(&bytes, b"EXAMPLE1", 3), Ok(&b"payload"[..]));
//! assert_eq!(unframe(&bytes, b"EXAMPLE1", 4), Err(FrameError::Version(3)));
//! ```

use std::io::{self, Read, Write};

use xxhash_rust::xxh3::xxh3_64;

/// Bytes before the payload: magic, version (u32), length (u64), checksum (u64).
pub const HEADER_LEN: usize = 8 + 4 + 8 + 8;

/// Why a framed file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not a file of this kind (or shorter than a header).
    #[error("bad magic")]
    Magic,
    /// Written by another format version.
    #[error("format version {0}")]
    Version(u32),
    /// The payload is not as long as the header says (a truncated write).
    #[error("payload length mismatch")]
    Length,
    /// The payload's bytes changed since it was written.
    #[error("checksum mismatch")]
    Checksum,
}

/// `payload` framed with `magic` and `version` (little-endian header).
pub fn frame(magic: &[u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxh3_64(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of a file written by [`frame`], after checking its magic, version,
/// length and checksum.
pub fn unframe<'a>(bytes: &'a [u8], magic: &[u8; 8], version: u32) -> Result<&'a [u8], FrameError> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != magic {
        return Err(FrameError::Magic);
    }
    let le = |range: std::ops::Range<usize>| {
        let mut b = [0u8; 8];
        b[..range.len()].copy_from_slice(&bytes[range]);
        u64::from_le_bytes(b)
    };
    let found = le(8..12) as u32;
    if found != version {
        return Err(FrameError::Version(found));
    }
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != le(12..20) {
        return Err(FrameError::Length);
    }
    if xxh3_64(payload) != le(20..28) {
        return Err(FrameError::Checksum);
    }
    Ok(payload)
}

/// Bytes after each record of a records file: its xxh3-64 checksum.
pub const RECORD_CHECKSUM_LEN: usize = 8;

/// The header of a records file: magic, version, record length, and the checksum of
/// those 20 bytes.
fn records_header(magic: &[u8; 8], version: u32, record_len: u64) -> [u8; HEADER_LEN] {
    let mut head = [0u8; HEADER_LEN];
    head[..8].copy_from_slice(magic);
    head[8..12].copy_from_slice(&version.to_le_bytes());
    head[12..20].copy_from_slice(&record_len.to_le_bytes());
    let sum = xxh3_64(&head[..20]);
    head[20..].copy_from_slice(&sum.to_le_bytes());
    head
}

/// Writes a records file: the header, then each record followed by its checksum.
#[derive(Debug)]
pub struct RecordWriter<W: Write> {
    out: W,
    record_len: usize,
}

impl<W: Write> RecordWriter<W> {
    /// Writes the header of a file of `record_len`-byte records.
    pub fn new(
        mut out: W,
        magic: &[u8; 8],
        version: u32,
        record_len: usize,
    ) -> io::Result<RecordWriter<W>> {
        out.write_all(&records_header(magic, version, record_len as u64))?;
        Ok(RecordWriter { out, record_len })
    }

    /// Appends one record, which must be exactly the record length.
    pub fn write(&mut self, record: &[u8]) -> io::Result<()> {
        if record.len() != self.record_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a record of {} bytes in a file of {}-byte records",
                    record.len(),
                    self.record_len
                ),
            ));
        }
        self.out.write_all(record)?;
        self.out.write_all(&xxh3_64(record).to_le_bytes())
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Reads a records file written by [`RecordWriter`], one record at a time.
#[derive(Debug)]
pub struct RecordReader<R: Read> {
    input: R,
    record_len: usize,
    buf: Vec<u8>,
    ended: bool,
}

impl<R: Read> RecordReader<R> {
    /// Checks the header: another kind of file is [`FrameError::Magic`], another
    /// version [`FrameError::Version`], a damaged header [`FrameError::Checksum`].
    pub fn new(mut input: R, magic: &[u8; 8], version: u32) -> Result<RecordReader<R>, FrameError> {
        let mut head = [0u8; HEADER_LEN];
        if input.read_exact(&mut head).is_err() || &head[..8] != magic {
            return Err(FrameError::Magic);
        }
        let mut le = [0u8; 8];
        le[..4].copy_from_slice(&head[8..12]);
        let found = u64::from_le_bytes(le) as u32;
        le.copy_from_slice(&head[12..20]);
        let record_len = u64::from_le_bytes(le);
        le.copy_from_slice(&head[20..28]);
        if u64::from_le_bytes(le) != xxh3_64(&head[..20]) {
            return Err(FrameError::Checksum);
        }
        if found != version {
            return Err(FrameError::Version(found));
        }
        // A checked header with an absurd length is another program's idea of a record.
        let record_len = usize::try_from(record_len)
            .ok()
            .filter(|&n| n <= 1 << 30)
            .ok_or(FrameError::Length)?;
        Ok(RecordReader {
            input,
            record_len,
            buf: vec![0u8; record_len + RECORD_CHECKSUM_LEN],
            ended: false,
        })
    }

    /// The length of every record of this file.
    pub fn record_len(&self) -> usize {
        self.record_len
    }

    /// The next record: `None` at the end, [`FrameError::Checksum`] for a damaged
    /// record (the ones after it still read), [`FrameError::Length`] for a record cut
    /// short by a truncated write or a read error (the last thing returned).
    pub fn next_record(&mut self) -> Option<Result<&[u8], FrameError>> {
        if self.ended {
            return None;
        }
        let mut filled = 0;
        while filled < self.buf.len() {
            match self.input.read(&mut self.buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if filled < self.buf.len() {
            self.ended = true;
            return (filled > 0).then_some(Err(FrameError::Length));
        }
        let (record, sum) = self.buf.split_at(self.record_len);
        let mut le = [0u8; RECORD_CHECKSUM_LEN];
        le.copy_from_slice(sum);
        if u64::from_le_bytes(le) != xxh3_64(record) {
            return Some(Err(FrameError::Checksum));
        }
        Some(Ok(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_damage_is_refused() {
        let good = frame(b"TESTMAG1", 2, b"hello, cache");
        assert_eq!(good.len(), HEADER_LEN + 12);
        assert_eq!(unframe(&good, b"TESTMAG1", 2), Ok(&b"hello, cache"[..]));
        assert_eq!(unframe(&good, b"OTHERMAG", 2), Err(FrameError::Magic));
        assert_eq!(unframe(&good[..10], b"TESTMAG1", 2), Err(FrameError::Magic));
        assert_eq!(unframe(&good, b"TESTMAG1", 1), Err(FrameError::Version(2)));
        assert_eq!(
            unframe(&good[..good.len() - 1], b"TESTMAG1", 2),
            Err(FrameError::Length)
        );
        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(unframe(&flipped, b"TESTMAG1", 2), Err(FrameError::Checksum));
        assert_eq!(
            unframe(&frame(b"TESTMAG1", 0, b""), b"TESTMAG1", 0),
            Ok(&b""[..])
        );
    }

    fn records(bytes: &[u8]) -> Result<Vec<Result<Vec<u8>, FrameError>>, FrameError> {
        let mut r = RecordReader::new(bytes, b"RECORDS1", 7)?;
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            out.push(rec.map(<[u8]>::to_vec));
        }
        Ok(out)
    }

    #[test]
    fn a_damaged_record_costs_that_record_only() {
        let mut w = RecordWriter::new(Vec::new(), b"RECORDS1", 7, 4).unwrap();
        for rec in [b"aaaa", b"bbbb", b"cccc"] {
            w.write(rec).unwrap();
        }
        assert!(w.write(b"too long").is_err());
        let good = w.finish().unwrap();
        assert_eq!(good.len(), HEADER_LEN + 3 * (4 + RECORD_CHECKSUM_LEN));
        let all = records(&good).unwrap();
        assert_eq!(
            all,
            vec![
                Ok(b"aaaa".to_vec()),
                Ok(b"bbbb".to_vec()),
                Ok(b"cccc".to_vec())
            ]
        );
        // A flipped bit in the second record's payload, then in its checksum.
        for at in [HEADER_LEN + 12 + 1, HEADER_LEN + 12 + 4 + 3] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            let got = records(&bad).unwrap();
            assert_eq!(got[1], Err(FrameError::Checksum), "byte {at}");
            assert_eq!(got[0], Ok(b"aaaa".to_vec()));
            assert_eq!(got[2], Ok(b"cccc".to_vec()));
        }
        // A truncated last record.
        let cut = records(&good[..good.len() - 3]).unwrap();
        assert_eq!(cut.len(), 3);
        assert_eq!(cut[2], Err(FrameError::Length));
        // The header: damaged, another kind of file, another version.
        let mut bad = good.clone();
        bad[13] ^= 1;
        assert_eq!(records(&bad).unwrap_err(), FrameError::Checksum);
        assert_eq!(records(&good[..5]).unwrap_err(), FrameError::Magic);
        assert_eq!(
            records(b"NBEMB001 and more bytes than a header").unwrap_err(),
            FrameError::Magic
        );
        let other = RecordWriter::new(Vec::new(), b"RECORDS1", 8, 4)
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(records(&other).unwrap_err(), FrameError::Version(8));
        assert_eq!(records(&good[..HEADER_LEN]).unwrap(), vec![]);
    }
}
