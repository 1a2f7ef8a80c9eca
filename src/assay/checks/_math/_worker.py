"""The symbolic worker: one warm sympy process, reused across checks, killed and replaced when a
question takes longer than its time limit.

sympy is slow to import (about a second) and can run for minutes on hostile input; here it runs in
a separate process that the parent starts lazily, once, and kills on timeout (a timeout is
``inconclusive``, never a pass). The worker is trusted code: it only builds sympy expressions
from trees the grammar produced (plain lists, one constructor per node), so model text never
becomes code. Its memory is bounded with ``RLIMIT_AS``; its time by the parent's kill. Only plain
JSON crosses the pipe.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from assay._files import readable
from assay.checks._math._grammar import Node

MEMORY_LIMIT = 1 << 31
"""Address-space limit of the worker, in bytes (2 GiB)."""
STARTUP_LIMIT = 120.0
"""Seconds the worker may take to import sympy (a busy machine); not charged to a check."""
_SOURCE = str(Path(__file__).resolve().parents[3])
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from assay.checks._math._worker import serve; serve()"
)


def to_wire(node: Any) -> Any:
    """The JSON form of a tree: lists, numbers as ``["n", hex numerator, hex denominator]``
    (hex, so a 30,000-digit integer converts without Python's decimal-length guard)."""
    if isinstance(node, tuple):
        if node and node[0] == "n":
            value: Fraction = node[1]
            return ["n", hex(value.numerator), hex(value.denominator)]
        return [to_wire(item) for item in node]
    return node


class WorkerTimeout(Exception):
    """The worker did not answer within the time limit; it has been killed and replaced."""


class WorkerFailed(Exception):
    """The worker died or answered nonsense (for example, it ran out of memory)."""


class _Process:
    """One worker process and what has been read from it."""

    def __init__(self) -> None:
        # -I and cwd="/": the verifier may run from a folder holding the agent's files, and
        # `python -c` would put that folder (and PYTHONPATH, the user site) before the standard
        # library and sympy: a `json.py` or `sympy.py` there would run in this trusted process.
        self.popen = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, _SOURCE],
            cwd="/",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        self.owner = os.getpid()
        self.ready = False
        self.buffer = b""

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.popen.poll() is None

    def kill(self) -> None:
        if self.owner == os.getpid():
            self.popen.kill()
            self.popen.wait()

    def line(self, deadline: float) -> bytes | None:
        """The next line, or None at the deadline; WorkerFailed if the process has exited."""
        assert self.popen.stdout is not None
        fd = self.popen.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if readable(fd, remaining):
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise WorkerFailed("the symbolic worker exited")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


class _Worker:
    """The shared worker, with a standby that takes over at once when the active one is killed.

    A start waits for sympy's import (up to STARTUP_LIMIT), outside the check's own time limit.
    After a kill the standby, importing since the previous kill, takes over and a new standby
    starts. The wait for a standby is never charged to the check that finds it starting: one
    item's pathological answer must not make the next item's answer inconclusive (adversarial
    review adv-items, F3); it costs that item latency, never its verdict.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: _Process | None = None
        self._standby: _Process | None = None
        self._cold = True
        self.started = 0
        """How many worker processes this parent has started (tests read it)."""

    def _spawn(self) -> _Process:
        self.started += 1
        return _Process()

    def warm(self) -> None:
        """Start the worker now (without waiting for it), so its sympy import overlaps work."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> _Process:
        if self._active is None or not self._active.alive():
            if self._active is not None and self._active.owner != os.getpid():
                self._cold, self._standby = True, None  # inherited across fork: not ours
            if self._standby is not None and self._standby.alive():
                self._active, self._standby = self._standby, None
            else:
                self._active = self._spawn()
        return self._active

    def _replace(self) -> None:
        """Kill the active worker; the standby takes over and a new standby starts."""
        if self._active is not None:
            self._active.kill()
        self._active = self._standby if self._standby and self._standby.alive() else self._spawn()
        self._standby = self._spawn()

    def ask(self, request: dict[str, Any], limit: float) -> str:
        """The worker's answer to ``request``; WorkerTimeout after ``limit`` seconds."""
        with self._lock:
            process = self._ensure()
            try:
                if not process.ready:
                    # never charged to this check: a standby still importing sympy after another
                    # item's answer got its worker killed must not make this answer inconclusive
                    if process.line(time.monotonic() + STARTUP_LIMIT) is None:
                        self._replace()
                        raise WorkerFailed("the symbolic worker did not start")
                    process.ready, self._cold = True, False
                assert process.popen.stdin is not None
                process.popen.stdin.write(json.dumps(request).encode() + b"\n")
                process.popen.stdin.flush()
                line = process.line(time.monotonic() + limit)
            except OSError as exc:
                self._replace()
                raise WorkerFailed(str(exc) or "the symbolic worker failed") from exc
            except WorkerFailed:
                if not process.alive():
                    self._replace()
                raise
            if line is None:
                self._replace()
                raise WorkerTimeout(f"symbolic comparison took longer than {limit:g} s")
            answer = json.loads(line)
            if not isinstance(answer, dict) or not isinstance(answer.get("result"), str):
                self._replace()
                raise WorkerFailed("the symbolic worker answered nonsense")
            return str(answer["result"])

    def close(self) -> None:
        with self._lock:
            for process in (self._active, self._standby):
                if process is not None:
                    process.kill()
            self._active = self._standby = None


WORKER = _Worker()
atexit.register(WORKER.close)


def ask(op: str, a: Node, b: Node, limit: float) -> str:
    """Ask the shared worker whether ``a - b`` is zero (``op="zero"``) or ``a/b`` is a nonzero
    constant (``op="ratio"``)."""
    return WORKER.ask({"op": op, "a": to_wire(a), "b": to_wire(b)}, limit)


def serve() -> None:  # pragma: no cover - runs in the worker process
    """The worker's loop: bound memory, import sympy once, then answer one JSON line per line."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    sys.set_int_max_str_digits(0)
    from assay.checks._math._symbolic import decide, warm_up

    warm_up()
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            result = decide(json.loads(line))
        except MemoryError:
            result = "unknown"
        except Exception:  # a sympy failure on a strange tree is no proof either way
            result = "unknown"
        out.write(json.dumps({"result": result}).encode() + b"\n")
        out.flush()
