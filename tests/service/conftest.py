"""The service under test: the real app over httpx (ASGI, in-process) or real uvicorn on a free
loopback port in a thread, with bounded waits everywhere."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from starlette.testclient import TestClient

from assay.service import Settings, create_app

ANSWER_CHECK = [{"kind": "answer_number", "value": 4}]
SLEEPING = {"kind": "python", "code": "import time\ntime.sleep(1.5)"}
"""A sandboxed check that takes a while and passes: what fills the queue."""


def item(id: str, answer: str = "4", **extra: Any) -> dict[str, Any]:
    """An answer item: verified when ``answer`` says 4."""
    return {"id": id, "checks": ANSWER_CHECK, "answer": answer, **extra}


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0, what: str = "") -> None:
    """Poll ``predicate`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def client() -> Iterator[Callable[..., TestClient]]:
    """``client(**settings)``: a test client (httpx over ASGI) on a fresh app."""
    opened: list[TestClient] = []

    def make(**settings: Any) -> TestClient:
        test_client = TestClient(create_app(Settings(**settings)), raise_server_exceptions=True)
        test_client.__enter__()
        opened.append(test_client)
        return test_client

    yield make
    for test_client in opened:
        test_client.__exit__(None, None, None)


@contextmanager
def uvicorn_serving(app: FastAPI) -> Iterator[str]:
    """Real uvicorn serving ``app`` on a free 127.0.0.1 port in a thread; its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, 30, "uvicorn to start")
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture
def serving() -> Iterator[Callable[..., tuple[str, FastAPI]]]:
    """``serving(**settings)``: (base URL, app) of real uvicorn on loopback."""
    with ExitStack() as stack:

        def start(**settings: Any) -> tuple[str, FastAPI]:
            app = create_app(Settings(**settings))
            return stack.enter_context(uvicorn_serving(app)), app

        yield start
