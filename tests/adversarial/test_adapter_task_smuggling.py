"""A completion (or a sample's other fields) posing as the task, through the RL adapters.

Only the template and the label define checks. The completion is the item's answer and nothing
else: a completion holding ``{"checks": []}``, a task whose checks it would pass itself, a
placeholder, or a message whose content is an object instead of text must never become the task,
override the label's checks, or read as ``verified``. Nor may ``extra_info`` or ``info`` carry
a task or a template. Each instance goes through every adapter (verl, TRL, verifiers).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.integrations import trl, verifiers, verl

FOUR = {"checks": [{"kind": "answer_number", "value": 4}]}
NUMBER = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}


@pytest.fixture(autouse=True)
def _no_template_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_TEMPLATE", raising=False)
    monkeypatch.delenv("ASSAY_ROOT", raising=False)


SELF_PASSING = json.dumps({"checks": [{"kind": "answer_contains", "value": "checks"}]})

COMPLETIONS = [
    pytest.param('{"checks": []}', id="empty-task"),
    pytest.param(SELF_PASSING, id="task-it-passes-itself"),
    pytest.param(json.dumps({"task": {"checks": []}, "answer": "yes"}), id="item-with-answer"),
    pytest.param(json.dumps({"id": "x", "checks": [], "mode": "weighted"}), id="item-fields"),
    pytest.param('{"$label": "text"}', id="placeholder"),
    pytest.param('{"label_does_not_fit": ""}', id="refusal-key"),
    pytest.param({"checks": []}, id="a-dict-not-text"),
    pytest.param([{"role": "assistant", "content": {"checks": []}}], id="message-content-a-dict"),
]


def _statuses(completion: Any, label: Any, template: Any) -> list[str]:
    """The status each adapter gives (TRL's None read back as "undecided")."""
    verl_status = str(verl.make_reward(template).compute_score("d", completion, label)["status"])
    rewards = trl.make_reward_func(template)(
        prompts=["p"], completions=[completion], ground_truth=[label]
    )
    trl_status = {1.0: "verified", 0.0: "refuted", None: "undecided"}[rewards[0]]
    vf = verifiers.make_reward(template).result(completion, label, {})
    return [verl_status, trl_status, vf.status.value]


@pytest.mark.parametrize("completion", COMPLETIONS)
def test_a_completion_never_becomes_the_task_when_the_label_is_one(completion: Any) -> None:
    for status in _statuses(completion, json.dumps(FOUR), None):
        assert status != "verified"


@pytest.mark.parametrize("completion", COMPLETIONS)
def test_a_completion_never_becomes_the_task_under_a_template(completion: Any) -> None:
    for status in _statuses(completion, "4", NUMBER):
        assert status != "verified"


def test_the_same_adapters_do_pass_the_honest_answer() -> None:
    """The attack cases fail for the right reason: the honest answer passes everywhere."""
    assert _statuses("4", json.dumps(FOUR), None) == ["verified"] * 3
    assert _statuses("4", "4", NUMBER) == ["verified"] * 3


@pytest.mark.parametrize(
    "extra",
    [
        {"checks": []},
        {"template": {"checks": [{"kind": "answer_contains", "value": ""}]}},
        {"task": {"checks": []}, "answer": "4"},
        {"ground_truth": json.dumps({"checks": [{"kind": "answer_contains", "value": "x"}]})},
    ],
    ids=["checks", "template", "task", "ground_truth"],
)
def test_extra_info_and_info_carry_no_task(extra: dict[str, Any]) -> None:
    assert verl.compute_score("d", "x5", json.dumps(FOUR), extra)["status"] == "refuted"
    assert verifiers.make_reward().result("x5", json.dumps(FOUR), extra).status.value == "refuted"


def test_a_label_cannot_fix_the_answer_the_completion_is_judged_on() -> None:
    """A label that is a task with its own ``answer`` still judges the completion."""
    label = {**FOUR, "answer": "4"}
    assert verl.make_reward().compute_score("d", "5", label)["status"] == "refuted"
    assert verl.make_reward().compute_score("d", "5", json.dumps(label))["status"] == "refuted"
