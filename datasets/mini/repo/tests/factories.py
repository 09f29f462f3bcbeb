"""Builders for test objects, so individual tests stay short."""

from datetime import date

from shopkeep.inventory.reservations import ReservationBook
from shopkeep.inventory.stock import Warehouse
from shopkeep.models.customer import Address, Customer
from shopkeep.models.money import Money
from shopkeep.models.product import DigitalProduct, PhysicalProduct
from shopkeep.pricing.calculator import PriceCalculator
from shopkeep.services.catalog import ProductCatalog
from shopkeep.services.fulfillment import ShippingRateTable
from shopkeep.storage.memory import InMemoryRepository


def usd(amount):
    return Money(amount, "USD")


def make_catalog(*products):
    repo = InMemoryRepository("product")
    catalog = ProductCatalog(repo)
    for product in products or default_products():
        catalog.add(product)
    return catalog


def default_products():
    return [
        PhysicalProduct("MUG-01", "Enamel Mug", usd("12.50"), weight_kg="0.4"),
        PhysicalProduct("TEE-BLK-M", "Black Tee (M)", usd("19.90"), weight_kg="0.2",
                        tags=["apparel"]),
        DigitalProduct("EBOOK-1", "Field Guide (PDF)", usd("9.00"),
                       download_url="https://downloads.example/guide.pdf"),
    ]


def make_customer(**overrides):
    values = {
        "email": "ada@example.com",
        "name": "Ada Lovelace",
        "member_since": date(2020, 3, 1),
        "addresses": [Address("12 Analytical Way", "Springfield", "12345", "US")],
    }
    values.update(overrides)
    return Customer(values.pop("email"), values.pop("name"), **values)


def make_calculator(catalog=None, region="US-CA", rules=(), free_over=None):
    catalog = catalog or make_catalog()
    rates = ShippingRateTable(free_over=free_over)
    return PriceCalculator(catalog, region, rates, rules)


def stocked_warehouse(code="MAIN", stock=None):
    warehouse = Warehouse(code)
    for sku, quantity in (stock or {"MUG-01": 10, "TEE-BLK-M": 5}).items():
        warehouse.receive(sku, quantity)
    return warehouse


def make_reservations(warehouse=None):
    return ReservationBook(warehouse or stocked_warehouse())
