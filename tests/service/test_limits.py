"""Request bounds: a body past the byte limit is 413 (declared or streamed), more items than
the limit is 422, each a one-message JSON answer naming what to change."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from starlette.testclient import TestClient

from tests.service.conftest import item

Client = Callable[..., TestClient]
ROUTES = ["/v1/verify", "/v1/answer-key", "/get_reward"]


@pytest.mark.parametrize("route", ROUTES)
def test_a_declared_large_body_is_413(client: Client, route: str) -> None:
    body = json.dumps({"items": [item(f"e{i}") for i in range(100)]}).encode()
    reply = client(max_body_bytes=4096).post(route, content=body)
    assert reply.status_code == 413
    assert reply.json() == {"detail": "body: the request body is larger than 4096 bytes"}


def test_a_chunked_body_without_a_length_is_413_too(client: Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"items": ['
        for i in range(10_000):
            yield json.dumps(item(f"e{i}")).encode() + b","
        yield b"]}"

    reply = client(max_body_bytes=4096).post("/v1/verify", content=chunks())
    assert reply.status_code == 413
    assert "larger than 4096 bytes" in reply.json()["detail"]


def test_a_lying_content_length_is_refused(client: Client) -> None:
    reply = client().post("/v1/verify", content=b"{}", headers={"content-length": "x"})
    assert reply.status_code == 400


def test_too_many_items_is_422(client: Client) -> None:
    c = client(max_items=5)
    reply = c.post("/v1/verify", json={"items": [item(f"e{i}") for i in range(6)]})
    assert reply.status_code == 422
    assert reply.json()["detail"] == (
        "items: 6 entries, more than this service takes in one request (5)"
    )
    assert (
        c.post("/v1/verify", json={"items": [item(f"e{i}") for i in range(5)]}).status_code == 200
    )


def test_too_many_openrlhf_samples_is_422(client: Client) -> None:
    body = {"query": ["a"] * 3, "prompts": [""] * 3, "labels": ["{}"] * 3}
    reply = client(max_items=2).post("/get_reward", json=body)
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("query: 3 entries")
