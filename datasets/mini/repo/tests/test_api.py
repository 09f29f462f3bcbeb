import asyncio
import json

from shopkeep.api.auth import sign_token, verify_token
from shopkeep.api.client import ShopClient
from shopkeep.api.handlers import Request, ShopApp
from shopkeep.api.routing import Router
from shopkeep.storage.memory import InMemoryRepository
from shopkeep.services.checkout import CheckoutService

from .factories import make_calculator, make_catalog, make_reservations

SECRET = b"test-secret"


def make_app():
    catalog = make_catalog()
    orders = InMemoryRepository("order")
    checkout = CheckoutService(orders, InMemoryRepository("customer"), catalog,
                               make_calculator(catalog), make_reservations())
    return ShopApp(catalog, orders, checkout, SECRET)


def auth_headers(*scopes):
    return {"authorization": "Bearer " + sign_token("cus_api", SECRET, scopes, now=1_700_000_000)}


def test_router_converts_params():
    router = Router()
    router.add("GET", "/items/{item_id:int}", lambda request, item_id: item_id, name="item")
    route, params = router.match("GET", "/items/42/")
    assert params == {"item_id": 42}
    assert router.url_for("item", item_id=7) == "/items/7"


def test_token_round_trip():
    token = sign_token("cus_42", SECRET, ["orders:read"], ttl=60, now=1_000_000)
    assert verify_token(token, SECRET, now=1_000_010)["scopes"] == ["orders:read"]


def test_get_product():
    response = make_app().dispatch(Request("GET", "/api/products/MUG-01"))
    assert response.status == 200
    assert response.data()["sku"] == "MUG-01"


def test_orders_require_auth():
    response = make_app().dispatch(Request("POST", "/api/orders"))
    assert response.status == 401


class FakeTransport:
    def __init__(self, responses):
        self.responses = list(responses)
        self.calls = []

    async def send(self, method, path, headers, body):
        self.calls.append((method, path))
        return self.responses.pop(0)


def test_client_retries_unavailable():
    async def no_sleep(delay):
        return None

    transport = FakeTransport([(503, {"error": "busy"}), (200, {"id": "ord_1"})])
    client = ShopClient(transport, sleep=no_sleep)
    assert asyncio.run(client.get_order("ord_1")) == {"id": "ord_1"}
    assert len(transport.calls) == 2


def test_request_json_body():
    request = Request("POST", "/x", body=json.dumps({"a": 1}).encode())
    assert request.json() == {"a": 1}
