//! [`RunGuard`]: what one agent knows about the whole run, shared by every `--jobs`
//! lane: the money spent (`--max-cost-usd`: no new pair once reached, pairs in flight
//! finish) and the fatal errors in a row (the same HTTP 400/401/403/404 answer
//! [`FATAL_STREAK`] times in a row stops the run, as the pre-flight would have).
//!
//! The pipeline asks [`RunGuard::may_start`] before each pair and
//! [`RunGuard::halted`] at the end of the run.

use std::sync::Mutex;

/// The same fatal answer this many times in a row, with no answer in between, stops
/// the run: once may be one bad conversation, three is the endpoint or the file.
pub const FATAL_STREAK: u32 = 3;

#[derive(Debug, Default)]
struct State {
    spent_usd: f64,
    /// The last fatal answer and how many times in a row it came.
    streak: Option<(String, u32)>,
    /// Why the run must stop (set once).
    halted: Option<String>,
}

/// The run-wide state of one agent (see the module doc).
#[derive(Debug, Default)]
pub struct RunGuard {
    max_cost_usd: Option<f64>,
    state: Mutex<State>,
}

impl RunGuard {
    /// A guard stopping new pairs once `max_cost_usd` is spent (when given).
    pub fn new(max_cost_usd: Option<f64>) -> RunGuard {
        RunGuard {
            max_cost_usd,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An answer came: the streak of fatal errors is broken.
    pub fn answered(&self) {
        self.lock().streak = None;
    }

    /// A request was refused with `signature` (status and message); `stop` is what
    /// the run says if this makes [`FATAL_STREAK`] in a row.
    pub fn refused(&self, signature: &str, stop: impl FnOnce() -> String) {
        let mut s = self.lock();
        let n = match &s.streak {
            Some((last, n)) if last == signature => n + 1,
            _ => 1,
        };
        s.streak = Some((signature.to_string(), n));
        if n >= FATAL_STREAK && s.halted.is_none() {
            s.halted = Some(format!("{} ({n} times in a row; the run stopped)", stop()));
        }
    }

    /// Adds a finished pair's cost.
    pub fn spend(&self, usd: f64) {
        if usd.is_finite() && usd > 0.0 {
            self.lock().spent_usd += usd;
        }
    }

    /// US dollars spent so far.
    pub fn spent(&self) -> f64 {
        self.lock().spent_usd
    }

    /// The cap, when `--max-cost-usd` gave one.
    pub fn max_cost(&self) -> Option<f64> {
        self.max_cost_usd
    }

    /// True once the cap is reached.
    pub fn cost_cap_reached(&self) -> bool {
        self.max_cost_usd.is_some_and(|cap| self.spent() >= cap)
    }

    /// Why the run must stop after a streak of fatal errors.
    pub fn halted(&self) -> Option<String> {
        self.lock().halted.clone()
    }

    /// Whether a new pair may start: not halted, cap not reached.
    pub fn may_start(&self) -> bool {
        self.halted().is_none() && !self.cost_cap_reached()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_refusal_three_times_in_a_row_halts() {
        let g = RunGuard::new(None);
        g.refused("HTTP 401: bad key", || "stop".into());
        g.refused("HTTP 401: bad key", || "stop".into());
        g.answered();
        g.refused("HTTP 401: bad key", || "stop".into());
        g.refused("HTTP 400: other", || "stop".into());
        g.refused("HTTP 401: bad key", || "stop".into());
        assert!(
            g.may_start(),
            "an answer or another error breaks the streak"
        );
        g.refused("HTTP 401: bad key", || "stop".into());
        g.refused("HTTP 401: bad key", || "fix api_key_env".into());
        assert!(!g.may_start());
        assert!(g.halted().unwrap().starts_with("fix api_key_env (3 times"));
    }

    #[test]
    fn the_cost_cap_stops_new_pairs() {
        let g = RunGuard::new(Some(0.01));
        g.spend(0.004);
        assert!(g.may_start());
        g.spend(0.006);
        assert!(g.cost_cap_reached() && !g.may_start());
        assert!((g.spent() - 0.01).abs() < 1e-12);
        assert!(RunGuard::new(None).may_start());
    }
}
