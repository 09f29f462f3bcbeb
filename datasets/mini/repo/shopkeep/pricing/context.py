"""The read-only view of an order that pricing rules operate on."""

from dataclasses import dataclass, field
from datetime import date

from ..models.money import Money
from ..utils.text import normalize_sku


@dataclass
class Cart:
    """Lines, customer and destination of an order being priced.

    Rules never mutate the cart; they only compute amounts from it.
    """

    lines: list
    currency: str
    customer: object = None
    shipping_address: object = None
    today: date = field(default_factory=date.today)

    @classmethod
    def from_order(cls, order, customer=None, today=None):
        address = order.shipping_address
        if address is None and customer is not None:
            address = customer.default_address
        return cls(
            lines=list(order.lines),
            currency=order.currency,
            customer=customer,
            shipping_address=address,
            today=today or date.today(),
        )

    @property
    def subtotal(self):
        """Sum of the line totals before cart-level discounts."""
        return sum((line.total for line in self.lines), Money.zero(self.currency))

    @property
    def total_quantity(self):
        return sum(line.quantity for line in self.lines)

    def line_for(self, sku):
        sku = normalize_sku(sku)
        return next((line for line in self.lines if line.sku == sku), None)

    def is_empty(self):
        return not self.lines
