"""Products sold by the shop.

The class hierarchy mirrors how products are handled downstream::

    Product
    +-- PhysicalProduct        ships in a parcel, has a weight
    |   +-- PerishableProduct  additionally has a shelf life
    +-- DigitalProduct         delivered by download link

:meth:`Product.from_dict` dispatches on the ``kind`` field using the registry
populated by :func:`register_kind`.
"""

from datetime import timedelta
from decimal import Decimal

from ..errors import ValidationError
from ..utils.text import normalize_sku, slugify
from .base import Entity
from .money import Money

TAX_CATEGORIES = ("standard", "food", "digital", "exempt")

_KINDS = {}


def register_kind(cls):
    """Class decorator registering a product subclass for deserialisation."""
    if cls.kind in _KINDS:
        raise ValueError(f"product kind {cls.kind!r} registered twice")
    _KINDS[cls.kind] = cls
    return cls


@register_kind
class Product(Entity):
    """Anything with a SKU, a name and a price."""

    id_prefix = "prd"
    kind = "standard"

    def __init__(self, sku, name, price, *, id=None, tags=(), active=True,
                 tax_category="standard", description=""):
        super().__init__(id)
        self.sku = normalize_sku(sku)
        self.name = (name or "").strip()
        if not self.name:
            raise ValidationError("name", "must not be empty")
        if not isinstance(price, Money):
            raise ValidationError("price", "must be a Money instance")
        if price.is_negative():
            raise ValidationError("price", "must not be negative")
        if tax_category not in TAX_CATEGORIES:
            raise ValidationError("tax_category", f"unknown category {tax_category!r}")
        self.price = price
        self.tags = frozenset(tag.strip().lower() for tag in tags if tag.strip())
        self.active = active
        self.tax_category = tax_category
        self.description = description

    @property
    def slug(self):
        return slugify(f"{self.name} {self.sku}")

    @property
    def requires_shipping(self):
        return False

    def shipping_weight(self):
        """Weight in kilograms used for shipping quotes."""
        return Decimal(0)

    def _extra_fields(self):
        return {}

    def to_dict(self):
        data = {
            "id": self.id,
            "kind": self.kind,
            "sku": self.sku,
            "name": self.name,
            "price": self.price.to_dict(),
            "tags": sorted(self.tags),
            "active": self.active,
            "tax_category": self.tax_category,
            "description": self.description,
        }
        data.update(self._extra_fields())
        return data

    @classmethod
    def from_dict(cls, data):
        kind = data.get("kind", "standard")
        try:
            target = _KINDS[kind]
        except KeyError:
            raise ValidationError("kind", f"unknown product kind {kind!r}") from None
        common = {
            "id": data.get("id"),
            "tags": data.get("tags", ()),
            "active": data.get("active", True),
            "tax_category": data.get("tax_category", "standard"),
            "description": data.get("description", ""),
        }
        price = Money.from_dict(data["price"])
        return target._build(data["sku"], data["name"], price, data, common)

    @classmethod
    def _build(cls, sku, name, price, data, common):
        return cls(sku, name, price, **common)


@register_kind
class PhysicalProduct(Product):
    """A product that is shipped in a parcel."""

    kind = "physical"

    def __init__(self, sku, name, price, *, weight_kg, dimensions_cm=None, **kwargs):
        super().__init__(sku, name, price, **kwargs)
        weight = Decimal(str(weight_kg))
        if weight <= 0:
            raise ValidationError("weight_kg", "must be positive")
        self.weight_kg = weight
        self.dimensions_cm = tuple(dimensions_cm) if dimensions_cm else None

    @property
    def requires_shipping(self):
        return True

    def shipping_weight(self):
        if not self.dimensions_cm:
            return self.weight_kg
        # Couriers bill bulky parcels by volumetric weight (L x W x H / 5000).
        length, width, height = self.dimensions_cm
        volumetric = Decimal(length * width * height) / Decimal(5000)
        return max(self.weight_kg, volumetric.quantize(Decimal("0.001")))

    def _extra_fields(self):
        return {
            "weight_kg": str(self.weight_kg),
            "dimensions_cm": list(self.dimensions_cm) if self.dimensions_cm else None,
        }

    @classmethod
    def _build(cls, sku, name, price, data, common):
        return cls(sku, name, price, weight_kg=data["weight_kg"],
                   dimensions_cm=data.get("dimensions_cm"), **common)


@register_kind
class PerishableProduct(PhysicalProduct):
    """A physical product that may only be sold before it expires."""

    kind = "perishable"

    def __init__(self, sku, name, price, *, shelf_life_days, **kwargs):
        kwargs.setdefault("tax_category", "food")
        super().__init__(sku, name, price, **kwargs)
        if shelf_life_days <= 0:
            raise ValidationError("shelf_life_days", "must be positive")
        self.shelf_life_days = int(shelf_life_days)

    def expires_on(self, received):
        """Last day the item may be sold, given the day it was received."""
        return received + timedelta(days=self.shelf_life_days - 1)

    def is_sellable(self, received, today, min_days_left=1):
        return (self.expires_on(received) - today).days >= min_days_left - 1

    def _extra_fields(self):
        data = super()._extra_fields()
        data["shelf_life_days"] = self.shelf_life_days
        return data

    @classmethod
    def _build(cls, sku, name, price, data, common):
        return cls(sku, name, price, weight_kg=data["weight_kg"],
                   dimensions_cm=data.get("dimensions_cm"),
                   shelf_life_days=data["shelf_life_days"], **common)


@register_kind
class DigitalProduct(Product):
    """A download; never shipped and taxed in the ``digital`` category."""

    kind = "digital"

    def __init__(self, sku, name, price, *, download_url, max_downloads=5, **kwargs):
        kwargs.setdefault("tax_category", "digital")
        super().__init__(sku, name, price, **kwargs)
        if not download_url.startswith("https://"):
            raise ValidationError("download_url", "must be an https URL")
        self.download_url = download_url
        self.max_downloads = max_downloads

    def _extra_fields(self):
        return {"download_url": self.download_url, "max_downloads": self.max_downloads}

    @classmethod
    def _build(cls, sku, name, price, data, common):
        return cls(sku, name, price, download_url=data["download_url"],
                   max_downloads=data.get("max_downloads", 5), **common)
