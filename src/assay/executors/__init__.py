"""Executors: judge many episodes, on a local pool of warm workers or on a Ray cluster.

An executor maps ``Job``s (an item and the name its errors carry) to ``Judged`` results in input
order, streaming; ``run_batch`` drives one over a JSON Lines file (``assay batch``). Ray is
imported only when a Ray executor is made.
"""

from __future__ import annotations

from pathlib import Path

from assay._config import Config
from assay._errors import InvalidInput
from assay.executors._base import ChunkSizer, Executor, Job, Judged, in_process, judge_chunk
from assay.executors._batch import (
    MAX_LINE_BYTES,
    BatchSummary,
    check_paths,
    count_items,
    read_jobs,
    read_output,
    resolve_root,
    run_batch,
)
from assay.executors._local import DEFAULT_MAX_TASKS, DEFAULT_TIMEOUT, LocalExecutor, PoolFailed
from assay.executors._ray import RayUnavailable

EXECUTORS = ("local", "ray")


def make_executor(
    name: str,
    *,
    root: Path | None,
    config: Config,
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    address: str | None = None,
    chunk_size: int | None = None,
) -> Executor:
    """The executor called ``name`` (``local`` or ``ray``); InvalidInput for anything else."""
    if name == "local":
        if address is not None:
            raise InvalidInput("only the ray executor takes an address", where="--ray-address")
        return LocalExecutor(
            root=root, config=config, jobs=jobs, timeout=timeout, chunk_size=chunk_size
        )
    if name == "ray":
        from assay.executors._ray import RayExecutor  # the module imports ray only when made

        return RayExecutor(
            root=root,
            config=config,
            address=address,
            jobs=jobs,
            timeout=timeout,
            chunk_size=chunk_size,
        )
    raise InvalidInput(f"{name!r}: choose one of {', '.join(EXECUTORS)}", where="--executor")


__all__ = [
    "DEFAULT_MAX_TASKS",
    "DEFAULT_TIMEOUT",
    "EXECUTORS",
    "MAX_LINE_BYTES",
    "BatchSummary",
    "ChunkSizer",
    "Executor",
    "Job",
    "Judged",
    "LocalExecutor",
    "PoolFailed",
    "RayUnavailable",
    "check_paths",
    "count_items",
    "in_process",
    "judge_chunk",
    "make_executor",
    "read_jobs",
    "read_output",
    "resolve_root",
    "run_batch",
]
