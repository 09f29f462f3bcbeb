"""Time-limited stock reservations for orders awaiting payment.

When an order is placed its items are reserved so they cannot be sold twice.
Reservations either get confirmed (payment succeeded, stock is committed),
released (order cancelled) or expire.
"""

from dataclasses import dataclass
from datetime import timedelta

from ..errors import InsufficientStockError, ReservationError
from ..utils.dates import utcnow
from ..utils.text import normalize_sku

DEFAULT_TTL = timedelta(minutes=15)


@dataclass
class Reservation:
    order_id: str
    sku: str
    quantity: int
    expires_at: object

    def is_expired(self, now):
        return now >= self.expires_at


class ReservationBook:
    """Reservations against a single warehouse, grouped by order."""

    def __init__(self, warehouse, ttl=DEFAULT_TTL, clock=utcnow):
        self.warehouse = warehouse
        self.ttl = ttl
        self._clock = clock
        self._by_order = {}

    def reserve(self, order_id, items):
        """Reserve ``{sku: quantity}`` for ``order_id``, all or nothing."""
        if order_id in self._by_order:
            raise ReservationError(f"order {order_id} already holds a reservation")
        expires_at = self._clock() + self.ttl
        made = []
        try:
            for sku, quantity in items.items():
                sku = normalize_sku(sku)
                self.warehouse.reserve(sku, quantity)
                made.append(Reservation(order_id, sku, quantity, expires_at))
        except InsufficientStockError:
            for reservation in made:
                self.warehouse.release(reservation.sku, reservation.quantity)
            raise
        self._by_order[order_id] = made
        return made

    def release(self, order_id):
        """Give the reserved units back; returns how many lines were released."""
        reservations = self._by_order.pop(order_id)
        for reservation in reservations:
            self.warehouse.release(reservation.sku, reservation.quantity)
        return len(reservations)

    def held_for(self, order_id):
        return list(self._by_order.get(order_id, ()))

    def extend(self, order_id, extra=None):
        """Push the expiry of an order's reservations further out."""
        reservations = self._by_order.get(order_id)
        if not reservations:
            raise ReservationError(f"no reservation for order {order_id}")
        new_expiry = self._clock() + (extra or self.ttl)
        for reservation in reservations:
            reservation.expires_at = max(reservation.expires_at, new_expiry)
        return new_expiry

    def confirm(self, order_id):
        """Payment succeeded: commit the reserved stock."""
        reservations = self._by_order.pop(order_id, None)
        if reservations is None:
            raise ReservationError(f"no reservation for order {order_id} (expired?)")
        for reservation in reservations:
            self.warehouse.commit(reservation.sku, reservation.quantity)
        return reservations

    def release_expired(self, now=None):
        """Release every order whose reservation has expired."""
        now = now or self._clock()
        released = []
        for order_id, reservations in self._by_order.items():
            if any(r.is_expired(now) for r in reservations):
                self.release(order_id)
                released.append(order_id)
        return released

    def __len__(self):
        return len(self._by_order)
