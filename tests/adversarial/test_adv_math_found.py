"""Holes an adversary found in ``answer_math`` (helper adv-math), one class per test, each with
several instances. Every instance was verified, or masked as inconclusive, before its fix.

Classes:
- cap masks: a wrong answer padded past a cap (``4 + 0 \\cdot 9^{9^{9^9}}``, 60 parentheses,
  1000 characters, a 401-digit literal) was inconclusive ("too large to decide"), which a
  trainer masks instead of scoring 0; now refuted whenever the reference is within the caps.
- fixed points: variables were compared at three fixed points that anyone can read in the code,
  so ``e^x + (x - p_0)(x - p_1)(x - p_2)`` agreed with ``e^x`` and went to sympy (inconclusive
  on timeout), and identities true only when every variable has the same sign or is small
  (``\\ln(x/y) = \\ln x - \\ln y``, ``\\arctan(\\tan x) = x``) were verified.
- zero powers: ``0^0`` read as 1 (exactly) although the numeric step calls it undefined;
  ``(x - x)^0`` was 1; and ``x^0`` was refuted against 1 (a monomial kept ``x^0``).
- reading: ``-2\\frac{1}{2}`` (the mixed number -2½) was -1 (the sign hid the mixed-number
  check), ``2{\\frac{1}{2}}`` (renders as 2½) was 1, ``-2 3`` -6, ``\\frac123`` 3/2, ``\\sqrt42``
  4, ``1/2x`` x/2, ``6/2(1+2)`` 9, ``\\frac{1}{2}3`` 3/2, ``x^2 3`` 3x^2, ``12{,}3456`` 123456
  (``{,}`` is also a decimal comma).
- scale words as units: with ``allow_units``, ``5\\text{ thousand}`` was 5.
- undefined answers: an answer (or an equation's side) with no value at any point
  (``\\ln(x - x)``) was inconclusive.
- stalls: ``time_limit`` applied to each symbolic question, so a set of 30 elements that each
  needed sympy took 70 s with a 1 s limit; now the limit covers the whole answer.
"""

from __future__ import annotations

import time
import zlib
from fractions import Fraction
from typing import Any

import pytest

from tests.helpers import I, R, V, run_kind


def math(answer: str, value: str, **spec: Any) -> Any:
    return run_kind("answer_math", answer=answer, value=value, **spec)


CAP_MASKS = [
    ("\\boxed{4 + 0\\cdot 9^{9^{9^9}}}", "3"),
    ("\\boxed{4+0\\cdot 2^{2^{2^{2^2}}}}", "3"),
    ("\\boxed{4+0\\cdot 5001!}", "3"),
    ("\\boxed{4 + 0 \\cdot e^{10^{7}}}", "3"),
    ("\\boxed{" + "(" * 60 + "4" + ")" * 60 + "}", "3"),
    ("\\boxed{4" + "+0" * 600 + "}", "3"),
    ("\\boxed{4" + "\\," * 600 + "}", "3"),
    ("\\boxed{4 + 0\\cdot " + "1" * 401 + "}", "3"),
    ("\\boxed{" + ",".join(["4"] * 70) + "}", "3"),
    ("\\boxed{\\frac{2^{200000}}{2^{199999}} + 1}", "2"),
    ("\\boxed{y = 2x + 2 + 0\\cdot e^{10^{7}}}", "y=2x+1"),
    ("\\boxed{y = 2x + 1 + 0\\cdot 5001!}", "y=2x+1"),
    ("\\boxed{\\sin x + (x+y+z+w)^{30} - (x+y+z+w)^{30}}", "\\cos x"),
]


@pytest.mark.parametrize(("answer", "value"), CAP_MASKS, ids=lambda x: str(x)[:30])
def test_a_wrong_answer_cannot_mask_itself_with_a_cap(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{\\frac{2^{200000}}{2^{199999}}}", "2"),
        ("\\boxed{(x+y+z+w)^{30} - (x+y+z+w)^{30} + x}", "x"),
        # the reference is over a cap at some drawn points only: the other points decide
        ("\\boxed{(e^{x})^{400000}}", "e^{400000x}"),
    ],
)
def test_a_correct_answer_past_an_exact_step_cap_is_still_decided(answer: str, value: str) -> None:
    # the exact steps' caps (digits, terms) are their own limits: the numeric step goes on
    outcome = math(answer, value)
    assert outcome.status is V, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{9^{9^{9^9}}}", "9^{9^{9^9}}+1"),
        ("\\boxed{1}", "5001!"),
        ("\\boxed{2}", "e^{10^{7}}"),
    ],
)
def test_a_reference_over_a_cap_still_decides_nothing(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is I, outcome.detail
    assert "too large to decide" in outcome.detail


def _fixed_points(name: str) -> tuple[Fraction, Fraction, tuple[Fraction, Fraction]]:
    """The three fixed points ``_numeric`` gives a variable, computed the way it does."""
    spread = Fraction(zlib.crc32(name.encode()) % 9973, 9973)
    return (
        Fraction(1, 2) + spread,
        -(Fraction(7, 10) + spread),
        (Fraction(3, 10) + spread, Fraction(9, 10)),
    )


def _vanishing(name: str) -> str:
    """A polynomial in ``name`` that is 0 at exactly the three fixed points."""
    p0, p1, (re, im) = _fixed_points(name)

    def frac(value: Fraction) -> str:
        return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"

    return f"({name}-{frac(p0)})({name}+{frac(-p1)})({name}-{frac(re)}-{frac(im)}i)"


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{e^x + " + _vanishing("x") + "}", "e^x"),
        ("\\boxed{\\sin x + " + _vanishing("x") + "}", "\\sin x"),
        ("\\boxed{\\ln(t) + " + _vanishing("t") + "}", "\\ln t"),
        ("\\boxed{\\sin x + " + _vanishing("x") + "\\sin(\\sin(\\sin(x)))^{40}}", "\\sin x"),
    ],
    ids=["exp", "sin", "ln", "slow-sympy"],
)
def test_a_difference_vanishing_at_the_fixed_points_is_refuted(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{\\ln(x/y)}", "\\ln x - \\ln y"),
        ("\\boxed{\\arctan(\\tan x)}", "x"),
        ("\\boxed{\\arcsin(\\sin x)}", "x"),
        ("\\boxed{\\frac{\\sqrt{x}}{\\sqrt{y}}}", "\\sqrt{x/y}"),
    ],
)
def test_identities_true_only_near_the_fixed_points_are_not_verified(
    answer: str, value: str
) -> None:
    outcome = math(answer, value)
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{0^0}", "1"),
        ("\\boxed{0^0\\pi}", "\\pi"),
        ("\\boxed{(x-x)^0}", "1"),
        ("\\boxed{(x-x)^{0}\\pi}", "\\pi"),
        ("\\boxed{(\\sqrt2-\\sqrt2)^{0}}", "1"),
        ("\\boxed{\\ln(x-x)}", "1"),
        ("\\boxed{\\ln(x - x) + y = 2x + 1}", "y=2x+1"),
        ("\\boxed{y = 2x + 1 + 0\\cdot\\ln(0)}", "y=2x+1"),
    ],
)
def test_values_that_do_not_exist_are_refuted(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [("\\boxed{x^0}", "1"), ("\\boxed{(x+1)^{0}}", "1"), ("\\boxed{\\pi^0 x}", "x")],
)
def test_a_nonzero_base_to_the_power_zero_is_one(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is V, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{2{\\frac{1}{2}}}", "1"),
        ("\\boxed{3\\,{\\frac{3}{4}}}", "\\frac94"),
        ("\\boxed{\\frac123}", "\\frac32"),
        ("\\boxed{\\sqrt42}", "4"),
        ("\\boxed{√23}", "3\\sqrt2"),
        ("\\boxed{\\frac{1}{2}3}", "\\frac32"),
        ("\\boxed{\\sqrt{2}3}", "3\\sqrt2"),
        ("\\boxed{\\binom{5}{2}3}", "30"),
        ("\\boxed{1/2x}", "\\frac{x}{2}"),
        ("\\boxed{1/2\\pi}", "\\frac{\\pi}{2}"),
        ("\\boxed{6/2(1+2)}", "9"),
        ("\\boxed{x/2y}", "\\frac{xy}{2}"),
        ("\\boxed{6 \\div 2(1+2)}", "9"),
        ("\\boxed{-2\\frac{1}{2}}", "-1"),
        ("\\boxed{-2 3}", "-6"),
        ("\\boxed{-\\frac{1}{2}3}", "-\\frac32"),
        ("\\boxed{x^2 3}", "3x^2"),
        ("\\boxed{2^1 0}", "0"),
        ("\\boxed{3! 2}", "12"),
        ("\\boxed{x^{-1}2}", "\\frac{2}{x}"),
        ("\\boxed{12{,}3456}", "123456"),
        ("\\boxed{3{,}14159}", "314159"),
    ],
)
def test_ambiguous_writing_is_refused(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is R, outcome.detail
    assert outcome.evidence.get("reason") == "unreadable", outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("\\boxed{\\frac12}", "0.5"),
        ("\\boxed{\\dfrac{1}{2}x}", "x/2"),
        ("\\boxed{3\\sqrt2}", "\\sqrt{18}"),
        ("\\boxed{1/2 \\cdot x}", "x/2"),
        ("\\boxed{\\pi/2}", "\\frac{\\pi}{2}"),
        ("\\boxed{2\\left(\\frac{1}{2}\\right)}", "1"),
        ("\\boxed{3/4\\%}", "0.75\\%"),
        ("\\boxed{1{,}000{,}000}", "1000000"),
        ("\\boxed{\\sqrt{2}x}", "x\\sqrt2"),
        ("\\boxed{2^x 3^y}", "3^y 2^x"),
        ("\\boxed{-2\\sqrt{2}}", "-\\sqrt8"),
        ("\\boxed{2 \\cdot -3}", "-6"),
    ],
)
def test_unambiguous_neighbours_still_verify(answer: str, value: str) -> None:
    outcome = math(answer, value)
    assert outcome.status is V, outcome.detail


@pytest.mark.parametrize(
    "word", ["thousand", "million", "dozen", "squared", "halves", "hundredths", "negative", "ppm"]
)
def test_a_scale_word_is_not_a_unit(word: str) -> None:
    outcome = math(f"\\boxed{{5\\text{{ {word}}}}}", "5", allow_units=True)
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize("unit", ["cm", "m/s", "apples", "kg"])
def test_a_real_unit_is_still_ignored_when_allowed(unit: str) -> None:
    outcome = math(f"\\boxed{{5\\text{{ {unit}}}}}", "5", allow_units=True)
    assert outcome.status is V, outcome.detail


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="remaining: a constant that differs from the reference below 60 digits and that "
    "sympy cannot separate within time_limit is inconclusive, not refuted (needs the "
    "reference's value to 35 digits; equality of constants is undecidable in general)",
)
def test_a_constant_wrong_below_the_working_precision_is_refuted() -> None:
    try:
        outcome = math("\\boxed{\\pi + \\sin(\\pi + e^{-100000}) + e^{-100000}}", "\\pi")
    finally:
        _wait_for_the_worker()  # this check may kill the shared worker: leave it ready
    assert outcome.status is not V
    assert outcome.status is R, outcome.detail


def _wait_for_the_worker() -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        outcome = math("\\boxed{2\\sin x\\cos x}", "\\sin(2x)")
        if outcome.status is V:
            return
        time.sleep(0.2)


@pytest.mark.slow
def test_the_symbolic_time_limit_bounds_the_whole_answer_not_each_element() -> None:
    # 30 set elements that each need sympy took 70 s with a 1 s limit (one ask per element)
    elements = ", ".join(f"{k + 1}\\sin(5x) - {k}\\sin(5x)" for k in range(1, 31))
    reference = "\\{16\\sin^5 x - 20\\sin^3 x + 5\\sin x, 7\\}"
    _wait_for_the_worker()
    start = time.monotonic()
    try:
        outcome = math(f"\\boxed{{\\{{{elements}\\}}}}", reference, time_limit=0.5)
    finally:
        _wait_for_the_worker()
    assert outcome.status is R, outcome.detail  # 7 is missing: found after the budget is spent
    assert time.monotonic() - start < 15, "the symbolic limit was spent once per element"
