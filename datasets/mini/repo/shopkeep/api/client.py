"""Asynchronous client for the shop API.

The client is transport-agnostic: pass any object with an async
``send(method, path, headers, body) -> (status, payload)`` method (an aiohttp
adapter in production, a fake in tests).  Transient failures are retried
with exponential backoff.
"""

import asyncio
import json
import logging

from ..errors import ApiError
from ..utils.retry import backoff_delays

log = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
DEFAULT_CONCURRENCY = 8


class ShopClient:
    def __init__(self, transport, *, token=None, max_attempts=3, base_delay=0.2,
                 sleep=asyncio.sleep):
        self.transport = transport
        self.token = token
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self._sleep = sleep

    def _headers(self):
        headers = {"accept": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    async def _request(self, method, path, body=None):
        """Send a request, retrying transient failures; returns the payload."""
        encoded = json.dumps(body).encode("utf-8") if body is not None else b""
        delays = backoff_delays(self.base_delay, 2.0, 10.0)
        attempt = 0
        while True:
            attempt += 1
            try:
                status, payload = await self.transport.send(
                    method, path, self._headers(), encoded)
            except (ConnectionError, asyncio.TimeoutError) as exc:
                if attempt >= self.max_attempts:
                    raise ApiError(503, f"transport failure: {exc}") from exc
                await self._sleep(next(delays))
                continue
            if status < 400:
                return payload
            if status >= 400 and attempt < self.max_attempts:
                delay = next(delays)
                log.info("%s %s -> %s, retrying in %.2fs", method, path, status, delay)
                await self._sleep(delay)
                continue
            message = (payload or {}).get("error", "request failed")
            raise ApiError(status, message, payload or {})

    async def get_product(self, sku):
        return await self._request("GET", f"/api/products/{sku}")

    async def list_products(self, page=1, per_page=20, tag=None):
        query = f"?page={page}&per_page={per_page}" + (f"&tag={tag}" if tag else "")
        return await self._request("GET", "/api/products" + query)

    async def get_order(self, order_id):
        return await self._request("GET", f"/api/orders/{order_id}")

    async def create_order(self, currency="USD"):
        return await self._request("POST", "/api/orders", {"currency": currency})

    async def add_item(self, order_id, sku, quantity=1):
        return await self._request("POST", f"/api/orders/{order_id}/items",
                                   {"sku": sku, "quantity": quantity})

    async def cancel_order(self, order_id, reason=""):
        return await self._request("POST", f"/api/orders/{order_id}/cancel",
                                   {"reason": reason})

    async def fetch_orders(self, order_ids, concurrency=DEFAULT_CONCURRENCY):
        """Fetch many orders concurrently; missing ones map to ``None``."""
        semaphore = asyncio.Semaphore(concurrency)

        async def fetch_one(order_id):
            async with semaphore:
                try:
                    return await self.get_order(order_id)
                except ApiError as exc:
                    if exc.status == 404:
                        return None
                    raise

        results = await asyncio.gather(*(fetch_one(oid) for oid in order_ids))
        return dict(zip(order_ids, results))
