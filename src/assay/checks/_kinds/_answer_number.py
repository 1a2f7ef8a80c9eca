"""``answer_number``: exactly one finite number, within tolerance, in the right unit."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator

from assay.checks import _units
from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome
from assay.checks._numbers import (
    FLOAT_MAX,
    Number,
    NumberProblem,
    exact,
    normalize,
    one_number,
)
from assay.checks._registry import kind
from assay.checks._spec import Spec
from assay.status import Outcome

_CONVERSION_SLACK = _units.SLACK
"""Relative slack applied only after a conversion whose factor is not exact (a few ulps)."""


class NumberSpec(Spec):
    """The expected number, its unit and tolerances, and what an answer's unit must be."""

    value: int | float = Field(allow_inf_nan=False)
    """The expected number (finite), in ``unit`` when a unit is given."""
    tolerance: float = Field(0.0, ge=0, allow_inf_nan=False)
    """Absolute tolerance, in ``unit`` when a unit is given."""
    rel_tolerance: float = Field(0.0, ge=0, allow_inf_nan=False)
    """Relative tolerance, as a fraction of ``value``."""
    unit: Annotated[str, AfterValidator(_units.validate_unit)] | None = None
    """A pint unit (``m/s``, ``kg``, ``%``). Omitted: a unit in the answer is ignored.
    ``null`` given explicitly: a unit in the answer is refused."""

    @field_validator("value", mode="before")
    @classmethod
    def _within_float_range(cls, value: object) -> object:
        """An integer past the float range can never be matched (an answer past it is not
        finite), and float() of it raises: refused here, naming the field."""
        if type(value) is int and not -FLOAT_MAX <= value <= FLOAT_MAX:
            raise ValueError("must be within the float range (about 1.8e308 either side of 0)")
        return value

    @property
    def refuses_units(self) -> bool:
        """True when the author said ``unit: null``: an answer that gives any unit is refuted."""
        return self.unit is None and "unit" in self.model_fields_set


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.15g}"


def _in_spec_unit(spec: NumberSpec, number: Number, text: str) -> tuple[Fraction, bool] | Outcome:
    """The number in the spec's unit and whether a conversion rounded it, or a refusal.

    Only called when the spec names a unit or refuses one: a unitless check never loads pint.
    """
    value = (
        Fraction(number.numerator)  # the common case, without a gcd
        if number.denominator == 1
        else Fraction(number.numerator, number.denominator)
    )
    found = _units.unit_after(text, number.end)
    if spec.unit is None:
        if found is not None:
            return Outcome.refuted(
                f"unit not expected: the answer gives {number.text} {found[0]}; give a bare number"
            )
        return value, False
    if found is None:
        return Outcome.refuted(f"wrong unit: the answer has no unit; give the value in {spec.unit}")
    written = found[0]
    if not _units.same_dimension(written, spec.unit):
        return Outcome.refuted(
            f"wrong unit: {written!r} is not convertible to {spec.unit!r}; give the value in {spec.unit}"
        )
    other = _units.other_unit(text, number.start, number.end, written, spec.unit)
    if other is not None:
        return Outcome.refuted(
            f"ambiguous unit: the answer names {written!r} and {other!r}; give one unit",
            evidence={"reason": "ambiguous"},
        )
    converted, exact_conversion = _units.convert(value, written, spec.unit)
    if abs(converted.numerator) > FLOAT_MAX * converted.denominator:
        return Outcome.refuted(
            f"{number.text} {written} in {spec.unit} is beyond the float range: not a finite "
            "number",
            evidence={"reason": "non-finite"},
        )
    return converted, not exact_conversion


_EPS = 2.0**-50
"""Bound on the relative error of the float shortcut below (a few ulps, generously)."""


def _clearly_within(spec: NumberSpec, got: float, slack: float) -> bool | None:
    """Decide in floats when the margin is far larger than their rounding error; else None."""
    expected = float(spec.value)
    allowed = spec.tolerance + (spec.rel_tolerance + slack) * abs(expected)
    margin = abs(got - expected) - allowed
    if abs(margin) > 4 * _EPS * (abs(got) + abs(expected) + allowed):
        return margin < 0
    return None


def _as_float(value: Fraction) -> float:
    """``value`` as a float for display; inf past the float range (a tolerance can be that
    wide: ``rel_tolerance`` 10 of 1e308), where float() would raise."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _within(
    spec: NumberSpec, got: Fraction, rounded: bool
) -> tuple[bool, Fraction, Fraction, Fraction]:
    """(matches, got, expected, allowed difference); exact, with a float shortcut when safe."""
    if isinstance(spec.value, float):
        # A float key means double precision: the answer counts as the double nearest to it.
        got, expected = Fraction(float(got)), Fraction(spec.value)
    else:
        expected = Fraction(spec.value)
    slack = _CONVERSION_SLACK if rounded else 0
    allowed = exact(spec.tolerance) + (exact(spec.rel_tolerance) + slack) * abs(expected)
    return abs(got - expected) <= allowed, got, expected, allowed


@kind("answer_number", NumberSpec)
def answer_number(spec: NumberSpec, ctx: CheckContext) -> Outcome:
    """The answer holds exactly one finite number equal to ``value`` within the tolerances.

    Accepts signs, integers, decimals, scientific notation, thousands groups (``1,000,000``) and
    simple fractions (``3/4``); ``3``, ``3.0`` and ``3.00`` are the same number. Refused, each
    with its own message: no number, more than one number (every digit of any script and every
    number-like token counts, so "part 2: 42", ``11 or711``, ``42 or ４３``, ``42²``, ``42 NaN``
    and ``42 or forty-three`` are ambiguous and 711 is never read as 11), a number that cannot be
    read exactly (``42 million``, ``42 hundredths``, ``$42m``, ``42k`` without a unit in the
    spec, ``±42``, ``42+``, ``½``, a sign word or a sign set apart by markup: ``minus 42``,
    ``-(42)``, ``-**42**``; an operator or function on it: ``√42``, ``e^42``, ``exp(42)``,
    ``\\sqrt{42}``, ``42π``, ``42 +/-``, ``0xFF``; a combining mark on it), a spelled or roman
    number beside it (``42 or fortythree``, ``42 or XLIII``; roman numerals of two letters or
    more count, a lone ``I``/``V``/``X`` does not), a
    non-finite value (``nan``, ``inf``, ``1e400``), the wrong unit (including any unit pint cannot
    read or convert), a value outside tolerance. A unit owns digits only as its exponent
    (``m^2``, ``m²``; not ``cm3``). An integer ``value`` compares exactly
    (big integers included); a float ``value`` compares at double precision (``1/3`` matches
    ``0.3333333333333333``, ``0.30000000000000004`` does not match ``0.3``). After a unit
    conversion whose factor pint computes inexactly, a relative slack of 2**-49 (a few ulps)
    absorbs its rounding; exact factors (km to m, inch to m) compare exactly. An answer naming
    two units of the target's dimension (``42 m or km``) is ambiguous.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    text = normalize(answer)
    try:
        number = one_number(text, magnitude_letters=spec.unit is None)
    except NumberProblem as exc:
        return Outcome.refuted(str(exc), evidence={"reason": exc.reason})
    if not number.finite:
        return Outcome.refuted(
            f"{number.text!r} is not a finite number", evidence={"reason": "non-finite"}
        )
    if spec.unit is None and not spec.refuses_units:
        # The hot path: no unit, so no pint; integer arithmetic, or floats when clearly decided.
        if (
            _clearly_within(spec, number.numerator / number.denominator, 0.0)
            if spec.tolerance or spec.rel_tolerance
            else number.equals(spec.value)
        ):
            return Outcome.verified(f"{number.text!r} matches {spec.value}")
        got, rounded, unit = Fraction(number.numerator, number.denominator), False, ""
    else:
        try:
            converted = _in_spec_unit(spec, number, text)
        except _units.UnitProblem as exc:
            return Outcome.refuted(f"wrong unit: {exc}")
        if isinstance(converted, Outcome):
            return converted
        got, rounded = converted
        unit = f" {spec.unit}" if spec.unit else ""
        if _clearly_within(spec, float(got), float(_CONVERSION_SLACK) if rounded else 0.0):
            return Outcome.verified(f"{number.text!r} matches {spec.value}{unit}")
    matched, got, expected, allowed = _within(spec, got, rounded)
    evidence = {"expected": spec.value, "got": float(got), "tolerance": _as_float(allowed)}
    if matched:
        return Outcome.verified(f"{number.text!r} matches {_show(expected)}{unit}", evidence)
    bound = f"within {_as_float(allowed):g}" if allowed else "exactly"
    return Outcome.refuted(
        f"value outside tolerance: expected {_show(expected)}{unit} ({bound}), "
        f"got {_show(got)}{unit} (from {number.text!r})",
        evidence,
    )
