import io
import os
import tempfile

from shopkeep.models.order import Order
from shopkeep.models.product import Product
from shopkeep.storage import csvio
from shopkeep.storage.cache import LRUCache, cached
from shopkeep.storage.jsonfile import JsonFileRepository
from shopkeep.storage.memory import InMemoryRepository

from .factories import default_products, stocked_warehouse, usd


def test_memory_repository_returns_copies():
    repo = InMemoryRepository("order")
    order = Order("cus_1")
    repo.add(order)
    loaded = repo.get(order.id)
    loaded.notes = "changed"
    assert repo.get(order.id).notes == ""


def test_pagination_and_filters():
    repo = InMemoryRepository("order")
    for index in range(5):
        repo.add(Order(f"cus_{index % 2}"))
    assert repo.count(customer_id="cus_0") == 3
    assert len(repo.list(offset=2, limit=2)) == 2


def test_json_repository_round_trip():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "products.json")
        repo = JsonFileRepository(path, Product)
        for product in default_products():
            repo.add(product)
        reopened = JsonFileRepository(path, Product)
        assert sorted(p.sku for p in reopened.all()) == ["EBOOK-1", "MUG-01", "TEE-BLK-M"]
        assert reopened.first(sku="MUG-01").weight_kg == default_products()[0].weight_kg


def test_lru_cache_evicts_oldest():
    cache = LRUCache(maxsize=2)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.set("c", 3)
    assert "a" not in cache and cache.get("c") == 3


def test_lru_cache_ttl():
    now = [100.0]
    cache = LRUCache(maxsize=4, ttl=10, clock=lambda: now[0])
    cache.set("k", "v")
    now[0] += 11
    assert cache.get("k") is None


def test_cached_decorator():
    calls = []

    @cached(maxsize=8)
    def square(x):
        calls.append(x)
        return x * x

    assert square(3) == 9 and square(3) == 9
    assert calls == [3]
    assert square.cache.info().hits == 1


def test_csv_import_symbols_and_decimal_comma():
    data = (
        "sku,name,price,currency,kind,weight_kg\n"
        "MUG-01,Enamel Mug,$12.50,USD,physical,0.4\n"
        "CUP-02,Tasse,\"4,90\",EUR,physical,0.3\n"
        "BAD-1,Broken,abc,USD,standard,\n"
    )
    report = csvio.import_products(io.StringIO(data))
    assert [p.price for p in report.imported] == [usd("12.50"), report.imported[1].price]
    assert str(report.imported[1].price.amount) == "4.90"
    assert report.errors and report.errors[0][0] == 4


def test_stock_import():
    warehouse = stocked_warehouse()
    received = csvio.import_stock(io.StringIO("sku,quantity\nMUG-01,5\nNEW-1,2\n"), warehouse)
    assert received == 7
    assert warehouse.available("MUG-01") == 15
