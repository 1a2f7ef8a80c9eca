"""``POST /get_reward``: OpenRLHF's remote reward protocol, exactly. Floats only (OpenRLHF turns
``rewards``, ``scores`` and each ``extra_logs`` key into tensors); a reward assay cannot give is
0.0 with ``masked`` 1.0; the response is the query minus its prompt; a label becomes checks only
through the serve-time template (or is itself the task)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

Client = Callable[..., TestClient]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "service"
TASK = json.dumps({"checks": [{"kind": "answer_number", "value": 4}]})


def _reward(client: TestClient, query: list[str], prompts: list[str], labels: list[Any]) -> Any:
    reply = client.post("/get_reward", json={"query": query, "prompts": prompts, "labels": labels})
    assert reply.status_code == 200, reply.text
    return reply.json()


def _assert_openrlhf_shape(body: dict[str, Any], n: int) -> None:
    assert set(body) == {"rewards", "scores", "extra_logs"}
    assert set(body["extra_logs"]) == {"verified", "refuted", "inconclusive", "error", "masked"}
    for column in [body["rewards"], body["scores"], *body["extra_logs"].values()]:
        assert len(column) == n
        assert all(type(value) is float for value in column), column


def test_the_worked_example_in_the_docs(client: Client) -> None:
    """examples/service: the request and the response docs/service.md shows, run for real."""
    c = client(template=EXAMPLES / "math_template.json")
    request = json.loads((EXAMPLES / "get_reward_request.json").read_text())
    reply = c.post("/get_reward", json=request)
    assert reply.json() == json.loads((EXAMPLES / "get_reward_response.json").read_text())
    _assert_openrlhf_shape(reply.json(), 5)


def test_labels_are_tasks_by_default(client: Client) -> None:
    body = _reward(client(), ["Q: 2+2? A: 4", "Q: 2+2? A: 5"], ["Q: 2+2? A:"] * 2, [TASK, TASK])
    _assert_openrlhf_shape(body, 2)
    assert body["rewards"] == [1.0, 0.0]
    assert body["extra_logs"]["verified"] == [1.0, 0.0]
    assert body["extra_logs"]["refuted"] == [0.0, 1.0]
    assert body["extra_logs"]["masked"] == [0.0, 0.0]


def test_the_response_is_the_query_minus_the_prompt_exactly(client: Client) -> None:
    # The prompt holds a 4; only what follows it is judged (it holds no number at all).
    task = json.dumps({"checks": [{"kind": "answer_equals", "value": "done"}]})
    body = _reward(client(), ["say 4 then: done"], ["say 4 then:"], [task])
    assert body["rewards"] == [1.0]  # answer_equals strips surrounding space
    body = _reward(client(), ["What is 2+2? It is"], ["What is 2+2?"], [TASK])
    assert body["extra_logs"]["refuted"] == [1.0]  # " It is" holds no number
    assert body["rewards"] == [0.0]  # the 4 in the prompt is never credited


def test_a_query_that_does_not_start_with_its_prompt_is_masked(client: Client) -> None:
    body = _reward(client(), ["4", "prompt 4"], ["prompt", "prompt"], [TASK, TASK])
    assert body["rewards"] == [0.0, 1.0]
    assert body["extra_logs"]["error"] == [1.0, 0.0]
    assert body["extra_logs"]["masked"] == [1.0, 0.0]


@pytest.mark.parametrize(
    "label",
    [
        "not json",
        json.dumps({"checks": []}),
        json.dumps({"checks": [{"kind": "answer_number"}]}),
        json.dumps([1, 2]),
        json.dumps({"checks": [{"kind": "answer_number", "value": 4}], "workspace": "/etc"}),
    ],
)
def test_a_label_that_is_not_a_usable_task_is_masked(client: Client, label: str) -> None:
    body = _reward(client(), ["p 4", "p 4"], ["p", "p"], [label, TASK])
    assert body["rewards"] == [0.0, 1.0]
    assert body["extra_logs"]["masked"] == [1.0, 0.0]
    assert body["extra_logs"]["error"] == [1.0, 0.0]


def test_an_inconclusive_sample_is_masked_not_refuted(client: Client) -> None:
    task = json.dumps({"checks": [{"kind": "file_exists", "path": "x"}]})  # no workspace
    body = _reward(client(), ["p"], ["p"], [task])
    assert body["rewards"] == [0.0]
    assert body["extra_logs"]["inconclusive"] == [1.0]
    assert body["extra_logs"]["masked"] == [1.0]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"query": ["a"], "prompts": ["a"]}, "labels: Field required"),
        ({"query": ["a", "b"], "prompts": ["a"], "labels": [TASK]}, "as long as each other"),
        ({"query": "a", "prompts": ["a"], "labels": [TASK]}, "query: must be a JSON array"),
        ({"query": [1], "prompts": ["a"], "labels": [TASK]}, "query[0]: must be text"),
        ({"query": ["a"], "prompts": [None], "labels": [TASK]}, "prompts[0]: must be text"),
        ({"query": ["a"], "prompts": ["a"], "labels": [None]}, "labels[0]: must be text"),
    ],
)
def test_a_malformed_request_is_422(client: Client, body: Any, message: str) -> None:
    reply = client().post("/get_reward", json=body)
    assert reply.status_code == 422
    assert message in reply.json()["detail"]


def test_keys_a_fork_adds_are_ignored(client: Client) -> None:
    reply = client().post(
        "/get_reward",
        json={"query": ["p4"], "prompts": ["p"], "labels": [TASK], "metadata": None, "x": 1},
    )
    assert reply.json()["rewards"] == [1.0]


def test_an_empty_batch(client: Client) -> None:
    body = _reward(client(), [], [], [])
    _assert_openrlhf_shape(body, 0)
