"""The sandbox queue: sandboxed items run a bounded number at a time, and a request that does
not fit the queue is 429 with ``Retry-After`` (before any of it runs); a client that goes away
has its queued work cancelled, never run."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.service.conftest import SLEEPING, item, wait_until

Serving = Callable[..., tuple[str, FastAPI]]
pytestmark = pytest.mark.slow


def _sleepers(count: int, prefix: str = "s") -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i}", "checks": [SLEEPING]} for i in range(count)]


def _stats(url: str) -> dict[str, int]:
    stats: dict[str, int] = httpx.get(f"{url}/healthz", timeout=10).json()["sandbox"]
    return stats


def test_a_full_queue_answers_429_with_retry_after(serving: Serving) -> None:
    url, _ = serving(sandbox_jobs=1, queue_bound=2)
    first: dict[str, Any] = {}

    def fill() -> None:
        reply = httpx.post(f"{url}/v1/verify", json={"items": _sleepers(2)}, timeout=60)
        first["reply"] = reply

    filler = threading.Thread(target=fill)
    filler.start()
    try:
        wait_until(lambda: _stats(url)["pending"] == 2, 30, "the queue to fill")
        # A bounded loop of requests while the queue is full: every one is refused at once.
        for attempt in range(5):
            reply = httpx.post(
                f"{url}/v1/verify", json={"items": [item("a"), *_sleepers(1, "x")]}, timeout=10
            )
            assert reply.status_code == 429, (attempt, reply.text)
            assert reply.headers["retry-after"] == "1"
            assert "sandbox queue is full" in reply.json()["detail"]
        # Answer-only items never wait for the queue.
        quick = httpx.post(f"{url}/v1/verify", json={"items": [item("q")]}, timeout=10)
        assert quick.status_code == 200
    finally:
        filler.join(timeout=60)
    assert first["reply"].status_code == 200
    assert [r["status"] for r in first["reply"].json()["results"]] == ["verified", "verified"]
    stats = _stats(url)
    assert stats["pending"] == 0 and stats["started"] == 2  # nothing refused ever ran
    again = httpx.post(f"{url}/v1/verify", json={"items": _sleepers(1)}, timeout=60)
    assert again.status_code == 200


def test_more_sandboxed_items_than_the_queue_holds_is_422(serving: Serving) -> None:
    url, _ = serving(sandbox_jobs=1, queue_bound=2)
    reply = httpx.post(f"{url}/v1/verify", json={"items": _sleepers(3)}, timeout=10)
    assert reply.status_code == 422
    assert "more than this service ever queues (2)" in reply.json()["detail"]
    assert _stats(url)["started"] == 0


def test_at_most_jobs_sandboxed_items_run_at_once(serving: Serving) -> None:
    url, _ = serving(sandbox_jobs=2, queue_bound=10)
    start = time.monotonic()
    reply = httpx.post(f"{url}/v1/verify", json={"items": _sleepers(4)}, timeout=60)
    elapsed = time.monotonic() - start
    assert [r["status"] for r in reply.json()["results"]] == ["verified"] * 4
    assert elapsed >= 2 * 1.5  # two rounds of two: never four at once


def test_a_client_that_disconnects_has_its_queued_work_cancelled(serving: Serving) -> None:
    url, _ = serving(sandbox_jobs=1, queue_bound=10)
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"items": _sleepers(5)}).encode()
    request = (
        f"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(request)
        wait_until(lambda: _stats(url)["started"] >= 1, 30, "the first item to start")
    # The socket is closed: the four items still queued must never start.
    wait_until(lambda: _stats(url)["pending"] == 0, 30, "the queue to drain")
    stats = _stats(url)
    assert stats["cancelled"] == 4, stats
    assert stats["started"] == 1 and stats["finished"] == 1, stats


def test_too_many_requests_being_judged_at_once_is_429(serving: Serving) -> None:
    """Answer-only work is bounded too: each request in its first pass holds memory and a
    thread, so past ``max_requests`` the next is refused at once."""
    url, app = serving(max_requests=1)
    stuck = {"kind": "answer_regex", "pattern": "(a|aa)+$"}  # runs to its time limit here
    slow = [{"id": f"r{i}", "checks": [stuck], "answer": "a" * 40 + "!"} for i in range(3)]
    first: dict[str, Any] = {}
    filler = threading.Thread(
        target=lambda: first.update(
            reply=httpx.post(f"{url}/v1/verify", json={"items": slow}, timeout=60)
        )
    )
    filler.start()
    try:
        wait_until(lambda: app.state.judge._in_flight == 1, 30, "the slow pass to start")
        reply = httpx.post(f"{url}/v1/verify", json={"items": [item("a")]}, timeout=10)
        assert reply.status_code == 429 and reply.headers["retry-after"] == "1"
        assert "requests are being read and judged" in reply.json()["detail"]
    finally:
        filler.join(timeout=60)
    statuses = {r["status"] for r in first["reply"].json()["results"]}
    assert statuses <= {"inconclusive", "refuted"}  # a time limit is never a pass
    assert (
        httpx.post(f"{url}/v1/verify", json={"items": [item("b")]}, timeout=10).status_code == 200
    )


def test_a_disconnect_stops_a_long_answer_pass_at_the_next_item(serving: Serving) -> None:
    """100 items that each run to the regex time limit: about two minutes of work, stopped
    within a few items of the client going away (the pass checks between items)."""
    url, app = serving()
    stuck = {"kind": "answer_regex", "pattern": "(a|aa)+$"}
    slow = [{"id": f"r{i}", "checks": [stuck], "answer": "a" * 40 + "!"} for i in range(100)]
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"items": slow}).encode()
    request = (
        f"POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(request)
        wait_until(lambda: app.state.judge._in_flight == 1, 30, "the pass to start")
    start = time.monotonic()
    wait_until(lambda: app.state.judge._in_flight == 0, 30, "the pass to stop")
    assert time.monotonic() - start < 15
