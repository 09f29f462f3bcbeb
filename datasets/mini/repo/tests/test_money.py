from decimal import Decimal

import pytest

from shopkeep.errors import CurrencyMismatchError, ValidationError
from shopkeep.models.money import Money


def test_addition_and_sum():
    amounts = [Money("1.10"), Money("2.20"), Money("3.30")]
    assert sum(amounts) == Money("6.60")


def test_currency_mismatch():
    with pytest.raises(CurrencyMismatchError):
        Money("1", "USD") + Money("1", "EUR")


def test_float_input_is_exact():
    assert Money(0.1).amount == Decimal("0.1")


def test_quantize_rounds_half_up():
    assert Money("2.345").quantize() == Money("2.35")
    assert Money("2.344").quantize() == Money("2.34")


def test_minor_units_and_back():
    assert Money("12.34").minor_units == 1234
    assert Money.from_minor(1234, "USD") == Money("12.34")
    assert Money.from_minor(500, "JPY") == Money(500, "JPY")


def test_allocate_even_split_keeps_total():
    parts = Money("1.00").allocate([1, 1, 1])
    assert [p.amount for p in parts] == [Decimal("0.34"), Decimal("0.33"), Decimal("0.33")]
    assert sum(parts) == Money("1.00")


def test_format():
    assert Money("1234.5").format() == "$1,234.50"
    assert Money("-3", "EUR").format(symbol=False) == "-3.00 EUR"
    assert Money("1500", "JPY").format() == "\u00a51,500"


def test_rejects_garbage():
    with pytest.raises(ValidationError):
        Money("twelve")
    with pytest.raises(ValidationError):
        Money("1", "XXX")
