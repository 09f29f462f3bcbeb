import pytest

from shopkeep.errors import InvalidTransitionError, ValidationError
from shopkeep.models.order import Order, OrderStatus

from .factories import usd


def test_add_line_merges_same_price():
    order = Order("cus_1")
    order.add_line("mug-01", 1, usd("12.50"))
    order.add_line("MUG 01", 2, usd("12.50"))
    assert len(order.lines) == 1
    assert order.lines[0].quantity == 3
    assert order.subtotal == usd("37.50")


def test_currency_must_match():
    order = Order("cus_1", "EUR")
    with pytest.raises(ValidationError):
        order.add_line("MUG-01", 1, usd("1"))


def test_life_cycle():
    order = Order("cus_1")
    order.add_line("MUG-01", 1, usd("12.50"))
    order.transition_to(OrderStatus.PLACED).transition_to(OrderStatus.PAID)
    assert [t.target for t in order.history] == [OrderStatus.PLACED, OrderStatus.PAID]
    with pytest.raises(InvalidTransitionError):
        order.transition_to(OrderStatus.DRAFT)


def test_cannot_edit_after_placing():
    order = Order("cus_1")
    order.add_line("MUG-01", 1, usd("12.50"))
    order.transition_to(OrderStatus.PLACED)
    with pytest.raises(InvalidTransitionError):
        order.add_line("MUG-01", 1, usd("12.50"))


def test_round_trip_keeps_lines_and_status():
    order = Order("cus_1", coupon_code="SUMMER10")
    order.add_line("MUG-01", 2, usd("12.50"))
    order.transition_to(OrderStatus.PLACED)
    copy = Order.from_dict(order.to_dict())
    assert copy.id == order.id
    assert copy.status is OrderStatus.PLACED
    assert copy.subtotal == order.subtotal
    assert copy.coupon_code == "SUMMER10"
