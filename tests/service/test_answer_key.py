"""``POST /v1/answer-key``: the same JSON ``assay verify`` prints for the same submission and
key (the command and the route call one function, ``score_answers``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import app

Client = Callable[..., TestClient]
KEY = {"t1": 1, "t2": [1, 2], "t3": {"a": True}}
SUBMISSIONS = [
    {"outputs": {"t1": 1, "t2": [1, 2], "t3": {"a": True}}},
    {"outputs": {"t1": 1, "t2": [1, 2], "t3": {"a": 1}}},  # True is not 1
    {"outputs": {"t1": 1.0, "t2": [1, 2], "t3": {"a": True}}},  # 1.0 is not 1
    {"outputs": {"t1": 1}, "reported_reward": 1.0},  # partial coverage, a self-report
    {"outputs": {"t1": 1, "t2": [1, 2], "t3": {"a": True}, "t4": 0}},  # padding
    {"outputs": "everything"},
    [1, 2, 3],
    None,
]


def _cli(tmp_path: Path, submission: Any, key: Any, detail: bool) -> Any:
    (tmp_path / "s.json").write_text(json.dumps(submission))
    (tmp_path / "k.json").write_text(json.dumps(key))
    args = ["verify", str(tmp_path / "s.json"), str(tmp_path / "k.json")]
    result = CliRunner().invoke(app, args + (["--detail"] if detail else []))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("detail", [False, True])
@pytest.mark.parametrize("submission", SUBMISSIONS)
def test_the_same_json_as_assay_verify(
    client: Client, tmp_path: Path, submission: Any, detail: bool
) -> None:
    body = {"submission": submission, "answer_key": KEY, "detail": detail}
    reply = client().post("/v1/answer-key", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json() == _cli(tmp_path, submission, KEY, detail)


def test_detail_defaults_to_off_as_in_the_cli(client: Client) -> None:
    reply = client().post("/v1/answer-key", json={"submission": SUBMISSIONS[0], "answer_key": KEY})
    assert reply.json() == {"schema": "assay.answer_key_score/1", "reward": 1.0, "accepted": True}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"submission": {}, "answer_key": [1]}, "answer_key: the answer key must be a JSON object"),
        ({"answer_key": {}}, "submission: Field required"),
        ({"submission": {}, "answer_key": {}, "detail": "yes"}, "detail: must be true or false"),
        ({"submission": {}, "answer_key": {}, "reward": 1.0}, "reward: unknown field"),
    ],
)
def test_bad_requests_are_422(client: Client, body: Any, message: str) -> None:
    reply = client().post("/v1/answer-key", json=body)
    assert reply.status_code == 422
    assert reply.json() == {"detail": message} or message in reply.json()["detail"]
