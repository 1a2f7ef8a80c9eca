from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay._strict import JSON_DEPTH_LIMIT, StrictJSONError, loads_strict, strict_equal


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (True, 1),
        (1, True),
        (1.0, 1),
        ("1", 1),
        ([1, True], [1, 1]),
        ((1, 2), [1, 2]),
        ({"a": 1}, {"a": True}),
        ({1: "x"}, {True: "x"}),
        ({"a": 1}, {"a": 1, "b": 2}),
        ([1, 2], [1, 2, 3]),
        (float("nan"), float("nan")),
        ([float("nan")], [float("nan")]),
        (None, 0),
        (None, False),
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}),
    ],
)
def test_not_strictly_equal(a: Any, b: Any) -> None:
    assert not strict_equal(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 1),
        ("x", "x"),
        (None, None),
        ([1, [2, {"c": None}]], [1, [2, {"c": None}]]),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        (1.5, 1.5),
    ],
)
def test_strictly_equal(a: Any, b: Any) -> None:
    assert strict_equal(a, b)


def test_tolerance_makes_numbers_numeric_but_never_bools() -> None:
    assert strict_equal(2, 2.0000001, tolerance=1e-6)
    assert strict_equal([1.0, {"x": 3}], [1, {"x": 3.0}], tolerance=0.0)
    assert not strict_equal(1, True, tolerance=1.0)
    assert not strict_equal(2, 2.1, tolerance=0.05)
    assert not strict_equal(math.inf, math.inf, tolerance=1.0)
    assert not strict_equal(10**400, 1.0, tolerance=1.0)


def test_deep_nesting_does_not_recurse() -> None:
    a: Any = []
    b: Any = []
    for _ in range(100_000):
        a, b = [a], [b]
    assert strict_equal(a, b)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_reflexive_on_json(value: Any) -> None:
    assert strict_equal(value, value)


@given(json_values, json_values)
def test_strict_equality_implies_python_equality(a: Any, b: Any) -> None:
    if strict_equal(a, b):
        assert a == b


@given(json_values)
def test_a_bool_never_equals_a_number_inside_any_structure(value: Any) -> None:
    swapped = [value, True]
    assert not strict_equal(swapped, [value, 1])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": NaN}', "NaN is not a JSON value"),
        ("[Infinity]", "Infinity is not a JSON value"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": 1', "line 1, column 8"),
    ],
)
def test_loads_strict_refuses(text: str, message: str) -> None:
    with pytest.raises(StrictJSONError, match=message.replace("(", r"\(")):
        loads_strict(text)


def _nested(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize("data", [str, str.encode])
def test_nesting_past_the_limit_is_refused_whoever_parses(data: Any) -> None:
    """The limit is a number, not what is left of the caller's stack: the same depth reads the
    same from a shallow and from a deep caller."""

    def at_depth(frames: int, text: str | bytes) -> Any:
        return at_depth(frames - 1, text) if frames else loads_strict(text)

    limit = sys.getrecursionlimit()
    for frames in (0, limit // 4):
        assert loads_strict(data(_nested(JSON_DEPTH_LIMIT))) == json.loads(
            _nested(JSON_DEPTH_LIMIT)
        )
        assert at_depth(frames, data(_nested(JSON_DEPTH_LIMIT))) is not None
        with pytest.raises(StrictJSONError, match=f"deeper than {JSON_DEPTH_LIMIT} levels"):
            at_depth(frames, data(_nested(JSON_DEPTH_LIMIT + 1)))


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"s": "[" * 500}),  # brackets inside a string are text
        json.dumps({"s": '\\"' + "{" * 300}),  # after an escaped quote, still inside the string
        json.dumps([{"a": [1, {"b": "]]]]" * 50}]} for _ in range(200)]),  # wide, not deep
    ],
)
def test_brackets_that_do_not_nest_are_not_counted(text: str) -> None:
    assert loads_strict(text) == json.loads(text)
