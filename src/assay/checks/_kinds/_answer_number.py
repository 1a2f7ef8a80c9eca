"""``answer_number``: exactly one finite number, within tolerance, in the right unit."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

from pydantic import AfterValidator, Field

from assay.checks import _units
from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome
from assay.checks._numbers import Number, NumberProblem, exact, normalize, one_number
from assay.checks._registry import kind
from assay.checks._spec import Spec
from assay.status import Outcome

_CONVERSION_SLACK = Fraction(1, 10**9)
"""Relative slack applied only after a unit conversion, for the float in pint's factor."""


class NumberSpec(Spec):
    value: int | float = Field(allow_inf_nan=False)
    """The expected number (finite), in ``unit`` when a unit is given."""
    tolerance: float = Field(0.0, ge=0, allow_inf_nan=False)
    """Absolute tolerance, in ``unit`` when a unit is given."""
    rel_tolerance: float = Field(0.0, ge=0, allow_inf_nan=False)
    """Relative tolerance, as a fraction of ``value``."""
    unit: Annotated[str, AfterValidator(_units.validate_unit)] | None = None
    """A pint unit (``m/s``, ``kg``, ``%``). Omitted: a unit in the answer is ignored.
    ``null`` given explicitly: a unit in the answer is refused."""

    @property
    def refuses_units(self) -> bool:
        return self.unit is None and "unit" in self.model_fields_set


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.15g}"


def _in_spec_unit(spec: NumberSpec, number: Number, text: str) -> tuple[Fraction, bool] | Outcome:
    """The number in the spec's unit and whether a conversion rounded it, or a refusal."""
    assert number.value is not None
    found = _units.unit_after(text, number.end)
    if spec.unit is None:
        if spec.refuses_units and found is not None:
            return Outcome.refuted(
                f"unit not expected: the answer gives {number.text} {found[0]}; give a bare number"
            )
        return number.value, False
    target = _units.parse_unit(spec.unit)
    if found is None:
        return Outcome.refuted(f"wrong unit: the answer has no unit; give the value in {spec.unit}")
    written, unit = found
    if not _units.same_dimension(unit, target):
        return Outcome.refuted(
            f"wrong unit: {written!r} is not convertible to {spec.unit!r}; give the value in {spec.unit}"
        )
    converted, exact_conversion = _units.convert(number.value, unit, target)
    return converted, not exact_conversion


@kind("answer_number", NumberSpec)
def answer_number(spec: NumberSpec, ctx: CheckContext) -> Outcome:
    """The answer holds exactly one finite number equal to ``value`` within the tolerances.

    Accepts signs, integers, decimals, scientific notation, thousands groups (``1,000,000``) and
    simple fractions (``3/4``); ``3``, ``3.0`` and ``3.00`` are the same number. Refused, each
    with its own message: no number, more than one number (every digit in the answer counts, so
    "part 2: 42" is ambiguous and 711 is never read as 11), a non-finite value (``nan``, ``inf``,
    ``1e400``), the wrong unit, a value outside tolerance. Values compare as exact fractions;
    after a unit conversion a relative slack of 1e-9 absorbs the conversion factor's rounding.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    text = normalize(answer)
    try:
        number = one_number(text)
    except NumberProblem as exc:
        return Outcome.refuted(str(exc), evidence={"reason": exc.reason})
    if number.value is None:
        return Outcome.refuted(
            f"{number.text!r} is not a finite number", evidence={"reason": "non-finite"}
        )
    try:
        converted = _in_spec_unit(spec, number, text)
    except _units.UnitProblem as exc:
        return Outcome.refuted(f"wrong unit: {exc}")
    if isinstance(converted, Outcome):
        return converted
    got, rounded = converted
    slack = _CONVERSION_SLACK if rounded else Fraction(0)
    expected = exact(spec.value)
    allowed = exact(spec.tolerance) + (exact(spec.rel_tolerance) + slack) * abs(expected)
    unit = f" {spec.unit}" if spec.unit else ""
    evidence = {"expected": spec.value, "got": float(got), "tolerance": float(allowed)}
    if abs(got - expected) <= allowed:
        return Outcome.verified(f"{_show(got)}{unit} matches {_show(expected)}{unit}", evidence)
    bound = f"within {float(allowed):g}" if allowed else "exactly"
    return Outcome.refuted(
        f"value outside tolerance: expected {_show(expected)}{unit} ({bound}), got {_show(got)}{unit}",
        evidence,
    )
