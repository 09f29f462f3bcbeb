from datetime import date

import pytest

from shopkeep.errors import RetryExhausted, ValidationError
from shopkeep.utils.dates import add_business_days, month_bounds, parse_date, parse_timestamp
from shopkeep.utils.ids import id_timestamp, is_valid_id, new_id
from shopkeep.utils.retry import backoff_delays, retry
from shopkeep.utils.text import normalize_sku, slugify, truncate
from shopkeep.utils.validation import is_valid_email, validate_postal_code


def test_parse_date_formats():
    assert parse_date("2024-03-01") == date(2024, 3, 1)
    assert parse_date("01.03.2024") == date(2024, 3, 1)
    assert parse_date("2024-03-01T23:30:00Z") == date(2024, 3, 1)


def test_parse_timestamp_is_utc():
    assert parse_timestamp("2024-03-01T10:00:00+02:00").hour == 8


def test_business_days_within_week():
    assert add_business_days(date(2024, 3, 4), 3) == date(2024, 3, 7)


def test_month_bounds():
    assert month_bounds(2024, 2) == (date(2024, 2, 1), date(2024, 2, 29))


def test_ids():
    value = new_id("ord")
    assert is_valid_id(value, "ord")
    assert id_timestamp(value) > 1.6e9


def test_slugify():
    assert slugify("Cr\u00e8me Br\u00fbl\u00e9e (Large)") == "creme-brulee-large"


def test_normalize_sku():
    assert normalize_sku("  tsh blk  m ") == "TSH-BLK-M"


def test_truncate():
    assert truncate("a quick brown fox", 12) == "a quick..."


def test_email():
    assert is_valid_email("jane.doe+shop@example.co.uk")
    assert not is_valid_email("jane..doe@example.com")


def test_postal_codes():
    assert validate_postal_code(" 94103 ", "US") == "94103"
    assert validate_postal_code("SW1A 1AA", "GB") == "SW1A 1AA"
    with pytest.raises(ValidationError):
        validate_postal_code("ABCDE", "DE")


def test_backoff_is_capped():
    delays = backoff_delays(base=1, factor=3, max_delay=5)
    assert [next(delays) for _ in range(4)] == [1, 3, 5, 5]


def test_retry_gives_up():
    sleeps = []

    @retry(2, sleep=sleeps.append, retry_on=(KeyError,))
    def always_fails():
        raise KeyError("nope")

    with pytest.raises(RetryExhausted):
        always_fails()
    assert sleeps
