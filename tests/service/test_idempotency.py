"""Idempotency keys: the same key with the same item body answers the stored result; with
another body it is that item's error (never the stored verdict); the store is bounded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from assay.service._idempotency import IdempotencyStore
from tests.service.conftest import item

Client = Callable[..., TestClient]


def _verify(client: TestClient, *items: dict[str, Any]) -> list[dict[str, Any]]:
    reply = client.post("/v1/verify", json={"items": list(items)})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["results"])


def _file_item(id: str, key: str) -> dict[str, Any]:
    check = {"kind": "file_equals", "path": "out.txt", "value": "42"}
    return {"id": id, "checks": [check], "workspace": "ws", "idempotency_key": key}


@pytest.mark.bwrap
def test_the_same_key_and_body_answers_the_stored_result(client: Client) -> None:
    """Shown by the sandbox's counter: the second item is answered, not judged again."""
    c = client()
    code = {"kind": "python", "code": "assert 6 * 7 == 42"}
    (first,) = _verify(c, {"id": "a", "checks": [code], "idempotency_key": "k1"})
    assert first["status"] == "verified"
    (again,) = _verify(c, {"id": "b", "checks": [code], "idempotency_key": "k1"})
    assert again == {**first, "id": "b"}
    assert c.get("/healthz").json()["sandbox"]["started"] == 1


def test_an_item_that_reads_files_is_judged_again(client: Client, tmp_path: Path) -> None:
    """Its verdict depends on files the key's fingerprint does not cover: never replayed."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "out.txt").write_text("42")
    c = client(workspace_root=tmp_path)
    (first,) = _verify(c, _file_item("a", "k1"))
    assert first["status"] == "verified"
    (tmp_path / "ws" / "out.txt").write_text("41")
    (again,) = _verify(c, _file_item("b", "k1"))
    assert again["status"] == "refuted"


def test_the_same_key_with_other_work_is_refused(client: Client) -> None:
    c = client()
    (first,) = _verify(c, item("a", answer="4", idempotency_key="k"))
    assert first["status"] == "verified"
    (other,) = _verify(c, item("a", answer="5", idempotency_key="k"))
    assert other["status"] == "error" and other["reward"] is None
    assert "items[0].idempotency_key" in other["outcomes"][0]["detail"]
    assert "other work" in other["outcomes"][0]["detail"]


def test_a_key_reused_inside_one_batch(client: Client) -> None:
    results = _verify(
        client(),
        item("a", answer="4", idempotency_key="k"),
        item("b", answer="5", idempotency_key="k"),
        item("c", answer="4", idempotency_key="k"),
    )
    assert [r["status"] for r in results] == ["verified", "error", "verified"]
    assert [r["id"] for r in results] == ["a", "b", "c"]


def test_errors_are_not_stored(client: Client) -> None:
    c = client()
    broken = {"id": "a", "checks": [{"kind": "answer_number"}], "idempotency_key": "k"}
    (first,) = _verify(c, broken)
    assert first["status"] == "error"
    (second,) = _verify(c, item("a", answer="4", idempotency_key="k"))
    assert second["status"] == "verified"
    assert c.get("/healthz").json()["idempotency_keys"] == 1


def test_an_inconclusive_result_is_judged_again(client: Client, tmp_path: Path) -> None:
    """Inconclusive is no finding (here the verifier's schema is missing; often a limit hit
    under load), so it is not kept: the same item with the same key is judged again."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.json").write_text("1")
    c = client(workspace_root=tmp_path)
    check = {"kind": "json_schema", "artifact": "a.json", "schema": "s.json"}
    sent = {"id": "a", "checks": [check], "workspace": "ws", "idempotency_key": "k"}
    (first,) = _verify(c, sent)
    assert first["status"] == "inconclusive"
    (tmp_path / "s.json").write_text('{"type": "integer"}')
    (second,) = _verify(c, sent)
    assert second["status"] == "verified"


def test_the_store_is_bounded(client: Client) -> None:
    c = client(idempotency_entries=2)
    for key in ("k1", "k2", "k3"):
        _verify(c, item("a", answer="4", idempotency_key=key))
    assert c.get("/healthz").json()["idempotency_keys"] == 2
    (forgotten,) = _verify(c, item("a", answer="5", idempotency_key="k1"))
    assert forgotten["status"] == "refuted"  # k1 was dropped: judged afresh, on its own merits


def test_the_store_rules() -> None:
    store = IdempotencyStore(2)
    assert store.claim("k", "f1").stored is None  # reserved
    assert store.claim("k", "f2").conflict  # reserved for f1: refused even before a verdict
    store.settle("k", "f2", {"status": "verified"})  # never overwrites another's key
    assert store.claim("k", "f1").stored is None
    store.settle("k", "f1", {"status": "refuted"})
    assert store.claim("k", "f1").stored == {"status": "refuted"}
    store.settle("k", "f1", {"status": "verified"})  # the first verdict stays
    assert store.claim("k", "f1").stored == {"status": "refuted"}
    for status in ("error", "inconclusive"):
        store.claim(status, "f")
        store.settle(status, "f", {"status": status})
    assert len(store) == 1  # no finding: the key is free again
    assert IdempotencyStore(0).claim("k", "f").stored is None
