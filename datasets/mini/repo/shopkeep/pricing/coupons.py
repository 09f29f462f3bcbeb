"""Coupons: a discount rule plus validity window and redemption limits.

Coupons can be defined in code or parsed from compact specs used in the
admin CSV, e.g. ``SUMMER10:percent:10:2024-06-01..2024-08-31:500``.
"""

from dataclasses import dataclass
from datetime import date

from ..errors import CouponExpired, ValidationError
from ..models.money import Money
from ..utils.dates import parse_date
from .discounts import BuyXGetYFree, DiscountRule, FixedAmountDiscount, PercentageDiscount

SPEC_SEPARATOR = ":"
RANGE_SEPARATOR = ".."


@dataclass
class Coupon:
    """A redeemable code bound to a discount rule."""

    code: str
    rule: DiscountRule
    valid_from: date = None
    valid_until: date = None
    max_redemptions: int = None
    redemptions: int = 0

    def is_valid_on(self, day):
        """Whether the coupon may be used on ``day``.

        Both ends of the validity window are inclusive: a coupon valid until
        the 31st can still be used on the 31st.
        """
        if self.valid_from is not None and day < self.valid_from:
            return False
        if self.valid_until is not None and day >= self.valid_until:
            return False
        if self.max_redemptions is not None and self.redemptions >= self.max_redemptions:
            return False
        return True

    @property
    def remaining(self):
        if self.max_redemptions is None:
            return None
        return max(0, self.max_redemptions - self.redemptions)

    def redeem(self, day=None):
        day = day or date.today()
        if not self.is_valid_on(day):
            raise CouponExpired(self.code)
        self.redemptions += 1
        return self.redemptions


class CouponBook:
    """All known coupons, looked up by code."""

    def __init__(self, coupons=()):
        self._coupons = {}
        for coupon in coupons:
            self.add(coupon)

    def add(self, coupon):
        """Register ``coupon``; codes are unique."""
        if coupon.code in self._coupons:
            raise ValidationError("code", f"duplicate coupon {coupon.code!r}")
        self._coupons[coupon.code] = coupon
        return coupon

    def get(self, code):
        """The coupon for ``code`` or ``None``."""
        if not code:
            return None
        return self._coupons.get(code.strip())

    def active(self, day=None):
        day = day or date.today()
        return [c for c in self._coupons.values() if c.is_valid_on(day)]

    def __contains__(self, code):
        return self.get(code) is not None

    def __len__(self):
        return len(self._coupons)


def _parse_window(text):
    if not text:
        return None, None
    start, sep, end = text.partition(RANGE_SEPARATOR)
    if not sep:
        raise ValidationError("window", f"expected START..END, got {text!r}")
    return (parse_date(start) if start else None, parse_date(end) if end else None)


def parse_coupon_spec(spec, currency="USD"):
    """Parse ``CODE:KIND:VALUE[:FROM..UNTIL[:MAX]]`` into a :class:`Coupon`.

    ``KIND`` is ``percent``, ``amount`` or ``bogo`` (``VALUE`` is then
    ``SKU/BUY/FREE``).
    """
    parts = [part.strip() for part in spec.split(SPEC_SEPARATOR)]
    if len(parts) < 3:
        raise ValidationError("spec", f"too few fields in {spec!r}")
    code, kind, value = parts[0].upper(), parts[1].lower(), parts[2]
    if kind == "percent":
        rule = PercentageDiscount(code, value)
    elif kind == "amount":
        rule = FixedAmountDiscount(code, Money(value, currency))
    elif kind == "bogo":
        sku, buy, free = value.split("/")
        rule = BuyXGetYFree(code, sku, int(buy), int(free))
    else:
        raise ValidationError("kind", f"unknown coupon kind {kind!r}")
    valid_from, valid_until = _parse_window(parts[3] if len(parts) > 3 else "")
    limit = int(parts[4]) if len(parts) > 4 and parts[4] else None
    return Coupon(code, rule, valid_from, valid_until, limit)
