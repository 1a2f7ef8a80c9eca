"""Reading what a sandboxed run produced: capped output, the runner's channel, the limit hit.

Everything here runs in the verifier, after or beside the sandboxed process; none of it trusts
what the process printed to decide a pass (output can only explain a failure: a MemoryError in
the last words makes a failed run a memory-limit run, never a passed one).
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import subprocess
import time

from assay.sandbox._limits import FLOOD_FACTOR, Limits
from assay.sandbox._result import LimitName


def write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError:
        pass  # the child exited without reading; its result says what happened
    finally:
        os.close(fd)


def collect(
    process: subprocess.Popen[bytes], limits: Limits, start: float
) -> tuple[bytes, int, bool, LimitName | None]:
    """Read output until the process ends, keeping ``output_kb``; kill on timeout or flood."""
    assert process.stdout is not None
    keep = limits.output_kb * 1024
    flood = keep * FLOOD_FACTOR
    kept = bytearray()
    total = 0
    limit: LimitName | None = None
    deadline = start + limits.timeout
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    fd = process.stdout.fileno()
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                limit = "time"
                break
            if not selector.select(timeout=min(remaining, 0.5)):
                if process.poll() is not None and not _readable(fd):
                    break
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            total += len(chunk)
            if len(kept) < keep:
                kept += chunk[: keep - len(kept)]
            if total > flood:
                limit = "output"
                break
    finally:
        selector.close()
    if limit is not None:
        kill_tree(process)
    try:
        process.wait(timeout=max(0.1, deadline - time.monotonic()) if limit is None else 5)
    except subprocess.TimeoutExpired:
        kill_tree(process)
        process.wait()
        limit = "time"
    process.stdout.close()
    return bytes(kept), total, total > keep, limit


def _readable(fd: int) -> bool:
    ready, _, _ = select.select([fd], [], [], 0)
    return bool(ready)


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group (with bwrap: the whole sandbox, every process in it)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def read_done(fd: int) -> bytes:
    data = bytearray()
    try:
        while len(data) < 4096:
            ready = _readable(fd)
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return bytes(data)


def events_of(done: bytes, nonce: str | None) -> list[list[str]]:
    """Runner messages that carry this run's nonce; anything else on the channel is ignored."""
    if not nonce:
        return []
    events = []
    for line in done.decode("ascii", errors="replace").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == nonce:
            events.append(words[1:])
    return events


_REPORTABLE: tuple[LimitName, ...] = ("memory", "processes", "file_size", "scratch")
_MEMORY_SIGNS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")
_PROCESS_SIGNS = ("Resource temporarily unavailable", "fork: retry", "can't start new thread")


def limit_from(
    sig: int | None, events: list[list[str]], output: bytes, exit_code: int | None
) -> LimitName | None:
    """Which limit a run hit, from its signal, the runner's report, or its last words."""
    if sig == signal.SIGXCPU:
        return "cpu"
    if sig == signal.SIGXFSZ:
        return "file_size"
    reported = {e[1] for e in events if len(e) == 2 and e[0] == "limit"}
    for name in _REPORTABLE:
        if name in reported:
            return name
    if exit_code == 0:
        return None
    tail = output[-2000:].decode("utf-8", errors="replace")
    if any(sign in tail for sign in _MEMORY_SIGNS):
        return "memory"
    if any(sign in tail for sign in _PROCESS_SIGNS):
        return "processes"
    if "File too large" in tail:
        return "file_size"
    if "No space left on device" in tail:
        return "scratch"
    return None
