"""One client's request body freezes the whole service while it is parsed (a hang for everyone).

Every route parses its body with ``read_json`` (service/_limits.py) *on the event loop*, after
reading it whole; only then are ``--max-items`` and ``--max-requests`` applied (in
``judge_all``). A body within ``--max-body-bytes`` (32 MiB) of many small JSON values, e.g.
``{"items": [], "pad": [{}, {}, ...]}``, takes seconds to parse (15 s here for 31 MB with the
strict parser's per-object hook; ~1-2 s on an idle machine), and for all that time nothing else
runs: ``/healthz``, every other client's request, the answers of finished judgments. A client
that sends such bodies back to back (or many at once: nothing bounds how many bodies are read
concurrently, each held whole, parsed, before the 429 of ``--max-requests``) keeps the service
unresponsive and its memory growing; a trainer's requests time out and its batch is lost.

Fix (src/assay/service/_app.py, _limits.py ``read_json``): take the ``--max-requests`` place
before reading the body (429 at once when none is free), and parse off the loop
(``await asyncio.to_thread(loads_strict, body)``: the strict hook is Python, so the loop gets
the GIL between objects), or bound the number of JSON values a body may hold while parsing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from assay.service import Settings, create_app
from tests.service.conftest import uvicorn_serving

BODY_BYTES = 32 * 1024 * 1024
PATIENCE = 1.0
"""Seconds /healthz may take while another client's body is parsed."""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with uvicorn_serving(create_app(Settings(max_body_bytes=BODY_BYTES))) as base:
        yield base


def _pad(route: str) -> bytes:
    count = (BODY_BYTES - 64) // 3
    values = b",".join([b"{}"] * count)
    if route == "/get_reward":
        return b'{"query": [], "prompts": [], "labels": [], "pad": [' + values + b"]}"
    return b'{"items": [' + values + b"]}"


def _send(url: str, route: str, body: bytes, done: threading.Event) -> None:
    try:
        httpx.post(
            f"{url}{route}", content=body, headers={"content-type": "application/json"}, timeout=120
        )
    except httpx.HTTPError:
        pass
    finally:
        done.set()


@pytest.mark.slow
@pytest.mark.parametrize("route", ["/v1/verify"])  # /get_reward reads its body the same way
def test_healthz_answers_while_another_clients_body_is_parsed(url: str, route: str) -> None:
    body = _pad(route)
    done = threading.Event()
    sender = threading.Thread(target=_send, args=(url, route, body, done), daemon=True)
    sender.start()
    time.sleep(0.3)  # the body is on its way; its parse starts once it has arrived
    slowest = 0.0
    while not done.is_set():
        start = time.monotonic()
        httpx.get(f"{url}/healthz", timeout=120)
        slowest = max(slowest, time.monotonic() - start)
        time.sleep(0.05)
    sender.join(10)
    assert slowest < PATIENCE, f"/healthz took {slowest:.1f} s while one body was parsed"
