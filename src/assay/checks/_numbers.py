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
from dataclasses import dataclass
from fractions import Fraction

_NUMBER = re.compile(
    r"""
    (?:(?<![0-9A-Za-z_.])(?P<sign>[-+]))?
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
_MAX_DIGITS = 400
_FLOAT_MAX = Fraction(1.7976931348623157e308)
_FLOAT_TINY = Fraction(4.9406564584124654e-324)
_MINUSES = str.maketrans({"−": "-", "–": "-", "\u00a0": " ", "\u202f": " "})


@dataclass(frozen=True)
class Number:
    """One number as written in the text."""

    text: str
    start: int
    end: int
    value: Fraction | None
    """The exact value, or None when the number is non-finite."""


class NumberProblem(ValueError):
    """Why the text does not hold exactly one usable number; ``reason`` names the failure."""

    def __init__(self, reason: str, message: str, numbers: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.numbers = numbers
        super().__init__(message)


def normalize(text: str) -> str:
    """Unicode minus and dashes become ``-``, no-break spaces become spaces (same length)."""
    return text.translate(_MINUSES)


def _parse(match: re.Match[str]) -> Number:
    raw = match.group(0)
    num, exp, den = match.group("num"), match.group("exp"), match.group("den")
    for part in (num, den):
        if part and "," in part and not _GROUPED.fullmatch(part):
            raise NumberProblem(
                "malformed",
                f"{raw!r} is not a well-formed number: thousands groups must have 3 digits "
                "(write 1,000,000 or 1000000)",
            )
    if den is not None and ("." in num or "." in den or exp is not None):
        raise NumberProblem(
            "malformed", f"{raw!r} is not a simple fraction: write integers, like 3/4"
        )
    digits = num.replace(",", "").replace(".", "").lstrip("0")
    if len(raw) > _MAX_DIGITS:
        raise NumberProblem("malformed", f"a number of {len(raw)} characters is too long")
    exponent = int(exp) if exp else 0
    if digits and len(digits) + exponent > 400:
        return Number(raw, match.start(), match.end(), None)
    if digits and len(digits) + exponent < -400:
        return Number(raw, match.start(), match.end(), None)
    value = Fraction(num.replace(",", ""))
    if exponent:
        value *= Fraction(10) ** exponent
    if den is not None:
        denominator = Fraction(den.replace(",", ""))
        if denominator == 0:
            return Number(raw, match.start(), match.end(), None)
        value /= denominator
    if match.group("sign") == "-":
        value = -value
    if abs(value) > _FLOAT_MAX or (value and abs(value) < _FLOAT_TINY):
        return Number(raw, match.start(), match.end(), None)
    return Number(raw, match.start(), match.end(), value)


def find_numbers(text: str) -> list[Number]:
    """Every number in ``text`` (already normalized), in order, units' digits absorbed."""
    found = [_parse(m) for m in _NUMBER.finditer(text)]
    if "n" in text or "N" in text or "∞" in text:
        found += [Number(m.group(0), m.start(), m.end(), None) for m in _NONFINITE.finditer(text)]
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
