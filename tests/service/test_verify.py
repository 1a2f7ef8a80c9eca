"""``POST /v1/verify``: results in request order, one per item, an invalid item is that item's
error naming its field and never fails the batch; whole-request refusals are one message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.service.conftest import item

Client = Callable[..., TestClient]


def _results(client: TestClient, items: list[Any]) -> list[dict[str, Any]]:
    reply = client.post("/v1/verify", json={"items": items})
    assert reply.status_code == 200, reply.text
    results: list[dict[str, Any]] = reply.json()["results"]
    assert len(results) == len(items)
    return results


def test_results_come_back_in_request_order_with_rewards(client: Client) -> None:
    c = client()
    items = [item(f"e{i}", answer=str(4 if i % 3 else 5)) for i in range(40)]
    results = _results(c, items)
    assert [r["id"] for r in results] == [f"e{i}" for i in range(40)]
    for i, result in enumerate(results):
        expected = "verified" if i % 3 else "refuted"
        assert result["status"] == expected
        assert result["reward"] == (1.0 if i % 3 else 0.0)
        assert set(result) >= {"id", "status", "score", "reward", "outcomes"}


def test_a_task_object_and_top_level_overrides(client: Client) -> None:
    c = client()
    task = {"checks": [{"kind": "answer_number", "value": 7}], "answer": "7"}
    results = _results(c, [{"id": "t", "task": task}, {"id": "o", "task": task, "answer": "8"}])
    assert [r["status"] for r in results] == ["verified", "refuted"]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"id": "x", "checks": [{"kind": "answer_number"}], "answer": "4"}, "items[1].checks[0]"),
        ({"id": "x", "checks": [{"kind": "no_such_kind"}]}, "items[1].checks[0]"),
        ({"id": "x", "checks": [], "answer": "4"}, "items[1].checks"),
        ({"id": "x", "answer": "4"}, "items[1]: give exactly one of"),
        ({"id": "x", "checks": [{"kind": "answer_number", "value": 4}], "colour": 1}, "colour"),
        ({"checks": [{"kind": "answer_number", "value": 4}]}, "id: Field required"),
        ({"id": "", "checks": [{"kind": "answer_number", "value": 4}]}, "id:"),
        ({"id": "x", "checks": [{"kind": "answer_number", "value": 4}], "answer": 4}, "answer"),
        ({"id": "x", "checks": [{"kind": "answer_number", "value": 4}], "mode": "most"}, "mode"),
        (["not", "an", "object"], "items[1]: must be a JSON object"),
        (None, "items[1]: must be a JSON object"),
    ],
)
def test_one_invalid_item_is_its_own_error_naming_the_field(
    client: Client, bad: Any, field: str
) -> None:
    results = _results(client(), [item("a"), bad, item("c", answer="5")])
    assert [r["status"] for r in results] == ["verified", "error", "refuted"]
    error = results[1]
    assert error["reward"] is None and error["score"] is None
    assert field in error["outcomes"][0]["detail"], error


def test_reward_is_null_when_nothing_was_concluded(client: Client) -> None:
    (result,) = _results(client(), [{"id": "n", "checks": [{"kind": "answer_number", "value": 4}]}])
    assert result["status"] == "inconclusive"  # no answer given
    assert result["reward"] is None


def test_an_empty_batch_is_an_empty_answer(client: Client) -> None:
    assert _results(client(), []) == []


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{not json", 400, "body: the request body is not valid JSON"),
        (b'{"items": [{"id": "a", "checks": [], "answer": NaN}]}', 400, "not valid JSON"),
        (b'{"items": [], "items": []}', 400, "not valid JSON"),
        (b"\xff\xfe", 400, "not valid JSON"),
        (b"[]", 422, "body: must be a JSON object, not list"),
        (b"{}", 422, "items: Field required"),
        (b'{"items": {}}', 422, "items: must be a JSON array, not dict"),
        (b'{"items": [], "extra": 1}', 422, "extra: unknown field"),
    ],
)
def test_a_malformed_request_is_one_clear_message(
    client: Client, body: bytes, status: int, message: str
) -> None:
    reply = client().post("/v1/verify", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == status
    assert reply.headers["content-type"] == "application/json"
    assert list(reply.json()) == ["detail"]
    assert message in reply.json()["detail"]


def test_unknown_routes_and_methods_use_the_same_error_shape(client: Client) -> None:
    c = client()
    assert c.get("/v1/nothing").json() == {"detail": "Not Found"}
    reply = c.get("/v1/verify")
    assert reply.status_code == 405 and list(reply.json()) == ["detail"]


def test_healthz_and_the_openapi_document(client: Client) -> None:
    c = client()
    health = c.get("/healthz").json()
    assert health["status"] == "ok" and health["sandbox"]["pending"] == 0
    document = c.get("/openapi.json").json()
    for path in ("/v1/verify", "/v1/answer-key", "/get_reward", "/healthz"):
        assert path in document["paths"]
    body = document["paths"]["/v1/verify"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/VerifyRequest"
    }
    assert "Item" in document["components"]["schemas"]
    assert c.get("/docs").status_code == 200
