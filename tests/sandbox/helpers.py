"""Helpers for sandbox tests: agent workspaces, leak checks."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

from assay.sandbox._staging import SANDBOX_UID


def sandbox_processes() -> list[int]:
    """PIDs of processes running as the sandbox uid right now."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:") and int(line.split()[1]) == SANDBOX_UID:
                found.append(int(entry))
    return found


def wait_for_no_sandbox_processes(seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = sandbox_processes()
        if not left:
            return []
        time.sleep(0.05)
    return sandbox_processes()


def staging_dirs() -> set[str]:
    return {p.name for p in Path("/tmp").glob("assay-*")}


class LoopbackListener:
    """A listener on 127.0.0.1 that records whether anything connected (bounded: one accept)."""

    def __init__(self, wait: float = 4.0) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(1)
        self._socket.settimeout(wait)
        self.port = self._socket.getsockname()[1]
        self.accepted: list[object] = []
        self._thread = threading.Thread(target=self._accept)
        self._thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            self.accepted.append(self._socket.accept())

    def close(self) -> list[object]:
        """Wait for the accept to give up, close, and return what connected (nothing, we hope)."""
        self._thread.join()
        self._socket.close()
        return self.accepted
