"""Discount rules.

Every rule derives from :class:`DiscountRule` and computes the amount to take
off a :class:`~shopkeep.pricing.context.Cart`.  Rules are either *stackable*
(combined with each other) or exclusive; :func:`best_combination` picks the
cheapest outcome for the customer.

Hierarchy::

    DiscountRule
    +-- PercentageDiscount
    |   +-- TieredDiscount
    |       +-- LoyaltyTieredDiscount
    +-- FixedAmountDiscount
    +-- BuyXGetYFree
"""

from abc import ABC, abstractmethod
from datetime import date
from decimal import Decimal

from ..errors import ValidationError
from ..models.money import Money
from ..utils.text import normalize_sku

HUNDRED = Decimal(100)


class DiscountRule(ABC):
    """Base class for all discount rules."""

    #: Lower numbers are evaluated first when reporting applied rules.
    priority = 100

    def __init__(self, code, *, min_subtotal=None, stackable=True, description=""):
        self.code = code.strip().upper()
        self.min_subtotal = Decimal(str(min_subtotal)) if min_subtotal is not None else None
        self.stackable = stackable
        self.description = description or self.code

    def applies_to(self, cart):
        """Whether the rule is eligible for ``cart`` at all."""
        if cart.is_empty():
            return False
        if self.min_subtotal is not None and cart.subtotal.amount < self.min_subtotal:
            return False
        return True

    @abstractmethod
    def discount_for(self, cart):
        """Amount to deduct, as Money in the cart's currency."""

    def apply(self, cart):
        if not self.applies_to(cart):
            return Money.zero(cart.currency)
        return self.discount_for(cart).quantize()

    def __repr__(self):
        return f"<{type(self).__name__} {self.code}>"


class PercentageDiscount(DiscountRule):
    """A flat percentage off the cart subtotal."""

    priority = 50

    def __init__(self, code, percent, **kwargs):
        super().__init__(code, **kwargs)
        percent = Decimal(str(percent))
        if not Decimal(0) < percent <= HUNDRED:
            raise ValidationError("percent", "must be in (0, 100]")
        self.percent = percent

    def rate_for(self, subtotal, customer):
        """Percentage to apply for this subtotal and customer."""
        return self.percent

    def discount_for(self, cart):
        rate = self.rate_for(cart.subtotal, cart.customer)
        return cart.subtotal * (rate / HUNDRED)


class TieredDiscount(PercentageDiscount):
    """Percentage that grows with the subtotal.

    ``tiers`` is a list of ``(threshold, percent)``; the highest threshold not
    exceeding the subtotal wins.
    """

    def __init__(self, code, tiers, **kwargs):
        if not tiers:
            raise ValidationError("tiers", "at least one tier is required")
        ordered = sorted((Decimal(str(t)), Decimal(str(p))) for t, p in tiers)
        super().__init__(code, max(p for _, p in ordered), **kwargs)
        self.tiers = ordered

    def rate_for(self, subtotal, customer):
        rate = Decimal(0)
        for threshold, percent in self.tiers:
            if subtotal.amount >= threshold:
                rate = percent
            else:
                break
        return rate


class LoyaltyTieredDiscount(TieredDiscount):
    """Tiered discount with a bonus for each full year of membership."""

    def __init__(self, code, tiers, *, bonus_per_year=Decimal("0.5"),
                 max_bonus=Decimal("5"), today=None, **kwargs):
        super().__init__(code, tiers, **kwargs)
        self.bonus_per_year = Decimal(str(bonus_per_year))
        self.max_bonus = Decimal(str(max_bonus))
        self.today = today

    def rate_for(self, subtotal, customer):
        base = super().rate_for(subtotal, customer)
        if not base or customer is None or customer.member_since is None:
            return base
        today = self.today or date.today()
        since = customer.member_since
        years = max(0, today.year - since.year)
        bonus = min(self.bonus_per_year * years, self.max_bonus)
        return min(base + bonus, HUNDRED)


class FixedAmountDiscount(DiscountRule):
    """A fixed amount off, e.g. "$10 off orders over $50"."""

    priority = 60

    def __init__(self, code, amount, **kwargs):
        super().__init__(code, **kwargs)
        if not isinstance(amount, Money) or amount.amount <= 0:
            raise ValidationError("amount", "must be a positive Money amount")
        self.amount = amount

    def discount_for(self, cart):
        if self.amount.currency != cart.currency:
            return Money.zero(cart.currency)
        return self.amount


class BuyXGetYFree(DiscountRule):
    """For every ``buy`` units of ``sku`` bought, ``free`` more are free."""

    priority = 20

    def __init__(self, code, sku, buy, free=1, **kwargs):
        super().__init__(code, **kwargs)
        if buy < 1 or free < 1:
            raise ValidationError("buy", "buy and free must be at least 1")
        self.sku = normalize_sku(sku)
        self.buy = buy
        self.free = free

    def applies_to(self, cart):
        line = cart.line_for(self.sku)
        return line is not None and line.quantity > self.buy and super().applies_to(cart)

    def discount_for(self, cart):
        line = cart.line_for(self.sku)
        groups = line.quantity // (self.buy + self.free)
        leftover = line.quantity - groups * (self.buy + self.free)
        free_units = groups * self.free + max(0, leftover - self.buy)
        return line.unit_price * free_units


def best_combination(rules, cart):
    """Pick the combination of rules giving the largest discount.

    All eligible stackable rules are combined; an exclusive rule wins if its
    discount alone is larger.  Returns ``(discount, applied_codes)``.
    """
    zero = Money.zero(cart.currency)
    evaluated = []
    for rule in sorted(rules, key=lambda r: (r.priority, r.code)):
        amount = rule.apply(cart)
        if amount:
            evaluated.append((rule, amount))
    stacked = sum((amount for rule, amount in evaluated if rule.stackable), zero)
    best = (stacked, [rule.code for rule, _ in evaluated if rule.stackable])
    for rule, amount in evaluated:
        if not rule.stackable and amount > best[0]:
            best = (amount, [rule.code])
    return best
