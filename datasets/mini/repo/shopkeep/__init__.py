"""shopkeep -- a small order-management and inventory library.

The package is organised in layers, each depending only on the ones above it:

* :mod:`shopkeep.utils` -- dates, retries, text and validation helpers.
* :mod:`shopkeep.models` -- plain domain objects (money, products, orders).
* :mod:`shopkeep.pricing` -- discount rules, coupons, tax and the price calculator.
* :mod:`shopkeep.inventory` -- stock levels, reservations and reorder planning.
* :mod:`shopkeep.storage` -- repositories, caching and CSV import/export.
* :mod:`shopkeep.services` -- checkout, fulfilment, notifications and reports.
* :mod:`shopkeep.api` -- a tiny framework-agnostic HTTP layer and an async client.
"""

from .config import Settings, load_settings
from .errors import ShopkeepError
from .models.money import Money
from .models.order import Order, OrderLine, OrderStatus
from .models.product import Product

__version__ = "0.9.3"

__all__ = [
    "Money",
    "Order",
    "OrderLine",
    "OrderStatus",
    "Product",
    "Settings",
    "ShopkeepError",
    "load_settings",
    "__version__",
]
