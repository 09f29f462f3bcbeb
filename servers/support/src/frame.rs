//! A checked frame for cache files: an 8-byte magic string, the format version, the
//! payload's length and its xxh3-64 checksum, then the payload. A file that fails any
//! check (another format, a truncated write, a flipped bit) is reported as damaged, so
//! a cache rebuilds the entry instead of serving it.
//!
//! ```
//! use navbench_server_support::frame::{FrameError, frame, unframe};
//! let bytes = frame(b"EXAMPLE1", 3, b"payload");
//! assert_eq!(unframe(&bytes, b"EXAMPLE1", 3), Ok(&b"payload"[..]));
//! assert_eq!(unframe(&bytes, b"EXAMPLE1", 4), Err(FrameError::Version(3)));
//! ```

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
}
