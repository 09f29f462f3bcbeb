"""The checkout flow: build an order, price it, reserve stock and take payment.

Life cycle handled here::

    start_order -> add_item* -> [apply_coupon] -> place_order -> pay
                                                   \\-> cancel_order
"""

import logging
from abc import ABC, abstractmethod
from collections import Counter
from datetime import date

from ..errors import (
    CouponExpired,
    CouponNotFound,
    InvalidTransitionError,
    PaymentDeclined,
    ValidationError,
)
from ..events import default_bus
from ..models.order import Order, OrderStatus
from ..pricing.coupons import CouponBook

log = logging.getLogger(__name__)


class PaymentGateway(ABC):
    """Charges customers; implementations wrap a real payment provider."""

    @abstractmethod
    def charge(self, amount, reference):
        """Charge ``amount``; return a transaction id or raise PaymentDeclined."""


class FakeGateway(PaymentGateway):
    """Gateway for tests and demos; declines amounts above ``limit``."""

    def __init__(self, limit=None):
        self.limit = limit
        self.charges = []

    def charge(self, amount, reference):
        if self.limit is not None and amount.amount > self.limit:
            raise PaymentDeclined("amount over card limit")
        transaction = f"txn_{len(self.charges) + 1:06d}"
        self.charges.append((transaction, reference, amount))
        return transaction


class CheckoutService:
    def __init__(self, orders, customers, catalog, calculator, reservations,
                 coupons=None, gateway=None, bus=None):
        self.orders = orders
        self.customers = customers
        self.catalog = catalog
        self.calculator = calculator
        self.reservations = reservations
        self.coupons = coupons if coupons is not None else CouponBook()
        self.gateway = gateway or FakeGateway()
        self.bus = bus or default_bus

    def _load(self, order_id):
        return self.orders.get(order_id)

    def start_order(self, customer_id, currency="USD"):
        order = Order(customer_id, currency)
        customer = self.customers.get_or_none(customer_id)
        if customer is not None:
            order.shipping_address = customer.default_address
        self.orders.add(order)
        return order

    def add_item(self, order_id, sku, quantity=1):
        order = self._load(order_id)
        product = self.catalog.require(sku)
        if not product.active:
            raise ValidationError("sku", f"{product.sku} is no longer sold")
        order.add_line(product.sku, quantity, product.price)
        self.orders.update(order)
        return order

    def apply_coupon(self, order_id, code, today=None):
        order = self._load(order_id)
        coupon = self.coupons.get(code)
        if coupon is None:
            raise CouponNotFound(code)
        if not coupon.is_valid_on(today or date.today()):
            raise CouponExpired(coupon.code)
        order.coupon_code = coupon.code
        self.orders.update(order)
        return order

    def quote(self, order_id, coupon_code=None, today=None):
        """Price an order; returns ``(order, quote)``."""
        order = self._load(order_id)
        code = coupon_code or order.coupon_code
        coupon = self.coupons.get(code) if code else None
        if code and coupon is None:
            raise CouponNotFound(code)
        customer = self.customers.get_or_none(order.customer_id)
        return order, self.calculator.quote(order, customer, coupon, today)

    def place_order(self, order_id):
        """Reserve stock for the order and move it to ``placed``."""
        order = self._load(order_id)
        if not order.lines:
            raise ValidationError("lines", "cannot place an empty order")
        wanted = Counter()
        for line in order.lines:
            wanted[line.sku] += line.quantity
        order.transition_to(OrderStatus.PLACED)
        self.reservations.reserve(order.id, dict(wanted))
        self.orders.update(order)
        self.bus.emit("order.placed", order=order)
        return order

    def pay(self, order_id, today=None):
        """Charge the customer for a placed order and commit its stock."""
        order, quote = self.quote(order_id, today=today)
        if order.status is not OrderStatus.PLACED:
            raise InvalidTransitionError(order.status.value, OrderStatus.PAID.value)
        try:
            transaction = self.gateway.charge(quote.total, order.id)
        except PaymentDeclined as exc:
            log.info("payment for %s declined: %s", order.id, exc.reason)
            self.reservations.release(order.id)
            order.cancel("payment declined")
            self.orders.update(order)
            self.bus.emit("order.cancelled", order=order, reason="payment declined")
            raise
        self.reservations.confirm(order.id)
        if order.coupon_code:
            self.coupons.get(order.coupon_code).redeem(today)
        order.transition_to(OrderStatus.PAID, note=transaction)
        self.orders.update(order)
        self.bus.emit("order.paid", order=order, quote=quote)
        return quote

    def cancel_order(self, order_id, reason=""):
        """Cancel an order that has not shipped yet."""
        order = self._load(order_id)
        order.cancel(reason)
        self.orders.update(order)
        self.bus.emit("order.cancelled", order=order, reason=reason)
        return order
