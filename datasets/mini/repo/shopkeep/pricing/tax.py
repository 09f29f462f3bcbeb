"""Sales tax / VAT computation.

Rates are looked up by region and product tax category.  Tax is computed
per line and rounded per line, half-up, which is what most tax authorities
and accounting packages expect.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ..errors import PricingError
from ..models.money import Money

TAX_RATES = {
    "US-CA": {"standard": Decimal("0.0725"), "food": Decimal("0"), "digital": Decimal("0")},
    "US-NY": {"standard": Decimal("0.04"), "food": Decimal("0"), "digital": Decimal("0.04")},
    "US-OR": {"standard": Decimal("0"), "food": Decimal("0"), "digital": Decimal("0")},
    "DE": {"standard": Decimal("0.19"), "food": Decimal("0.07"), "digital": Decimal("0.19")},
    "GB": {"standard": Decimal("0.20"), "food": Decimal("0"), "digital": Decimal("0.20")},
    "FR": {"standard": Decimal("0.20"), "food": Decimal("0.055"), "digital": Decimal("0.20")},
}
EXEMPT = "exempt"


@dataclass(frozen=True)
class TaxLine:
    """Tax computed for one order line."""

    sku: str
    taxable: Money
    rate: Decimal
    tax: Money


class TaxTable:
    """Tax rates for a single region."""

    def __init__(self, region, rates=None):
        self.region = region.upper()
        table = rates if rates is not None else TAX_RATES.get(self.region)
        if table is None:
            raise PricingError(f"no tax rates configured for region {region!r}")
        self.rates = dict(table)

    def rate_for(self, category):
        if category == EXEMPT:
            return Decimal(0)
        try:
            return self.rates[category]
        except KeyError:
            return self.rates["standard"]

    def tax_for_amount(self, amount, category="standard"):
        """Tax due on a net ``amount``, rounded to the minor unit."""
        raw = amount.amount * self.rate_for(category)
        step = Decimal(1).scaleb(-amount.exponent)
        return Money(raw.quantize(step), amount.currency)

    def included_tax(self, gross, category="standard"):
        """Tax contained in a tax-inclusive ``gross`` amount."""
        rate = self.rate_for(category)
        net = gross.amount / (1 + rate)
        return Money(gross.amount - net, gross.currency).quantize(ROUND_HALF_UP)

    def breakdown(self, items, exempt=False):
        """Tax per line for ``(sku, taxable_amount, category)`` items."""
        lines = []
        for sku, taxable, category in items:
            if exempt:
                rate = Decimal(0)
                tax = Money.zero(taxable.currency)
            else:
                rate = self.rate_for(category)
                tax = self.tax_for_amount(taxable, category)
            lines.append(TaxLine(sku, taxable, rate, tax))
        return lines

    @staticmethod
    def total(lines, currency):
        return sum((line.tax for line in lines), Money.zero(currency))
