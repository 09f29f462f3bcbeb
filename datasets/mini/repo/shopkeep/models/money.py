"""Exact monetary amounts.

:class:`Money` wraps a :class:`~decimal.Decimal` and a currency code.  Amounts
keep full precision while computing; call :meth:`Money.quantize` to round to
the currency's minor unit (half-up, as accountants expect).
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import total_ordering
from numbers import Number

from ..errors import CurrencyMismatchError, ValidationError

CURRENCY_EXPONENTS = {
    "USD": 2,
    "EUR": 2,
    "GBP": 2,
    "CAD": 2,
    "CHF": 2,
    "JPY": 0,
}
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "\u20ac", "GBP": "\u00a3", "JPY": "\u00a5"}


@total_ordering
class Money:
    """An amount of money in a single currency."""

    __slots__ = ("amount", "currency")

    def __init__(self, amount, currency="USD"):
        if isinstance(amount, float):
            amount = repr(amount)
        try:
            amount = Decimal(amount)
        except (InvalidOperation, TypeError, ValueError) as exc:
            raise ValidationError("amount", f"not a number: {amount!r}") from exc
        if not amount.is_finite():
            raise ValidationError("amount", "must be finite")
        code = str(currency).upper()
        if code not in CURRENCY_EXPONENTS:
            raise ValidationError("currency", f"unsupported currency {currency!r}")
        self.amount = amount
        self.currency = code

    @classmethod
    def zero(cls, currency="USD"):
        return cls(0, currency)

    @classmethod
    def from_minor(cls, units, currency="USD"):
        """Build from an integer number of minor units (cents)."""
        exponent = CURRENCY_EXPONENTS[currency.upper()]
        return cls(Decimal(int(units)).scaleb(-exponent), currency)

    @property
    def exponent(self):
        return CURRENCY_EXPONENTS[self.currency]

    @property
    def minor_units(self):
        """The amount in minor units, rounded half-up."""
        scaled = self.amount.scaleb(self.exponent)
        return int(scaled.to_integral_value(rounding=ROUND_HALF_UP))

    def quantize(self, rounding=ROUND_HALF_UP):
        """Round to the currency's minor unit."""
        step = Decimal(1).scaleb(-self.exponent)
        return Money(self.amount.quantize(step, rounding=rounding), self.currency)

    def _check(self, other):
        if not isinstance(other, Money):
            raise TypeError(f"expected Money, got {type(other).__name__}")
        if other.currency != self.currency:
            raise CurrencyMismatchError(self.currency, other.currency)

    def __add__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        self._check(other)
        return Money(self.amount + other.amount, self.currency)

    def __radd__(self, other):
        # Allows ``sum(amounts)`` which starts from the integer 0.
        return self.__add__(other)

    def __sub__(self, other):
        self._check(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self):
        return Money(-self.amount, self.currency)

    def __mul__(self, factor):
        if isinstance(factor, Money) or not isinstance(factor, (Number, Decimal)):
            return NotImplemented
        if isinstance(factor, float):
            factor = Decimal(repr(factor))
        return Money(self.amount * factor, self.currency)

    __rmul__ = __mul__

    def __truediv__(self, divisor):
        if isinstance(divisor, Money) or not isinstance(divisor, (Number, Decimal)):
            return NotImplemented
        return Money(self.amount / Decimal(str(divisor)), self.currency)

    def __eq__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        return self.currency == other.currency and self.amount == other.amount

    def __lt__(self, other):
        self._check(other)
        return self.amount < other.amount

    def __hash__(self):
        return hash((self.amount.normalize(), self.currency))

    def __bool__(self):
        return bool(self.amount)

    def is_negative(self):
        return self.amount < 0

    def allocate(self, ratios):
        """Split the amount proportionally to ``ratios`` without losing cents.

        The parts always add up exactly to the (quantized) original amount;
        leftover minor units go to the first parts, one each.
        """
        ratios = list(ratios)
        if not ratios:
            raise ValueError("need at least one ratio")
        if any(ratio < 0 for ratio in ratios):
            raise ValueError("ratios must not be negative")
        total_ratio = sum(ratios)
        if not total_ratio:
            raise ValueError("ratios must not all be zero")
        total = self.minor_units
        shares = [round(total * ratio / total_ratio) for ratio in ratios]
        remainder = total - sum(shares)
        for index in range(remainder):
            shares[index % len(shares)] += 1
        return [Money.from_minor(share, self.currency) for share in shares]

    def format(self, symbol=True):
        """Human readable form: ``$1,234.50`` or ``1,234.50 USD``."""
        value = self.quantize().amount
        sign = "-" if value < 0 else ""
        digits = f"{abs(value):,.{self.exponent}f}"
        prefix = CURRENCY_SYMBOLS.get(self.currency) if symbol else None
        if prefix:
            return f"{sign}{prefix}{digits}"
        return f"{sign}{digits} {self.currency}"

    def to_dict(self):
        return {"amount": str(self.amount), "currency": self.currency}

    @classmethod
    def from_dict(cls, data):
        return cls(data["amount"], data["currency"])

    def __repr__(self):
        return f"Money('{self.amount}', '{self.currency}')"

    def __str__(self):
        return self.format(symbol=False)
