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
# A word holding a letter: the only tokens that can name a unit (°C, m/s, km).
_WORDISH = re.compile(r"[^\s,;:!?()\[\]{}]*?[^\W\d][^\s,;:!?()\[\]{}]*")
_MAX_TOKENS = 2000
# English words pint also reads as units ("42 m in total": "in" is an inch).
_PROSE_WORDS = frozenset(
    [
        "in",
        "a",
        "at",
        "point",
        "points",
        "line",
        "lines",
        "hand",
        "hands",
        "chain",
        "link",
        "rod",
        "pole",
        "span",
        "cable",
        "second",
        "bit",
        "pi",
        "percent",
        "rad",
        "mil",
        "thou",
        "gross",
    ]
)
_SLACK_BITS = 49
SLACK = Fraction(1, 2**_SLACK_BITS)
"""Relative slack after a conversion whose factor pint computed in floats: a few ulps."""


@lru_cache(maxsize=1)
def registry() -> Any:
    """One pint registry for the process, made on first use: building it costs tens of milliseconds, and a unitless check never needs it."""
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
    return _unit_in(clause)


@lru_cache(maxsize=4096)
def _unit_in(clause: str) -> tuple[str, Any] | None:
    """Cached by the clause: the same unit phrase follows many different numbers."""
    words = clause.split()[:_MAX_WORDS]
    for count in range(len(words), 0, -1):
        if count > 1 and words[count - 1].lower().rstrip(".") in _PROSE_WORDS:
            continue  # "42 m in total" is 42 m, not 42 metre-inches
        candidate = " ".join(words[:count]).rstrip(".")
        unit = parse_unit(candidate)
        if unit is not None:
            return candidate, unit
    return None


def other_unit(
    text: str, number_start: int, number_end: int, written: str, target: str
) -> str | None:
    """Another unit of the target's dimension written anywhere in ``text`` besides the number's
    own unit ``written`` (the words right after ``number_end``): ``42 m or km`` hedges between
    two units. Too many words to read counts as a hedge (the answer cannot be cleared)."""
    count = len(written.split())
    own = _own_words(count).match(text, number_end)
    after = own.end() if own is not None else number_end
    words = _WORDISH.findall(text, 0, number_start) + _WORDISH.findall(text, after)
    if len(words) > _MAX_TOKENS:
        return "(too many words to read)"
    return _competing(tuple(words), written, target) if words else None


@lru_cache(maxsize=4096)
def _competing(words: tuple[str, ...], written: str, target: str) -> str | None:
    """The first of ``words`` that is a unit other than ``written`` of ``target``'s dimension."""
    unit = parse_unit(written)
    for token in words:
        word = token.rstrip(".")
        if word.lower() in _PROSE_WORDS:
            continue
        other = parse_unit(word)
        if other is not None and other != unit and same_dimension(word, target):
            return word
    return None


@lru_cache(maxsize=8)
def _own_words(count: int) -> re.Pattern[str]:
    return re.compile(rf"(?:[ \t]*[^\s,;:!?()\[\]{{}}]+){{{count}}}")


def _finite(number: Any, source: Any, target: Any) -> Fraction:
    value = float(number)
    if value != value or value in (float("inf"), float("-inf")):
        raise UnitProblem(f"converting {source} to {target} gives a non-finite value")
    return Fraction(repr(value))


def _exact_factor(decimal: Fraction, factor: float) -> tuple[Fraction, bool]:
    """The factor and whether it is exact: a short decimal (1000, 0.0254, 1e24) is taken as
    written in the definitions; a ratio with a small denominator within two ulps of the float
    (0.30479999999999996 is 381/1250, 0.2777777777777778 is 5/18) as that ratio. Anything else
    is the float, inexact."""
    significant = repr(factor).split("e")[0].replace(".", "").replace("-", "").strip("0")
    if len(significant) <= 12:
        return decimal, True
    ratio = Fraction(factor).limit_denominator(10**6)
    if abs(ratio - Fraction(factor)) <= abs(Fraction(factor)) / 2**51:
        return ratio, True
    return decimal, False


# The caches below are keyed by the unit texts, not by pint's unit objects: hashing those runs
# Python code in pint on every lookup, and these lookups are on the per-answer path.


@lru_cache(maxsize=4096)
def _factor(source: str, target: str) -> tuple[Fraction, bool] | None:
    """Multiplier from ``source`` to ``target`` and whether it is exact, or None (offset units)."""
    reg = registry()
    source_unit, target_unit = parse_unit(source), parse_unit(target)
    if not reg.Quantity(1, source_unit).is_compatible_with(target_unit):
        raise UnitProblem(f"{source_unit} cannot be converted to {target_unit}")
    if reg.Quantity(0, source_unit).to(target_unit).magnitude != 0:
        return None  # an offset scale (degC, degF): convert each value on its own
    factor = reg.Quantity(1, source_unit).to(target_unit).magnitude
    return _exact_factor(_finite(factor, source_unit, target_unit), float(factor))


@lru_cache(maxsize=4096)
def same_dimension(source: str, target: str) -> bool:
    """Whether the unit written ``source`` converts to the unit written ``target``."""
    try:
        source_unit, target_unit = parse_unit(source), parse_unit(target)
        if source_unit is None or target_unit is None:
            return False
        return bool(registry().Quantity(1, source_unit).is_compatible_with(target_unit))
    except Exception:  # see the module docstring: pint on candidate text
        return False


def convert(value: Fraction, source: str, target: str) -> tuple[Fraction, bool]:
    """``value`` in the unit written ``source`` expressed in ``target`` (both texts that
    parse_unit reads); the flag says the result is exact.

    UnitProblem when pint cannot convert (``delta_degC`` to ``degC``: a temperature difference
    is not a temperature), whatever pint raised.
    """
    try:
        factor = _factor(source, target)
        if factor is not None:
            multiplier, exact = factor
            if value.denominator == 1 == multiplier.denominator:  # no gcd to take
                return Fraction(value.numerator * multiplier.numerator), exact
            return value * multiplier, exact
        source_unit, target_unit = parse_unit(source), parse_unit(target)
        converted = registry().Quantity(float(value), source_unit).to(target_unit).magnitude
        return _finite(converted, source_unit, target_unit), False
    except UnitProblem:
        raise
    except Exception as exc:  # see the module docstring: pint on candidate text
        raise UnitProblem(
            f"{parse_unit(source)} cannot be converted to {parse_unit(target)} "
            f"({type(exc).__name__})"
        ) from None
