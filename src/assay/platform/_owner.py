"""Which process is evaluating a run, and whether it still is.

A run that was in flight when its process died (``kill -9``, a crash, a power cut) must not stay
"running" forever, and a run another live process is evaluating must not be declared dead. The
owner is named by boot, pid and the pid's start time, so a reused pid is not mistaken for it.
"""

from __future__ import annotations

import os
import socket
from functools import cache
from pathlib import Path

from assay.platform._records import Owner


@cache
def _host() -> str:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "unknown-boot"
    return f"{socket.gethostname()}/{boot}"


def _start_time(pid: int) -> float | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = text[text.rindex(")") + 2 :].split()
    return float(fields[19])  # field 22 overall: start time in clock ticks since boot


def me() -> Owner:
    """This process, as a run's owner (read once per process: a fork is another owner)."""
    return _owner(os.getpid())


@cache
def _owner(pid: int) -> Owner:
    return Owner(host=_host(), pid=pid, started=_start_time(pid) or 0.0)


def gone(owner: Owner) -> bool:
    """The owner is known to be dead: same machine and boot, and its pid is free or reused.
    A run owned on another machine (a shared PostgreSQL) is never declared dead from here."""
    if owner.host != _host():
        return owner.host.split("/")[0] == socket.gethostname()  # same host, another boot
    return _start_time(owner.pid) != owner.started
