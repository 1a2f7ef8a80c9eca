"""Idempotency-key reuse: a key that earned ``verified`` for one piece of work, sent again with
other work (a wrong answer, a weaker check, another workspace, another mode), must never be
answered with that verdict: the item is refused (``error``, no reward), in later requests, in
the same batch, while the first is still being judged, and under concurrent requests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.testclient import TestClient

from assay.service import Settings, create_app
from tests.service.conftest import SLEEPING, uvicorn_serving, wait_until

GOOD = {"id": "g", "checks": [{"kind": "answer_number", "value": 4}], "answer": "4"}
OTHER_WORK: list[Any] = [
    pytest.param({"answer": "5"}, id="wrong-answer"),
    pytest.param({"answer": "4.0001"}, id="near-answer"),
    pytest.param(
        {"checks": [{"kind": "answer_contains", "value": "5"}], "answer": "5"}, id="weaker-check"
    ),
    pytest.param({"mode": "weighted", "answer": "5"}, id="other-mode"),
    pytest.param({"workspace": "ws", "answer": "5"}, id="other-workspace"),
    pytest.param({"receipts": [{"url": "https://x", "status": 200}], "answer": "5"}, id="receipts"),
    pytest.param({"answer": "4", "description": "same answer, other body"}, id="extra-field"),
]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    (tmp_path / "ws").mkdir()
    with TestClient(create_app(Settings(workspace_root=tmp_path))) as test_client:
        yield test_client


def _post(client: TestClient, *items: dict[str, Any]) -> list[dict[str, Any]]:
    reply = client.post("/v1/verify", json={"items": list(items)})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["results"])


@pytest.mark.parametrize("change", OTHER_WORK)
def test_a_later_request_with_other_work(client: TestClient, change: dict[str, Any]) -> None:
    (first,) = _post(client, {**GOOD, "idempotency_key": "k"})
    assert first["status"] == "verified"
    (second,) = _post(client, {**GOOD, **change, "id": "h", "idempotency_key": "k"})
    assert second["status"] == "error" and second["reward"] is None, second
    assert "idempotency_key" in second["outcomes"][0]["detail"]


@pytest.mark.parametrize("change", OTHER_WORK)
def test_other_work_in_the_same_batch(client: TestClient, change: dict[str, Any]) -> None:
    results = _post(
        client,
        {**GOOD, "idempotency_key": "k"},
        {**GOOD, **change, "id": "h", "idempotency_key": "k"},
    )
    assert [r["status"] for r in results] == ["verified", "error"]


def test_the_same_work_under_another_id_gets_the_stored_verdict(client: TestClient) -> None:
    _post(client, {**GOOD, "idempotency_key": "k"})
    (again,) = _post(client, {**GOOD, "id": "other", "idempotency_key": "k"})
    assert again["status"] == "verified" and again["id"] == "other"


@pytest.mark.slow
def test_other_work_while_the_first_is_still_judged() -> None:
    app = create_app(Settings(sandbox_jobs=1))
    slow = {"id": "s", "checks": [SLEEPING], "idempotency_key": "k"}
    with uvicorn_serving(app) as url:
        done: dict[str, Any] = {}
        thread = threading.Thread(
            target=lambda: done.update(
                r=httpx.post(f"{url}/v1/verify", json={"items": [slow]}, timeout=60)
            )
        )
        thread.start()
        try:
            wait_until(lambda: app.state.judge.queue.stats()["started"] == 1, 30, "the slow item")
            cheat = {**GOOD, "answer": "5", "idempotency_key": "k"}
            reply = httpx.post(f"{url}/v1/verify", json={"items": [cheat]}, timeout=30)
            (result,) = reply.json()["results"]
            assert (
                result["status"] == "error" and "idempotency_key" in result["outcomes"][0]["detail"]
            )
        finally:
            thread.join(timeout=60)
        assert done["r"].json()["results"][0]["status"] == "verified"


@pytest.mark.slow
def test_concurrent_requests_racing_one_key() -> None:
    """Right and wrong answers race under one key from several threads: whatever is stored
    first, no wrong answer is ever answered verified."""
    app = create_app(Settings())
    with uvicorn_serving(app) as url:
        outcomes: list[tuple[str, str]] = []
        lock = threading.Lock()

        def send(n: int) -> None:
            with httpx.Client(base_url=url, timeout=30) as http:
                for i in range(10):
                    answer = "4" if (n + i) % 2 else "5"
                    item = {**GOOD, "id": f"{n}-{i}", "answer": answer, "idempotency_key": "race"}
                    result = http.post("/v1/verify", json={"items": [item]}).json()["results"][0]
                    with lock:
                        outcomes.append((answer, result["status"]))

        threads = [threading.Thread(target=send, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert len(outcomes) == 60
    assert not [o for o in outcomes if o == ("5", "verified")]
    statuses = {status for _, status in outcomes}
    assert statuses <= {"verified", "refuted", "error"}
    assert uvicorn  # the real server, not an in-process transport
