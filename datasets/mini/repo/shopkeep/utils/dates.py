"""Date and time helpers.

All timestamps handled by shopkeep are timezone-aware UTC datetimes; plain
dates are used for calendar concepts such as coupon validity and delivery
estimates.
"""

from datetime import date, datetime, timedelta, timezone

DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%d %b %Y", "%b %d, %Y")
SATURDAY = 5


def utcnow():
    """Current time as an aware UTC datetime."""
    return datetime.now(timezone.utc)


def parse_date(value):
    """Parse a calendar date from a ``date``, ``datetime`` or string.

    Strings may use any of :data:`DATE_FORMATS`; ISO timestamps are accepted
    too and truncated to their date part.
    """
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        raise TypeError(f"cannot parse a date from {type(value).__name__}")
    text = value.strip()
    if "T" in text:
        return parse_timestamp(text).date()
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unrecognised date {value!r}")


def parse_timestamp(value):
    """Parse an ISO 8601 timestamp; naive values are assumed to be UTC."""
    if isinstance(value, datetime):
        parsed = value
    else:
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def format_timestamp(moment):
    """Render an aware datetime as ``2024-03-01T12:00:00Z``."""
    return parse_timestamp(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_business_day(day, holidays=()):
    return day.weekday() < SATURDAY and day not in holidays


def add_business_days(start, days, holidays=()):
    """Move ``days`` business days away from ``start`` (negative goes back).

    Weekends and the given ``holidays`` are skipped; ``start`` itself is
    never counted.
    """
    step = 1 if days >= 0 else -1
    remaining = abs(days)
    current = start
    holidays = frozenset(holidays)
    while remaining:
        current += timedelta(days=step)
        if current.weekday() <= SATURDAY and current not in holidays:
            remaining -= 1
    return current


def business_days_between(start, end, holidays=()):
    """Number of business days in the half-open interval ``(start, end]``."""
    if end < start:
        return -business_days_between(end, start, holidays)
    count = 0
    current = start
    while current < end:
        current += timedelta(days=1)
        if is_business_day(current, holidays):
            count += 1
    return count


def month_key(moment):
    """Bucket key such as ``"2024-03"`` for a date or datetime."""
    return f"{moment.year:04d}-{moment.month:02d}"


def month_bounds(year, month):
    """First and last calendar day of a month."""
    first = date(year, month, 1)
    if month == 12:
        following = date(year + 1, 1, 1)
    else:
        following = date(year, month + 1, 1)
    return first, following - timedelta(days=1)


def iter_months(start, end):
    """Yield ``(year, month)`` pairs from ``start`` to ``end`` inclusive."""
    year, month = start.year, start.month
    while (year, month) <= (end.year, end.month):
        yield year, month
        month += 1
        if month > 12:
            year, month = year + 1, 1
