//! How fairly each variant's answers were read ([`AnswerReading`]): over the rows whose
//! agent (built-in or `--agent-cmd`) answered, how many lines named a location and how
//! many looked like one but could not be read (`instances.csv`'s `answer_lines` and
//! `answer_dropped`, from [`crate::policy::agent::answer`]). A drop rate that differs
//! between variants means the reader, not the tool, moved the scores; the report shows
//! it beside the agent's costs, and `report.csv` carries the counts.

use std::fmt::Write as _;

use crate::record::output::STATUS_ANSWER_UNPARSED;
use crate::record::run_dir::ResultRow;

/// One variant's answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerReading {
    /// Rows with an answer read.
    pub answers: usize,
    /// Lines that named a location, over those rows.
    pub lines: usize,
    /// Lines that looked like a location but could not be read.
    pub dropped: usize,
    /// Answers with at least one dropped line.
    pub with_drop: usize,
    /// `answer_unparsed` rows (an answer that named no location).
    pub unparsed: usize,
}

impl AnswerReading {
    /// The counts of `rows` (one variant's); `None` when no row has an answer read
    /// (scripted policies, runs written before these columns).
    pub fn of(rows: &[&ResultRow]) -> Option<AnswerReading> {
        let read: Vec<_> = rows.iter().filter_map(|r| r.answer).collect();
        if read.is_empty() {
            return None;
        }
        Some(AnswerReading {
            answers: read.len(),
            lines: read.iter().map(|a| a.lines).sum(),
            dropped: read.iter().map(|a| a.dropped).sum(),
            with_drop: read.iter().filter(|a| a.dropped > 0).count(),
            unparsed: rows
                .iter()
                .filter(|r| r.status == STATUS_ANSWER_UNPARSED)
                .count(),
        })
    }

    /// `(name, count)` for `report.csv`'s variant rows (`n` is [`Self::answers`]).
    pub fn counts(&self) -> [(&'static str, usize); 4] {
        [
            ("n_answer_lines", self.lines),
            ("n_answer_dropped", self.dropped),
            ("n_answers_with_drop", self.with_drop),
            ("n_answer_unparsed", self.unparsed),
        ]
    }
}

/// The "Answers read" section of `report.md`: one row per variant with answers.
pub fn section(out: &mut String, variants: &[(&str, AnswerReading)]) {
    if variants.is_empty() {
        return;
    }
    out.push_str("## Answers read per variant\n\n");
    out.push_str(
        "Lines of the agents' final answers that named a location, and lines that looked \
         like one but could not be read (a path leaving the tree, a line range that is \
         not one, a bare name the tree defines nowhere or in several files; the \
         transcripts list them). Drops that differ between variants move scores without \
         the tools' doing.\n\n",
    );
    let _ = writeln!(
        out,
        "| variant | answers | location lines | dropped lines | answers with a drop | `answer_unparsed` |\n|---|---:|---:|---:|---:|---:|"
    );
    for (v, a) in variants {
        let _ = writeln!(
            out,
            "| **{v}** | {} | {} | {} | {} | {} |",
            a.answers, a.lines, a.dropped, a.with_drop, a.unparsed
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::output::answer_columns::AnswerCounts;

    fn row(status: &str, answer: Option<(usize, usize)>) -> ResultRow {
        ResultRow {
            status: status.into(),
            answer: answer.map(|(lines, dropped)| AnswerCounts { lines, dropped }),
            ..ResultRow::default()
        }
    }

    #[test]
    fn counts_add_up_and_scripted_rows_give_none() {
        let rows = [
            row("ok", Some((3, 1))),
            row("ok", Some((2, 0))),
            row(STATUS_ANSWER_UNPARSED, Some((0, 2))),
            row("error", None),
        ];
        let refs: Vec<&ResultRow> = rows.iter().collect();
        let a = AnswerReading::of(&refs).unwrap();
        assert_eq!(
            a,
            AnswerReading {
                answers: 3,
                lines: 5,
                dropped: 3,
                with_drop: 2,
                unparsed: 1
            }
        );
        assert_eq!(AnswerReading::of(&[&row("ok", None)]), None);
        let mut md = String::new();
        section(&mut md, &[("text", a)]);
        assert!(md.contains("| **text** | 3 | 5 | 3 | 2 | 1 |"), "{md}");
    }
}
