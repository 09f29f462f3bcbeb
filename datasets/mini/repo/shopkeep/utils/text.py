"""Text normalisation helpers."""

import re
import unicodedata

MAX_SLUG_LENGTH = 64
SKU_MAX_LENGTH = 32
_SLUG_STRIP = re.compile(r"[^a-z0-9\s-]")
_SLUG_DASHES = re.compile(r"[\s-]+")


def slugify(text, max_length=MAX_SLUG_LENGTH):
    """Turn ``"Crème Brûlée (Large)"`` into ``"creme-brulee-large"``."""
    normalized = unicodedata.normalize("NFKD", text)
    ascii_text = normalized.encode("ascii", "ignore").decode("ascii").lower()
    ascii_text = _SLUG_STRIP.sub("", ascii_text)
    slug = _SLUG_DASHES.sub("-", ascii_text).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("-", 1)[0] or slug[:max_length]
    return slug


def normalize_sku(raw):
    """Canonical form of a stock keeping unit.

    SKUs are case-insensitive and suppliers are inconsistent about
    separators, so spaces, underscores and repeated dashes all collapse to a
    single ``-``: ``" tsh_blk  m "`` becomes ``"TSH-BLK-M"``.
    """
    if raw is None:
        raise ValueError("SKU must not be empty")
    text = str(raw).strip().upper()
    text = re.sub(r"[\s-]+", "-", text).strip("-")
    if not text:
        raise ValueError("SKU must not be empty")
    if len(text) > SKU_MAX_LENGTH:
        raise ValueError(f"SKU {text!r} is longer than {SKU_MAX_LENGTH} characters")
    return text


def truncate(text, width, placeholder="..."):
    """Shorten ``text`` to at most ``width`` characters, on a word boundary."""
    if len(text) <= width:
        return text
    cut = text[: max(0, width - len(placeholder))]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + placeholder


def pluralize(count, singular, plural=None):
    """``pluralize(3, "item")`` -> ``"3 items"``."""
    word = singular if count == 1 else (plural or singular + "s")
    return f"{count} {word}"


def mask_email(email):
    """Hide most of the local part: ``jane.doe@x.org`` -> ``j******e@x.org``."""
    local, _, domain = email.partition("@")
    if len(local) <= 2:
        hidden = local[:1] + "*" * (len(local) - 1)
    else:
        hidden = local[0] + "*" * (len(local) - 2) + local[-1]
    return f"{hidden}@{domain}"
