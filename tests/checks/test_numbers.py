from __future__ import annotations

import contextlib
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.checks._numbers import NumberProblem, exact, find_numbers, normalize, one_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("The answer is 42.", 42),
        ("-7", -7),
        ("+7", 7),
        ("−7", -7),
        ("3.0", 3),
        ("3.00", 3),
        ("1.5e3", 1500),
        ("2E-2", Fraction(1, 50)),
        ("1,000,000", 1_000_000),
        ("3/4", Fraction(3, 4)),
        ("-3/4", Fraction(-3, 4)),
        (".5", Fraction(1, 2)),
        ("\\boxed{42}", 42),
        ("x = -5", -5),
        ("3 m^2", 3),
        ("9.81 m/s^2", Fraction(981, 100)),
        ("0.1", Fraction(1, 10)),
    ],
)
def test_one_number(text: str, value: Fraction | int) -> None:
    assert one_number(normalize(text)).value == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "none"),
        ("forty-two", "none"),
        ("part 2: 42", "ambiguous"),
        ("11 or 711", "ambiguous"),
        ("3-4", "ambiguous"),
        ("10x10", "ambiguous"),
        ("3.14.15", "ambiguous"),
        ("1 000 000", "ambiguous"),
        ("\\frac{3}{4}", "ambiguous"),
        ("1,0000", "malformed"),
        ("12,5", "malformed"),
        ("1.5/2", "malformed"),
    ],
)
def test_not_exactly_one_number(text: str, reason: str) -> None:
    with pytest.raises(NumberProblem) as caught:
        one_number(normalize(text))
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    "text", ["nan", "NaN", "inf", "-inf", "Infinity", "∞", "1e400", "2e308", "1/0", "9" * 400]
)
def test_non_finite(text: str) -> None:
    assert one_number(normalize(text)).value is None


def test_words_containing_nan_or_inf_are_not_numbers() -> None:
    assert find_numbers("info about Nancy") == []


def test_suffix_is_never_the_number() -> None:
    assert one_number("711").value == 711


def test_huge_exponent_does_not_hang() -> None:
    assert one_number("1e999999999").value is None
    assert one_number("1e-999999999").value is None


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_integers_round_trip(n: int) -> None:
    assert one_number(str(n)).value == n
    assert one_number(f"{n:,}").value == n
    assert one_number(f"The answer is {n}.").value == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_round_trip_exactly_as_written(x: float) -> None:
    assert one_number(repr(x)).value == exact(x)


@given(st.integers(), st.integers(min_value=1, max_value=10**9))
def test_fractions(n: int, d: int) -> None:
    assert one_number(f"{n}/{d}").value == Fraction(n, d)


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_two_numbers_are_always_ambiguous(a: int, b: int) -> None:
    with pytest.raises(NumberProblem):
        one_number(f"{a} and {b}")


@given(st.text(max_size=40))
def test_never_raises_anything_but_number_problem(text: str) -> None:
    with contextlib.suppress(NumberProblem):
        one_number(normalize(text))
