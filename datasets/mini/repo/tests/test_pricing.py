from datetime import date
from decimal import Decimal

from shopkeep.models.money import Money
from shopkeep.models.order import Order
from shopkeep.pricing.context import Cart
from shopkeep.pricing.coupons import Coupon, parse_coupon_spec
from shopkeep.pricing.discounts import (
    BuyXGetYFree,
    FixedAmountDiscount,
    PercentageDiscount,
    TieredDiscount,
    best_combination,
)
from shopkeep.pricing.tax import TaxTable

from .factories import make_calculator, make_customer, usd


def cart_with(*lines):
    order = Order("cus_test")
    for sku, quantity, price in lines:
        order.add_line(sku, quantity, usd(price))
    return Cart.from_order(order)


def test_percentage_discount():
    cart = cart_with(("MUG-01", 2, "12.50"))
    assert PercentageDiscount("TEN", 10).apply(cart) == usd("2.50")


def test_tiered_discount_picks_highest_reached_tier():
    rule = TieredDiscount("TIER", [(50, 5), (100, 10), (200, 15)])
    assert rule.apply(cart_with(("MUG-01", 3, "12.50"))) == usd("0.00")
    assert rule.apply(cart_with(("MUG-01", 10, "12.50"))) == usd("12.50")


def test_buy_two_get_one_free():
    rule = BuyXGetYFree("B2G1", "MUG-01", buy=2, free=1)
    assert rule.apply(cart_with(("MUG-01", 3, "12.50"))) == usd("12.50")
    assert rule.apply(cart_with(("MUG-01", 2, "12.50"))) == usd("0")


def test_best_combination_prefers_larger_exclusive_rule():
    cart = cart_with(("MUG-01", 4, "12.50"))
    rules = [PercentageDiscount("FIVE", 5),
             FixedAmountDiscount("BIG", usd("10"), stackable=False)]
    amount, codes = best_combination(rules, cart)
    assert amount == usd("10") and codes == ["BIG"]


def test_tax_for_amount():
    table = TaxTable("US-CA")
    assert table.tax_for_amount(usd("100.00")) == usd("7.25")
    assert table.rate_for("food") == Decimal("0")


def test_coupon_window():
    coupon = parse_coupon_spec("SUMMER10:percent:10:2024-06-01..2024-08-31")
    assert coupon.is_valid_on(date(2024, 7, 15))
    assert not coupon.is_valid_on(date(2024, 5, 31))


def test_coupon_redemption_limit():
    coupon = Coupon("ONCE", PercentageDiscount("ONCE", 5), max_redemptions=1)
    coupon.redeem(date(2024, 1, 1))
    assert not coupon.is_valid_on(date(2024, 1, 2))


def test_quote_adds_shipping_and_tax():
    calculator = make_calculator()
    order = Order("cus_test")
    order.add_line("MUG-01", 2, usd("12.50"))
    quote = calculator.quote(order, make_customer())
    assert quote.subtotal == usd("25.00")
    assert quote.shipping == usd("4.99")
    assert quote.tax == usd("1.81")
    assert quote.total == usd("31.80")


def test_quote_free_shipping_over_threshold():
    calculator = make_calculator(free_over=20)
    order = Order("cus_test")
    order.add_line("MUG-01", 2, usd("12.50"))
    assert calculator.quote(order).shipping == Money.zero()
