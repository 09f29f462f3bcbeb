"""Abstract base for persisted domain objects."""

from abc import ABC, abstractmethod

from ..utils.ids import new_id


class Entity(ABC):
    """Something with an identity that can be round-tripped through a dict.

    Subclasses set :attr:`id_prefix` and implement :meth:`to_dict` and
    :meth:`from_dict`.  Equality is by type and id.
    """

    id_prefix = "ent"

    def __init__(self, id=None):
        self.id = id or new_id(self.id_prefix)

    @abstractmethod
    def to_dict(self):
        """Return a JSON-compatible representation."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data):
        """Rebuild an instance from :meth:`to_dict` output."""

    def copy(self):
        """Deep copy via the serialised form."""
        return type(self).from_dict(self.to_dict())

    def __eq__(self, other):
        if not isinstance(other, Entity):
            return NotImplemented
        return type(self) is type(other) and self.id == other.id

    def __hash__(self):
        return hash((type(self).__name__, self.id))

    def __repr__(self):
        return f"<{type(self).__name__} {self.id}>"
