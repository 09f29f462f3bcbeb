"""A framework-agnostic HTTP layer plus an asyncio client for the shop API."""

from .client import ShopClient
from .handlers import Request, Response, ShopApp
from .routing import Router

__all__ = ["Request", "Response", "Router", "ShopApp", "ShopClient"]
