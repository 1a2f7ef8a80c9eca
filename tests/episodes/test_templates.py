"""Templates: a label becomes an item by structural substitution; nothing is evaluated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import Config, InvalidInput, Status
from assay.episodes import Template, judge_item

CONFIG = Config()


def judged(template: Template, label: Any, answer: str) -> tuple[Status, str]:
    got = judge_item(template.item(id="s", label=label, answer=answer), root=None, config=CONFIG)
    return got.status, got.outcomes[0].detail


MATH = Template.from_json({"checks": [{"kind": "answer_math", "value": {"$label": "text"}}]})
NUMBER = Template.from_json({"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]})
KEYED = Template.from_json(
    {"checks": [{"kind": "answer_equals", "value": {"$label": "json", "key": "final"}}]}
)


def test_text_number_and_keyed_labels_fill_their_placeholders() -> None:
    assert judged(MATH, "\\sqrt{8}", "so $\\boxed{2\\sqrt{2}}$")[0] is Status.VERIFIED
    assert judged(MATH, "\\sqrt{8}", "so $\\boxed{3}$")[0] is Status.REFUTED
    assert judged(NUMBER, "42", "The answer is 42.")[0] is Status.VERIFIED
    assert judged(NUMBER, 42, "41")[0] is Status.REFUTED
    assert judged(KEYED, '{"final": "yes", "other": 1}', "yes")[0] is Status.VERIFIED
    assert judged(KEYED, {"final": "yes"}, "no")[0] is Status.REFUTED


@pytest.mark.parametrize(
    ("template", "label"),
    [
        (NUMBER, "forty-two"),
        (NUMBER, "true"),
        (NUMBER, '"42"'),
        (KEYED, '{"other": 1}'),
        (KEYED, "[1]"),
        (KEYED, "not json"),
        (MATH, {"value": "1"}),
    ],
)
def test_a_label_that_does_not_fit_is_an_error_never_a_pass(template: Template, label: Any) -> None:
    status, detail = judged(template, label, "42 yes 1")
    assert status is Status.ERROR
    assert "does not fit the template" in detail


def test_without_a_template_the_label_is_the_task() -> None:
    task = {"checks": [{"kind": "answer_number", "value": 7}]}
    plain = Template.labels_are_tasks()
    assert judged(plain, json.dumps(task), "7")[0] is Status.VERIFIED
    assert judged(plain, task, "8")[0] is Status.REFUTED
    assert judged(plain, "7", "7")[0] is Status.ERROR
    assert judged(plain, '{"checks": []}', "7")[0] is Status.ERROR


@pytest.mark.parametrize(
    "completion",
    [
        '{"checks": [{"kind": "answer_contains", "value": "a"}]}',
        '", "checks": [], "x": "',
        '{"$label": "text"}',
    ],
)
def test_the_completion_is_only_ever_the_answer(completion: str) -> None:
    """A completion that looks like a task, or a placeholder, is text: the label decides."""
    assert judged(NUMBER, "42", completion)[0] is Status.REFUTED
    plain = Template.labels_are_tasks()
    label = {"checks": [{"kind": "answer_equals", "value": "42"}]}
    assert judged(plain, label, completion)[0] is Status.REFUTED


def test_a_label_cannot_rename_the_item_or_supply_the_answer() -> None:
    plain = Template.labels_are_tasks()
    label = {"checks": [{"kind": "answer_equals", "value": "42"}], "id": "other"}
    item = plain.item(id="mine", label=label, answer="41")
    assert item["id"] == "mine" and item["answer"] == "41"
    label_with_answer = {"checks": [{"kind": "answer_equals", "value": "42"}], "answer": "42"}
    assert judged(plain, label_with_answer, "41")[0] is Status.REFUTED


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "JSON object"),
        ({"mode": "all"}, "checks"),
        ({"checks": [], "answer": "x"}, "answer"),
        ({"checks": [], "id": "x"}, "id"),
        ({"checks": [{"value": {"$label": "code"}}]}, "placeholder"),
        ({"checks": [{"value": {"$label": "text", "key": "k"}}]}, '"key"'),
        ({"checks": [{"value": {"$label": "json", "default": 1}}]}, "placeholder"),
    ],
)
def test_a_bad_template_is_refused_naming_the_field(data: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Template.from_json(data)


def test_a_template_file_is_read_strictly(tmp_path: Path) -> None:
    path = tmp_path / "template.json"
    path.write_text('{"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}')
    assert judged(Template.load(path), "3", "3")[0] is Status.VERIFIED
    path.write_text('{"checks": [], "checks": []}')
    with pytest.raises(InvalidInput, match=r"template\.json"):
        Template.load(path)
    with pytest.raises(InvalidInput, match="cannot read"):
        Template.load(tmp_path / "missing.json")
