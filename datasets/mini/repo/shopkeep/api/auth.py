"""Signed bearer tokens (HMAC-SHA256) and scope checks for API handlers.

A token is ``v1.<payload>.<signature>`` where both parts are unpadded
URL-safe base64.  The payload is compact JSON with at least ``sub``,
``scopes`` and ``exp`` (a UNIX timestamp).
"""

import base64
import functools
import hashlib
import hmac
import json
import time

from ..errors import ApiError, AuthError, TokenExpired

TOKEN_VERSION = "v1"
DEFAULT_TTL = 3600
CLOCK_SKEW = 30


def _b64encode(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _signature(secret, data):
    digest = hmac.new(secret, data.encode("ascii"), hashlib.sha256).digest()
    return _b64encode(digest)


def sign_token(subject, secret, scopes=(), ttl=DEFAULT_TTL, now=None):
    """Issue a token for ``subject`` valid for ``ttl`` seconds."""
    issued = int(now if now is not None else time.time())
    payload = {"sub": subject, "scopes": sorted(scopes), "iat": issued, "exp": issued + ttl}
    data = _b64encode(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    return f"{TOKEN_VERSION}.{data}.{_signature(secret, data)}"


def verify_token(token, secret, now=None):
    """Check the signature and expiry; return the payload dict."""
    try:
        version, data, signature = token.split(".")
    except (AttributeError, ValueError):
        raise AuthError("malformed token") from None
    if version != TOKEN_VERSION:
        raise AuthError(f"unsupported token version {version!r}")
    if not hmac.compare_digest(_signature(secret, data), signature):
        raise AuthError("bad token signature")
    payload = json.loads(base64.urlsafe_b64decode(data))
    current = now if now is not None else time.time()
    if payload.get("exp", 0) + CLOCK_SKEW < current:
        raise TokenExpired("token expired")
    return payload


def bearer_token(headers):
    """Extract the token from an ``Authorization: Bearer ...`` header."""
    value = headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    return token.strip()


def authenticate(request, secret, now=None):
    token = bearer_token(request.headers)
    if token is None:
        raise ApiError(401, "missing bearer token")
    try:
        return verify_token(token, secret, now=now)
    except AuthError as exc:
        raise ApiError(401, str(exc)) from exc


def requires_scope(scope):
    """Handler decorator: authenticate the request and require ``scope``."""

    def decorator(handler):
        @functools.wraps(handler)
        def wrapper(app, request, **params):
            claims = authenticate(request, app.secret)
            if scope not in claims.get("scopes", ()):
                raise ApiError(403, f"missing scope {scope}")
            request.claims = claims
            return handler(app, request, **params)
        return wrapper

    return decorator
