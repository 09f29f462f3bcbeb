"""Read-mostly access to the product catalog, with an LRU cache in front."""

import time

from ..errors import UnknownSkuError
from ..storage.cache import LRUCache
from ..utils.text import normalize_sku

DEFAULT_CACHE_SIZE = 256
DEFAULT_TTL = 300.0


class ProductCatalog:
    """Look up products by SKU; lookups are cached, writes invalidate."""

    def __init__(self, repository, cache_size=DEFAULT_CACHE_SIZE, ttl=DEFAULT_TTL,
                 clock=time.monotonic):
        self.repository = repository
        self._cache = LRUCache(cache_size, ttl, clock)

    def get_product(self, sku):
        """The product for ``sku`` or ``None``."""
        key = normalize_sku(sku)
        product = self._cache.get(key)
        if product is None:
            product = self.repository.first(sku=key)
            if product is not None:
                self._cache.set(key, product)
        return product

    def require(self, sku):
        product = self.get_product(sku)
        if product is None:
            raise UnknownSkuError(sku, "catalog")
        return product

    def add(self, product):
        self.repository.add(product)
        self._cache.invalidate(product.sku)
        return product

    def update(self, product):
        self.repository.update(product)
        self._cache.invalidate(product.sku)
        return product

    def search(self, text="", tag=None, include_inactive=False):
        """Products whose name or SKU contains ``text``, sorted by name."""
        needle = text.strip().lower()
        tag = tag.lower() if tag else None
        matches = []
        for product in self.repository.all():
            if not include_inactive and not product.active:
                continue
            if tag and tag not in product.tags:
                continue
            if needle and needle not in product.name.lower() and needle not in product.sku.lower():
                continue
            matches.append(product)
        return sorted(matches, key=lambda p: (p.name.lower(), p.sku))

    def cache_info(self):
        return self._cache.info()
