"""Orders, order lines and the order life cycle."""

from dataclasses import dataclass, field
from enum import Enum

from ..errors import InvalidTransitionError, ValidationError
from ..utils.dates import parse_timestamp, utcnow
from ..utils.text import normalize_sku
from ..utils.validation import validate_quantity
from .base import Entity
from .customer import Address
from .money import Money


class OrderStatus(str, Enum):
    DRAFT = "draft"
    PLACED = "placed"
    PAID = "paid"
    SHIPPED = "shipped"
    DELIVERED = "delivered"
    CANCELLED = "cancelled"
    REFUNDED = "refunded"

    @property
    def is_final(self):
        return not ALLOWED_TRANSITIONS[self]


ALLOWED_TRANSITIONS = {
    OrderStatus.DRAFT: frozenset({OrderStatus.PLACED, OrderStatus.CANCELLED}),
    OrderStatus.PLACED: frozenset({OrderStatus.PAID, OrderStatus.CANCELLED}),
    OrderStatus.PAID: frozenset({OrderStatus.SHIPPED, OrderStatus.REFUNDED,
                                 OrderStatus.CANCELLED}),
    OrderStatus.SHIPPED: frozenset({OrderStatus.DELIVERED}),
    OrderStatus.DELIVERED: frozenset({OrderStatus.REFUNDED}),
    OrderStatus.CANCELLED: frozenset(),
    OrderStatus.REFUNDED: frozenset(),
}

EDITABLE_STATUSES = frozenset({OrderStatus.DRAFT})


@dataclass
class OrderLine:
    """A quantity of one SKU at a unit price, with an optional line discount."""

    sku: str
    quantity: int
    unit_price: Money
    discount: Money = None

    def __post_init__(self):
        self.sku = normalize_sku(self.sku)
        validate_quantity(self.quantity)
        if self.discount is None:
            self.discount = Money.zero(self.unit_price.currency)

    @property
    def gross(self):
        return self.unit_price * self.quantity

    @property
    def total(self):
        return self.gross - self.discount

    def to_dict(self):
        return {
            "sku": self.sku,
            "quantity": self.quantity,
            "unit_price": self.unit_price.to_dict(),
            "discount": self.discount.to_dict(),
        }

    @classmethod
    def from_dict(cls, data):
        return cls(data["sku"], data["quantity"], Money.from_dict(data["unit_price"]),
                   Money.from_dict(data["discount"]) if data.get("discount") else None)


@dataclass
class Transition:
    source: OrderStatus
    target: OrderStatus
    at: object = field(default_factory=utcnow)
    note: str = ""


class Order(Entity):
    """A customer's order and its status history."""

    id_prefix = "ord"

    def __init__(self, customer_id, currency="USD", *, id=None, lines=(),
                 status=OrderStatus.DRAFT, created_at=None, coupon_code=None,
                 shipping_address=None, notes=""):
        super().__init__(id)
        self.customer_id = customer_id
        self.currency = currency.upper()
        self.lines = list(lines)
        self.status = OrderStatus(status)
        self.created_at = parse_timestamp(created_at) if created_at else utcnow()
        self.coupon_code = coupon_code
        if shipping_address is not None and not isinstance(shipping_address, Address):
            raise ValidationError("shipping_address", "must be an Address")
        self.shipping_address = shipping_address
        self.notes = notes
        self.history = []

    @property
    def subtotal(self):
        return sum((line.total for line in self.lines), Money.zero(self.currency))

    @property
    def item_count(self):
        return sum(line.quantity for line in self.lines)

    @property
    def is_editable(self):
        return self.status in EDITABLE_STATUSES

    def _require_editable(self):
        if not self.is_editable:
            raise InvalidTransitionError(self.status.value, "edit")

    def line_for(self, sku):
        sku = normalize_sku(sku)
        for line in self.lines:
            if line.sku == sku:
                return line
        return None

    def add_line(self, sku, quantity, unit_price):
        """Add ``quantity`` of ``sku``; merges with an existing line at the same price."""
        self._require_editable()
        if unit_price.currency != self.currency:
            raise ValidationError("unit_price", f"order is in {self.currency}")
        existing = self.line_for(sku)
        if existing is not None and existing.unit_price == unit_price:
            existing.quantity = validate_quantity(existing.quantity + quantity)
            return existing
        line = OrderLine(sku, quantity, unit_price)
        self.lines.append(line)
        return line

    def remove_line(self, sku):
        self._require_editable()
        line = self.line_for(sku)
        if line is None:
            return False
        self.lines.remove(line)
        return True

    def transition_to(self, status, note=""):
        status = OrderStatus(status)
        if status not in ALLOWED_TRANSITIONS[self.status]:
            raise InvalidTransitionError(self.status.value, status.value)
        self.history.append(Transition(self.status, status, note=note))
        self.status = status
        return self

    def cancel(self, reason=""):
        self.transition_to(OrderStatus.CANCELLED, note=reason)
        if reason:
            self.notes = (self.notes + "\n" if self.notes else "") + f"Cancelled: {reason}"
        return self

    def to_dict(self):
        return {
            "id": self.id,
            "customer_id": self.customer_id,
            "currency": self.currency,
            "status": self.status.value,
            "created_at": self.created_at.isoformat(),
            "coupon_code": self.coupon_code,
            "notes": self.notes,
            "lines": [line.to_dict() for line in self.lines],
        }

    @classmethod
    def from_dict(cls, data):
        return cls(
            data["customer_id"],
            data.get("currency", "USD"),
            id=data["id"],
            lines=[OrderLine.from_dict(item) for item in data.get("lines", ())],
            status=data.get("status", OrderStatus.DRAFT),
            created_at=data.get("created_at"),
            coupon_code=data.get("coupon_code"),
            notes=data.get("notes", ""),
        )
