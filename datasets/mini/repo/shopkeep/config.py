"""Runtime configuration.

Settings can be built from a mapping (e.g. a parsed INI section), from
``SHOPKEEP_*`` environment variables, or from both via :func:`load_settings`,
where the environment wins.
"""

import configparser
import os
from dataclasses import dataclass, fields, replace
from decimal import Decimal, InvalidOperation

ENV_PREFIX = "SHOPKEEP_"
DEFAULT_CURRENCY = "USD"
DEFAULT_CACHE_TTL = 300.0
CONFIG_SECTION = "shopkeep"

_TRUE_VALUES = frozenset({"1", "true", "yes", "on"})
_FALSE_VALUES = frozenset({"0", "false", "no", "off", ""})


def _as_bool(value):
    """Interpret common textual spellings of a boolean."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE_VALUES:
        return True
    if text in _FALSE_VALUES:
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _coerce(kind, value):
    """Convert ``value`` to the type declared on a settings field."""
    if kind is bool:
        return _as_bool(value)
    if kind is Decimal:
        try:
            return Decimal(str(value).strip())
        except InvalidOperation as exc:
            raise ValueError(f"not a decimal: {value!r}") from exc
    if kind in (int, float):
        return kind(value)
    return str(value)


@dataclass(frozen=True)
class Settings:
    """Immutable bag of configuration values with sensible defaults."""

    currency: str = DEFAULT_CURRENCY
    tax_region: str = "US-CA"
    prices_include_tax: bool = False
    cache_ttl: float = DEFAULT_CACHE_TTL
    cache_size: int = 512
    reservation_minutes: int = 15
    data_dir: str = "./data"
    debug: bool = False
    free_shipping_threshold: Decimal = Decimal("75.00")
    max_parcel_kg: float = 20.0

    @classmethod
    def from_mapping(cls, values):
        """Build settings from a mapping of field name to raw value."""
        kwargs = {}
        for field in fields(cls):
            if field.name in values:
                kwargs[field.name] = _coerce(field.type, values[field.name])
        return cls(**kwargs).validated()

    @classmethod
    def from_env(cls, environ=None, base=None):
        """Overlay ``SHOPKEEP_*`` environment variables on ``base``."""
        environ = os.environ if environ is None else environ
        overrides = {}
        for field in fields(cls):
            key = ENV_PREFIX + field.name.upper()
            if key not in environ:
                continue
            raw = environ[key]
            if field.type is bool:
                overrides[field.name] = bool(raw)
            else:
                overrides[field.name] = _coerce(field.type, raw)
        base = base or cls()
        return replace(base, **overrides).validated()

    def validated(self):
        """Return ``self`` after checking cross-field invariants."""
        if len(self.currency) != 3 or not self.currency.isalpha():
            raise ValueError(f"invalid currency code {self.currency!r}")
        if self.cache_size < 0:
            raise ValueError("cache_size must not be negative")
        if self.reservation_minutes <= 0:
            raise ValueError("reservation_minutes must be positive")
        if self.free_shipping_threshold < 0:
            raise ValueError("free_shipping_threshold must not be negative")
        return self

    def as_dict(self):
        return {field.name: getattr(self, field.name) for field in fields(self)}


def load_settings(path=None, environ=None):
    """Load settings from an optional INI file, then apply the environment."""
    base = Settings()
    if path is not None and os.path.exists(path):
        parser = configparser.ConfigParser()
        parser.read(path, encoding="utf-8")
        if parser.has_section(CONFIG_SECTION):
            base = Settings.from_mapping(dict(parser.items(CONFIG_SECTION)))
    return Settings.from_env(environ, base=base)
