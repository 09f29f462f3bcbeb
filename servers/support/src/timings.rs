//! Where an indexing call's time went: [`InitTimings`], the parts of an `init`
//! (fingerprint, parse, graph, text index, vectors, write) that a server's indexing
//! tool reports in its result's `_meta` as `timings_ms`, and [`TimingsRecorder`],
//! which adds to them from any thread.
//!
//! The harness reads `timings_ms` from the result of a variant's indexing calls and
//! writes the parts into `instances.csv` (`init_fingerprint_ms`, …), so the next
//! bottleneck of a run is visible without a profiler. Parts a server does concurrently
//! each count their own wall time, so the parts can sum to more than the call took;
//! the call's remainder (argument checks, answering) is in no part.
//!
//! ```
//! use std::time::Duration;
//! use navbench_server_support::timings::{Part, TimingsRecorder};
//! let t = TimingsRecorder::default();
//! let n = t.time(Part::Parse, || 2 + 2);
//! t.add(Part::Write, Duration::from_millis(3));
//! assert_eq!(n, 4);
//! assert!(t.snapshot().write_ms >= 3.0);
//! ```

use std::sync::Mutex;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One part of an indexing call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Telling which tree this is: walking it, hashing files, finding cached entries.
    Fingerprint,
    /// Reading files into definitions, chunks or documents (parsing, tokenizing), or
    /// loading what an earlier build read from them.
    Parse,
    /// Assembling the graph from the files' definitions (or loading it).
    Graph,
    /// The text indexes: BM25 (tantivy or in memory), fuzzy name index.
    Text,
    /// Embedding vectors (static or a sentence model) and their index.
    Vectors,
    /// Writing caches to disk.
    Write,
}

/// Milliseconds per [`Part`] of one indexing call (`timings_ms` in its result).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InitTimings {
    /// Walking the tree, hashing files, finding cached entries.
    pub fingerprint_ms: f64,
    /// Parsing and tokenizing files, or loading what an earlier build read from them.
    pub parse_ms: f64,
    /// Assembling (or loading) the code graph.
    pub graph_ms: f64,
    /// Building (or loading) the text indexes.
    pub text_ms: f64,
    /// Computing (or loading) embedding vectors and their index.
    pub vectors_ms: f64,
    /// Writing caches.
    pub write_ms: f64,
}

impl InitTimings {
    fn slot(&mut self, part: Part) -> &mut f64 {
        match part {
            Part::Fingerprint => &mut self.fingerprint_ms,
            Part::Parse => &mut self.parse_ms,
            Part::Graph => &mut self.graph_ms,
            Part::Text => &mut self.text_ms,
            Part::Vectors => &mut self.vectors_ms,
            Part::Write => &mut self.write_ms,
        }
    }

    /// Each part rounded to 0.1 ms (what a result shows).
    pub fn rounded(mut self) -> InitTimings {
        for part in [
            Part::Fingerprint,
            Part::Parse,
            Part::Graph,
            Part::Text,
            Part::Vectors,
            Part::Write,
        ] {
            let v = self.slot(part);
            *v = (*v * 10.0).round() / 10.0;
        }
        self
    }
}

/// Adds wall time to the parts of an [`InitTimings`] from any thread.
#[derive(Debug, Default)]
pub struct TimingsRecorder(Mutex<InitTimings>);

impl TimingsRecorder {
    /// Adds `elapsed` to `part`.
    pub fn add(&self, part: Part, elapsed: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t.slot(part) += elapsed.as_secs_f64() * 1000.0;
    }

    /// Runs `f`, adding its wall time to `part`.
    pub fn time<T>(&self, part: Part, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = f();
        self.add(part, started.elapsed());
        out
    }

    /// The parts so far, rounded to 0.1 ms.
    pub fn snapshot(&self) -> InitTimings {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).rounded()
    }
}
