"""Units of measure through pint, loaded only when a check actually involves a unit.

pint is imported lazily (it costs ~0.4 s once) and every parse and conversion factor is cached,
so a unit check costs a dictionary lookup after the first answer. Text from the answer is only
handed to pint when it matches a narrow unit grammar: pint evaluates exponents, and
``m^(10^10^10)`` must never reach it.

pint is third-party code reading text the candidate wrote, and it raises more than its own errors
(``m^0`` raises KeyError, a temperature difference against a temperature DimensionalityError). So
every failure while parsing an answer's unit means "not a unit this verifier reads", and every
failure while converting means "not convertible": both are findings about the answer (the answer
must give the value in a unit convertible to the author's), never an ``error`` outcome.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

_SAFE_UNIT = re.compile(
    r"(?:[A-Za-zµμΩ°%Å_]+(?:(?:\^|\*\*)-?[0-9]{1,2}|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})?)"
    r"(?:\s*(?:[/*·]|\s|\bper\b)\s*[A-Za-zµμΩ°%Å_]+(?:(?:\^|\*\*)-?[0-9]{1,2}|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})?)*"
)
_CLAUSE_END = re.compile(r"[,;:!?\n()\[\]{}]|\.(?:\s|$)")
_MAX_WORDS = 4


@lru_cache(maxsize=1)
def registry() -> Any:
    import pint

    return pint.UnitRegistry(autoconvert_offset_to_baseunit=True)


class UnitProblem(ValueError):
    """A unit that is not understood, or that cannot be converted."""


@lru_cache(maxsize=4096)
def parse_unit(text: str) -> Any | None:
    """The pint unit for ``text``, or None when ``text`` is not a unit pint knows."""
    text = text.strip()
    if not text or len(text) > 40 or not _SAFE_UNIT.fullmatch(text):
        return None
    try:
        unit = registry().parse_units(text)
        registry().Quantity(1, unit).to_base_units()  # units pint parses but cannot use
    except Exception:  # pint on candidate text: any failure means "not a unit we read"
        return None
    return unit


def validate_unit(text: str) -> str:
    """Spec validator: the author's unit must be one pint understands."""
    if parse_unit(text) is None:
        raise ValueError(
            f"{text!r} is not a unit this verifier understands (pint names: m/s, kg, %)"
        )
    return text


def unit_after(text: str, start: int) -> tuple[str, Any] | None:
    """The longest run of words at ``text[start:]`` (within the clause) that is a known unit."""
    clause = text[start:]
    end = _CLAUSE_END.search(clause)
    if end:
        clause = clause[: end.start()]
    words = clause.split()[:_MAX_WORDS]
    for count in range(len(words), 0, -1):
        candidate = " ".join(words[:count]).rstrip(".")
        unit = parse_unit(candidate)
        if unit is not None:
            return candidate, unit
    return None


def _finite(number: Any, source: Any, target: Any) -> Fraction:
    value = float(number)
    if value != value or value in (float("inf"), float("-inf")):
        raise UnitProblem(f"converting {source} to {target} gives a non-finite value")
    return Fraction(repr(value))


@lru_cache(maxsize=4096)
def _factor(source: Any, target: Any) -> tuple[Fraction, bool] | None:
    """Multiplier from ``source`` to ``target`` and whether it is exact, or None (offset units)."""
    reg = registry()
    if not reg.Quantity(1, source).is_compatible_with(target):
        raise UnitProblem(f"{source} cannot be converted to {target}")
    if reg.Quantity(0, source).to(target).magnitude != 0:
        return None  # an offset scale (degC, degF): convert each value on its own
    factor = reg.Quantity(1, source).to(target).magnitude
    return _finite(factor, source, target), source == target


@lru_cache(maxsize=4096)
def same_dimension(source: Any, target: Any) -> bool:
    try:
        return bool(registry().Quantity(1, source).is_compatible_with(target))
    except Exception:  # see the module docstring: pint on candidate text
        return False


def convert(value: Fraction, source: Any, target: Any) -> tuple[Fraction, bool]:
    """``value`` in ``source`` expressed in ``target``; the flag says the result is exact.

    UnitProblem when pint cannot convert (``delta_degC`` to ``degC``: a temperature difference
    is not a temperature), whatever pint raised.
    """
    try:
        factor = _factor(source, target)
        if factor is not None:
            multiplier, exact = factor
            return value * multiplier, exact
        converted = registry().Quantity(float(value), source).to(target).magnitude
        return _finite(converted, source, target), False
    except UnitProblem:
        raise
    except Exception as exc:  # see the module docstring: pint on candidate text
        raise UnitProblem(
            f"{source} cannot be converted to {target} ({type(exc).__name__})"
        ) from None
