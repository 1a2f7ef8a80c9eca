"""Regression: a client that pipelines a second request and then goes away still has its first
request's queued sandboxed work cancelled.

HTTP/1.1 lets a client send its next request on the same connection before the first is
answered. If the server made the queued request the connection's current cycle, only that cycle
would hear ``http.disconnect``; the first request's watcher (service/_app.py ``_disconnected``)
would wait forever and its queued items would all run for no one: a hostile client could fill
the sandbox pool with abandoned work by appending one tiny request. uvicorn's h11 protocol (the
one installed: no httptools) keeps the first cycle current and pauses reading, so the disconnect
reaches it. If ``httptools`` is ever installed, uvicorn switches implementation: this test says
whether the guarantee still holds.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from assay.service import Settings, create_app
from tests.service.conftest import SLEEPING, uvicorn_serving, wait_until

Serving = Callable[..., tuple[str, FastAPI]]
pytestmark = pytest.mark.slow


@pytest.fixture
def serving() -> Iterator[Serving]:
    """``serving(**settings)``: (base URL, app) of real uvicorn on loopback."""
    with ExitStack() as stack:

        def make(**settings: Any) -> tuple[str, FastAPI]:
            app = create_app(Settings(**settings))
            return stack.enter_context(uvicorn_serving(app)), app

        yield make


def _request(items: list[dict[str, Any]]) -> bytes:
    body = json.dumps({"items": items}).encode()
    head = (
        "POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _stats(url: str) -> dict[str, int]:
    stats: dict[str, int] = httpx.get(f"{url}/healthz", timeout=10).json()["sandbox"]
    return stats


SECOND = {
    "answer": {"id": "tiny", "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"},
}


@pytest.mark.parametrize("second", sorted(SECOND))
def test_a_pipelined_client_that_leaves_has_its_queued_work_cancelled(
    serving: Serving, second: str
) -> None:
    url, _ = serving(sandbox_jobs=1, queue_bound=10)
    port = int(url.rsplit(":", 1)[1])
    first = _request([{"id": f"s{i}", "checks": [SLEEPING]} for i in range(4)])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(first + _request([SECOND[second]]))
        wait_until(lambda: _stats(url)["started"] >= 1, 30, "the first item to start")
    # The client is gone: the first request's three queued items must never start.
    wait_until(lambda: _stats(url)["pending"] == 0, 30, "the queue to drain")
    stats = _stats(url)
    assert stats["cancelled"] >= 3, stats
