"""Request handlers for the shop's JSON API.

:class:`ShopApp` is deliberately framework-agnostic: an adapter for the web
server of your choice converts its request into a :class:`Request`, calls
:meth:`ShopApp.dispatch` and writes back the :class:`Response`.
"""

import json
import logging
from dataclasses import dataclass, field

from ..errors import (
    ApiError,
    CouponError,
    InsufficientStockError,
    InvalidTransitionError,
    NotFoundError,
    ShopkeepError,
    UnknownSkuError,
    ValidationError,
)
from .auth import requires_scope
from .routing import Router
from .serializers import line_to_dict, order_to_dict, product_to_dict, quote_to_dict, to_jsonable

log = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100

ERROR_STATUS = (
    (NotFoundError, 404),
    (UnknownSkuError, 404),
    (ValidationError, 422),
    (CouponError, 422),
    (InvalidTransitionError, 409),
    (InsufficientStockError, 409),
    (ShopkeepError, 400),
)


@dataclass
class Request:
    method: str
    path: str
    headers: dict = field(default_factory=dict)
    query: dict = field(default_factory=dict)
    body: bytes = b""
    claims: dict = None

    def json(self):
        if not self.body:
            return {}
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise ApiError(400, f"invalid JSON body: {exc}") from exc


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict = field(default_factory=dict)

    @classmethod
    def json(cls, status, payload):
        body = json.dumps(to_jsonable(payload), sort_keys=True).encode("utf-8")
        return cls(status, body, {"content-type": "application/json"})

    def data(self):
        return json.loads(self.body) if self.body else None


def _page_params(query):
    try:
        page = int(query.get("page", 1))
        size = int(query.get("per_page", DEFAULT_PAGE_SIZE))
    except ValueError:
        raise ApiError(400, "page and per_page must be integers") from None
    if page < 1:
        raise ApiError(400, "page starts at 1")
    size = max(1, min(size, MAX_PAGE_SIZE))
    return (page - 1) * size, size


class ShopApp:
    """Wire the HTTP routes to the catalog, order repository and checkout."""

    def __init__(self, catalog, orders, checkout, secret):
        self.catalog = catalog
        self.orders = orders
        self.checkout = checkout
        self.secret = secret
        self.router = Router("/api")
        self._register_routes()

    def _register_routes(self):
        add = self.router.add
        add("GET", "/products/{sku:sku}", self.get_product)
        add("GET", "/products", self.list_products)
        add("GET", "/orders/{order_id}", self.get_order)
        add("GET", "/orders/{order_id}/lines", self.order_lines)
        add("POST", "/orders/{order_id}/items", self.add_item)
        add("POST", "/orders/{order_id}/quote", self.quote_order)
        add("POST", "/orders/{order_id}/cancel", self.cancel_order)
        add("POST", "/orders", self.create_order)

    def dispatch(self, request):
        try:
            route, params = self.router.match(request.method, request.path)
            result = route.handler(request, **params)
        except ApiError as exc:
            return Response.json(exc.status, {"error": exc.message, **exc.details})
        except ShopkeepError as exc:
            status = next(code for kind, code in ERROR_STATUS if isinstance(exc, kind))
            return Response.json(status, {"error": str(exc)})
        except Exception:
            log.exception("unhandled error for %s %s", request.method, request.path)
            return Response.json(500, {"error": "internal server error"})
        if isinstance(result, Response):
            return result
        return Response.json(200, result)

    def list_products(self, request):
        offset, size = _page_params(request.query)
        tag = request.query.get("tag")
        products = self.catalog.search(request.query.get("q", ""), tag=tag)
        page = products[offset:offset + size]
        return {"items": [product_to_dict(p) for p in page], "total": len(products)}

    def get_product(self, request, sku):
        product = self.catalog.get_product(sku)
        if product is None:
            raise ApiError(404, f"no product {sku}")
        return product_to_dict(product)

    @requires_scope("orders:read")
    def get_order(self, request, order_id):
        return order_to_dict(self.orders.get(order_id))

    @requires_scope("orders:read")
    def order_lines(self, request, order_id):
        order = self.orders.get(order_id)
        return {"order_id": order.id, "lines": [line_to_dict(l) for l in order.lines]}

    @requires_scope("orders:write")
    def create_order(self, request):
        body = request.json()
        order = self.checkout.start_order(request.claims["sub"], body.get("currency", "USD"))
        return Response.json(201, order_to_dict(order))

    @requires_scope("orders:write")
    def add_item(self, request, order_id):
        body = request.json()
        try:
            sku, quantity = body["sku"], int(body.get("quantity", 1))
        except (KeyError, ValueError):
            raise ApiError(422, "sku and an integer quantity are required") from None
        order = self.checkout.add_item(order_id, sku, quantity)
        return order_to_dict(order)

    @requires_scope("orders:read")
    def quote_order(self, request, order_id):
        body = request.json()
        order, quote = self.checkout.quote(order_id, coupon_code=body.get("coupon"))
        return quote_to_dict(quote)

    @requires_scope("orders:write")
    def cancel_order(self, request, order_id):
        reason = request.json().get("reason", "")
        order = self.checkout.cancel_order(order_id, reason=reason)
        return order_to_dict(order)
