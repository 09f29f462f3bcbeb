"""A repository persisted as a single JSON document.

Good enough for small shops and demos: the whole collection is loaded on
start-up and rewritten atomically after every change.
"""

import json
import os
import tempfile

from ..errors import StorageError
from .memory import InMemoryRepository

FORMAT_VERSION = 2


class JsonFileRepository(InMemoryRepository):
    """In-memory repository that mirrors its content to ``path``.

    ``entity_type`` must provide ``from_dict``; entities must provide
    ``to_dict``.
    """

    def __init__(self, path, entity_type, kind=None, autosave=True):
        super().__init__(kind or entity_type.__name__.lower())
        self.path = path
        self.entity_type = entity_type
        self.autosave = autosave
        if os.path.exists(path):
            self.load()

    def load(self):
        try:
            with open(self.path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError) as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        version = document.get("version", 1)
        if version > FORMAT_VERSION:
            raise StorageError(f"{self.path} was written by a newer shopkeep (v{version})")
        self.clear()
        for record in document.get("items", []):
            entity = self.entity_type.from_dict(record)
            super().add(entity)
        return len(self)

    def flush(self):
        """Write all entities to disk atomically (write temp file, then rename)."""
        document = {
            "version": FORMAT_VERSION,
            "kind": self.kind,
            "items": [entity.to_dict() for entity in super().all()],
        }
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp_path = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, indent=2, sort_keys=True)
            os.replace(tmp_path, self.path)
        except BaseException:
            if os.path.exists(tmp_path):
                os.unlink(tmp_path)
            raise

    def _changed(self):
        if self.autosave:
            self.flush()

    def add(self, entity):
        result = super().add(entity)
        self._changed()
        return result

    def update(self, entity):
        result = super().update(entity)
        self._changed()
        return result

    def delete(self, entity_id):
        existed = super().delete(entity_id)
        if existed:
            self._changed()
        return existed
