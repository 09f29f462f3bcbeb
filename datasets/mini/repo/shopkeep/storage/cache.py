"""A small LRU cache with optional time-to-live, and a memoising decorator."""

import functools
import threading
import time
from collections import OrderedDict, namedtuple

CacheInfo = namedtuple("CacheInfo", "hits misses size maxsize")

_MISSING = object()


class LRUCache:
    """Least-recently-used cache.

    ``maxsize`` bounds the number of entries; when ``ttl`` (seconds) is set,
    entries older than that are treated as absent.
    """

    def __init__(self, maxsize=128, ttl=None, clock=time.monotonic):
        if maxsize <= 0:
            raise ValueError("maxsize must be positive")
        self.maxsize = maxsize
        self.ttl = ttl
        self._clock = clock
        self._data = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _expired(self, stored_at):
        return self.ttl is not None and self._clock() - stored_at > self.ttl

    def get(self, key, default=None):
        with self._lock:
            entry = self._data.get(key, _MISSING)
            if entry is _MISSING:
                self.misses += 1
                return default
            value, stored_at = entry
            if self._expired(stored_at):
                del self._data[key]
                self.misses += 1
                return default
            self.hits += 1
            return value

    def set(self, key, value):
        with self._lock:
            self._data[key] = (value, self._clock())
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def invalidate(self, key):
        with self._lock:
            return self._data.pop(key, _MISSING) is not _MISSING

    def clear(self):
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def info(self):
        return CacheInfo(self.hits, self.misses, len(self._data), self.maxsize)

    def __contains__(self, key):
        entry = self._data.get(key, _MISSING)
        return entry is not _MISSING and not self._expired(entry[1])

    def __len__(self):
        return len(self._data)


def _make_key(args, kwargs):
    if not kwargs:
        return args
    return args + (_MISSING,) + tuple(sorted(kwargs.items()))


def cached(cache=None, *, maxsize=128, ttl=None, key=None):
    """Memoise a function in an :class:`LRUCache`.

    ``key`` may compute the cache key from the call arguments (useful for
    methods, to leave ``self`` out).  The wrapper exposes ``.cache`` and
    ``.cache_clear()``.
    """

    def decorator(fn):
        store = cache if cache is not None else LRUCache(maxsize, ttl)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            cache_key = key(*args, **kwargs) if key else _make_key(args, kwargs)
            value = store.get(cache_key, _MISSING)
            if value is _MISSING:
                value = fn(*args, **kwargs)
                store.set(cache_key, value)
            return value

        wrapper.cache = store
        wrapper.cache_clear = store.clear
        return wrapper

    return decorator
