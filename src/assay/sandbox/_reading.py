"""Reading what a sandboxed run produced: capped output, the runner's channel, the limit hit.

Everything here runs in the verifier, beside or after the sandboxed process. A limit is named
only from what this parent observed itself (``observed_limit``): the candidate's output
("MemoryError", "Killed", "No space left on device") and any signal it could send itself
(SIGXCPU, SIGXFSZ, SIGKILL) are never evidence of a limit, so printing them cannot turn a wrong
result into an inconclusive one.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from assay._files import readable
from assay.sandbox._cgroup import Counters
from assay.sandbox._forked import Forked
from assay.sandbox._limits import FLOOD_FACTOR, Limits
from assay.sandbox._result import LimitName

_CPU_SHARE = 0.95
_CPU_SLACK = 0.05
"""CPU time from ``_CPU_SHARE * limit - _CPU_SLACK`` up reads as reaching the limit: the kernel
enforces RLIMIT_CPU on tick-sampled time, which can run a few hundredths of a second ahead of
the cgroup's exact count (measured here: a process killed at 1 s showed 0.98 s)."""


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` and close ``fd``; a reader that went away is not an error here
    (its exit says what happened)."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError:
        pass  # the child exited without reading; its result says what happened
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Collected:
    """What the parent saw of one run while it ran."""

    output: bytes
    total: int
    truncated: bool
    limit: LimitName | None
    """"time" or "output" when the parent ended the run itself, else None."""
    cpu_seconds: float
    """CPU time of the waited process and every descendant it reaped (rusage)."""


CPU_POLL = 0.1
"""Seconds between two reads of a run's CPU time while it runs (``collect``'s ``cpu_usage``)."""


def collect(
    process: subprocess.Popen[bytes] | Forked,
    limits: Limits,
    start: float,
    kill: Callable[[], None],
    cpu_usage: Callable[[], float] | None = None,
) -> Collected:
    """Read output until the run ends, keeping ``output_kb``; ``kill`` it on timeout or flood,
    and (given ``cpu_usage``, the run's whole CPU time so far) once it used more than
    ``limits.cpu`` CPU seconds, read every ``CPU_POLL`` seconds: limit "cpu".

    The process is reaped here with ``wait4`` (its ``returncode`` is set) so that its CPU time,
    and that of what it reaped, is measured by the parent. A run a sandbox template forked
    (``Forked``) is not this process's child: its end is its status pipe, and its CPU time is
    its cgroup's.
    """
    assert process.stdout is not None
    keep = limits.output_kb * 1024
    flood = keep * FLOOD_FACTOR
    kept = bytearray()
    total = 0
    limit: LimitName | None = None
    deadline = start + limits.timeout
    fd = process.stdout.fileno()
    pidfd = os.dup(process.exit_fd) if isinstance(process, Forked) else os.pidfd_open(process.pid)
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    selector.register(pidfd, selectors.EVENT_READ)
    exited = False
    step = CPU_POLL if cpu_usage is not None else 0.5

    def over_cpu() -> bool:
        return cpu_usage is not None and cpu_usage() > limits.cpu

    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                limit = "time"
                break
            ready = {key.fd for key, _ in selector.select(timeout=min(remaining, step))}
            if not exited and over_cpu():
                limit = "cpu"
                break
            if pidfd in ready and not exited:
                exited = True
                selector.unregister(pidfd)
            if fd not in ready:
                if exited and not readable(fd, 0):
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
        if limit is None:
            limit = _await_exit(pidfd, deadline, step, over_cpu)
        if limit is not None:
            kill()
        cpu = _reap(process, kill)
    finally:
        selector.close()
        os.close(pidfd)
        process.stdout.close()
    return Collected(bytes(kept), total, total > keep, limit, cpu)


def _await_exit(
    pidfd: int, deadline: float, step: float, over_cpu: Callable[[], bool]
) -> LimitName | None:
    """Wait for the run's first process to exit (its output already ended): None when it did,
    "time" at the deadline, "cpu" once ``over_cpu``."""
    while True:
        remaining = deadline - time.monotonic()
        if readable(pidfd, min(remaining, step)):
            return None
        if over_cpu():
            return "cpu"
        if remaining <= 0:
            return "time"


def _reap(process: subprocess.Popen[bytes] | Forked, kill: Callable[[], None]) -> float:
    """Wait for the process (already killed or exiting) and return its CPU seconds."""
    if isinstance(process, Forked):
        process.finish(kill)
        return 0.0
    if process.returncode is not None:
        return 0.0
    while True:
        try:
            _, status, usage = os.wait4(process.pid, 0)
            break
        except ChildProcessError:  # reaped elsewhere (it cannot be: Popen is ours); be safe
            process.wait()
            return 0.0
        except InterruptedError:
            continue
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group (with bwrap: the whole sandbox, every process in it)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def read_channel(fd: int, cap: int, into: bytearray) -> None:
    """Read ``fd`` into ``into`` until every writer closed it or past ``cap`` bytes (then stop:
    a writer that keeps going blocks until the run is killed); closes ``fd``."""
    try:
        while len(into) <= cap:
            chunk = os.read(fd, min(65536, cap + 1 - len(into)))
            if not chunk:
                break
            into += chunk
    except OSError:
        pass
    finally:
        os.close(fd)


def read_done(fd: int) -> bytes:
    """What is already waiting on the judge's completion pipe, read after the run ended: at
    most 4 KiB, never blocking (a descendant holding the pipe open cannot stall the verifier)."""
    data = bytearray()
    try:
        while len(data) < 4096:
            ready = readable(fd, 0)
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


def observed_limit(
    *,
    ended_by_parent: LimitName | None,
    failed: bool,
    counters: Counters | None,
    cpu_seconds: float,
    limits: Limits,
    cpu_enforced: bool = False,
) -> LimitName | None:
    """The limit a run hit, from the parent's own observations only.

    ``ended_by_parent``: the parent's wall clock or flood count ended the run. The others are
    read only when the run ``failed`` (a run that succeeded despite, say, a refused fork was not
    stopped by a limit): the cgroup's OOM kills (a full /tmp is one too: its pages are the run's
    memory), its refused forks, CPU time measured at the limit. A limit the parent cannot
    confirm is not a limit.

    ``cpu_enforced``: the parent enforced the CPU limit on the whole run itself (``collect``
    with ``cpu_usage``); "cpu" is then named only when it ended the run for it
    (``ended_by_parent``). Without that, RLIMIT_CPU binds per process and "cpu" is named when a
    failed run's measured CPU time reached the limit.
    """
    if ended_by_parent is not None:
        return ended_by_parent
    if not failed:
        return None
    if counters is not None and counters.oom_kills > 0:
        return "memory"
    if counters is not None and counters.pids_refused > 0:
        return "processes"
    if not cpu_enforced and cpu_seconds >= limits.cpu * _CPU_SHARE - _CPU_SLACK:
        return "cpu"
    return None
