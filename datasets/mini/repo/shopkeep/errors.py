"""Exception hierarchy.

Every exception raised deliberately by shopkeep derives from
:class:`ShopkeepError`, so callers can catch the whole family at once while
still being able to distinguish validation problems from, say, stock issues.
"""


class ShopkeepError(Exception):
    """Base class for all shopkeep errors."""


class ValidationError(ShopkeepError, ValueError):
    """A value supplied by the caller is malformed."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class CurrencyMismatchError(ShopkeepError):
    """Two monetary amounts in different currencies were combined."""

    def __init__(self, left, right):
        super().__init__(f"cannot combine {left} and {right} amounts")
        self.left = left
        self.right = right


class PricingError(ShopkeepError):
    """A quote could not be computed."""


class CouponError(PricingError):
    """Base class for coupon problems."""

    def __init__(self, code, message=None):
        super().__init__(message or f"coupon {code!r} cannot be used")
        self.code = code


class CouponNotFound(CouponError):
    def __init__(self, code):
        super().__init__(code, f"unknown coupon code {code!r}")


class CouponExpired(CouponError):
    def __init__(self, code):
        super().__init__(code, f"coupon {code!r} is not valid today")


class InventoryError(ShopkeepError):
    """Base class for stock related failures."""


class UnknownSkuError(InventoryError):
    def __init__(self, sku, where=None):
        location = f" in {where}" if where else ""
        super().__init__(f"unknown SKU {sku!r}{location}")
        self.sku = sku


class InsufficientStockError(InventoryError):
    def __init__(self, sku, requested, available):
        super().__init__(
            f"cannot take {requested} x {sku}: only {available} available"
        )
        self.sku = sku
        self.requested = requested
        self.available = available


class ReservationError(InventoryError):
    """A reservation could not be created, found or released."""


class StorageError(ShopkeepError):
    """Persisting or loading data failed."""


class NotFoundError(StorageError, LookupError):
    def __init__(self, kind, key):
        super().__init__(f"{kind} {key!r} not found")
        self.kind = kind
        self.key = key


class DuplicateError(StorageError):
    def __init__(self, kind, key):
        super().__init__(f"{kind} {key!r} already exists")
        self.kind = kind
        self.key = key


class InvalidTransitionError(ShopkeepError):
    def __init__(self, current, requested):
        super().__init__(f"cannot move order from {current} to {requested}")
        self.current = current
        self.requested = requested


class PaymentDeclined(ShopkeepError):
    def __init__(self, reason="declined"):
        super().__init__(f"payment declined: {reason}")
        self.reason = reason


class FulfillmentError(ShopkeepError):
    """An order could not be packed or handed to a carrier."""


class AuthError(ShopkeepError):
    """Authentication or authorisation failed."""


class TokenExpired(AuthError):
    pass


class RetryExhausted(ShopkeepError):
    def __init__(self, attempts, last_error):
        super().__init__(f"gave up after {attempts} attempts: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


class ApiError(ShopkeepError):
    """An HTTP-level error, raised by handlers and by the API client."""

    def __init__(self, status, message, details=None):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.details = details or {}
