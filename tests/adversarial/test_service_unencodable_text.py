"""Unencodable text sent to the reward service: strict JSON reads a lone surrogate escape
(``"\\ud800"``), which UTF-8 cannot hold. Echoed back in an id, a key name, an answer-key id or
a refusal message, it once made the whole response fail (500 for every item of the batch). Every
answer must now be written, with the text escaped, and the other items still judged."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from assay.service import Settings, create_app

CHECK = b'[{"kind": "answer_number", "value": 4}]'


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(Settings()), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("route", "body", "status", "echo"),
    [
        (
            "/v1/verify",
            b'{"items": [{"id": "\\ud800", "checks": ' + CHECK + b', "answer": "4"},'
            b' {"id": "ok", "checks": ' + CHECK + b', "answer": "4"}]}',
            200,
            "\ud800",
        ),
        ("/v1/verify", b'{"items": [], "\\udc00": 1}', 422, "\udc00"),
        (
            "/v1/verify",
            b'{"items": [{"id": "ok", "checks": ' + CHECK + b', "\\udfff": 1}]}',
            200,
            None,
        ),
        (
            "/v1/answer-key",
            b'{"submission": {"outputs": {"\\ud800": 1}}, "answer_key": {"\\udc01": 1},'
            b' "detail": true}',
            200,
            "\udc01",
        ),
        ("/v1/answer-key", b'{"submission": 1, "answer_key": {}, "\\ud9ff": 0}', 422, "\ud9ff"),
        ("/get_reward", b'{"query": ["p4"], "prompts": ["p"], "labels": ["\\ud800"]}', 200, None),
    ],
)
def test_every_answer_is_written(
    client: TestClient, route: str, body: bytes, status: int, echo: str | None
) -> None:
    reply = client.post(route, content=body)
    assert reply.status_code == status, reply.text
    document = reply.json()  # valid JSON, its text escaped
    if echo is not None:
        assert echo in reply.text.encode().decode("unicode_escape", "surrogatepass")
    if route == "/v1/verify" and status == 200:
        statuses = [r["status"] for r in document["results"]]
        assert statuses[-1] in {"verified", "error"}
        assert len(statuses) == body.count(b'"id"')
