"""Stock levels and warehouses.

A :class:`StockLevel` tracks how many units of a SKU are physically on hand
and how many of those are reserved for open orders.  Only the difference is
available for sale.
"""

import logging
from dataclasses import dataclass, field

from ..errors import InsufficientStockError, UnknownSkuError, ValidationError
from ..utils.text import normalize_sku

log = logging.getLogger(__name__)

LOW_STOCK_THRESHOLD = 5


@dataclass
class StockLevel:
    sku: str
    on_hand: int = 0
    reserved: int = 0
    adjustments: list = field(default_factory=list, repr=False)

    @property
    def available(self):
        return self.on_hand - self.reserved

    def receive(self, quantity):
        if quantity <= 0:
            raise ValidationError("quantity", "received quantity must be positive")
        self.on_hand += quantity

    def reserve(self, quantity):
        if quantity > self.available:
            raise InsufficientStockError(self.sku, quantity, self.available)
        self.reserved += quantity

    def release(self, quantity):
        self.reserved = max(0, self.reserved - quantity)

    def commit(self, quantity):
        """Reserved units leave the building: both counters go down."""
        if quantity > self.reserved:
            raise InsufficientStockError(self.sku, quantity, self.reserved)
        self.reserved -= quantity
        self.on_hand -= quantity

    def adjust(self, delta, reason):
        """Manual correction after a stock count; never below the reserved units."""
        if self.on_hand + delta < self.reserved:
            raise ValidationError("delta", f"would leave fewer than {self.reserved} units")
        self.on_hand += delta
        self.adjustments.append((delta, reason))


class Warehouse:
    """A physical location holding stock for many SKUs."""

    def __init__(self, code, name=None, levels=None):
        self.code = code.strip().upper()
        self.name = name or self.code
        self.levels = dict(levels or {})
        self.low_stock_threshold = LOW_STOCK_THRESHOLD

    def level(self, sku, create=False):
        key = normalize_sku(sku)
        level = self.levels.get(key)
        if level is None:
            if not create:
                raise UnknownSkuError(key, f"warehouse {self.code}")
            level = self.levels[key] = StockLevel(key)
        return level

    def knows(self, sku):
        return normalize_sku(sku) in self.levels

    def receive(self, sku, quantity):
        level = self.level(sku, create=True)
        level.receive(quantity)
        log.info("%s: received %d x %s (on hand %d)", self.code, quantity, level.sku, level.on_hand)
        return level

    def available(self, sku):
        return self.level(sku).available

    def reserve(self, sku, quantity):
        self.level(sku).reserve(quantity)

    def release(self, sku, quantity):
        self.level(sku).release(quantity)

    def commit(self, sku, quantity):
        self.level(sku).commit(quantity)

    def low_stock(self, threshold=None):
        """SKUs whose available quantity is at or below ``threshold``."""
        limit = self.low_stock_threshold if threshold is None else threshold
        return sorted(sku for sku, level in self.levels.items() if level.available <= limit)

    def snapshot(self):
        return {
            sku: {"on_hand": level.on_hand, "reserved": level.reserved}
            for sku, level in sorted(self.levels.items())
        }

    def __repr__(self):
        return f"<Warehouse {self.code} skus={len(self.levels)}>"
