"""Path routing with typed parameters, e.g. ``/orders/{order_id}/lines``.

Parameters default to the ``str`` converter (one path segment); ``{n:int}``
only matches digits and converts the value.
"""

import re
from dataclasses import dataclass, field

from ..errors import ApiError

_PARAM_RE = re.compile(r"\{(?P<name>[A-Za-z_]\w*)(?::(?P<conv>\w+))?\}")

CONVERTERS = {
    "str": (r"[^/]+", str),
    "int": (r"\d+", int),
    "slug": (r"[a-z0-9]+(?:-[a-z0-9]+)*", str),
    "sku": (r"[A-Za-z0-9_-]+", str),
}


@dataclass
class Route:
    method: str
    pattern: str
    handler: object
    name: str
    regex: object = field(repr=False, default=None)
    converters: dict = field(repr=False, default_factory=dict)


class Router:
    """Maps ``(method, path)`` to handlers, first registered route wins."""

    def __init__(self, prefix=""):
        self.prefix = prefix.rstrip("/")
        self.routes = []
        self._by_name = {}

    def _compile(self, pattern):
        parts = []
        converters = {}
        position = 0
        for match in _PARAM_RE.finditer(pattern):
            parts.append(re.escape(pattern[position:match.start()]))
            name, conv = match.group("name"), match.group("conv") or "str"
            if conv not in CONVERTERS:
                raise ValueError(f"unknown converter {conv!r} in {pattern!r}")
            regex, converter = CONVERTERS[conv]
            parts.append(f"(?P<{name}>{regex})")
            converters[name] = converter
            position = match.end()
        parts.append(re.escape(pattern[position:]))
        return re.compile("^" + "".join(parts)), converters

    def add(self, method, pattern, handler, name=None):
        full = self.prefix + pattern
        regex, converters = self._compile(full)
        route = Route(method.upper(), full, handler, name or handler.__name__,
                      regex, converters)
        self.routes.append(route)
        self._by_name[route.name] = route
        return route

    def route(self, method, pattern, name=None):
        """Decorator form of :meth:`add`."""
        def decorator(handler):
            self.add(method, pattern, handler, name)
            return handler
        return decorator

    def match(self, method, path):
        """Return ``(route, params)`` or raise a 404/405 :class:`ApiError`."""
        if len(path) > 1:
            path = path.rstrip("/")
        allowed = set()
        for route in self.routes:
            found = route.regex.match(path)
            if found is None:
                continue
            if route.method != method.upper():
                allowed.add(route.method)
                continue
            params = {key: route.converters[key](value)
                      for key, value in found.groupdict().items()}
            return route, params
        if allowed:
            raise ApiError(405, "method not allowed", {"allowed": sorted(allowed)})
        raise ApiError(404, f"no route for {path}")

    def url_for(self, name, **params):
        route = self._by_name[name]

        def substitute(match):
            return str(params[match.group("name")])

        return _PARAM_RE.sub(substitute, route.pattern)
