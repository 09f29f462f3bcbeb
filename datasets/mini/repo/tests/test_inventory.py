from datetime import date, datetime, timedelta, timezone

import pytest

from shopkeep.errors import InsufficientStockError, UnknownSkuError
from shopkeep.inventory.reorder import ReorderPlanner, economic_order_quantity
from shopkeep.inventory.reservations import ReservationBook

from .factories import stocked_warehouse


def test_reserve_and_commit():
    warehouse = stocked_warehouse()
    warehouse.reserve("MUG-01", 4)
    assert warehouse.available("MUG-01") == 6
    warehouse.commit("MUG-01", 4)
    assert warehouse.level("MUG-01").on_hand == 6


def test_cannot_oversell():
    warehouse = stocked_warehouse()
    with pytest.raises(InsufficientStockError):
        warehouse.reserve("TEE-BLK-M", 6)


def test_unknown_sku():
    with pytest.raises(UnknownSkuError):
        stocked_warehouse().available("NOPE")


def test_reservation_is_all_or_nothing():
    warehouse = stocked_warehouse()
    book = ReservationBook(warehouse)
    with pytest.raises(InsufficientStockError):
        book.reserve("ord_1", {"MUG-01": 2, "TEE-BLK-M": 50})
    assert warehouse.available("MUG-01") == 10


def test_confirm_commits_stock():
    warehouse = stocked_warehouse()
    book = ReservationBook(warehouse)
    book.reserve("ord_1", {"MUG-01": 2})
    book.confirm("ord_1")
    assert warehouse.level("MUG-01").on_hand == 8
    assert len(book) == 0


def test_reservation_kept_until_expiry():
    start = datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc)
    warehouse = stocked_warehouse()
    book = ReservationBook(warehouse, clock=lambda: start)
    book.reserve("ord_1", {"MUG-01": 3})
    assert book.release_expired(start + timedelta(minutes=5)) == []
    assert warehouse.available("MUG-01") == 7


def test_planner_suggests_for_fast_movers():
    warehouse = stocked_warehouse(stock={"MUG-01": 3})
    planner = ReorderPlanner(warehouse, lead_times={"MUG-01": 5})
    today = date(2024, 3, 28)
    sales = [(today - timedelta(days=d), 2) for d in range(28)]
    [suggestion] = planner.suggest({"MUG-01": sales}, today)
    assert suggestion.reorder_point == 10
    assert suggestion.quantity >= 7


def test_eoq():
    assert economic_order_quantity(1000, 10, 0.5) == 200
