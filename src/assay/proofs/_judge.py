"""Running one batch judgment in the sandbox: stage the sources, run the steps, time them.

The sources are written into a fresh scratch folder (mounted at /proof, writable, owned by the
sandbox user) with no compiled interface of the candidate in it, so the candidate is always
checked from source. The toolchain and its library are read-only (they live under /usr).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.sandbox import Limits, Mount, RunResult, Sandbox
from assay.sandbox._staging import writable_by_sandbox

WORKDIR = "/proof"
INTERFACE_SUFFIXES = (".agdai", ".vo", ".vos", ".vok", ".glob", ".olean", ".ilean")


@dataclass(frozen=True)
class Batch:
    runs: list[RunResult]
    elapsed_ms: int
    checked_from_source: bool
    files: dict[str, str]
    """Relative path -> sha256 of every staged source."""


def stage(folder: Path, files: Mapping[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    writable_by_sandbox(folder)


def run_batch(
    sandbox: Sandbox,
    files: Mapping[str, bytes],
    steps: Sequence[Sequence[str]],
    limits: Limits,
) -> Batch:
    """Run each step in order (stopping at the first that does not exit 0) over ``files``."""
    with tempfile.TemporaryDirectory(prefix="assay-proof-") as name:
        folder = Path(name)
        stage(folder, files)
        from_source = not any(
            p.suffix in INTERFACE_SUFFIXES for p in folder.rglob("*") if p.is_file()
        )
        runs: list[RunResult] = []
        start = time.monotonic()
        for step in steps:
            run = sandbox.run(
                list(step),
                cwd=WORKDIR,
                mounts=[Mount(folder, WORKDIR, writable=True)],
                limits=limits,
                untrusted=True,
            )
            runs.append(run)
            if run.exit_code != 0:
                break
        elapsed = int((time.monotonic() - start) * 1000)
    digests = {n: hashlib.sha256(d).hexdigest() for n, d in sorted(files.items())}
    return Batch(runs, elapsed, from_source, digests)
