"""The local executor: a pool of warm worker processes on this machine.

Why not ``concurrent.futures.ProcessPoolExecutor``: it cannot kill one worker. A hung check must
cost one item (an ``error`` result) and one worker (replaced), never the batch, so this pool
keeps one pipe per worker and knows which item each worker is on.

- Workers start from a *forkserver* that has imported assay once (``spawn`` where that is not
  available): never a plain fork of the caller, which may hold threads (a progress bar's).
- Work goes out in chunks sized to about 50 ms each (``ChunkSizer``), at most two chunks per
  worker at a time, so answer checks are not dominated by messaging and a worker never waits for
  the parent between chunks.
- Each item has a wall-clock budget (``timeout``). A worker past it is killed with everything it
  started (its session), its item answered ``error`` ("the worker did not answer within X s"),
  its other items sent again, and a new worker started. A worker that dies under an item is
  handled the same way ("the worker died").
- A worker that has judged ``max_tasks`` items is retired at the end of its chunk and replaced,
  so a slow leak in a long batch stays bounded.
- Results come back in input order; reading ahead is bounded (``window`` items past the oldest
  unanswered one), so a batch of any size uses bounded memory. A hung item at the head holds the
  output for at most its budget.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import pickle
import signal
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import AssayError
from assay.executors._base import (
    ChunkSizer,
    Executor,
    Job,
    Judged,
    Pending,
    in_order,
    lost,
    overdue,
)
from assay.executors._worker import serve
from assay.status import Status

DEFAULT_TIMEOUT = 900.0
"""Seconds one item may take before its worker is killed: above any single check's own limit
(a python check's at most 600 s), so a check's own timeout answers first (``inconclusive``)."""
DEFAULT_MAX_TASKS = 10_000
"""Items a worker judges before it is replaced."""
IN_FLIGHT = 2
"""Chunks per worker at a time: one being judged, one waiting, so a worker never idles on us."""
TICK = 0.05
"""Seconds between looks at the workers' clocks while waiting for answers."""

STARTS_WITHOUT_ANSWER = 3
"""Workers in a row that die before answering anything: then the pool itself is broken (it
cannot start workers), which is assay's failure, raised, not blamed on items."""

Chunk = list[tuple[int, Job]]


class PoolFailed(AssayError):
    """The local pool cannot keep workers alive (they die before answering anything)."""


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    slot: Any  # shared [index, started]: what the worker is on, since when
    done: int = 0
    flight: deque[Chunk] = field(default_factory=deque)

    def current(self) -> tuple[int, float] | None:
        """The item the worker is judging now and since when (monotonic), or None between
        items. The worker clears ``started`` before it changes ``index``: a pair read with the
        same ``started`` on both sides of the index belongs together."""
        started = float(self.slot[1])
        index = int(self.slot[0])
        return (index, started) if started and self.slot[1] == started else None


class LocalExecutor(Executor):
    """A pool of ``jobs`` worker processes (default: one per core)."""

    def __init__(
        self,
        *,
        root: Path | None,
        config: Config,
        jobs: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tasks: int = DEFAULT_MAX_TASKS,
        chunk_size: int | None = None,
        start_method: str | None = None,
    ) -> None:
        if jobs is not None and jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.root, self.config = root, config
        self.jobs = jobs or os.cpu_count() or 1
        self.timeout, self.max_tasks = timeout, max_tasks
        self.sizer = ChunkSizer(chunk_size)
        self.window = max(64, 4 * IN_FLIGHT * self.jobs * (chunk_size or self.sizer.most))
        self.context = _context(start_method)
        self.workers: list[_Worker] = []
        self.started = 0
        """Worker processes started so far (tests read it)."""
        self.replaced = 0
        """Workers killed for a hung item or found dead, and replaced."""
        self.recycled = 0
        """Workers retired after ``max_tasks`` items, and replaced."""
        self.silent_deaths = 0

    # -- workers -------------------------------------------------------------------------------

    def _start(self) -> _Worker:
        ours, theirs = self.context.Pipe()
        slot = self.context.Array("d", 2, lock=False)
        process = self.context.Process(  # type: ignore[attr-defined]
            target=serve, args=(theirs, slot, self.root, self.config), daemon=True
        )
        process.start()
        theirs.close()
        self.started += 1
        return _Worker(process, ours, slot)

    def _fill(self) -> None:
        while len(self.workers) < self.jobs:
            self.workers.append(self._start())

    def _kill(self, worker: _Worker) -> None:
        """End the worker and everything in its session; forget it."""
        pid = worker.process.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # its session: the sandbox, a sympy process
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # in case it died before making its session
        worker.process.join(5)
        worker.conn.close()
        self.workers.remove(worker)

    def _retire(self, worker: _Worker) -> None:
        with contextlib.suppress(OSError):
            worker.conn.send(None)
        worker.process.join(2)
        if worker.process.is_alive():
            self._kill(worker)
            return
        if worker.process.pid is not None:  # what it started and left (a sympy process)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(worker.process.pid, signal.SIGKILL)
        worker.conn.close()
        self.workers.remove(worker)

    def close(self) -> None:
        """Retire idle workers, kill busy ones (and all they started)."""
        for worker in list(self.workers):
            if worker.flight:
                self._kill(worker)
            else:
                self._retire(worker)

    # -- the map -------------------------------------------------------------------------------

    def map(self, jobs: Iterable[Job]) -> Iterator[Judged]:
        """Results in input order; workers start on the first item to judge and stay warm for
        the next map. Left early, it kills the workers still holding its chunks."""

        def step(pending: Pending, done: dict[int, Judged]) -> None:
            self._dispatch(pending, done)
            self._collect(pending, done)

        try:
            yield from in_order(jobs, self.window, self.root, self.config, step)
        finally:
            for worker in [w for w in self.workers if w.flight]:
                self._kill(worker)  # a map left early: its answers must not reach the next one

    def _dispatch(self, pending: Pending, done: dict[int, Judged]) -> None:
        if pending:
            self._fill()  # started on the first item to judge, not before
        for worker in list(self.workers):
            if not pending:
                return
            if worker.done >= self.max_tasks:
                if not worker.flight:
                    self._retire(worker)
                    self.recycled += 1
                    self._fill()
                continue
            while pending and len(worker.flight) < IN_FLIGHT:
                room = self.max_tasks - worker.done - sum(len(c) for c in worker.flight)
                if room <= 0:
                    break  # retired once its chunks are answered
                share = math.ceil(len(pending) / len(self.workers))
                size = max(1, min(self.sizer.size(), share, room))
                chunk = [pending.popleft() for _ in range(min(size, len(pending)))]
                try:
                    worker.conn.send(chunk)
                except OSError:  # it died: its answers are collected (or lost) below
                    pending.extendleft(reversed(chunk))
                    break
                except RecursionError:  # pickled before anything is sent: nothing went out
                    pending.extendleft(reversed(_unsendable(chunk, done)))
                    continue
                worker.flight.append(chunk)

    def _collect(self, pending: Pending, done: dict[int, Judged]) -> None:
        busy = [w for w in self.workers if w.flight]
        if not busy:
            return
        waits: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = set(wait(waits, timeout=TICK))
        for worker in busy:
            if worker.conn in ready:
                try:
                    answers, seconds = worker.conn.recv()
                except (EOFError, OSError):
                    self._lose(worker, pending, done, None, self._died(worker))
                    continue
                chunk = worker.flight.popleft()
                for (index, _), (id_, status, line) in zip(chunk, answers, strict=True):
                    done[index] = Judged(id_, Status(status), line)
                self.sizer.record(len(chunk), seconds)
                worker.done += len(chunk)
                self.silent_deaths = 0
            elif worker.process.sentinel in ready:
                self._lose(worker, pending, done, None, self._died(worker))
        now = time.monotonic()
        for worker in [w for w in self.workers if w.flight]:
            on = worker.current()
            if on is not None and now - on[1] > self.timeout:
                self._lose(worker, pending, done, on[0], None)

    def _died(self, worker: _Worker) -> str:
        worker.process.join(1)
        code = worker.process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return f"the worker died ({how}) while judging this item"

    def _lose(
        self,
        worker: _Worker,
        pending: Pending,
        done: dict[int, Judged],
        current: int | None,
        died: str | None,
    ) -> None:
        """Answer the item the worker was on (``current``: overdue; or ``died``), send its other
        items again, kill it and start another. Each call answers one item, so a batch ends."""
        held = [pair for chunk in worker.flight for pair in chunk]
        if current is None:
            on = worker.current()
            current = on[0] if on is not None else None
        if died and current is None:  # between items: nothing to blame, all go again
            self.silent_deaths += 1
            if self.silent_deaths >= STARTS_WITHOUT_ANSWER:
                self._kill(worker)
                raise PoolFailed(
                    f"the local pool's workers die without judging anything ({died}); "
                    "see the messages above"
                )
            self._kill(worker)
            pending.extendleft(reversed(held))
            self._fill()
            return
        if current is None or current not in {index for index, _ in held}:
            current = held[0][0]
        self._kill(worker)
        self.replaced += 1
        again = []
        for index, job in held:
            if index == current:
                done[index] = lost(job, died) if died else overdue(job, self.timeout)
            else:
                again.append((index, job))
        pending.extendleft(reversed(again))
        self._fill()


def _context(start_method: str | None) -> BaseContext:
    """A forkserver that has imported the worker (and so assay) once; spawn where there is none."""
    methods = multiprocessing.get_all_start_methods()
    method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["assay.executors._worker"])
    return context


def _unsendable(chunk: list[tuple[int, Job]], done: dict[int, Judged]) -> list[tuple[int, Job]]:
    """Answer each job of ``chunk`` that nests too deeply to be pickled to a worker (an ``error``
    naming that: the work was not judged) and return the others, to be sent again: one deep line
    must not end the whole batch."""
    keep = []
    for pair in chunk:
        try:
            pickle.dumps([pair])  # the shape a chunk of one is sent in
        except RecursionError:
            done[pair[0]] = lost(pair[1], "the item nests too deeply to hand to a worker process")
        else:
            keep.append(pair)
    return keep
