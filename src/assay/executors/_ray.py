"""The Ray executor: the same chunks the local pool judges, as Ray tasks on a cluster.

``ray`` is imported only here, and only when the executor is made (``assay batch --executor
ray``), so ``import assay`` and every other command stay light; it is the optional extra
``assay[ray]``. Each task runs ``judge_chunk``, the function a local worker runs, and returns the
same JSON lines, so a batch gives the same bytes on either executor.

Where it runs: with ``address`` (``ray://HOST:10001`` or ``HOST:6379``) on that cluster, whose
workers must have the same assay version installed (and bubblewrap, for items that run code), and
see the workspace root at the same path; without it, on a Ray instance of ``jobs`` CPUs started on
127.0.0.1 for this executor and shut down by ``close``.

The per-item budget on Ray: a task of n items gets n × ``timeout`` from its submission (at most
two tasks per CPU are out at once). A task past its budget is cancelled (its worker killed) and
its items are sent again one per task; an item that alone runs past ``timeout`` is an ``error``
result ("the worker did not answer within X s").
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import AssayError, InvalidInput
from assay.executors._base import (
    ChunkSizer,
    Executor,
    Job,
    Judged,
    Pending,
    in_order,
    judge_chunk,
    lost,
    overdue,
)
from assay.executors._local import DEFAULT_TIMEOUT
from assay.status import Status

TICK = 0.05
PER_CPU = 2
"""Tasks out per CPU: one running, one queued behind it, so a CPU never waits for the driver."""


class RayUnavailable(AssayError):
    """Ray could not be started or reached (the message says why)."""


def judge_batch(
    jobs: list[Job], root: Path | None, config: Config
) -> tuple[list[tuple[str, str, str]], float]:
    """The body of one Ray task: ``judge_chunk``, answered as plain data."""
    judged, seconds = judge_chunk(jobs, root, config)
    return [(j.id, j.status.value, j.line) for j in judged], seconds


@dataclass(eq=False)
class _Task:
    ref: Any
    chunk: list[tuple[int, Job]]
    deadline: float


class RayExecutor(Executor):
    """Chunks of items as Ray tasks, results in input order."""

    def __init__(
        self,
        *,
        root: Path | None,
        config: Config,
        address: str | None = None,
        jobs: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        chunk_size: int | None = None,
    ) -> None:
        try:
            import ray
        except ImportError:
            raise InvalidInput(
                "the ray executor needs Ray: pip install 'assay[ray]'", where="--executor"
            ) from None
        self.ray: Any = ray
        self.root, self.config, self.timeout = root, config, timeout
        self.sizer = ChunkSizer(chunk_size)
        self.owned = False
        if not ray.is_initialized():
            self._init(address, jobs)
        cpus = int(self.ray.cluster_resources().get("CPU", 1)) or 1
        self.limit = PER_CPU * cpus
        self.window = max(64, 4 * self.limit * (chunk_size or self.sizer.most))
        self.remote = ray.remote(num_cpus=1, max_retries=0)(judge_batch)
        self.shared = (ray.put(root), ray.put(config))

    def _init(self, address: str | None, jobs: int | None) -> None:
        options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
        if address is None:
            # A private instance: loopback only, no dashboard, no usage report (no network here).
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            options |= {
                "num_cpus": jobs or os.cpu_count() or 1,
                "include_dashboard": False,
                "_node_ip_address": "127.0.0.1",
            }
        else:
            options["address"] = address
        attempts = 1 if address else 2  # a busy machine can miss Ray's fixed 30 s node wait
        for attempt in range(attempts):
            try:
                self.ray.init(**options)
                break
            except Exception as exc:
                self.ray.shutdown()  # whatever half-started, before a retry or the refusal
                if attempt + 1 == attempts:
                    where = address or "a local instance"
                    raise RayUnavailable(
                        f"ray could not start ({where}): {type(exc).__name__}: {exc}"
                    ) from None
        self.owned = address is None

    def close(self) -> None:
        """Shut down the Ray instance this executor started (never one it found running)."""
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()
            self.owned = False

    def map(self, jobs: Iterable[Job]) -> Iterator[Judged]:
        """Results in input order; at most two tasks per CPU are out at a time. Left early, it
        cancels the tasks still out."""
        singles: deque[tuple[int, Job]] = deque()  # items of a cancelled task, tried alone
        out: list[_Task] = []

        def step(pending: Pending, done: dict[int, Judged]) -> None:
            self._submit(out, pending, singles)
            self._collect(out, singles, done)

        try:
            yield from in_order(jobs, self.window, self.root, self.config, step)
        finally:
            for task in out:
                self.ray.cancel(task.ref, force=True)

    def _submit(
        self,
        out: list[_Task],
        pending: Pending,
        singles: deque[tuple[int, Job]],
    ) -> None:
        now = time.monotonic()
        while singles and len(out) < self.limit:
            chunk = [singles.popleft()]
            out.append(_Task(self._send(chunk), chunk, now + self.timeout))
        while pending and len(out) < self.limit:
            share = math.ceil(len(pending) / self.limit)
            size = max(1, min(self.sizer.size(), share))
            chunk = [pending.popleft() for _ in range(min(size, len(pending)))]
            out.append(_Task(self._send(chunk), chunk, now + self.timeout * len(chunk)))

    def _send(self, chunk: list[tuple[int, Job]]) -> Any:
        return self.remote.remote([job for _, job in chunk], *self.shared)

    def _collect(
        self, out: list[_Task], singles: deque[tuple[int, Job]], done: dict[int, Judged]
    ) -> None:
        if not out:
            return
        refs = [t.ref for t in out]
        first, _ = self.ray.wait(refs, num_returns=1, timeout=TICK)
        finished = set(first)
        if first:  # and whatever else is ready by now
            more, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            finished.update(more)
        for task in [t for t in out if t.ref in finished]:
            out.remove(task)
            try:
                answers, seconds = self.ray.get(task.ref)
            except Exception as exc:  # the task's worker died: each item alone, once more
                if len(task.chunk) == 1:
                    index, job = task.chunk[0]
                    done[index] = _failed(job, exc)
                else:
                    singles.extend(task.chunk)
                continue
            for (index, _), (id_, status, line) in zip(task.chunk, answers, strict=True):
                done[index] = Judged(id_, Status(status), line)
            self.sizer.record(len(task.chunk), seconds)
        now = time.monotonic()
        for task in [t for t in out if now > t.deadline]:
            out.remove(task)
            self.ray.cancel(task.ref, force=True)
            if len(task.chunk) == 1:
                index, job = task.chunk[0]
                done[index] = overdue(job, self.timeout)
            else:
                singles.extend(task.chunk)


def _failed(job: Job, exc: Exception) -> Judged:
    return lost(job, f"the Ray task failed: {type(exc).__name__}: {str(exc)[:300]}")
