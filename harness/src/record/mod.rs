//! Stage 6, the record: a run directory written as the run goes and read back.
//!
//! - [`output`]: `calls.csv`, `instances.csv`, `summary.csv` and `run.json`, appended
//!   row by row (fsynced, torn rows repaired, one run per directory), and resume.
//! - [`run_dir`]: a finished run directory read back, streamed, only the columns used.
//! - [`resume`]: a resumed run's player checked against `run.json`'s.

pub mod output;
pub mod resume;
pub mod run_dir;
