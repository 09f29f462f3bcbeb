"""Reorder planning from recent sales.

Uses the classic reorder-point model: reorder when the stock position drops
below the demand expected during the supplier lead time plus safety stock.
"""

import math
from dataclasses import dataclass
from datetime import timedelta
from statistics import NormalDist, pstdev

DEFAULT_WINDOW_DAYS = 28
DEFAULT_SERVICE_LEVEL = 0.95
DEFAULT_LEAD_TIME_DAYS = 7
MIN_ORDER_QUANTITY = 1


@dataclass(frozen=True)
class ReorderSuggestion:
    sku: str
    available: int
    reorder_point: int
    quantity: int


def _daily_series(sales, window_days, today):
    """Units sold per day over the window, including days without sales."""
    start = today - timedelta(days=window_days - 1)
    series = [0] * window_days
    for day, quantity in sales:
        if start <= day <= today:
            series[(day - start).days] += quantity
    return series


def average_daily_demand(sales, window_days, today):
    """Mean units sold per calendar day over the last ``window_days`` days.

    ``sales`` is an iterable of ``(date, quantity)`` pairs; several pairs may
    share a date.
    """
    if window_days <= 0:
        raise ValueError("window_days must be positive")
    start = today - timedelta(days=window_days - 1)
    per_day = {}
    for day, quantity in sales:
        if start <= day <= today:
            per_day[day] = per_day.get(day, 0) + quantity
    if not per_day:
        return 0.0
    return sum(per_day.values()) / len(per_day)


def demand_std_dev(sales, window_days, today):
    return pstdev(_daily_series(sales, window_days, today)) if window_days > 1 else 0.0


def safety_stock(std_dev, lead_time_days, service_level=DEFAULT_SERVICE_LEVEL):
    z = NormalDist().inv_cdf(service_level)
    return z * std_dev * math.sqrt(lead_time_days)


def reorder_point(avg_daily, lead_time_days, safety):
    return math.ceil(avg_daily * lead_time_days + safety)


def economic_order_quantity(annual_demand, order_cost, holding_cost_per_unit):
    """Wilson EOQ: the order size minimising ordering plus holding cost."""
    if annual_demand <= 0:
        return 0
    if holding_cost_per_unit <= 0:
        raise ValueError("holding cost must be positive")
    return math.ceil(math.sqrt(2 * annual_demand * order_cost / holding_cost_per_unit))


class ReorderPlanner:
    """Suggest purchase quantities for the SKUs of one warehouse."""

    def __init__(self, warehouse, lead_times=None, window_days=DEFAULT_WINDOW_DAYS,
                 service_level=DEFAULT_SERVICE_LEVEL, order_cost=25.0, holding_cost=1.0):
        self.warehouse = warehouse
        self.lead_times = dict(lead_times or {})
        self.window_days = window_days
        self.service_level = service_level
        self.order_cost = order_cost
        self.holding_cost = holding_cost

    def lead_time(self, sku):
        return self.lead_times.get(sku, DEFAULT_LEAD_TIME_DAYS)

    def evaluate(self, sku, sales, today):
        """Return a suggestion for ``sku`` or ``None`` if no order is needed."""
        avg = average_daily_demand(sales, self.window_days, today)
        if avg == 0:
            return None
        lead = self.lead_time(sku)
        safety = safety_stock(demand_std_dev(sales, self.window_days, today), lead,
                              self.service_level)
        point = reorder_point(avg, lead, safety)
        available = self.warehouse.available(sku)
        if available > point:
            return None
        eoq = economic_order_quantity(avg * 365, self.order_cost, self.holding_cost)
        quantity = max(eoq, point - available, MIN_ORDER_QUANTITY)
        return ReorderSuggestion(sku, available, point, quantity)

    def suggest(self, sales_by_sku, today):
        suggestions = []
        for sku, sales in sorted(sales_by_sku.items()):
            suggestion = self.evaluate(sku, sales, today)
            if suggestion is not None:
                suggestions.append(suggestion)
        return suggestions
