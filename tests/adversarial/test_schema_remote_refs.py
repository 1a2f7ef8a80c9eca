"""Hack class: a schema whose ``$ref`` reaches the network.

jsonschema, left to its defaults, fetches a remote ``$ref`` with urllib. A verifier that fetches
can be made to wait, to reach internal services, or to judge against whatever the far side
serves. Here a real listener on 127.0.0.1 serves a permissive schema and records every
connection: each reference to it, however it is spelled or reached, must make the check
inconclusive without a single connection.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import Status
from tests.helpers import run_kind


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback server that answers any request with ``{}`` (a schema that accepts anything)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        for _ in range(10_000):  # bounded: at most ~30 minutes of 0.2 s polls
            if stop.is_set():
                return
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                seen.append(conn.recv(4096))
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{}")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        stop.set()
        thread.join(5)
        server.close()


def schemas(port: int) -> list[dict[str, Any]]:
    far = f"http://127.0.0.1:{port}"
    return [
        {"$ref": f"{far}/s.json"},
        {"$ref": f"{far}/s.json#/$defs/x"},
        {"type": "object", "properties": {"a": {"$ref": f"{far}/a.json"}}},
        {"$defs": {"never_used": {"$ref": f"{far}/unused.json"}}},
        {"anyOf": [True, {"$ref": f"{far}/later.json"}]},
        {"$id": f"{far}/root.json", "$ref": "sibling.json"},
        {"$id": f"{far}/dir/", "items": {"$ref": "../up.json"}},
        {"$dynamicRef": f"{far}/dyn.json#meta"},
        {"$ref": f"//127.0.0.1:{port}/scheme-relative.json"},
        {"$ref": f"https://127.0.0.1:{port}/tls.json"},
        {"$ref": "file:///etc/passwd"},
        {"$ref": "#/not_a_keyword", "not_a_keyword": {"$ref": f"{far}/hidden.json"}},
    ]


@pytest.mark.parametrize("index", range(12))
def test_no_reference_is_fetched(
    tmp_path: Path, listener: tuple[int, list[bytes]], index: int
) -> None:
    port, seen = listener
    schema = schemas(port)[index]
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.json").write_text('{"a": 1}')
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    out = run_kind(
        "json_schema",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="a.json",
        schema="schema.json",
    )
    assert out.status is Status.INCONCLUSIVE, out.detail
    assert "never fetched" in out.detail
    assert seen == [], "the verifier connected to the schema's remote reference"
