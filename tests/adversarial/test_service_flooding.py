"""Flooding the reward service: huge or endless bodies, deep nesting, giant numbers, too many
items, too many sandboxed items. Each is refused with a clear 4xx before it costs unbounded
memory or runs anything, and the server keeps answering afterwards."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient

from assay.service import Settings, create_app
from tests.service.conftest import SLEEPING, uvicorn_serving

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, FastAPI]]:
    app = create_app(Settings(max_body_bytes=LIMIT, max_items=100, queue_bound=4))
    with uvicorn_serving(app) as url:
        yield url, app


def _raw(url: str, head: str, body_parts: list[bytes]) -> bytes:
    """Send a request by hand; return what the server answers (bounded read)."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
        raw.sendall(head.encode())
        try:
            for part in body_parts:
                raw.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading: what it answered is still there to read
        received = b""
        while b"\r\n\r\n" not in received and len(received) < 65536:
            chunk = raw.recv(4096)
            if not chunk:
                break
            received += chunk
    return received


def test_a_declared_10_gb_body_is_refused_before_it_is_sent(served: tuple[str, FastAPI]) -> None:
    url, _ = served
    head = (
        "POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {10 * 1024**3}\r\n\r\n"
    )
    answer = _raw(url, head, [b'{"items": ['])
    assert answer.startswith(b"HTTP/1.1 413")


def test_an_endless_chunked_body_is_cut_off(served: tuple[str, FastAPI]) -> None:
    url, _ = served
    head = (
        "POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * 8192
    parts = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 64  # 512 KiB, eight times the limit
    answer = _raw(url, head, parts)
    assert answer.startswith(b"HTTP/1.1 413")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"[" * 30_000 + b"]" * 30_000, 400),  # deeper than the parser's stack, under the limit
        (b'{"items": [' + b"9" * 20_000 + b"]}", 400),  # an integer too long to convert
        (b'{"items": [' + b'{"id": "a"},' * 200 + b'{"id": "a"}]}', 422),  # past max_items
        (b'{"query": ["' + b"a" * (LIMIT + 10) + b'"]}', 413),
    ],
)
def test_hostile_bodies_are_4xx(served: tuple[str, FastAPI], body: bytes, status: int) -> None:
    url, _ = served
    for route in ("/v1/verify", "/get_reward", "/v1/answer-key"):
        reply = httpx.post(f"{url}{route}", content=body, timeout=30)
        if status == 422 and route != "/v1/verify":
            continue  # only /v1/verify reads an `items` array
        assert reply.status_code == status, (route, reply.text[:200])
        assert list(reply.json()) == ["detail"]
    assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200


def test_more_sandboxed_items_than_the_queue_runs_nothing(served: tuple[str, FastAPI]) -> None:
    url, app = served
    items = [{"id": f"s{i}", "checks": [SLEEPING]} for i in range(5)]
    reply = httpx.post(f"{url}/v1/verify", json={"items": items}, timeout=30)
    assert reply.status_code == 422
    assert app.state.judge.queue.stats()["started"] == 0


def test_deep_values_inside_items_are_each_items_own_problem() -> None:
    deep: Any = []
    for _ in range(900):
        deep = [deep]
    items = [
        {"id": "a", "checks": [{"kind": "answer_number", "value": 4}], "answer": "4"},
        {"id": "b", "checks": [{"kind": "answer_number", "value": deep}], "answer": "4"},
        {"id": "c", "checks": [{"kind": "answer_key", "key": {"t": deep}}], "answer": "{}"},
    ]
    with TestClient(create_app(Settings())) as client:
        reply = client.post("/v1/verify", content=json.dumps({"items": items}).encode())
    assert reply.status_code == 200
    assert [r["status"] for r in reply.json()["results"]] == ["verified", "error", "refuted"]
