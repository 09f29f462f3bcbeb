"""The repository interface used by services."""

from abc import ABC, abstractmethod

from ..errors import NotFoundError


class Repository(ABC):
    """A collection of entities addressed by id.

    Concrete repositories implement the five abstract primitives; listing,
    filtering and counting are built on top of :meth:`all`.
    """

    kind = "entity"

    @abstractmethod
    def get(self, entity_id):
        """Return the entity or raise :class:`~shopkeep.errors.NotFoundError`."""

    @abstractmethod
    def add(self, entity):
        """Store a new entity; raises if the id is taken."""

    @abstractmethod
    def update(self, entity):
        """Replace a stored entity."""

    @abstractmethod
    def delete(self, entity_id):
        """Remove an entity; returns ``True`` if it existed."""

    @abstractmethod
    def all(self):
        """Iterate over all entities in insertion order."""

    def get_or_none(self, entity_id):
        try:
            return self.get(entity_id)
        except NotFoundError:
            return None

    def save(self, entity):
        """Add or update, whichever applies."""
        if self.get_or_none(entity.id) is None:
            return self.add(entity)
        return self.update(entity)

    @staticmethod
    def _matches(entity, filters):
        for name, expected in filters.items():
            value = getattr(entity, name, None)
            if callable(expected):
                if not expected(value):
                    return False
            elif value != expected:
                return False
        return True

    def find(self, **filters):
        return [entity for entity in self.all() if self._matches(entity, filters)]

    def first(self, **filters):
        return next((e for e in self.all() if self._matches(e, filters)), None)

    def list(self, offset=0, limit=None, **filters):
        """A page of matching entities."""
        matching = self.find(**filters)
        end = None if limit is None else offset + limit
        return matching[offset:end]

    def count(self, **filters):
        return len(self.find(**filters))
