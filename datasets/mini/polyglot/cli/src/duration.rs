//! Human durations on the command line: `90s`, `5m`, `1h30m`, `250ms`.

use std::fmt;
use std::time::Duration;

/// Why a duration did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    Empty,
    MissingUnit(String),
    UnknownUnit(String),
    Overflow,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Empty => write!(f, "empty duration"),
            DurationError::MissingUnit(s) => write!(f, "missing unit after {s} (use ms, s, m or h)"),
            DurationError::UnknownUnit(u) => write!(f, "unknown unit {u:?} (use ms, s, m or h)"),
            DurationError::Overflow => write!(f, "duration too large"),
        }
    }
}

impl std::error::Error for DurationError {}

fn unit_millis(unit: &str) -> Result<u64, DurationError> {
    match unit {
        "ms" => Ok(1),
        "s" => Ok(1_000),
        "m" => Ok(60_000),
        "h" => Ok(3_600_000),
        other => Err(DurationError::UnknownUnit(other.to_string())),
    }
}

/// Parses a sequence of `<number><unit>` parts and adds them up.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return Err(DurationError::MissingUnit(text.to_string()));
    }
    let unit = &text[digits.len()..];
    if unit.is_empty() {
        return Err(DurationError::MissingUnit(digits));
    }
    let value: u64 = digits.parse().map_err(|_| DurationError::Overflow)?;
    let millis = value
        .checked_mul(unit_millis(unit)?)
        .ok_or(DurationError::Overflow)?;
    Ok(Duration::from_millis(millis))
}

/// Formats a duration the way [`parse_duration`] reads it back.
pub fn format_duration(d: Duration) -> String {
    let mut ms = d.as_millis() as u64;
    let mut out = String::new();
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)] {
        if ms >= size {
            out.push_str(&format!("{}{unit}", ms / size));
            ms %= size;
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}
