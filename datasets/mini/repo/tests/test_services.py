import asyncio
from datetime import date

import pytest

from shopkeep.errors import PaymentDeclined
from shopkeep.events import EventBus
from shopkeep.models.order import OrderStatus
from shopkeep.services.checkout import CheckoutService, FakeGateway
from shopkeep.services.fulfillment import FakeCarrier, FulfillmentService, split_into_parcels
from shopkeep.services.notifications import Notifier, Outbox
from shopkeep.services.reports import average_order_value
from shopkeep.storage.memory import InMemoryRepository

from .factories import make_calculator, make_catalog, make_customer, make_reservations


def build(gateway=None):
    bus = EventBus(raise_errors=True)
    customers = InMemoryRepository("customer")
    customer = make_customer()
    customers.add(customer)
    catalog = make_catalog()
    orders = InMemoryRepository("order")
    reservations = make_reservations()
    checkout = CheckoutService(orders, customers, catalog, make_calculator(catalog),
                               reservations, gateway=gateway or FakeGateway(), bus=bus)
    return bus, customers, customer, catalog, orders, reservations, checkout


def test_happy_path_sends_confirmation():
    bus, customers, customer, catalog, orders, reservations, checkout = build()
    outbox = Outbox()
    Notifier(bus, customers, outbox)
    order = checkout.start_order(customer.id)
    checkout.add_item(order.id, "MUG-01", 2)
    checkout.place_order(order.id)
    quote = checkout.pay(order.id)
    assert orders.get(order.id).status is OrderStatus.PAID
    assert reservations.warehouse.level("MUG-01").on_hand == 8
    assert outbox.pending[0].subject.endswith("is confirmed")
    assert quote.total.format() in outbox.pending[0].body


def test_declined_payment_releases_stock():
    *_, orders, reservations, checkout = build(FakeGateway(limit=1))
    order = checkout.start_order("cus_unknown")
    checkout.add_item(order.id, "MUG-01", 2)
    checkout.place_order(order.id)
    with pytest.raises(PaymentDeclined):
        checkout.pay(order.id)
    assert reservations.warehouse.available("MUG-01") == 10
    assert orders.get(order.id).status is OrderStatus.CANCELLED


def test_fulfillment_dispatches_paid_order():
    bus, customers, customer, catalog, orders, reservations, checkout = build()
    order = checkout.start_order(customer.id)
    checkout.add_item(order.id, "TEE-BLK-M", 1)
    checkout.place_order(order.id)
    checkout.pay(order.id)
    service = FulfillmentService(orders, catalog, FakeCarrier(), bus=bus)
    shipment = service.prepare(order.id)
    asyncio.run(service.dispatch(shipment))
    assert orders.get(order.id).status is OrderStatus.SHIPPED
    assert service.estimated_delivery(date(2024, 3, 4), shipment.address) == date(2024, 3, 7)


def test_parcels_respect_weight_limit():
    parcels = split_into_parcels([("A", 3, 8), ("B", 2, 3)], max_weight=20)
    assert parcels == [{"A": 2, "B": 1}, {"A": 1, "B": 1}]


def test_average_order_value_ignores_unpaid():
    bus, customers, customer, catalog, orders, reservations, checkout = build()
    paid = checkout.start_order(customer.id)
    checkout.add_item(paid.id, "MUG-01", 2)
    checkout.place_order(paid.id)
    checkout.pay(paid.id)
    draft = checkout.start_order(customer.id)
    checkout.add_item(draft.id, "MUG-01", 1)
    assert average_order_value(orders.all()).amount == 25
