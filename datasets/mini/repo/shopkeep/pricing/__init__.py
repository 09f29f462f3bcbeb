"""Pricing: discount rules, coupons, tax tables and the price calculator."""

from .calculator import PriceCalculator, Quote
from .context import Cart
from .coupons import Coupon, CouponBook, parse_coupon_spec
from .discounts import (
    BuyXGetYFree,
    DiscountRule,
    FixedAmountDiscount,
    LoyaltyTieredDiscount,
    PercentageDiscount,
    TieredDiscount,
    best_combination,
)
from .tax import TaxTable

__all__ = [
    "BuyXGetYFree",
    "Cart",
    "Coupon",
    "CouponBook",
    "DiscountRule",
    "FixedAmountDiscount",
    "LoyaltyTieredDiscount",
    "PercentageDiscount",
    "PriceCalculator",
    "Quote",
    "TaxTable",
    "TieredDiscount",
    "best_combination",
    "parse_coupon_spec",
]
