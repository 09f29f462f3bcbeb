"""Sales reporting over a collection of orders."""

import csv
from collections import Counter
from dataclasses import dataclass

from ..models.money import Money
from ..models.order import OrderStatus
from ..utils.dates import month_key

#: Orders in these states count as revenue.
REVENUE_STATUSES = frozenset({OrderStatus.PAID, OrderStatus.SHIPPED, OrderStatus.DELIVERED})


def _is_revenue(order):
    return order.status in REVENUE_STATUSES


@dataclass
class MonthlySales:
    month: str
    orders: int
    units: int
    revenue: Money

    @property
    def average_order_value(self):
        if not self.orders:
            return Money.zero(self.revenue.currency)
        return (self.revenue / self.orders).quantize()


def sales_by_month(orders, currency="USD"):
    """Order count, units and revenue per calendar month, oldest first."""
    buckets = {}
    for order in orders:
        if order.currency != currency:
            continue
        key = month_key(order.created_at)
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = MonthlySales(key, 0, 0, Money.zero(currency))
        bucket.orders += 1
        bucket.units += order.item_count
        bucket.revenue = bucket.revenue + order.subtotal
    return [buckets[key] for key in sorted(buckets)]


def top_products(orders, limit=10):
    """The ``limit`` best selling SKUs as ``(sku, units)`` pairs."""
    units = Counter()
    for order in orders:
        for line in order.lines:
            units[line.sku] += line.quantity
    return units.most_common(limit)


def average_order_value(orders, currency="USD"):
    paid = [o for o in orders if _is_revenue(o) and o.currency == currency]
    if not paid:
        return Money.zero(currency)
    total = sum((o.subtotal for o in paid), Money.zero(currency))
    return (total / len(paid)).quantize()


def refund_rate(orders):
    """Share of revenue orders that were later refunded."""
    refunded = sum(1 for o in orders if o.status is OrderStatus.REFUNDED)
    revenue = sum(1 for o in orders if _is_revenue(o)) + refunded
    return refunded / revenue if revenue else 0.0


def write_monthly_csv(rows, handle):
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(("month", "orders", "units", "revenue", "currency", "average"))
    for row in rows:
        writer.writerow((row.month, row.orders, row.units,
                         row.revenue.quantize().amount, row.revenue.currency,
                         row.average_order_value.amount))
