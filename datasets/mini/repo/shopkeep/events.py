"""A minimal synchronous event bus used for domain hooks.

Services publish events such as ``"order.paid"`` with keyword payloads and
any number of handlers can subscribe.  Handlers registered with
:meth:`EventBus.once` are removed after their first delivery.
"""

import logging
from collections import defaultdict

log = logging.getLogger(__name__)

WILDCARD = "*"


class EventBus:
    """Dispatch named events to subscribed callables."""

    def __init__(self, raise_errors=False):
        self._handlers = defaultdict(list)
        self._once = set()
        self.raise_errors = raise_errors
        self.history = []

    def on(self, event, handler=None):
        """Subscribe ``handler`` to ``event``; usable as a decorator."""
        if handler is None:
            def register(fn):
                self._handlers[event].append(fn)
                return fn
            return register
        self._handlers[event].append(handler)
        return handler

    def once(self, event, handler):
        """Subscribe ``handler`` for a single delivery of ``event``."""
        self._handlers[event].append(handler)
        self._once.add((event, id(handler)))
        return handler

    def off(self, event, handler):
        """Unsubscribe; returns ``False`` if the handler was not registered."""
        try:
            self._handlers[event].remove(handler)
        except ValueError:
            return False
        self._once.discard((event, id(handler)))
        return True

    def subscribers(self, event):
        return list(self._handlers.get(event, ()))

    def emit(self, event, **payload):
        """Deliver ``event`` to its handlers, then to wildcard handlers.

        Returns the number of handlers that ran successfully.
        """
        self.history.append(event)
        delivered = 0
        for handler in self._handlers.get(event, ()):
            if (event, id(handler)) in self._once:
                self.off(event, handler)
            if self._call(handler, event, payload):
                delivered += 1
        if event != WILDCARD:
            for handler in list(self._handlers.get(WILDCARD, ())):
                if self._call(handler, event, dict(payload, event=event)):
                    delivered += 1
        return delivered

    def _call(self, handler, event, payload):
        try:
            handler(**payload)
        except Exception:
            log.exception("handler %r failed for event %s", handler, event)
            if self.raise_errors:
                raise
            return False
        return True

    def clear(self):
        self._handlers.clear()
        self._once.clear()


default_bus = EventBus()


def subscribe(event, bus=None):
    """Decorator subscribing a function to ``event`` on ``bus``."""
    target = bus or default_bus

    def decorator(fn):
        target.on(event, fn)
        return fn

    return decorator
