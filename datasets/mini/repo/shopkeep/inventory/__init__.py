"""Stock keeping: levels per warehouse, reservations and reorder planning."""

from .reorder import ReorderPlanner, ReorderSuggestion
from .reservations import Reservation, ReservationBook
from .stock import StockLevel, Warehouse

__all__ = [
    "ReorderPlanner",
    "ReorderSuggestion",
    "Reservation",
    "ReservationBook",
    "StockLevel",
    "Warehouse",
]
