//! The columns an agent's answer adds to `instances.csv` ([`COLUMNS`]), for the
//! built-in agent and `--agent-cmd` alike: how many lines of the answer named a
//! location (`answer_lines`) and how many looked like one but could not be read
//! (`answer_dropped`; see [`crate::policy::agent::answer`]). A scripted row, and a row
//! whose agent never answered (an error, `max_turns`), leaves them empty.

/// The answer columns, in file order.
pub const COLUMNS: [&str; 2] = ["answer_lines", "answer_dropped"];

/// What reading one answer found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerCounts {
    /// Lines that named a location.
    pub lines: usize,
    /// Lines that looked like a location but could not be read.
    pub dropped: usize,
}

impl AnswerCounts {
    /// The counts of an answer read by [`crate::policy::agent::answer::read`].
    pub fn of(a: &crate::policy::agent::answer::Answer) -> AnswerCounts {
        AnswerCounts {
            lines: a.lines,
            dropped: a.dropped,
        }
    }
}

/// The cells of `counts` (empty without an answer).
pub fn cells(counts: Option<&AnswerCounts>) -> Vec<String> {
    match counts {
        Some(c) => vec![c.lines.to_string(), c.dropped.to_string()],
        None => vec![String::new(); COLUMNS.len()],
    }
}

/// The counts read back from a row's cells by column name; `None` for an empty cell
/// and for files written before these columns existed.
pub fn read(get: impl Fn(&str) -> String) -> Option<AnswerCounts> {
    Some(AnswerCounts {
        lines: get("answer_lines").parse().ok()?,
        dropped: get("answer_dropped").parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_back_and_empty_cells_are_none() {
        let c = AnswerCounts {
            lines: 4,
            dropped: 1,
        };
        let cells = cells(Some(&c));
        let get = |name: &str| {
            COLUMNS
                .iter()
                .position(|x| *x == name)
                .map(|i| cells[i].clone())
                .unwrap_or_default()
        };
        assert_eq!(read(get), Some(c));
        assert_eq!(read(|_| String::new()), None);
        assert!(super::cells(None).iter().all(String::is_empty));
    }
}
