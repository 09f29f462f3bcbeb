"""Application services orchestrating models, pricing, inventory and storage."""

from .catalog import ProductCatalog
from .checkout import CheckoutService, FakeGateway, PaymentGateway
from .fulfillment import FulfillmentService, ShippingRateTable
from .notifications import Notifier, Outbox
from .reports import average_order_value, sales_by_month, top_products

__all__ = [
    "CheckoutService",
    "FakeGateway",
    "FulfillmentService",
    "Notifier",
    "Outbox",
    "PaymentGateway",
    "ProductCatalog",
    "ShippingRateTable",
    "average_order_value",
    "sales_by_month",
    "top_products",
]
