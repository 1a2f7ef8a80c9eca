"""Units of measure through pint, loaded only when a check actually involves a unit.

pint is imported lazily (it costs ~0.4 s once) and every parse and conversion factor is cached,
so a unit check costs a dictionary lookup after the first answer. Text from the answer is only
handed to pint when it matches a narrow unit grammar: pint evaluates exponents, and
``m^(10^10^10)`` must never reach it.
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
    import pint

    try:
        unit = registry().parse_units(text)
    except (pint.errors.PintError, AttributeError, TypeError, ValueError, SyntaxError):
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


@lru_cache(maxsize=4096)
def _factor(source: Any, target: Any) -> tuple[Fraction, bool] | None:
    """Multiplier from ``source`` to ``target`` and whether it is exact, or None (offset units)."""
    reg = registry()
    if not reg.Quantity(1, source).is_compatible_with(target):
        raise UnitProblem(f"{source} cannot be converted to {target}")
    if reg.Quantity(0, source).to(target).magnitude != 0:
        return None  # an offset scale (degC, degF): convert each value on its own
    factor = reg.Quantity(1, source).to(target).magnitude
    return Fraction(repr(float(factor))), source == target


@lru_cache(maxsize=4096)
def same_dimension(source: Any, target: Any) -> bool:
    return bool(registry().Quantity(1, source).is_compatible_with(target))


def convert(value: Fraction, source: Any, target: Any) -> tuple[Fraction, bool]:
    """``value`` in ``source`` expressed in ``target``; the flag says the result is exact."""
    factor = _factor(source, target)
    if factor is not None:
        multiplier, exact = factor
        return value * multiplier, exact
    converted = registry().Quantity(float(value), source).to(target).magnitude
    return Fraction(repr(float(converted))), False
