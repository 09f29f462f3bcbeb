"""Shipping rates, parcel packing and handing shipments to carriers."""

import asyncio
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from ..errors import FulfillmentError
from ..events import default_bus
from ..models.money import Money
from ..models.order import OrderStatus
from ..utils.dates import add_business_days

log = logging.getLogger(__name__)

#: (base price for the first kg, price per additional started kg) per zone.
DEFAULT_RATES = {
    "domestic": (Decimal("4.99"), Decimal("0.80")),
    "continental": (Decimal("9.99"), Decimal("1.50")),
    "international": (Decimal("19.99"), Decimal("3.50")),
}
TRANSIT_DAYS = {"domestic": 3, "continental": 6, "international": 10}
CONTINENTS = {
    "US": "NA", "CA": "NA", "MX": "NA",
    "DE": "EU", "FR": "EU", "NL": "EU", "GB": "EU", "IT": "EU", "ES": "EU",
    "JP": "AS", "KR": "AS", "SG": "AS",
    "AU": "OC", "NZ": "OC",
}


class ShippingRateTable:
    """Weight- and zone-based shipping prices with optional free shipping.

    ``rates`` overrides the :data:`DEFAULT_RATES` of individual zones; zones
    not mentioned keep their default price.
    """

    def __init__(self, origin="US", currency="USD", rates=None, free_over=None):
        self.origin = origin.upper()
        self.currency = currency
        self.rates = dict(rates or DEFAULT_RATES)
        self.free_over = Decimal(str(free_over)) if free_over is not None else None

    def zone_for(self, destination):
        if destination is None or destination.country == self.origin:
            return "domestic"
        same_continent = CONTINENTS.get(destination.country) == CONTINENTS.get(self.origin)
        return "continental" if same_continent else "international"

    def rate_for(self, weight_kg, destination, subtotal=None):
        """Price of shipping ``weight_kg`` to ``destination``.

        Domestic orders whose (discounted) ``subtotal`` reaches ``free_over``
        ship for free.
        """
        zone = self.zone_for(destination)
        if (zone == "domestic" and self.free_over is not None and subtotal is not None
                and subtotal.amount >= self.free_over):
            return Money.zero(self.currency)
        base, per_kg = self.rates[zone]
        billable = max(Decimal(1), Decimal(weight_kg).to_integral_value(ROUND_CEILING))
        return Money(base + per_kg * (billable - 1), self.currency).quantize()


def split_into_parcels(items, max_weight):
    """Pack ``(sku, quantity, unit_weight)`` items into parcels (first-fit decreasing).

    Returns a list of parcels, each a dict ``{sku: quantity}``.
    """
    max_weight = Decimal(str(max_weight))
    units = []
    for sku, quantity, unit_weight in items:
        unit_weight = Decimal(str(unit_weight))
        if unit_weight > max_weight:
            raise FulfillmentError(f"{sku} weighs {unit_weight} kg, over the parcel limit")
        units.extend([(unit_weight, sku)] * quantity)
    units.sort(reverse=True)
    parcels = []
    for unit_weight, sku in units:
        for parcel in parcels:
            if parcel["weight"] + unit_weight <= max_weight:
                break
        else:
            parcel = {"weight": Decimal(0), "items": {}}
            parcels.append(parcel)
        parcel["weight"] += unit_weight
        parcel["items"][sku] = parcel["items"].get(sku, 0) + 1
    return [parcel["items"] for parcel in parcels]


@dataclass
class Shipment:
    order_id: str
    address: object
    parcels: list
    carrier: str = ""
    tracking: str = None
    status: str = "pending"
    errors: list = field(default_factory=list)


class Carrier(ABC):
    name = "carrier"

    @abstractmethod
    async def book(self, shipment):
        """Book a pickup; return the tracking number."""


class FakeCarrier(Carrier):
    """In-memory carrier; refuses destinations listed in ``refuse``."""

    name = "fakeship"

    def __init__(self, refuse=(), latency=0.0):
        self.refuse = set(refuse)
        self.latency = latency
        self.booked = []

    async def book(self, shipment):
        await asyncio.sleep(self.latency)
        if shipment.address.country in self.refuse:
            raise FulfillmentError(f"{self.name} does not deliver to {shipment.address.country}")
        tracking = f"FS{len(self.booked) + 1:08d}"
        self.booked.append((tracking, shipment.order_id))
        return tracking


class FulfillmentService:
    def __init__(self, orders, catalog, carrier, rates=None, bus=None,
                 max_parcel_kg=20, holidays=()):
        self.orders = orders
        self.catalog = catalog
        self.carrier = carrier
        self.rates = rates or ShippingRateTable()
        self.bus = bus or default_bus
        self.max_parcel_kg = max_parcel_kg
        self.holidays = frozenset(holidays)

    def prepare(self, order_id):
        """Pack a paid order into parcels."""
        order = self.orders.get(order_id)
        if order.status is not OrderStatus.PAID:
            raise FulfillmentError(f"order {order.id} is {order.status.value}, not paid")
        if order.shipping_address is None:
            raise FulfillmentError(f"order {order.id} has no shipping address")
        items = []
        for line in order.lines:
            product = self.catalog.require(line.sku)
            if product.requires_shipping:
                items.append((line.sku, line.quantity, product.shipping_weight()))
        if not items:
            raise FulfillmentError(f"order {order.id} has nothing to ship")
        parcels = split_into_parcels(items, self.max_parcel_kg)
        return Shipment(order.id, order.shipping_address, parcels, self.carrier.name)

    async def dispatch(self, shipment):
        """Book the carrier and mark the order as shipped."""
        shipment.tracking = await self.carrier.book(shipment)
        shipment.status = "booked"
        order = self.orders.get(shipment.order_id)
        order.transition_to(OrderStatus.SHIPPED, note=shipment.tracking)
        self.orders.update(order)
        self.bus.emit("order.shipped", order=order, tracking=shipment.tracking)
        return shipment

    async def dispatch_all(self, shipments):
        """Dispatch shipments concurrently.

        A failure for one shipment must not affect the others; returns
        ``(dispatched, failed)`` where ``failed`` holds ``(shipment, error)``.
        """
        results = await asyncio.gather(*(self.dispatch(s) for s in shipments))
        dispatched, failed = [], []
        for shipment, result in zip(shipments, results):
            if isinstance(result, Exception):
                shipment.status = "failed"
                shipment.errors.append(str(result))
                failed.append((shipment, result))
            else:
                dispatched.append(result)
        log.info("dispatched %d shipments, %d failed", len(dispatched), len(failed))
        return dispatched, failed

    def estimated_delivery(self, shipped_on, destination):
        zone = self.rates.zone_for(destination)
        return add_business_days(shipped_on, TRANSIT_DAYS[zone], self.holidays)
