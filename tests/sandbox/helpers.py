"""Helpers for sandbox tests: agent workspaces, leak checks."""

from __future__ import annotations

import os
import time
from pathlib import Path

from assay.sandbox._sandbox import SANDBOX_UID


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
