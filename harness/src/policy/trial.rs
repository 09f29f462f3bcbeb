//! [`Trial`]: which of `navbench run --repeats K` plays of one instance × variant a
//! row, a transcript or a model request belongs to (1..=K).
//!
//! Trial 1 is what a run without `--repeats` plays, and it keeps every name a run
//! had before trials existed: its transcript and `agent-cmd/` directory are
//! `<instance>__<variant>`, its `--llm-cache` keys are the request's hash alone, and a
//! CSV without the `trial` column reads as trial 1. Later trials add `__trial<N>` to
//! those names ([`Trial::name_suffix`]) and salt their cache keys, so a run recorded
//! with one K resumes with another without renaming anything.

use std::fmt;

/// The column of `instances.csv` and `calls.csv` that holds a row's trial.
pub const COLUMN: &str = "trial";

/// One play of an instance × variant pair, counted from 1 (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Trial(u32);

impl Default for Trial {
    fn default() -> Self {
        Trial::FIRST
    }
}

impl Trial {
    /// The first play: what a run without `--repeats` plays.
    pub const FIRST: Trial = Trial(1);

    /// Trial `n`; `None` for 0 (trials count from 1).
    pub fn new(n: u32) -> Option<Trial> {
        (n >= 1).then_some(Trial(n))
    }

    /// The trials `1..=k`.
    pub fn up_to(k: u32) -> impl Iterator<Item = Trial> {
        (1..=k).map(Trial)
    }

    /// The trial's number (1-based).
    pub fn get(self) -> u32 {
        self.0
    }

    /// True for trial 1, which keeps the names and cache keys of a run without trials.
    pub fn is_first(self) -> bool {
        self.0 == 1
    }

    /// A CSV cell read back: empty (a file written before the `trial` column) is trial
    /// 1; anything else that is not a positive integer is `None`.
    pub fn parse_cell(cell: &str) -> Option<Trial> {
        let cell = cell.trim();
        if cell.is_empty() {
            return Some(Trial::FIRST);
        }
        cell.parse().ok().and_then(Trial::new)
    }

    /// What file and directory names of this trial add after `<instance>__<variant>`:
    /// nothing for trial 1, `__trial<N>` after it.
    pub fn name_suffix(self) -> String {
        if self.is_first() {
            String::new()
        } else {
            format!("__trial{}", self.0)
        }
    }
}

impl fmt::Display for Trial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_count_from_one_and_old_cells_read_as_the_first() {
        assert_eq!(Trial::new(0), None);
        assert_eq!(Trial::default(), Trial::FIRST);
        assert_eq!(Trial::parse_cell(""), Some(Trial::FIRST));
        assert_eq!(Trial::parse_cell(" 3 "), Trial::new(3));
        assert_eq!(Trial::parse_cell("0"), None);
        assert_eq!(Trial::parse_cell("x"), None);
        let all: Vec<u32> = Trial::up_to(3).map(Trial::get).collect();
        assert_eq!(all, [1, 2, 3]);
        assert_eq!(Trial::FIRST.name_suffix(), "");
        assert_eq!(Trial::new(2).unwrap().name_suffix(), "__trial2");
    }
}
