"""Persistence: repositories, caching and CSV import/export."""

from .base import Repository
from .cache import LRUCache, cached
from .jsonfile import JsonFileRepository
from .memory import InMemoryRepository

__all__ = ["InMemoryRepository", "JsonFileRepository", "LRUCache", "Repository", "cached"]
