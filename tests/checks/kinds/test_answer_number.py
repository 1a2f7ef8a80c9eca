from __future__ import annotations

from typing import Any

import pytest

from assay import InvalidSpec, Status
from tests.helpers import run_kind


def number(answer: str | None, **spec: Any) -> Any:
    return run_kind("answer_number", answer=answer, **spec)


@pytest.mark.parametrize(
    ("answer", "spec"),
    [
        ("3", {"value": 3}),
        ("3.0", {"value": 3}),
        ("3.00", {"value": 3.0}),
        ("The answer is 42.", {"value": 42}),
        ("0.1", {"value": 0.1}),
        ("1/3", {"value": 1 / 3}),
        ("3.14", {"value": 3.14159, "tolerance": 0.01}),
        ("105", {"value": 100, "rel_tolerance": 0.05}),
        ("1,000,000", {"value": 1e6}),
        ("1.5e3", {"value": 1500}),
        ("3 km", {"value": 3000, "unit": "m"}),
        ("3000 m", {"value": 3, "unit": "km"}),
        ("1 mile", {"value": 1.609344, "unit": "km"}),
        ("50%", {"value": 50, "unit": "%"}),
        ("25 °C", {"value": 298.15, "unit": "K"}),
        ("36 km/h", {"value": 10, "unit": "m/s"}),
        ("3 km", {"value": 3}),
        ("42", {"value": 42, "unit": None}),
        ("12345678901234567890", {"value": 12345678901234567890}),
    ],
)
def test_verified(answer: str, spec: dict[str, Any]) -> None:
    outcome = number(answer, **spec)
    assert outcome.status is Status.VERIFIED, outcome.detail


@pytest.mark.parametrize(
    ("answer", "spec", "message"),
    [
        ("711", {"value": 11}, "value outside tolerance: expected 11 (exactly), got 711"),
        ("no idea", {"value": 1}, "no number found"),
        ("", {"value": 1}, "no number found"),
        ("11 or 12", {"value": 11}, "2 numbers (11, 12)"),
        ("part 2: 42", {"value": 42}, "2 numbers"),
        ("nan", {"value": 1}, "'nan' is not a finite number"),
        ("inf", {"value": 1}, "not a finite number"),
        ("1e400", {"value": 1}, "not a finite number"),
        ("3", {"value": 3000, "unit": "m"}, "wrong unit: the answer has no unit"),
        ("3 kg", {"value": 3, "unit": "m"}, "wrong unit: 'kg' is not convertible"),
        ("3 m", {"value": 3, "unit": None}, "unit not expected"),
        ("3.2", {"value": 3, "tolerance": 0.1}, "expected 3 (within 0.1), got 3.2"),
        ("12345678901234567891", {"value": 12345678901234567890}, "value outside tolerance"),
        ("0.30000000000000004", {"value": 0.3}, "value outside tolerance"),
        ("1,0000", {"value": 10000}, "thousands groups must have 3 digits"),
    ],
)
def test_refuted_with_distinct_message(answer: str, spec: dict[str, Any], message: str) -> None:
    outcome = number(answer, **spec)
    assert outcome.status is Status.REFUTED
    assert message in outcome.detail


def test_no_answer_is_inconclusive() -> None:
    assert number(None, value=1).status is Status.INCONCLUSIVE


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({}, "value: Field required"),
        ({"value": "3"}, "value"),
        ({"value": True}, "value"),
        ({"value": float("nan")}, "value"),
        ({"value": 1, "tolerance": -1}, "tolerance"),
        ({"value": 1, "unit": "furlongs per apple"}, "unit"),
        ({"value": 1, "tolerence": 0.1}, "tolerence: unknown field"),
        ({"value": 1, "weight": 0}, "weight"),
        ({"value": 10**400}, "value: must be within the float range"),
        ({"value": -(10**400)}, "value: must be within the float range"),
    ],
)
def test_spec_is_validated_when_built(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidSpec, match=field):
        number("1", **spec)


def test_hostile_unit_text_is_never_evaluated() -> None:
    outcome = number("3 m^(10^10^10)", value=3, unit="m")
    assert outcome.status is Status.REFUTED


@pytest.mark.parametrize(
    ("answer", "status"),
    [("5", Status.VERIFIED), ("-0.5e308", Status.VERIFIED), ("-1e308", Status.REFUTED)],
)
def test_a_tolerance_past_the_float_range_still_decides(answer: str, status: Status) -> None:
    """The allowed difference (1.7e308 + half of 1.7e308) is beyond the float range: shown as
    inf, never an ``error`` for every answer."""
    outcome = number(answer, value=1.7e308, tolerance=1.7e308, rel_tolerance=0.5)
    assert outcome.status is status, outcome.detail


def test_the_largest_integer_key_still_compares() -> None:
    largest = int(1.7976931348623157e308)
    assert number(f"{largest}", value=largest).status is Status.VERIFIED
    assert number("5", value=largest, tolerance=1.0).status is Status.REFUTED
