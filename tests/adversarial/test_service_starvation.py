"""One trainer's batch of slow answers stalls every other client of the service (a hang).

Each request's answer-only pass runs on asyncio's *default* executor (service/_judging.py:90,
``loop.run_in_executor(None, ...)``): ``min(32, cores + 4)`` threads shared by every request of
the process (6 on 2 cores), while ``--max-requests`` admits 64. And every ``answer_math`` check
of the process waits on one lock (checks/_math/_worker.py ``_Worker.ask``), held for the check's
``time_limit`` plus, after each kill, the standby's sympy import. A policy whose samples are
pathological expressions (``\\boxed{\\sin(5x)}`` against the expanded quintic: each merely
``inconclusive``) therefore holds the executor's threads for minutes, and a request holding
nothing but an ``answer_equals`` item (microseconds of work) from another client waits behind
them all: in the measurement here it is not answered within 15 s. An OpenRLHF client times out
and retries (adding more work); the batch is lost.

Fix: run first passes on the service's own pool sized to ``max_requests`` (or plain
``answer_*`` items on the event loop's side of that pool), and take slow inline kinds
(``answer_math``, ``sql_query``) off it: a pool of math workers, or route them through the
bounded ``SandboxQueue`` with its 429, so no client can occupy the threads every request needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
SLOW = r"\boxed{\sin(5x)}"
EXPANDED = r"16\sin^5 x - 20\sin^3 x + 5\sin x"
SLOW_LABEL = json.dumps({"checks": [{"kind": "answer_math", "value": EXPANDED}]})
HONEST = {"id": "other-client", "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"}
PATIENCE = 15.0
"""Seconds the other client waits for one ``answer_equals`` item (it takes microseconds)."""


@pytest.fixture
def server() -> Iterator[str]:
    """``assay serve`` in its own process group (killed at the end, whatever it is doing)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, 60, "assay serve to start")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def _policy_batch(url: str, samples: int) -> None:
    """A trainer's /get_reward call whose samples are all pathological (bounded wait)."""
    body = {
        "query": ["Q: " + SLOW] * samples,
        "prompts": ["Q: "] * samples,
        "labels": [SLOW_LABEL] * samples,
    }
    with contextlib.suppress(httpx.HTTPError):  # abandoned when the test ends: not the point
        httpx.post(f"{url}/get_reward", json=body, timeout=PATIENCE + 10)


@pytest.mark.slow
def test_another_clients_trivial_item_is_answered_promptly(server: str) -> None:
    samples = 3
    threads = (os.cpu_count() or 1) + 4  # asyncio's default executor size (at most 32)
    batches = [
        threading.Thread(target=_policy_batch, args=(server, samples), daemon=True)
        for _ in range(min(threads, 32))
    ]
    for batch in batches:
        batch.start()
    time.sleep(1.5)  # the batches are in; their first samples hold the math lock
    start = time.monotonic()
    try:
        answer = httpx.post(f"{server}/v1/verify", json={"items": [HONEST]}, timeout=PATIENCE)
    except httpx.TimeoutException:
        pytest.fail(f"a one-item answer_equals request was not answered within {PATIENCE:g} s")
    took = time.monotonic() - start
    assert answer.status_code == 200
    assert answer.json()["results"][0]["status"] == "verified"
    assert took < PATIENCE
