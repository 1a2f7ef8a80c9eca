"""Runs started ahead of time: a sandboxed run's fixed cost paid while other runs run.

A sandboxed python check spends most of its time before the check's first line: making the
run's cgroup and namespaces, starting the interpreter, the judge's own setup. With
``Sandbox(warm=True)``, each ``Sandbox.prepare`` asks for the next run of the same shape (argv,
mounts, limits...) to be started in the background, by one thread per sandbox; the next
``prepare`` of that shape takes it instead of starting one while its caller waits.

What two runs share: nothing a candidate touched. A started run is a whole sandbox of its own
(namespaces, cgroup, /tmp, folder), in which only trusted code has run: bubblewrap, the judge
blocked on its control pipe (before it holds the run's nonce), the judge's zygote blocked on its
request pipe. It is taken by exactly one later run and closed after it, like any run; until
then it is no different from a run going on at the same time as the others (which concurrent
checks already are). What differs from a run started on demand: its clock (the timeout counts
from ``Prepared.run``) and its folder, filled after it started (``Sandbox.prepare``).

Bounds: at most ``DEPTH`` waiting runs per shape and ``MAX_WAITING`` in all (the oldest is
closed first); a waiting run found dead is closed and the caller starts one on the spot. A
process forked from this one forgets the waiting runs (they are its parent's). At exit every
waiting run is closed; if the process is killed, bubblewrap's ``--die-with-parent`` ends them
with the thread that started them (a daemon thread that lives as long as the process), and the
next verifier sweeps their cgroups and folders (named for this pid).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import queue
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

DEPTH = 2
"""Waiting runs per shape: one per worker, for two workers taking turns."""
MAX_WAITING = 4
"""Waiting runs in all, across shapes (each holds a judge, its zygote and a cgroup)."""


class Waiting(Protocol):
    """A pre-started run as the pool sees it: it can be asked whether it still lives, and closed."""

    def alive(self) -> bool:
        """True while the run still waits for its job (a dead one is closed, never handed out)."""
        ...

    def close(self) -> None:
        """End the run and free what it holds."""
        ...


W = TypeVar("W", bound=Waiting)
Request = tuple[Hashable, Callable[[], W]]


class WarmRuns(Generic[W]):
    """Started runs waiting for a run of their shape; each is handed out once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, list[tuple[int, W]]] = {}
        self._requests: queue.SimpleQueue[Request[W] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._order = itertools.count()
        _ALL.add(self)

    def take(self, key: Hashable, start: Callable[[], W]) -> W:
        """A waiting run of shape ``key`` if one is alive, else ``start()``; either way the
        next run of this shape is started in the background."""
        if os.getpid() != self._pid:
            self.forget()
        with self._lock:
            waiting = self._waiting.get(key)
            found = waiting.pop(0)[1] if waiting else None
        self._request(key, start)
        if found is not None:
            if found.alive():
                return found
            found.close()
        return start()

    def close(self) -> None:
        """Close every waiting run (the thread stays, idle, for later requests)."""
        with self._lock:
            runs = [run for waiting in self._waiting.values() for _, run in waiting]
            self._waiting.clear()
        for run in runs:
            with contextlib.suppress(Exception):
                run.close()

    def forget(self) -> None:
        """In a forked child: the waiting runs and the thread are the parent's."""
        with contextlib.suppress(RuntimeError):
            self._lock.release()  # held by a thread that does not exist here
        self._lock = threading.Lock()
        self._waiting = {}
        self._requests = queue.SimpleQueue()
        self._thread = None
        self._pid = os.getpid()

    def _request(self, key: Hashable, start: Callable[[], W]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="assay-warm-runs", daemon=True)
            self._thread.start()
        self._requests.put((key, start))

    def _serve(self) -> None:
        requests = self._requests
        while True:
            request = requests.get()
            if request is None:
                return
            key, start = request
            with self._lock:
                if len(self._waiting.get(key, ())) >= DEPTH:
                    continue
            try:
                run = start()
            except Exception:
                continue  # the run that needs one starts it itself, and says why it cannot
            with self._lock:
                self._waiting.setdefault(key, []).append((next(self._order), run))
                evicted = self._over_limit()
            for old in evicted:
                with contextlib.suppress(Exception):
                    old.close()

    def _over_limit(self) -> list[W]:
        """The oldest waiting runs past ``MAX_WAITING``, taken out (the lock is held)."""
        everything = sorted(
            (order, key) for key, waiting in self._waiting.items() for order, _ in waiting
        )
        evicted = []
        for order, key in everything[: max(0, len(everything) - MAX_WAITING)]:
            waiting = self._waiting[key]
            index = next(i for i, (o, _) in enumerate(waiting) if o == order)
            evicted.append(waiting.pop(index)[1])
        return evicted


_ALL: weakref.WeakSet[WarmRuns[Any]] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for pool in list(_ALL):
        if pool._pid == os.getpid():
            pool.close()


def _forget_all() -> None:
    for pool in list(_ALL):
        pool.forget()


os.register_at_fork(after_in_child=_forget_all)
