"""Unit text that crashes pint is a finding about the answer, never ``error`` (issue 7, Masking).

pint is third-party code reading text the candidate wrote; whatever it raises while parsing or
converting an answer's unit, the outcome is refuted with the reason (the answer must give the
value in a unit convertible to the author's), so a policy cannot turn a wrong answer into a
masked ``error`` by writing a unit pint chokes on.
"""

from __future__ import annotations

import pytest

from assay import Status
from assay.checks import _units
from tests.helpers import run_kind


@pytest.mark.parametrize(
    ("answer", "unit"),
    [
        ("5 m⁻⁰", "m"),
        ("5 m^0", "m"),
        ("5 m**0", "K"),
        ("5 Hz^-0", "Hz"),
        ("5 delta_degC", "degC"),
        ("5 delta_degF", "degF"),
        ("5 degC", "delta_degC"),
        ("5 degF", "delta_degC"),
        ("5 Mm^99", "m^99"),
        ("5 m**1e9", "m"),
        ("5 1/0 m", "m"),
        ("5 m^(10^10^10)", "m"),
        ("5 kelvin^0", "K"),
    ],
)
def test_a_unit_pint_cannot_handle_is_refuted(answer: str, unit: str) -> None:
    outcome = run_kind("answer_number", answer=answer, value=5, unit=unit)
    assert outcome.status is Status.REFUTED, (answer, unit, outcome.detail)
    assert outcome.detail


@pytest.mark.parametrize("text", ["m⁻⁰", "m^0", "m**00", "kelvin^0", "Hz^0", "m^-0"])
def test_parse_unit_never_raises(text: str) -> None:
    assert _units.parse_unit(text) is None


@pytest.mark.parametrize(
    ("answer", "unit", "value"),
    [("25 degC", "K", 298.15), ("5 delta_degC", "delta_degC", 5), ("77 degF", "degC", 25)],
)
def test_offset_units_still_convert(answer: str, unit: str, value: float) -> None:
    outcome = run_kind("answer_number", answer=answer, value=value, unit=unit, rel_tolerance=1e-9)
    assert outcome.status is Status.VERIFIED, outcome.detail
