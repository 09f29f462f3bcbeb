"""Conversion of domain objects to JSON-friendly structures for the API.

Monetary amounts are always rendered as strings with the currency's number of
decimals (``"19.90"``) so that clients never see binary floating point.
"""

import json
from datetime import date, datetime
from decimal import Decimal
from enum import Enum

from ..models.money import Money
from ..utils.dates import format_timestamp


def money_to_json(money):
    return {"amount": str(money.quantize().amount), "currency": money.currency}


def money_from_json(data):
    return Money(data["amount"], data["currency"])


def product_to_dict(product):
    return {
        "id": product.id,
        "sku": product.sku,
        "name": product.name,
        "slug": product.slug,
        "kind": product.kind,
        "price": float(product.price.amount),
        "currency": product.price.currency,
        "tags": sorted(product.tags),
        "requires_shipping": product.requires_shipping,
        "active": product.active,
    }


def line_to_dict(line):
    return {
        "sku": line.sku,
        "quantity": line.quantity,
        "unit_price": money_to_json(line.unit_price),
        "total": money_to_json(line.total),
    }


def order_to_dict(order, quote=None):
    data = {
        "id": order.id,
        "customer_id": order.customer_id,
        "status": order.status.value,
        "created_at": format_timestamp(order.created_at),
        "currency": order.currency,
        "lines": [line_to_dict(line) for line in order.lines],
        "subtotal": money_to_json(order.subtotal),
        "coupon_code": order.coupon_code,
    }
    if quote is not None:
        data["quote"] = quote_to_dict(quote)
    return data


def quote_to_dict(quote):
    return {
        "subtotal": money_to_json(quote.subtotal),
        "discount": money_to_json(quote.discount),
        "shipping": money_to_json(quote.shipping),
        "tax": money_to_json(quote.tax),
        "total": money_to_json(quote.total),
        "applied_rules": list(quote.applied_rules),
    }


def to_jsonable(value):
    """Recursively convert common non-JSON types."""
    if isinstance(value, Money):
        return money_to_json(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(to_jsonable(item) for item in value)
    return value


def dumps(value, **kwargs):
    return json.dumps(to_jsonable(value), **kwargs)
