"""Finding the one number in an answer, exactly.

The rules close the usual hacks of lenient number matching:

- every digit in the answer belongs to some number, so ``711`` is never read as ``11`` and
  "part 2: 42" is two numbers, not one;
- a unit written right after a number (``m^2``, ``km/h``) owns its digits, so ``3 m^2`` is one
  number;
- values are exact fractions (``3``, ``3.0``, ``3.00`` and ``6/2`` are the same number; ``0.1`` is
  one tenth, not the float nearest to it);
- ``nan``, ``inf`` and values beyond the float range are non-finite, and so never equal anything.

The scan is one compiled regular expression over the text: no process, no parser, no sympy.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

_DIGIT = re.compile(r"[0-9]")
# Matched from a digit (or the "." of ".5"); the sign is read by hand, which keeps the scan to a
# fast search for the next digit instead of a lookbehind tried at every character.
_NUMBER = re.compile(
    r"""
    (?P<num>[0-9](?:[0-9]|,(?=[0-9]))*(?:\.[0-9]+)?|\.[0-9]+)
    (?:[eE](?P<exp>[-+]?[0-9]+))?
    (?:/(?P<den>[0-9](?:[0-9]|,(?=[0-9]))*(?:\.[0-9]+)?))?
    """,
    re.VERBOSE,
)
_NONFINITE = re.compile(
    r"(?:(?<![0-9A-Za-z_.])[-+])?(?<![A-Za-z])(?:nan|infinity|inf|∞)(?![A-Za-z])", re.IGNORECASE
)
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
# A unit glued to the number it follows: it owns the digits inside it (m^2, s^-1, cm3).
_UNIT_WORD = re.compile(
    r"[ \t]?[A-WYZa-wyzµμΩ°%Å](?:[A-Za-z0-9µμΩ°%Å·⁻⁰¹²³⁴⁵⁶⁷⁸⁹_]|[\^*/](?=[-A-Za-zµμΩ°0-9])|-(?=[0-9]))*"
)
_MAX_CHARS = 400
_MAX_SCALE = 400
_FLOAT_MAX = int(1.7976931348623157e308)
_MINUSES = str.maketrans({"−": "-", "–": "-", "\u00a0": " ", "\u202f": " "})


class Number(NamedTuple):
    """One number as written in the text, kept as an exact ratio of integers."""

    text: str
    start: int
    end: int
    numerator: int
    denominator: int
    finite: bool = True
    """False for nan, inf, division by zero and values beyond the float range."""

    @property
    def value(self) -> Fraction | None:
        """The exact value, or None when the number is non-finite."""
        return Fraction(self.numerator, self.denominator) if self.finite else None

    def equals(self, expected: int | float) -> bool:
        """Exact for an int; at double precision for a float (the nearest double to the value)."""
        if not self.finite:
            return False
        if isinstance(expected, int):
            return self.numerator == expected * self.denominator
        return self.numerator / self.denominator == expected


class NumberProblem(ValueError):
    """Why the text does not hold exactly one usable number; ``reason`` names the failure."""

    def __init__(self, reason: str, message: str, numbers: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.numbers = numbers
        super().__init__(message)


def normalize(text: str) -> str:
    """Unicode minus and dashes become ``-``, no-break spaces become spaces (same length)."""
    return text if text.isascii() else text.translate(_MINUSES)


def _parse(text: str, match: re.Match[str]) -> Number:
    start, end = match.span()
    sign = None
    if start and text[start - 1] in "+-":
        before = text[start - 2] if start > 1 else " "
        if not (before.isalnum() or before in "_."):  # "3-4" is two numbers, "x=-4" is -4
            sign = text[start - 1]
            start -= 1
    raw = text[start:end]
    if len(raw) > _MAX_CHARS:
        raise NumberProblem("malformed", f"a number of {len(raw)} characters is too long")
    num, exp, den = match.group("num", "exp", "den")
    if exp is None and den is None and num.isdigit() and len(num) < 300:  # the common case
        value = int(num)
        return Number(raw, start, end, -value if sign == "-" else value, 1)
    if "," in num or (den and "," in den):
        for part in (num, den):
            if part and "," in part and not _GROUPED.fullmatch(part):
                raise NumberProblem(
                    "malformed",
                    f"{raw!r} is not a well-formed number: thousands groups must have 3 digits "
                    "(write 1,000,000 or 1000000)",
                )
        num, den = num.replace(",", ""), den and den.replace(",", "")
    if den is not None and ("." in num or "." in den or exp is not None):
        raise NumberProblem(
            "malformed", f"{raw!r} is not a simple fraction: write integers, like 3/4"
        )
    whole, _, decimals = num.partition(".")
    digits = (whole + decimals).lstrip("0")
    scale = (int(exp) if exp else 0) - len(decimals)
    order = len(digits) + scale  # the value lies in [10**(order-1), 10**order)
    if digits and not -_MAX_SCALE < order < _MAX_SCALE:
        return Number(raw, start, end, 0, 1, finite=False)  # far outside the float range
    mantissa = int(digits) if digits else 0
    numerator, denominator = (mantissa * 10**scale, 1) if scale >= 0 else (mantissa, 10**-scale)
    if den is not None:
        divisor = int(den)
        if divisor == 0:
            return Number(raw, start, end, 0, 1, finite=False)
        denominator *= divisor
    elif -300 < order < 300:
        return Number(raw, start, end, -numerator if sign == "-" else numerator, denominator)
    if sign == "-":
        numerator = -numerator
    magnitude = abs(numerator)
    too_big = magnitude > _FLOAT_MAX * denominator
    if too_big or (0 < magnitude < denominator and magnitude << 1074 < denominator):
        return Number(raw, start, end, 0, 1, finite=False)
    return Number(raw, start, end, numerator, denominator)


def find_numbers(text: str) -> list[Number]:
    """Every number in ``text`` (already normalized), in order, units' digits absorbed."""
    found: list[Number] = []
    position = 0
    while (digit := _DIGIT.search(text, position)) is not None:
        start = digit.start()
        if start and text[start - 1] == "." and not (start > 1 and text[start - 2].isdigit()):
            start -= 1  # ".5"
        match = _NUMBER.match(text, start)
        assert match is not None  # text[start] is a digit, or a "." before one
        found.append(_parse(text, match))
        position = match.end()
    lowered = text.lower()
    if "nan" in lowered or "inf" in lowered or "∞" in text:
        found += [
            Number(m.group(0), m.start(), m.end(), 0, 1, False) for m in _NONFINITE.finditer(text)
        ]
        found.sort(key=lambda n: n.start)
    if len(found) < 2:
        return found
    kept: list[Number] = []
    unit_end = -1
    for number in found:
        if number.start < unit_end:
            continue  # a digit inside the unit of the previous number (m^2, cm3)
        kept.append(number)
        unit = _UNIT_WORD.match(text, number.end)
        unit_end = unit.end() if unit else -1
    return kept


def one_number(text: str) -> Number:
    """The single number in ``text``, or NumberProblem saying why there is not exactly one."""
    numbers = find_numbers(text)
    if not numbers:
        raise NumberProblem("none", "no number found in the answer: write the value in digits")
    if len(numbers) > 1:
        shown = tuple(n.text for n in numbers)
        listed = ", ".join(shown[:6]) + (", ..." if len(shown) > 6 else "")
        raise NumberProblem(
            "ambiguous",
            f"the answer contains {len(numbers)} numbers ({listed}): give exactly one",
            shown,
        )
    return numbers[0]


def exact(value: int | float) -> Fraction:
    """The value an author meant: ``0.1`` is one tenth (its shortest repr), not the binary float."""
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))
