"""Small, dependency-free helpers shared by the rest of the package."""

from .dates import add_business_days, month_key, parse_date, parse_timestamp, utcnow
from .ids import new_id
from .retry import retry, retry_async
from .text import normalize_sku, slugify
from .validation import is_valid_email, validate_postal_code

__all__ = [
    "add_business_days",
    "is_valid_email",
    "month_key",
    "new_id",
    "normalize_sku",
    "parse_date",
    "parse_timestamp",
    "retry",
    "retry_async",
    "slugify",
    "utcnow",
    "validate_postal_code",
]
