"""The sandbox queue: items that run code wait here for one of a fixed number of threads.

A sandboxed check takes tens of milliseconds to seconds and a process of its own, so at most
``jobs`` run at once (one per core by default), and at most ``bound`` are admitted and not yet
finished. A request is admitted whole or not at all: when its sandboxed items do not fit, it is
refused (429, ``Retry-After``) before anything of it runs, so memory stays bounded and a client
learns at once to come back later. Work that has not started can be cancelled (the client went
away); a check that has started runs to its own time limit, and its verdict is dropped.

The counters (``stats``) are what ``/healthz`` shows: an operator, and the tests, can see what
ran and what was cancelled without trusting the client's account.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class QueueFull(Exception):
    """The queue cannot take this many items now (``needed`` against ``free``)."""

    def __init__(self, needed: int, free: int) -> None:
        self.needed, self.free = needed, free
        super().__init__(f"{needed} sandboxed items asked for, {free} places free")


class SandboxQueue:
    """A bounded queue in front of ``jobs`` threads. ``admit`` and ``submit_threadsafe`` may be
    called from any thread; the work runs on the queue's own threads."""

    def __init__(self, jobs: int, bound: int, name: str = "assay-sandbox") -> None:
        self.jobs, self.bound = jobs, bound
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._pending = 0
        self._counts = {"started": 0, "finished": 0, "cancelled": 0}

    def admit(self, count: int) -> None:
        """Reserve ``count`` places, or raise ``QueueFull`` (nothing is reserved then)."""
        with self._lock:
            if self._pending + count > self.bound:
                raise QueueFull(count, self.bound - self._pending)
            self._pending += count

    def release(self, count: int) -> None:
        """Give back ``count`` places ``admit`` reserved that will never be submitted."""
        with self._lock:
            self._pending -= count

    def submit_threadsafe(self, work: Callable[[], T]) -> Future[T]:
        """Run ``work`` on a sandbox thread, in one place ``admit`` reserved (callable from any
        thread). Cancelling the returned future before the work starts means it never starts."""

        def run() -> T:
            self._count("started")
            return work()

        future = self._pool.submit(run)
        future.add_done_callback(self._release)
        return future

    def _release(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending -= 1
            self._counts["cancelled" if future.cancelled() else "finished"] += 1

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def stats(self) -> dict[str, int]:
        """Places and counts: ``pending`` (admitted, not finished), ``started``, ``finished``,
        ``cancelled`` (never started: the client went away)."""
        with self._lock:
            return {
                "jobs": self.jobs,
                "bound": self.bound,
                "pending": self._pending,
                **self._counts,
            }

    def close(self) -> None:
        """Stop taking work; waiting work is cancelled, running work finishes."""
        self._pool.shutdown(wait=False, cancel_futures=True)
