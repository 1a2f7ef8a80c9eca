"""Hostile JSON-RPC lines sent straight to ``assay mcp``'s stdin, below any client library: none
crashes the server, none is answered ``verified``, and the next honest call is judged as usual.

A client library never sends these (its own serializer refuses them), so the test writes the
lines itself: a lone surrogate escape in the answer, arrays nested 100,000 deep, a number of
5,000 digits, a line that is not JSON, and arguments over the size cap. The SDK drops a line it
cannot parse without a reply (the caller's own timeout is its only signal: a limit of the SDK's
stdio transport, see docs/mcp.md); whatever does get a reply is a tool error.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.client import ASSAY, ROOT, passed_on

EQUALS = '[{"kind": "answer_equals", "value": "x"}]'
HONEST = '{"checks": ' + EQUALS + ', "answer": "x"}'
HOSTILE = {
    "lone surrogate": '{"checks": ' + EQUALS + ', "answer": "\\ud800"}',
    "nested 100000 deep": '{"checks": '
    + EQUALS
    + ', "answer": "y", "receipts": ['
    + "[" * 100_000
    + "]" * 100_000
    + "]}",
    "5000 digits": '{"checks": [{"kind": "answer_number", "value": '
    + "9" * 5000
    + '}], "answer": "1"}',
    "over the cap": '{"checks": ' + EQUALS + ', "answer": "' + "x" * (17 << 20) + '"}',
    "not JSON": None,
}


class Server:
    """``assay mcp`` on pipes, its replies read by a thread into a queue (every wait bounded)."""

    def __init__(self, stderr: Path) -> None:
        self.process = subprocess.Popen(
            [str(ASSAY), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr.open("w"),
            cwd=ROOT,
            env={"PATH": os.environ["PATH"], **passed_on()},
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(json.loads(line))

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def call(self, id: int, arguments_json: str) -> None:
        params = '{"name": "check", "arguments": ' + arguments_json + "}"
        self.send(
            '{"jsonrpc": "2.0", "id": '
            + str(id)
            + ', "method": "tools/call", "params": '
            + params
            + "}"
        )

    def until(self, id: int, timeout: float = 120.0) -> dict[int, dict[str, Any]]:
        """Every reply up to and including the one to ``id``."""
        seen: dict[int, dict[str, Any]] = {}
        while id not in seen:
            reply = self.replies.get(timeout=timeout)
            seen[int(reply.get("id", -1))] = reply
        return seen

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=60)


def _verified(reply: dict[str, Any]) -> bool:
    result = reply.get("result") or {}
    return (result.get("structuredContent") or {}).get("status") == "verified"


@pytest.mark.slow
def test_hostile_lines_never_crash_the_server_nor_pass(tmp_path: Path) -> None:
    server = Server(tmp_path / "stderr")
    try:
        server.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        assert "result" in server.until(1)[1]
        server.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for number, (name, arguments) in enumerate(HOSTILE.items()):
            hostile, honest = 10 + 2 * number, 11 + 2 * number
            if arguments is None:
                server.send("this is not JSON {")
            else:
                server.call(hostile, arguments)
            server.call(honest, HONEST)
            replies = server.until(honest)
            assert _verified(replies[honest]), (name, replies[honest])
            if hostile in replies:
                assert replies[hostile]["result"]["isError"] is True, (name, replies[hostile])
            assert not any(_verified(r) for i, r in replies.items() if i != honest), name
        assert server.process.poll() is None
    finally:
        code = server.close()
    assert code == 0
    assert "Traceback" not in (tmp_path / "stderr").read_text()
