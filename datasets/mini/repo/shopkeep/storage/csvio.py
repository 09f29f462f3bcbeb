"""CSV import and export of the product catalog and stock counts.

The import is forgiving about the formatting suppliers use for prices
(currency symbols, thousands separators, decimal commas) and collects
per-row errors instead of aborting, unless ``strict`` is set.
"""

import csv
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..errors import ValidationError
from ..models.money import CURRENCY_SYMBOLS, Money
from ..models.product import DigitalProduct, PerishableProduct, PhysicalProduct, Product

PRODUCT_COLUMNS = ("sku", "name", "price", "currency", "kind", "weight_kg",
                   "shelf_life_days", "download_url", "tags")
REQUIRED_COLUMNS = ("sku", "name", "price")
STOCK_COLUMNS = ("sku", "quantity")
TAG_SEPARATOR = "|"


@dataclass
class ImportReport:
    imported: list = field(default_factory=list)
    errors: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.errors

    def summary(self):
        return f"{len(self.imported)} imported, {len(self.errors)} rejected"


def _check_columns(reader, required):
    missing = [name for name in required if name not in (reader.fieldnames or ())]
    if missing:
        raise ValidationError("header", f"missing column(s): {', '.join(missing)}")


def import_products(handle, *, default_currency="USD", strict=False):
    """Read products from a CSV file object; returns an :class:`ImportReport`."""
    reader = csv.DictReader(handle)
    _check_columns(reader, REQUIRED_COLUMNS)
    report = ImportReport()

    def parse_price(raw):
        text = (raw or "").strip().replace(" ", "").replace("\u00a0", "")
        for symbol in CURRENCY_SYMBOLS.values():
            text = text.replace(symbol, "")
        text = text.replace(",", ".")
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise ValidationError("price", f"cannot parse price {raw!r}") from None
        if value < 0:
            raise ValidationError("price", "must not be negative")
        return value

    def build(row):
        currency = (row.get("currency") or default_currency).strip().upper()
        price = Money(parse_price(row["price"]), currency)
        kind = (row.get("kind") or "standard").strip().lower()
        common = {
            "tags": [t for t in (row.get("tags") or "").split(TAG_SEPARATOR) if t],
        }
        if kind == "physical":
            return PhysicalProduct(row["sku"], row["name"], price,
                                   weight_kg=row["weight_kg"], **common)
        if kind == "perishable":
            return PerishableProduct(row["sku"], row["name"], price,
                                     weight_kg=row["weight_kg"],
                                     shelf_life_days=int(row["shelf_life_days"]), **common)
        if kind == "digital":
            return DigitalProduct(row["sku"], row["name"], price,
                                  download_url=row["download_url"], **common)
        if kind == "standard":
            return Product(row["sku"], row["name"], price, **common)
        raise ValidationError("kind", f"unknown product kind {kind!r}")

    for line_no, row in enumerate(reader, start=2):
        try:
            report.imported.append(build(row))
        except (ValidationError, ValueError, KeyError) as exc:
            if strict:
                raise ValidationError("row", f"line {line_no}: {exc}") from exc
            report.errors.append((line_no, str(exc)))
    return report


def export_products(products, handle):
    """Write products in the format accepted by :func:`import_products`."""
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(PRODUCT_COLUMNS)
    count = 0
    for product in products:
        writer.writerow([
            product.sku,
            product.name,
            float(product.price.amount),
            product.price.currency,
            product.kind,
            getattr(product, "weight_kg", ""),
            getattr(product, "shelf_life_days", ""),
            getattr(product, "download_url", ""),
            TAG_SEPARATOR.join(sorted(product.tags)),
        ])
        count += 1
    return count


def import_stock(handle, warehouse):
    """Apply a stock count CSV (``sku,quantity``) as receipts; returns units received."""
    reader = csv.DictReader(handle)
    _check_columns(reader, STOCK_COLUMNS)
    received = 0
    for line_no, row in enumerate(reader, start=2):
        try:
            quantity = int(row["quantity"])
        except ValueError:
            raise ValidationError("quantity", f"line {line_no}: not an integer") from None
        if quantity:
            warehouse.receive(row["sku"], quantity)
            received += quantity
    return received


def export_stock(warehouse, handle):
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(("sku", "on_hand", "reserved", "available"))
    for sku, level in sorted(warehouse.levels.items()):
        writer.writerow((sku, level.on_hand, level.reserved, level.available))
