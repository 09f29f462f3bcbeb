"""Turns an order into a price quote: discounts, shipping, tax, total."""

from dataclasses import dataclass, field

from ..errors import PricingError, UnknownSkuError
from ..models.money import Money
from .context import Cart
from .discounts import best_combination
from .tax import TaxTable


@dataclass
class Quote:
    """The priced breakdown of an order."""

    subtotal: Money
    discount: Money
    shipping: Money
    tax: Money
    total: Money
    applied_rules: list = field(default_factory=list)
    tax_lines: list = field(default_factory=list)

    def to_dict(self):
        return {
            "subtotal": self.subtotal.to_dict(),
            "discount": self.discount.to_dict(),
            "shipping": self.shipping.to_dict(),
            "tax": self.tax.to_dict(),
            "total": self.total.to_dict(),
            "applied_rules": list(self.applied_rules),
        }


class PriceCalculator:
    """Combine catalog prices, discount rules, shipping and tax.

    ``catalog`` must provide ``get_product(sku)``; ``shipping_rates`` must
    provide ``rate_for(weight_kg, destination, subtotal=...)``.
    """

    def __init__(self, catalog, tax_table, shipping_rates, rules=()):
        self.catalog = catalog
        self.tax_table = tax_table if isinstance(tax_table, TaxTable) else TaxTable(tax_table)
        self.shipping_rates = shipping_rates
        self.rules = list(rules)

    def quote(self, order, customer=None, coupon=None, today=None):
        """Price ``order`` for ``customer``, optionally with a ``coupon``."""
        cart = Cart.from_order(order, customer, today)
        if cart.is_empty():
            raise PricingError("cannot quote an empty order")
        rules = list(self.rules)
        if coupon is not None:
            rules.append(coupon.rule)
        discount, applied = best_combination(rules, cart)
        discounted = cart.subtotal - discount

        weight = self._weight(cart)
        if weight:
            shipping = self.shipping_rates.rate_for(
                weight, cart.shipping_address, subtotal=discounted)
        else:
            shipping = Money.zero(cart.currency)

        exempt = bool(customer and customer.tax_exempt)
        tax_lines = self._tax_lines(cart, discount, exempt)
        tax = TaxTable.total(tax_lines, cart.currency)
        total = (discounted + shipping + tax).quantize()
        if total.is_negative():
            raise PricingError(f"quote total is negative ({total}) for order {order.id}")
        return Quote(cart.subtotal, discount, shipping, tax, total, applied, tax_lines)

    def _product(self, sku):
        product = self.catalog.get_product(sku)
        if product is None:
            raise UnknownSkuError(sku, "catalog")
        return product

    def _weight(self, cart):
        """Total shipping weight in kg of the physical items in ``cart``."""
        weight = 0
        for line in cart.lines:
            product = self._product(line.sku)
            if product.requires_shipping:
                weight += product.shipping_weight() * line.quantity
        return weight

    def _tax_lines(self, cart, discount, exempt):
        """Spread the cart discount over the lines, then tax each line."""
        ratios = [line.total.minor_units for line in cart.lines]
        if discount and sum(ratios):
            shares = discount.allocate(ratios)
        else:
            shares = [Money.zero(cart.currency)] * len(cart.lines)
        items = []
        for line, share in zip(cart.lines, shares):
            product = self._product(line.sku)
            items.append((line.sku, line.total - share, product.tax_category))
        return self.tax_table.breakdown(items, exempt=exempt)
