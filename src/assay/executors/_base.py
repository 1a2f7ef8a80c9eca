"""What every executor shares: the unit of work, the result as it travels, and judging a chunk.

An executor maps ``Job``s to ``Judged`` results **in input order**, as an iterator that yields
each result as soon as it and every result before it are known (so a caller can stream them to
a file without holding the batch). Each result is judged by ``judge_chunk``, whichever executor
runs it (a local worker process, a Ray task), and serialised there, so every executor gives the
same bytes for the same item.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from assay._config import Config
from assay._wire import read_document
from assay.episodes import EpisodeResult, item_id, judge_item
from assay.status import Status

INPUT_DIGEST = "input_sha256"
"""The key of a batch result line that holds the sha256 of the input line it answers."""


@dataclass(frozen=True)
class Job:
    """One item to judge, and the name its errors carry (``line 7``).

    ``refusal``: a reason the item is already known to be unusable (a line that is not JSON, an
    id used twice); it is answered with an ``error`` result naming that reason and never judged.
    ``digest``: the sha256 of the input line it came from; when given, the result line carries
    it as ``input_sha256``, binding the verdict to exactly that input (a batch resumes only
    over results whose input is unchanged).
    ``from_json``: ``data`` is what ``loads_strict`` read (a batch line), so it is not encoded
    again to prove it is JSON (see ``parse_episode``); a Python caller's data is checked.
    """

    data: Any
    where: str = "item"
    refusal: str | None = None
    digest: str | None = None
    from_json: bool = False


@dataclass(frozen=True)
class Judged:
    """One result as executors pass it on: its JSON line (``EpisodeResult.to_json()``, made
    where it was judged), and the two fields a caller counts by, without parsing the line."""

    id: str
    status: Status
    line: str

    @property
    def result(self) -> EpisodeResult:
        """The ``EpisodeResult`` this line holds (parsed on demand: a batch only writes lines)."""
        return read_document(EpisodeResult, json.loads(self.line))

    @classmethod
    def of(cls, result: EpisodeResult, digest: str | None = None) -> Judged:
        """The line of ``result``: ASCII JSON, so it is terminal-inert and encodable whatever
        the item's id holds; with ``digest``, plus ``input_sha256`` (readers of
        ``assay.result/1`` ignore a key they do not know)."""
        document = result.to_json()
        if digest is not None:
            document[INPUT_DIGEST] = digest
        return cls(result.id, result.status, json.dumps(document))


def judge_job(job: Job, root: Path | None, config: Config) -> Judged:
    """Judge one job (or answer its refusal); never raises for anything the item holds."""
    if job.refusal is not None:
        return lost(job, job.refusal)
    result = judge_item(
        job.data, root=root, config=config, where=job.where, from_json=job.from_json
    )
    return Judged.of(result, job.digest)


def judge_chunk(jobs: list[Job], root: Path | None, config: Config) -> tuple[list[Judged], float]:
    """Judge ``jobs`` in order; also the seconds it took (executors size their chunks by it)."""
    start = time.monotonic()
    judged = [judge_job(job, root, config) for job in jobs]
    return judged, time.monotonic() - start


def overdue(job: Job, budget: float) -> Judged:
    """The result of an item whose worker was killed for running past the per-item budget."""
    return lost(job, f"the worker did not answer within {budget:g} s (killed and replaced)")


def lost(job: Job, why: str) -> Judged:
    """An ``error`` result for a job that was not judged (refused, or its worker died under
    it): never a finding about the work."""
    return Judged.of(EpisodeResult.invalid(item_id(job.data), f"{job.where}: {why}"), job.digest)


class ChunkSizer:
    """Chunk sizes that keep each dispatch near ``target`` seconds of work.

    Answer checks take about 0.1 ms, sandboxed checks 10 ms to seconds: one fixed size either
    drowns answers in messaging or leaves a worker idle behind a long chunk of slow items. The
    size follows a moving average of seconds per item, reported back with each chunk.
    """

    def __init__(self, fixed: int | None = None, target: float = 0.05, most: int = 512) -> None:
        self.fixed, self.target, self.most = fixed, target, most
        self.per_item: float | None = None

    def size(self) -> int:
        """Items for the next chunk (small until a chunk has been timed)."""
        if self.fixed is not None:
            return self.fixed
        if self.per_item is None:
            return 4  # small until the first chunk says how long items take
        return max(1, min(self.most, int(self.target / max(self.per_item, 1e-7))))

    def record(self, items: int, seconds: float) -> None:
        """A chunk of ``items`` took ``seconds`` where it was judged."""
        if items <= 0:
            return
        sample = seconds / items
        self.per_item = sample if self.per_item is None else 0.7 * self.per_item + 0.3 * sample


class Executor(ABC):
    """Maps jobs to results, in input order, streaming. Use it as a context manager: ``close``
    ends whatever it started (processes, a Ray instance)."""

    @abstractmethod
    def map(self, jobs: Iterable[Job]) -> Iterator[Judged]:
        """One ``Judged`` per job, in the jobs' order; read ahead of the consumer only within a
        bounded window, so memory does not grow with the batch."""

    def close(self) -> None:  # noqa: B027  (an executor with nothing to end keeps this one)
        """End what the executor started; idempotent."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


Pending = deque[tuple[int, Job]]
"""Jobs read ahead and not yet sent, with their place in the input."""


def in_order(
    jobs: Iterable[Job],
    window: int,
    root: Path | None,
    config: Config,
    step: Callable[[Pending, dict[int, Judged]], None],
) -> Iterator[Judged]:
    """Results in input order, reading at most ``window`` jobs ahead of the consumer (memory does
    not grow with the batch). A refused line is answered here; ``step`` sends what is pending and
    puts what came back in ``done`` by place: the one loop every executor runs."""
    source = iter(jobs)
    pending: Pending = deque()
    done: dict[int, Judged] = {}
    taken = emitted = 0
    exhausted = False
    while True:
        while emitted in done:
            yield done.pop(emitted)
            emitted += 1
        while not exhausted and taken - emitted < window:
            try:
                job = next(source)
            except StopIteration:
                exhausted = True
                break
            if job.refusal is not None:  # answered here: nothing to judge
                done[taken] = judge_job(job, root, config)
            else:
                pending.append((taken, job))
            taken += 1
        if exhausted and emitted == taken:
            return
        if emitted not in done:
            step(pending, done)


def in_process(jobs: Iterable[Job], root: Path | None, config: Config) -> Iterator[Judged]:
    """The baseline: judge each job here, one after another (no pool)."""
    for job in jobs:
        yield judge_job(job, root, config)
