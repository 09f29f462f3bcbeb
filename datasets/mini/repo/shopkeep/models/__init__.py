"""Domain model: money, products, customers and orders."""

from .base import Entity
from .customer import Address, Customer
from .money import Money
from .order import Order, OrderLine, OrderStatus
from .product import DigitalProduct, PerishableProduct, PhysicalProduct, Product

__all__ = [
    "Address",
    "Customer",
    "DigitalProduct",
    "Entity",
    "Money",
    "Order",
    "OrderLine",
    "OrderStatus",
    "PerishableProduct",
    "PhysicalProduct",
    "Product",
]
