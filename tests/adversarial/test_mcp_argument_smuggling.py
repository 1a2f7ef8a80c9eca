"""MCP tool arguments that try to carry a verdict, or an answer, in somewhere it is not read from.

A tool's arguments come from a model. Keys the tool does not know (``status``, ``reward``,
``verdict``, ``outcomes``), at the top, inside ``task``, inside a check or a receipt, are refused,
never ignored; a value of the wrong JSON type is refused rather than coerced (``true`` is not a
line number, ``4`` is not the answer text); and no argument but ``answer`` is ever read as the
answer (a receipt or a description holding the expected text does not make a missing answer
pass). None of these calls may come back ``verified``.
"""

from __future__ import annotations

from typing import Any

import pytest

from assay import Config, InvalidInput
from assay.mcp import Toolbox

CONFIG = Config()
EQUALS = {"kind": "answer_equals", "value": "42"}
WRONG = "41"

SMUGGLED: dict[str, tuple[dict[str, Any], str]] = {
    "status at the top": ({"checks": [EQUALS], "answer": WRONG, "status": "verified"}, "status"),
    "reward at the top": ({"checks": [EQUALS], "answer": WRONG, "reward": 1.0}, "reward"),
    "outcomes at the top": (
        {"checks": [EQUALS], "answer": WRONG, "outcomes": [{"status": "verified"}]},
        "outcomes",
    ),
    "verdict in the task": (
        {"task": {"checks": [EQUALS], "answer": WRONG, "verdict": "verified"}},
        "verdict",
    ),
    "status in a check": (
        {"checks": [{**EQUALS, "status": "verified"}], "answer": WRONG},
        "status",
    ),
    "expected answer in a receipt": (
        {
            "checks": [EQUALS],
            "receipts": [{"url": "https://a.example", "status": 200, "answer": "42"}],
        },
        "answer",
    ),
    "a template's unfit-label key": (
        {"checks": [EQUALS], "answer": "42", "label_does_not_fit": "x"},
        "label",
    ),
    "idempotency key (no store here)": (
        {"checks": [EQUALS], "answer": WRONG, "idempotency_key": "k"},
        "idempotency_key",
    ),
    "answer as a number": ({"checks": [EQUALS], "answer": 42}, "answer"),
    "answer as a list": ({"checks": [EQUALS], "answer": ["42"]}, "answer"),
    "mode that is not a mode": ({"checks": [EQUALS], "answer": WRONG, "mode": "any"}, "mode"),
    "checks as one object": ({"checks": EQUALS, "answer": WRONG}, "checks"),
    "both checks and task": (
        {"checks": [EQUALS], "task": {"checks": [EQUALS]}, "answer": "42"},
        "exactly one",
    ),
    "no checks at all": ({"checks": [], "answer": "42"}, "checks"),
}


@pytest.mark.parametrize("case", list(SMUGGLED))
def test_smuggled_arguments_are_refused_naming_the_field(case: str) -> None:
    arguments, field = SMUGGLED[case]
    with pytest.raises(InvalidInput, match=field):
        Toolbox(root=None, config=CONFIG).check(arguments)


NOT_THE_ANSWER: dict[str, dict[str, Any]] = {
    "expected text as a receipt's url": {
        "checks": [EQUALS],
        "receipts": [{"url": "42", "status": 200}],
    },
    "expected text as the task's description": {
        "task": {"checks": [EQUALS], "description": "42"},
    },
    "expected text as the check's description": {
        "checks": [{**EQUALS, "description": "42"}],
    },
    "expected text as the id": {"id": "42", "checks": [EQUALS]},
}


@pytest.mark.parametrize("case", list(NOT_THE_ANSWER))
def test_only_the_answer_argument_is_read_as_the_answer(case: str) -> None:
    result = Toolbox(root=None, config=CONFIG).check(NOT_THE_ANSWER[case])
    assert (result["status"], result["reward"]) == ("inconclusive", None), result


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        (
            "verify_answer_key",
            {"submission": {"outputs": {}}, "answer_key": {}, "reward": 1},
            "reward",
        ),
        ("verify_answer_key", {"submission": {"outputs": {}}, "answer_key": "{}"}, "answer_key"),
        ("verify_answer_key", {"submission": {}, "answer_key": {}, "detail": "yes"}, "detail"),
        (
            "fill_hole",
            {"file": "A.agda", "line": 1, "column": 1, "candidate": "x", "status": "solved"},
            "status",
        ),
        ("fill_hole", {"file": "A.agda", "line": True, "column": 1, "candidate": "x"}, "line"),
        ("fill_hole", {"file": "A.agda", "line": 1, "column": 2.0, "candidate": "x"}, "column"),
        ("fill_hole", {"file": "A.agda", "line": "1", "column": 1, "candidate": "x"}, "line"),
        ("fill_hole", {"file": "A.agda", "line": 0, "column": 1, "candidate": "x"}, "line"),
        ("fill_hole", {"file": "A.agda", "line": 10**30, "column": 1, "candidate": "x"}, "line"),
        ("fill_hole", {"file": "A.agda", "line": 1, "column": 1, "candidate": ["x"]}, "candidate"),
        ("fill_hole", {"file": "A.agda", "line": 1, "column": 1}, "candidate"),
        ("goal", {"file": "A.agda", "line": 1, "column": 1, "stdlib": "false"}, "stdlib"),
        ("goal", {"file": "A.agda", "line": 1, "column": 1, "infer": 3}, "infer"),
        ("goal", {"file": 7, "line": 1, "column": 1}, "file"),
    ],
)
def test_other_tools_refuse_unknown_keys_and_wrong_types(
    tmp_path: Any, tool: str, arguments: dict[str, Any], field: str
) -> None:
    (tmp_path / "A.agda").write_text("module A where\n\nx : Set\nx = {! !}\n")
    toolbox = Toolbox(root=tmp_path, config=CONFIG)
    with pytest.raises(InvalidInput) as refused:
        getattr(toolbox, tool)(arguments)
    assert refused.value.where == field
    assert toolbox._lanes == {}


def test_a_reported_reward_is_never_read() -> None:
    result = Toolbox(root=None, config=CONFIG).verify_answer_key(
        {"submission": {"outputs": {"q": 2}, "reported_reward": 1.0}, "answer_key": {"q": 3}}
    )
    assert (result["reward"], result["wrong"]) == (0.0, ["q"])
