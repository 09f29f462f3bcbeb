"""Input validation helpers shared by the models and the API layer."""

import re

from ..errors import ValidationError

EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
MAX_EMAIL_LENGTH = 254

POSTAL_PATTERNS = {
    "US": r"\d{5}(-\d{4})?",
    "CA": r"[A-Z]\d[A-Z] ?\d[A-Z]\d",
    "GB": r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}",
    "DE": r"\d{5}",
    "FR": r"\d{5}",
    "NL": r"\d{4} ?[A-Z]{2}",
    "JP": r"\d{3}-?\d{4}",
}

MAX_LINE_QUANTITY = 999


def is_valid_email(value):
    """Cheap structural check of an e-mail address."""
    if not value or len(value) > MAX_EMAIL_LENGTH:
        return False
    if ".." in value:
        return False
    return EMAIL_RE.match(value) is not None


def validate_email(value):
    value = (value or "").strip()
    if not is_valid_email(value):
        raise ValidationError("email", f"{value!r} is not a valid e-mail address")
    return value.lower()


def validate_postal_code(code, country):
    """Validate and normalise a postal code for ``country``.

    Countries without a known pattern are accepted as-is (trimmed).  Returns
    the normalised code.
    """
    if code is None:
        raise ValidationError("postal_code", "is required")
    pattern = POSTAL_PATTERNS.get(country.upper())
    candidate = code.strip()
    if pattern is None:
        return candidate
    if not re.fullmatch(pattern, candidate):
        raise ValidationError(
            "postal_code", f"{code!r} is not a valid {country.upper()} postal code"
        )
    return candidate


def validate_quantity(quantity, field="quantity"):
    """Quantities are positive integers below :data:`MAX_LINE_QUANTITY`."""
    if isinstance(quantity, bool) or not isinstance(quantity, int):
        raise ValidationError(field, f"expected an integer, got {quantity!r}")
    if quantity <= 0:
        raise ValidationError(field, "must be positive")
    if quantity > MAX_LINE_QUANTITY:
        raise ValidationError(field, f"must be at most {MAX_LINE_QUANTITY}")
    return quantity


def require(condition, field, message):
    """Raise :class:`ValidationError` unless ``condition`` holds."""
    if not condition:
        raise ValidationError(field, message)
