"""Dictionary-backed repository, used in tests and as a base for file storage."""

import copy
import threading

from ..errors import DuplicateError, NotFoundError
from .base import Repository


class InMemoryRepository(Repository):
    """Keeps deep copies of entities so callers cannot mutate stored state."""

    def __init__(self, kind="entity", copy_on_read=True):
        self.kind = kind
        self.copy_on_read = copy_on_read
        self._items = {}
        self._lock = threading.RLock()

    def _out(self, entity):
        return copy.deepcopy(entity) if self.copy_on_read else entity

    def get(self, entity_id):
        with self._lock:
            try:
                return self._out(self._items[entity_id])
            except KeyError:
                raise NotFoundError(self.kind, entity_id) from None

    def add(self, entity):
        with self._lock:
            if entity.id in self._items:
                raise DuplicateError(self.kind, entity.id)
            self._items[entity.id] = copy.deepcopy(entity)
            return entity

    def update(self, entity):
        with self._lock:
            if entity.id not in self._items:
                raise NotFoundError(self.kind, entity.id)
            self._items[entity.id] = copy.deepcopy(entity)
            return entity

    def delete(self, entity_id):
        with self._lock:
            return self._items.pop(entity_id, None) is not None

    def all(self):
        with self._lock:
            items = list(self._items.values())
        return iter([self._out(item) for item in items])

    def clear(self):
        with self._lock:
            self._items.clear()

    def __len__(self):
        return len(self._items)

    def __contains__(self, entity_id):
        return entity_id in self._items
