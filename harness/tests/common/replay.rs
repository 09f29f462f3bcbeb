//! What "a replay reproduces the run" compares (docs/answers-and-replay.md): every
//! column of `instances.csv` and `calls.csv` except the timing columns — the columns
//! whose name ends in `_ms` (the tools', the index's, the phases', the wall clock),
//! but not `llm_ms`, which a replay takes from the cache as recorded (see
//! [`is_timing`]) — with rows in (instance, variant, trial, step) order, since
//! `--jobs` lanes finish in any order. A file written before the `trial` column reads
//! as trial 1, as navbench reads it.

use std::collections::BTreeMap;
use std::path::Path;

use super::repo::read_csv;

/// True for a column a replay need not reproduce: the timing columns. Everything
/// else is compared, `response_bytes` included: the servers keep wall-clock values
/// in their results' `_meta`, which the harness does not count.
pub fn is_timing(column: &str) -> bool {
    column.ends_with("_ms") && column != "llm_ms"
}

/// The compared cells of a run CSV, one map per row, rows sorted.
pub fn compared(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut rows: Vec<BTreeMap<String, String>> = read_csv(path)
        .into_iter()
        .map(|r| {
            let mut r: BTreeMap<String, String> =
                r.into_iter().filter(|(c, _)| !is_timing(c)).collect();
            r.entry("trial".to_string())
                .or_insert_with(|| "1".to_string());
            r
        })
        .collect();
    let key = |r: &BTreeMap<String, String>| {
        (
            r.get("instance_id").cloned().unwrap_or_default(),
            r.get("variant").cloned().unwrap_or_default(),
            r.get("trial")
                .and_then(|s| s.parse::<u32>().ok())
                .unwrap_or(1),
            r.get("step")
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(0),
        )
    };
    rows.sort_by_key(key);
    rows
}

/// Asserts that run directory `b` reproduces `a` (see the module doc), naming the
/// first cell that differs.
pub fn assert_same_run(a: &Path, b: &Path) {
    for file in ["instances.csv", "calls.csv"] {
        let (x, y) = (compared(&a.join(file)), compared(&b.join(file)));
        assert_eq!(x.len(), y.len(), "{file}: {} vs {} rows", x.len(), y.len());
        for (i, (rx, ry)) in x.iter().zip(&y).enumerate() {
            for (col, vx) in rx {
                let vy = ry.get(col).map(String::as_str).unwrap_or("<missing>");
                assert_eq!(vx, vy, "{file} row {i} column {col} differs");
            }
            assert_eq!(rx.len(), ry.len(), "{file} row {i}: columns differ");
        }
    }
}

/// Copies the directory `from` to `to`, recursively (a recorded `--llm-cache` moved to
/// another place, as on another machine).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
