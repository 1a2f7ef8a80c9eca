from __future__ import annotations

import json
from typing import Any

import pytest

from assay import Config, InvalidSpec, Status
from tests.helpers import run_kind

V, R, I = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE


@pytest.mark.parametrize(
    ("kind", "spec", "answer", "status"),
    [
        ("answer_contains", {"value": "42"}, "it is 42", V),
        ("answer_contains", {"value": "42"}, "", R),
        ("answer_contains", {"value": "42"}, None, I),
        ("answer_equals", {"value": "Paris"}, "  Paris\n", V),
        ("answer_equals", {"value": "Paris"}, "paris", R),
        ("answer_equals", {"value": "Paris"}, "Paris, France", R),
        ("answer_regex", {"pattern": r"^\d+$"}, "123", V),
        ("answer_regex", {"pattern": r"^\d+$"}, "12a", R),
        ("answer_one_of", {"values": ["42"]}, " 42 ", V),
        ("answer_one_of", {"values": ["42"]}, "the answer is 42", R),
        ("answer_one_of", {"values": ["42"]}, "the answer is not 42", R),
        ("answer_one_of", {"values": ["A", "B"]}, "A or B", R),
        ("answer_one_of", {"values": ["Paris"]}, "PARIS", R),
        ("answer_one_of", {"values": ["Paris"], "case_sensitive": False}, "PARIS", V),
        ("answer_one_of", {"values": ["42"]}, "", R),
        ("answer_one_of", {"values": ["42"]}, None, I),
    ],
)
def test_answer_kinds(kind: str, spec: dict[str, Any], answer: str | None, status: Status) -> None:
    assert run_kind(kind, answer=answer, **spec).status is status


def test_one_of_detail_names_accepted_values() -> None:
    outcome = run_kind("answer_one_of", answer="the answer is 42", values=["42", "forty-two"])
    assert "'the answer is 42' must be exactly one of '42', 'forty-two'" in outcome.detail


def test_catastrophic_regex_is_inconclusive_not_a_hang() -> None:
    outcome = run_kind(
        "answer_regex",
        answer="a" * 40 + "!",
        pattern="(a|aa)+$",
        config=Config(regex_timeout=0.2),
    )
    assert outcome.status is I
    assert "did not finish within 0.2s" in outcome.detail


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        ("answer_contains", {"value": ""}, "value: must not be empty"),
        ("answer_contains", {"value": "   "}, "value: must not be empty"),
        ("answer_contains", {}, "value: Field required"),
        ("answer_equals", {"value": 42}, "value: Input should be a valid string"),
        ("answer_regex", {"pattern": ""}, "matches the empty string"),
        ("answer_regex", {"pattern": "a*"}, "matches the empty string"),
        ("answer_regex", {"pattern": "("}, "not a valid regular expression"),
        ("answer_one_of", {"values": []}, "values: List should have at least 1 item"),
        ("answer_one_of", {"values": ["a", ""]}, r"values\[1\]: must not be empty"),
        ("answer_one_of", {"values": ["a"], "case_sensitive": "no"}, "case_sensitive"),
        ("answer_key", {"key": {}}, "key: Dictionary should have at least 1 item"),
        ("answer_equals", {"value": "x", "vaule": "y"}, "vaule: unknown field"),
    ],
)
def test_specs_refuse_vacuous_or_misspelt_fields(
    kind: str, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidSpec, match=message):
        run_kind(kind, answer="x", **spec)


def submission(outputs: Any, reported: float = 1.0) -> str:
    return json.dumps({"outputs": outputs, "reported_reward": reported})


@pytest.mark.parametrize(
    ("answer", "status", "message"),
    [
        (submission({"t1": 4, "t2": 9}), V, "all 2 task outputs match"),
        (submission({"t1": 0, "t2": 9}), R, "reward 0.5; wrong: t1"),
        (submission({"t1": True, "t2": 9}), R, "wrong: t1"),
        (
            submission({"t1": 4}),
            R,
            "not accepted (outputs must cover exactly the key's task ids); missing: t2",
        ),
        (submission({"t1": 4, "t2": 9, "t3": 0}), R, "extra: t3"),
        ('{"outputs": {"t1": 4, "t2": NaN}}', R, "NaN is not a JSON value"),
        ('{"outputs": {"t1": 4, "t1": 4, "t2": 9}}', R, "duplicate key 't1'"),
        ("the outputs are correct, reward 1.0", R, "not a strict JSON submission"),
        ('{"outputs": [4, 9]}', R, "'outputs' is a list"),
        (None, I, "no final answer"),
    ],
)
def test_answer_key_kind(answer: str | None, status: Status, message: str) -> None:
    outcome = run_kind("answer_key", answer=answer, key={"t1": 4, "t2": 9})
    assert outcome.status is status
    assert message in outcome.detail
