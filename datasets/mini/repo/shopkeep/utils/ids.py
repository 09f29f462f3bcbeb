"""Identifier generation.

Ids look like ``ord_01hf3k9t2m00x4c7q2ab`` -- a short type prefix followed by a
time-ordered Crockford base32 body, so that ids sort roughly by creation time
and are safe to use in URLs and file names.
"""

import os
import re
import threading
import time

CROCKFORD_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
RANDOM_BYTES = 5
TIME_WIDTH = 9
SEQUENCE_WIDTH = 2
ENTROPY_WIDTH = 8

_PREFIX_RE = re.compile(r"[a-z]{2,5}")
_ID_RE = re.compile(r"^(?P<prefix>[a-z]{2,5})_(?P<body>[0-9a-hjkmnp-tv-z]{19})$")

_lock = threading.Lock()
_last_ms = 0
_sequence = 0


def encode_base32(number, width=0):
    """Encode a non-negative integer with the Crockford alphabet."""
    if number < 0:
        raise ValueError("cannot encode a negative number")
    digits = []
    while number:
        number, rem = divmod(number, 32)
        digits.append(CROCKFORD_ALPHABET[rem])
    text = "".join(reversed(digits)) or "0"
    return text.rjust(width, "0")


def decode_base32(text):
    """Inverse of :func:`encode_base32`."""
    value = 0
    for char in text.lower():
        index = CROCKFORD_ALPHABET.find(char)
        if index < 0:
            raise ValueError(f"invalid base32 character {char!r}")
        value = value * 32 + index
    return value


def _monotonic_ms():
    """Millisecond timestamp plus a sequence number; never goes backwards."""
    global _last_ms, _sequence
    with _lock:
        now = int(time.time() * 1000)
        if now <= _last_ms:
            _sequence += 1
            now = _last_ms
        else:
            _sequence = 0
            _last_ms = now
        return now, _sequence % (32 ** SEQUENCE_WIDTH)


def new_id(prefix):
    """Return a fresh id such as ``ord_01hf3k9t2m00x4c7q2ab``."""
    if not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(f"invalid id prefix {prefix!r}")
    millis, seq = _monotonic_ms()
    entropy = int.from_bytes(os.urandom(RANDOM_BYTES), "big")
    body = (
        encode_base32(millis, TIME_WIDTH)
        + encode_base32(seq, SEQUENCE_WIDTH)
        + encode_base32(entropy, ENTROPY_WIDTH)
    )
    return f"{prefix}_{body}"


def is_valid_id(value, prefix=None):
    """Check the shape of an id, optionally requiring a specific prefix."""
    match = _ID_RE.match(value or "")
    if match is None:
        return False
    return prefix is None or match.group("prefix") == prefix


def id_timestamp(value):
    """Creation time (seconds since the epoch) encoded in an id."""
    if not is_valid_id(value):
        raise ValueError(f"not a shopkeep id: {value!r}")
    body = value.split("_", 1)[1]
    return decode_base32(body[:TIME_WIDTH]) / 1000.0
