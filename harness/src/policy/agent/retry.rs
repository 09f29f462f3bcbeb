//! When to retry a Chat Completions request, and how long to wait first.
//!
//! Retried: HTTP 408, 409, 425, 429 and 5xx, and a request that was not answered at
//! all. The wait is the server's when it says one (`retry-after-ms`, `Retry-After` in
//! seconds or as an HTTP date, OpenAI's `x-ratelimit-reset-requests` /
//! `x-ratelimit-reset-tokens` durations such as `"1s"`, `"6m0s"`, `"20ms"`), else
//! exponential backoff with full jitter (a uniform draw between 0 and
//! `min(MAX_BACKOFF, FIRST_BACKOFF · 2^(attempt-1))`), so lanes that failed together
//! do not retry together. A request gives up once the next wait would take its
//! waits past `max_retry_wait` (default ten minutes) or it has had `max_retries`.
//!
//! Everything here is pure (the clock and the random draw are arguments), so the
//! tests need no sleeping.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// The ceiling of the first backoff; doubled per attempt up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The largest backoff ceiling, and the longest wait a server's hint may ask for.
pub const MAX_BACKOFF: Duration = Duration::from_secs(120);

/// True for the statuses a retry may cure: timeout, conflict, too early, rate limit,
/// and server errors.
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || status >= 500
}

/// The wait a response's headers ask for, read at `now`: `retry-after-ms`, then
/// `Retry-After` (seconds or an HTTP date), then the later of OpenAI's
/// `x-ratelimit-reset-requests` / `-tokens`. `None` when none is given or readable.
pub fn server_wait(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    if let Some(v) = get("retry-after") {
        if let Ok(secs) = v.parse::<f64>() {
            if secs.is_finite() && secs >= 0.0 {
                return Some(Duration::from_secs_f64(secs));
            }
        } else if let Ok(at) = chrono::DateTime::parse_from_rfc2822(v) {
            let at = SystemTime::from(at);
            return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .into_iter()
        .filter_map(|h| get(h).and_then(parse_go_duration))
        .max()
}

/// A duration as OpenAI's rate-limit headers write it (Go's format): `"1s"`,
/// `"6m0s"`, `"20ms"`, `"1h2m3.5s"`, `"0.5s"`.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    (total.is_finite() && total >= 0.0).then(|| Duration::from_secs_f64(total))
}

/// The backoff before attempt `attempt + 1` without a server hint: full jitter, with
/// `draw` uniform in [0, 1).
pub fn backoff(attempt: u32, draw: f64) -> Duration {
    let ceiling = FIRST_BACKOFF
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(MAX_BACKOFF);
    ceiling.mul_f64(draw.clamp(0.0, 1.0))
}

/// The retries of one request: how many there were, how long they waited.
#[derive(Debug, Clone)]
pub struct Budget {
    pub max_retries: u32,
    pub max_wait: Duration,
    pub waited: Duration,
}

impl Budget {
    pub fn new(max_retries: u32, max_wait: Duration) -> Budget {
        Budget {
            max_retries,
            max_wait,
            waited: Duration::ZERO,
        }
    }

    /// The wait before retrying after failed attempt `attempt` (1-based), or `None`
    /// when the request must give up: retries spent, or the wait would take the total
    /// past `max_wait`. A server's hint is honoured (capped at [`MAX_BACKOFF`]).
    pub fn next(&mut self, attempt: u32, hint: Option<Duration>, draw: f64) -> Option<Duration> {
        if attempt > self.max_retries {
            return None;
        }
        let wait = hint.map_or_else(|| backoff(attempt, draw), |h| h.min(MAX_BACKOFF));
        if self.waited + wait > self.max_wait {
            return None;
        }
        self.waited += wait;
        Some(wait)
    }
}

/// A uniform draw in [0, 1) for the jitter: no `rand` dependency, just a hash of a
/// counter and the clock (the jitter need not be reproducible, only spread).
pub fn draw() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let h = xxhash_rust::xxh3::xxh3_64(&[n.to_le_bytes(), t.to_le_bytes()].concat());
    (h >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn server_waits_are_read_in_every_documented_form() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        let w = |p: &[(&str, &str)]| server_wait(&headers(p), now);
        assert_eq!(
            w(&[("retry-after-ms", "250")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(w(&[("Retry-After", "3")]), Some(Duration::from_secs(3)));
        // 2015-10-21 07:28:00 GMT is 10 s after `now`.
        assert_eq!(
            w(&[("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")]),
            Some(Duration::from_secs(10))
        );
        // A date in the past: retry at once.
        assert_eq!(
            w(&[("Retry-After", "Wed, 21 Oct 2015 07:00:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(
            w(&[
                ("x-ratelimit-reset-requests", "1s"),
                ("x-ratelimit-reset-tokens", "6m0s")
            ]),
            Some(Duration::from_secs(360))
        );
        // retry-after-ms wins over Retry-After.
        assert_eq!(
            w(&[("retry-after-ms", "20"), ("Retry-After", "9")]),
            Some(Duration::from_millis(20))
        );
        assert_eq!(w(&[("Retry-After", "soon")]), None);
        assert_eq!(w(&[]), None);
    }

    #[test]
    fn go_durations_parse_as_openai_writes_them() {
        assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(
            parse_go_duration("1h2m3.5s"),
            Some(Duration::from_secs_f64(3723.5))
        );
        assert_eq!(parse_go_duration("0.5s"), Some(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("5 parsecs"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn backoff_is_full_jitter_under_a_doubling_ceiling() {
        assert_eq!(backoff(1, 0.0), Duration::ZERO);
        assert_eq!(backoff(1, 0.5), Duration::from_millis(500));
        assert_eq!(backoff(3, 0.5), Duration::from_secs(2));
        assert_eq!(backoff(40, 1.0), MAX_BACKOFF);
        let d = draw();
        assert!((0.0..1.0).contains(&d));
    }

    #[test]
    fn a_request_gives_up_at_the_total_wait_or_the_retry_count() {
        let mut b = Budget::new(10, Duration::from_secs(600));
        // Server hints are honoured, capped at MAX_BACKOFF.
        assert_eq!(
            b.next(1, Some(Duration::from_secs(30)), 0.0),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            b.next(2, Some(Duration::from_secs(900)), 0.0),
            Some(MAX_BACKOFF)
        );
        let mut n = 2;
        while b.next(n + 1, Some(MAX_BACKOFF), 0.0).is_some() {
            n += 1;
        }
        assert!(b.waited <= Duration::from_secs(600), "{:?}", b.waited);
        assert_eq!(
            n, 5,
            "30 s + 4 × 120 s fit in 10 minutes, a fifth 120 s does not"
        );
        let mut few = Budget::new(2, Duration::from_secs(600));
        assert!(few.next(1, None, 0.3).is_some());
        assert!(few.next(2, None, 0.3).is_some());
        assert!(few.next(3, None, 0.3).is_none());
    }

    #[test]
    fn statuses_a_retry_may_cure() {
        for s in [408, 409, 425, 429, 500, 502, 503, 529] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!retryable_status(s), "{s}");
        }
    }
}
