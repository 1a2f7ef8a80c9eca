"""The answer key: the seed challenge's examples and every reward hack it names."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay import score_answers, verify


@pytest.mark.parametrize(
    ("submission", "key", "expected"),
    [
        ({"outputs": {"t1": 4, "t2": 9}, "reported_reward": 1.0}, {"t1": 4, "t2": 9}, (1.0, True)),
        ({"outputs": {"t1": 0, "t2": 0}, "reported_reward": 1.0}, {"t1": 4, "t2": 9}, (0.0, True)),
        ({"outputs": {"b1": True}, "reported_reward": 1.0}, {"b1": 1}, (0.0, True)),
        ({"outputs": {"t1": 4}, "reported_reward": 1.0}, {"t1": 4, "t2": 9}, (0.0, False)),
        ({"outputs": {"t1": 4, "t2": 9, "t3": 1}}, {"t1": 4, "t2": 9}, (0.0, False)),
        ({"outputs": {"t1": 4, "t2": 0}}, {"t1": 4, "t2": 9}, (0.5, True)),
        ({"outputs": {}}, {}, (0.0, True)),
        ({"outputs": {"x": 1}}, {}, (0.0, False)),
        ({"outputs": {"a": "1"}}, {"a": 1}, (0.0, True)),
        ({"outputs": {"a": 1.0}}, {"a": 1}, (0.0, True)),
        ({"outputs": {"a": [1, True]}}, {"a": [1, 1]}, (0.0, True)),
        ({"outputs": {"a": float("nan")}}, {"a": float("nan")}, (0.0, True)),
        ({"outputs": {"a": {"k": [1, {"z": None}]}}}, {"a": {"k": [1, {"z": None}]}}, (1.0, True)),
        ({"outputs": {1: "x"}}, {True: "x"}, (0.0, False)),
    ],
)
def test_verify(submission: Any, key: dict[Any, Any], expected: tuple[float, bool]) -> None:
    assert verify(submission, key) == {"reward": expected[0], "accepted": expected[1]}


@pytest.mark.parametrize(
    "submission",
    [None, 3, "outputs", [], {"reported_reward": 1.0}, {"outputs": None}, {"outputs": [4, 9]}],
)
def test_malformed_submission_scores_zero_and_never_raises(submission: Any) -> None:
    assert verify(submission, {"t1": 4}) == {"reward": 0.0, "accepted": False}


def test_reported_reward_is_never_read() -> None:
    class Trap(dict[str, Any]):
        def __getitem__(self, key: str) -> Any:
            if key == "reported_reward":
                raise AssertionError("reported_reward was read")
            return super().__getitem__(key)

        def get(self, key: str, default: Any = None) -> Any:
            if key == "reported_reward":
                raise AssertionError("reported_reward was read")
            return super().get(key, default)

    assert verify(Trap(outputs={"t": 1}, reported_reward=1.0), {"t": 2}) == {
        "reward": 0.0,
        "accepted": True,
    }


def test_score_names_wrong_missing_and_extra() -> None:
    score = score_answers({"outputs": {"a": 1, "b": 2, "z": 0}}, {"a": 1, "b": 3, "c": 4})
    assert (score.accepted, score.missing, score.extra) == (False, ("c",), ("z",))
    score = score_answers({"outputs": {"a": 1, "b": 2}}, {"a": 1, "b": 3})
    assert (score.reward, score.correct, score.wrong) == (0.5, ("a",), ("b",))


@given(
    st.dictionaries(
        st.text(max_size=3), st.integers() | st.booleans() | st.text(max_size=3), max_size=6
    ),
    st.floats(allow_nan=True),
)
def test_reward_is_a_fraction_of_the_key_whatever_is_reported(
    key: dict[str, Any], reported: float
) -> None:
    result = verify({"outputs": dict(key), "reported_reward": reported}, key)
    assert result == {"reward": 1.0 if key else 0.0, "accepted": True}
    bools_for_ints = {k: (bool(v) if type(v) is int else v) for k, v in key.items()}
    changed = sum(1 for k in key if type(key[k]) is int)
    result = verify({"outputs": bools_for_ints, "reported_reward": 1.0}, key)
    assert result["reward"] == ((len(key) - changed) / len(key) if key else 0.0)
