"""A local pool's worker process: judges chunks of jobs sent over its pipe, one after another.

It starts in a session of its own (so the pool can kill it with everything it started: a sandbox,
answer_math's sympy process), dies with its parent, and ignores Ctrl-C (the parent decides when the batch stops). Before
each job it writes the job's index and start time into a shared slot, which the parent reads to
find a job that has run past its budget; it writes nothing else there. Only plain data crosses
the pipe: the results' JSON lines.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from assay._config import Config
from assay.executors._base import judge_job


def serve(conn: Connection, slot: Any, root: Path | None, config: Config) -> None:
    """Answer chunks until the pipe closes or a ``None`` arrives.

    A chunk is ``[(index, Job), ...]``; the answer is ``([(id, status, line), ...], seconds)``.
    ``slot`` is a shared ``[index, started]`` pair; ``started`` is 0.0 between jobs.
    """
    os.setsid()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        start = time.monotonic()
        answers = []
        for index, job in chunk:
            slot[1] = 0.0  # cleared before the index changes, so a reader never pairs them wrongly
            slot[0] = float(index)
            slot[1] = time.monotonic()
            judged = judge_job(job, root, config)
            answers.append((judged.id, judged.status.value, judged.line))
        slot[1] = 0.0
        try:
            conn.send((answers, time.monotonic() - start))
        except (BrokenPipeError, OSError):
            return


def _die_with_parent() -> None:
    """Linux: be killed when the process that started this one (the forkserver, which ends with
    the pool's owner) dies, so a killed ``assay batch`` leaves no worker judging for no one."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
