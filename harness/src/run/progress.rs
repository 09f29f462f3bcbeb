//! What `navbench run` shows while it works.
//!
//! On a terminal, a progress bar: pairs done of the total, and what is running now
//! (including what a server reports while it indexes). When stderr is not a terminal
//! (a CI log, `2> run.log`, `nohup`), a bar would draw nothing, and a run that spends
//! an hour embedding a large tree would be silent; there [`RunProgress`] writes plain
//! lines instead: one per finished (instance, variant) pair, and a server's progress at
//! most once per [`PLAIN_EVERY`] per pair.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a server's progress is repeated as a plain line, per pair.
pub const PLAIN_EVERY: Duration = Duration::from_secs(30);

/// The run's progress display; clones share it.
#[derive(Clone)]
pub struct RunProgress {
    inner: Arc<Inner>,
}

struct Inner {
    bar: ProgressBar,
    /// Plain lines instead of a bar.
    plain: bool,
    total: u64,
    done: AtomicU64,
    /// When each pair's server progress was last written as a plain line.
    last_said: Mutex<HashMap<String, Instant>>,
}

impl RunProgress {
    /// A display for `total` (instance, variant) pairs: a bar on a terminal, plain lines
    /// otherwise.
    pub fn new(total: u64) -> RunProgress {
        let plain = !std::io::stderr().is_terminal();
        let bar = if plain {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(total)
        };
        RunProgress::with(bar, plain, total)
    }

    /// A display writing plain lines whatever stderr is.
    #[cfg(test)]
    fn plain(total: u64) -> RunProgress {
        RunProgress::with(ProgressBar::hidden(), true, total)
    }

    fn with(bar: ProgressBar, plain: bool, total: u64) -> RunProgress {
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        RunProgress {
            inner: Arc::new(Inner {
                bar,
                plain,
                total,
                done: AtomicU64::new(0),
                last_said: Mutex::default(),
            }),
        }
    }

    /// What runs now (the bar's message).
    pub fn working(&self, what: &str) {
        self.inner.bar.set_message(what.to_string());
    }

    /// A server's progress line for the pair `label`: the bar's message, or a plain line
    /// when the last one for this pair is at least [`PLAIN_EVERY`] old.
    pub fn server_said(&self, label: &str, line: &str) {
        let i = &self.inner;
        i.bar.set_message(format!("{label}: {line}"));
        if i.plain && self.due(label, Instant::now()) {
            eprintln!("navbench: {label}: {line}");
        }
    }

    /// Whether a plain progress line for `label` is due at `now` (and if so, notes it).
    fn due(&self, label: &str, now: Instant) -> bool {
        let mut last = self
            .inner
            .last_said
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match last.get(label) {
            Some(t) if now.duration_since(*t) < PLAIN_EVERY => false,
            _ => {
                last.insert(label.to_string(), now);
                true
            }
        }
    }

    /// Pairs an earlier run with the same output already finished.
    pub fn already_done(&self, n: u64) {
        self.advance(n);
    }

    /// `n` pairs finished; `outcome` says how (written as a plain line, with the count).
    pub fn finished(&self, n: u64, label: &str, outcome: &str) {
        let done = self.advance(n);
        if self.inner.plain && n > 0 {
            eprintln!("navbench: [{done}/{}] {label}: {outcome}", self.inner.total);
        }
        self.inner
            .last_said
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(label);
    }

    fn advance(&self, n: u64) -> u64 {
        self.inner.bar.inc(n);
        self.inner.done.fetch_add(n, Ordering::Relaxed) + n
    }

    /// Writes a line without tearing the bar.
    pub fn say(&self, line: &str) {
        self.inner.bar.suspend(|| eprintln!("{line}"));
    }

    /// Removes the bar at the end of the run.
    pub fn finish(&self) {
        self.inner.bar.finish_and_clear();
    }

    /// Pairs counted as done so far.
    #[cfg(test)]
    fn done(&self) -> u64 {
        self.inner.done.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_progress_repeats_a_server_line_at_most_once_per_period() {
        let p = RunProgress::plain(3);
        let t0 = Instant::now();
        assert!(p.due("a × retrieval", t0));
        assert!(!p.due("a × retrieval", t0 + PLAIN_EVERY / 2));
        // Another pair has its own clock.
        assert!(p.due("b × retrieval", t0 + PLAIN_EVERY / 2));
        assert!(p.due("a × retrieval", t0 + PLAIN_EVERY));
    }

    #[test]
    fn finishing_counts_pairs_and_resets_the_pairs_clock() {
        let p = RunProgress::plain(5);
        p.already_done(2);
        let t0 = Instant::now();
        assert!(p.due("a × text", t0));
        p.finished(1, "a × text", "ok");
        assert_eq!(p.done(), 3);
        // A pair run again (another variant, same label) starts with a fresh clock.
        assert!(p.due("a × text", t0));
        p.finished(2, "b", "error");
        assert_eq!(p.done(), 5);
    }
}
