//! [`AppendCsv`]: one CSV file of a run directory, appended so that a run killed at any
//! moment (SIGKILL, power loss after the last fsync) leaves a file that the next run
//! with the same `--out` reads back whole.
//!
//! - Each batch of rows is encoded in memory and appended with one `write_all` on an
//!   `O_APPEND` handle, then `fsync`ed: a row is on disk whole before the next starts.
//! - A write that fails part-way (disk full) is taken back by truncating the file to
//!   its length before the write, so rows already written stay intact.
//! - On open, a torn last row (no final newline, or cut inside a quoted field that
//!   spans lines) is cut off and reported on stderr; its pair then runs again.
//! - Rows of a pair that did not finish (an error, or rows whose pair has no
//!   `instances.csv` row yet because the run was killed in between) are *replaceable*:
//!   the first write for that pair in this run moves them out first, so each pair's
//!   rows are those of one attempt. Nothing is deleted: moved rows are appended to the
//!   file's *superseded* side file ([`superseded_path`], `calls.csv` →
//!   `calls-superseded.csv`, same header), fsynced, and only then is the file rewritten
//!   without them (temporary file, fsync, rename). A crash between the two leaves the
//!   rows in both, and the next move appends them again: the side file holds every
//!   superseded row at least once.
//! - Rows may be appended without a sync ([`AppendCsv::append_pair_unsynced`]: a call
//!   row as it happens, which a killed process still leaves in the file) and synced
//!   later in one go ([`AppendCsv::sync`]).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};

use crate::policy::Trial;

/// One trial of an (instance_id, variant) pair: the key of a pair's rows.
pub(crate) type Pair = (String, String, Trial);

/// One run CSV file opened for crash-safe appending.
#[derive(Debug)]
pub(crate) struct AppendCsv {
    path: PathBuf,
    file: File,
    /// Length of the file up to the end of its last whole row.
    len: u64,
    /// Columns of `instance_id`, `variant` and (when the file has it) `trial` in the
    /// file's own header.
    key_cols: Option<KeyCols>,
    /// Pairs whose rows already in the file the next write for the pair replaces.
    replaceable: HashSet<Pair>,
}

/// What reading a file back found.
struct Scan {
    /// Byte length up to the end of the last whole row.
    good_len: u64,
    file_len: u64,
    header: Option<Vec<String>>,
    pairs: HashSet<Pair>,
}

impl AppendCsv {
    /// Opens (creating) `path`, repairs a torn last row, and writes `header` when the
    /// file is empty. Returns the file and every pair that has rows in it.
    pub(crate) fn open(
        path: &Path,
        header: &[String],
    ) -> std::io::Result<(AppendCsv, HashSet<Pair>)> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let scan = scan(path)?;
        if scan.good_len < scan.file_len {
            file.set_len(scan.good_len)?;
            file.sync_data()?;
            eprintln!(
                "navbench: {}: removed a row cut off by an interrupted run (its last {} byte(s)); that instance × variant runs again",
                path.display(),
                scan.file_len - scan.good_len
            );
        }
        let mut out = AppendCsv {
            path: path.to_path_buf(),
            file,
            len: scan.good_len,
            key_cols: None,
            replaceable: HashSet::new(),
        };
        match scan.header {
            Some(h) => out.key_cols = key_cols(&h),
            None => {
                out.append(&encode(std::iter::once(header.to_vec()))?, true)?;
                out.key_cols = key_cols(header);
            }
        }
        Ok((out, scan.pairs))
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Marks the pairs whose rows the next write for the same pair replaces.
    pub(crate) fn set_replaceable(&mut self, pairs: HashSet<Pair>) {
        self.replaceable = pairs;
    }

    /// Moves the rows of `pair` to the side file if they are replaceable (once per pair).
    pub(crate) fn forget(&mut self, pair: &Pair) -> std::io::Result<()> {
        if !self.replaceable.remove(pair) {
            return Ok(());
        }
        self.supersede(&HashSet::from([pair.clone()])).map(|_| ())
    }

    /// Moves the rows of `pair` to the side file now, whether or not they were
    /// replaceable.
    pub(crate) fn remove_pair(&mut self, pair: &Pair) -> std::io::Result<()> {
        self.replaceable.remove(pair);
        self.supersede(&HashSet::from([pair.clone()])).map(|_| ())
    }

    /// Appends `rows` (already encoded whole lines) of `pair`, replacing the pair's
    /// replaceable rows first, and syncs them.
    pub(crate) fn append_pair(&mut self, pair: &Pair, rows: &[u8]) -> std::io::Result<()> {
        self.forget(pair)?;
        self.append(rows, true)
    }

    /// [`AppendCsv::append_pair`] without the sync: the rows are in the file (a killed
    /// process leaves them) but reach the disk at the next [`AppendCsv::sync`] or
    /// synced append. A sync costs milliseconds (3.3 ms measured on the CI-like VM,
    /// against 2 µs for the write), too much to pay per tool call.
    pub(crate) fn append_pair_unsynced(&mut self, pair: &Pair, rows: &[u8]) -> std::io::Result<()> {
        self.forget(pair)?;
        self.append(rows, false)
    }

    /// Syncs every row appended so far.
    pub(crate) fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// Appends whole lines (and syncs them when asked); on failure the file is cut
    /// back to its length before the write, so no part of a row is left behind.
    fn append(&mut self, bytes: &[u8], sync: bool) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let written = self
            .file
            .write_all(bytes)
            .and_then(|()| if sync { self.file.sync_data() } else { Ok(()) });
        if let Err(e) = written {
            let _ = self.file.set_len(self.len);
            let _ = self.file.sync_data();
            return Err(e);
        }
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Moves every row of `pairs` to the side file ([`superseded_path`]): appended
    /// there and synced first, then this file is rewritten without them (temporary
    /// file, fsync, rename). Returns the number of rows moved.
    pub(crate) fn supersede(&mut self, pairs: &HashSet<Pair>) -> std::io::Result<usize> {
        let Some(keys) = self.key_cols else {
            return Ok(0);
        };
        if pairs.is_empty() {
            return Ok(0);
        }
        let (mut kept, mut moved) = (Vec::new(), Vec::new());
        let mut header = None;
        {
            let mut rdr = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(BufReader::new(File::open(&self.path)?));
            let mut rec = csv::ByteRecord::new();
            while rdr.read_byte_record(&mut rec).map_err(csv_io)? {
                if header.is_none() {
                    header = Some(rec.clone());
                    kept.push(rec.clone());
                    continue;
                }
                if keys.pair(&rec).is_some_and(|p| pairs.contains(&p)) {
                    moved.push(rec.clone());
                } else {
                    kept.push(rec.clone());
                }
            }
        }
        if moved.is_empty() {
            return Ok(0);
        }
        // First into the side file (with the header when it is new), so a crash
        // before the rewrite loses nothing.
        let side = superseded_path(&self.path);
        let side_is_new = std::fs::metadata(&side).map_or(true, |m| m.len() == 0);
        let mut to_side = Vec::new();
        if side_is_new && let Some(h) = &header {
            to_side.push(h.clone());
        }
        to_side.extend(moved.iter().cloned());
        let mut f = OpenOptions::new().create(true).append(true).open(&side)?;
        f.write_all(&encode_bytes(&to_side)?)?;
        f.sync_data()?;
        if side_is_new {
            sync_dir(&side);
        }
        write_atomic(&self.path, &encode_bytes(&kept)?)?;
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.len = self.file.metadata()?.len();
        Ok(moved.len())
    }
}

/// Where the rows a later attempt superseded go: `calls.csv` → `calls-superseded.csv`
/// in the same directory.
pub(crate) fn superseded_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{stem}-superseded.csv"))
}

fn encode_bytes(rows: &[csv::ByteRecord]) -> std::io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for r in rows {
        w.write_byte_record(r).map_err(csv_io)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// Encodes rows as CSV lines (the `csv` crate's quoting, `\n` after each).
pub(crate) fn encode(rows: impl IntoIterator<Item = Vec<String>>) -> std::io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for row in rows {
        w.write_record(&row).map_err(csv_io)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory,
/// fsynced, then renamed over `path`. A reader sees the old file or the new, never half.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    sync_dir(path);
    Ok(())
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Makes a rename durable (best effort: not every platform can fsync a directory).
fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
}

fn csv_io(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// Where a file's rows keep their [`Pair`].
#[derive(Debug, Clone, Copy)]
struct KeyCols {
    instance_id: usize,
    variant: usize,
    /// `None` in a file written before trials: every row is trial 1.
    trial: Option<usize>,
}

impl KeyCols {
    /// The pair of a row; `None` when a key cell is missing or its trial is not one.
    fn pair(&self, rec: &csv::ByteRecord) -> Option<Pair> {
        let text = |i: usize| Some(String::from_utf8_lossy(rec.get(i)?).into_owned());
        let trial = match self.trial {
            Some(t) => Trial::parse_cell(&text(t).unwrap_or_default())?,
            None => Trial::FIRST,
        };
        Some((text(self.instance_id)?, text(self.variant)?, trial))
    }
}

fn key_cols(header: &[String]) -> Option<KeyCols> {
    let pos = |name: &str| header.iter().position(|h| h == name);
    Some(KeyCols {
        instance_id: pos("instance_id")?,
        variant: pos("variant")?,
        trial: pos(crate::policy::trial::COLUMN),
    })
}

/// Reads the file back: where its last whole row ends, its header and its pairs.
///
/// A row is whole when it ends with a newline outside quotes. Only the last row can
/// be torn (rows are appended one batch at a time), so the file is cut after the last
/// whole row: a row without its final newline, or one cut inside a quoted field that
/// spans lines (an odd number of `"` in its bytes), is dropped.
fn scan(path: &Path) -> std::io::Result<Scan> {
    let file_len = std::fs::metadata(path)?.len();
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(BufReader::new(File::open(path)?));
    let mut rec = csv::ByteRecord::new();
    let mut header: Option<Vec<String>> = None;
    let mut keys = None;
    let mut pairs = HashSet::new();
    let mut good_len = 0;
    let mut last: Option<(u64, u64, Option<Pair>)> = None;
    loop {
        let start = rdr.position().byte();
        if !rdr.read_byte_record(&mut rec).map_err(csv_io)? {
            break;
        }
        let end = rdr.position().byte();
        if let Some((_, e, pair)) = last.take() {
            // A row followed by another ended with its newline: it is whole.
            good_len = e;
            pairs.extend(pair);
        }
        let pair = keys.and_then(|k: KeyCols| k.pair(&rec));
        if header.is_none() {
            let h: Vec<String> = rec
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            keys = key_cols(&h);
            header = Some(h);
        }
        last = Some((start, end, pair));
    }
    if let Some((start, end, pair)) = last {
        if last_row_is_whole(path, start, end)? {
            good_len = end;
            pairs.extend(pair);
        } else if good_len == 0 {
            // The header itself was cut off: the file starts over.
            header = None;
        }
    }
    Ok(Scan {
        good_len,
        file_len,
        header,
        pairs,
    })
}

/// True when the bytes `start..end` of `path` end with a newline and hold an even
/// number of quotes (so that newline is not inside a quoted field).
fn last_row_is_whole(path: &Path, start: u64, end: u64) -> std::io::Result<bool> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    f.take(end - start).read_to_end(&mut bytes)?;
    let quotes = bytes.iter().filter(|b| **b == b'"').count();
    Ok(bytes.last() == Some(&b'\n') && quotes % 2 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<String> {
        ["instance_id", "variant", "error"]
            .map(String::from)
            .to_vec()
    }

    fn row(id: &str, error: &str) -> Vec<u8> {
        encode([vec![id.to_string(), "text".to_string(), error.to_string()]]).unwrap()
    }

    fn pair(id: &str) -> Pair {
        (id.to_string(), "text".to_string(), Trial::FIRST)
    }

    #[test]
    fn torn_last_rows_are_cut_off_whole_rows_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let (mut f, pairs) = AppendCsv::open(&path, &header()).unwrap();
        assert!(pairs.is_empty());
        f.append_pair(&pair("a"), &row("a", "two\nlines, quoted"))
            .unwrap();
        f.append_pair(&pair("b"), &row("b", "")).unwrap();
        drop(f);
        let whole = std::fs::read(&path).unwrap();
        let full_c = row("c", "cut\ninside a quote");
        // Every cut inside the third row leaves exactly the first two rows.
        for cut in 1..full_c.len() {
            let mut bytes = whole.clone();
            bytes.extend_from_slice(&full_c[..cut]);
            std::fs::write(&path, &bytes).unwrap();
            let (_, pairs) = AppendCsv::open(&path, &header()).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), whole, "cut at {cut}");
            assert_eq!(pairs, HashSet::from([pair("a"), pair("b")]), "cut at {cut}");
        }
        // A cut header starts the file over.
        std::fs::write(&path, "instance_id,vari").unwrap();
        let (_, pairs) = AppendCsv::open(&path, &header()).unwrap();
        assert!(pairs.is_empty());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "instance_id,variant,error\n"
        );
    }

    #[test]
    fn replaceable_rows_are_replaced_once_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let (mut f, _) = AppendCsv::open(&path, &header()).unwrap();
        for id in ["a", "b", "a"] {
            f.append_pair(&pair(id), &row(id, "first, attempt"))
                .unwrap();
        }
        drop(f);
        let (mut f, pairs) = AppendCsv::open(&path, &header()).unwrap();
        assert_eq!(pairs.len(), 2);
        f.set_replaceable(HashSet::from([pair("a")]));
        f.append_pair(&pair("a"), &row("a", "retry")).unwrap();
        f.append_pair(&pair("a"), &row("a", "retry 2")).unwrap();
        f.append_pair(&pair("b"), &row("b", "second")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "instance_id,variant,error\nb,text,\"first, attempt\"\na,text,retry\na,text,retry 2\nb,text,second\n"
        );
        // The replaced rows are kept aside, with the header.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("x-superseded.csv")).unwrap(),
            "instance_id,variant,error\na,text,\"first, attempt\"\na,text,\"first, attempt\"\n"
        );
        // A second move appends below them; unsynced rows are in the file at once.
        f.append_pair_unsynced(&pair("c"), &row("c", "cut"))
            .unwrap();
        assert_eq!(
            f.supersede(&HashSet::from([pair("c"), pair("zz")]))
                .unwrap(),
            1
        );
        f.sync().unwrap();
        let side = std::fs::read_to_string(dir.path().join("x-superseded.csv")).unwrap();
        assert!(
            side.ends_with("a,text,\"first, attempt\"\nc,text,cut\n"),
            "{side}"
        );
        assert!(!std::fs::read_to_string(&path).unwrap().contains("cut"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_leaves_the_file_as_it_was() {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let mut f = AppendCsv {
            path: PathBuf::from("/dev/full"),
            file: OpenOptions::new().append(true).open("/dev/full").unwrap(),
            len: 0,
            key_cols: None,
            replaceable: HashSet::new(),
        };
        let e = f.append_pair(&pair("a"), &row("a", "")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull, "{e}");
        assert_eq!(f.len, 0);
    }

    #[test]
    fn atomic_write_replaces_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write_atomic(&path, b"{\"a\": 1}").unwrap();
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        assert!(!temp_path(&path).exists());
    }
}
