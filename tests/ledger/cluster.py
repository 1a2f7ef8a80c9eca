"""A throwaway PostgreSQL cluster: for the test session (``tests/conftest.py``) and
``benchmarks/ledger.py``.

``initdb`` into a fresh folder under the system temp folder (as the ``postgres`` user when run as
root: postgres refuses to run as root, and that user must reach the folder), listening on
127.0.0.1 only, on a free port, its unix socket in that folder, with durability off
(``fsync=off``: it is thrown away). Stopped (``-m immediate``) and removed on exit, also when
the body fails.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class ClusterFailed(Exception):
    """The cluster could not be started (the message holds its log's tail)."""


@functools.cache
def postgres_bindir() -> Path | None:
    """The folder holding PostgreSQL's server programs (Debian keeps them out of PATH, in
    ``/usr/lib/postgresql/<major>/bin``), or None when PostgreSQL is not installed."""
    candidates: list[Path] = []
    if pg_config := shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=True
            )
            candidates.append(Path(out.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    if initdb := shutil.which("initdb"):
        candidates.append(Path(initdb).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a cluster; yields ``postgresql+psycopg://postgres@127.0.0.1:PORT`` (no database:
    append ``/postgres`` or one you create)."""
    bindir = postgres_bindir()
    if bindir is None:
        raise ClusterFailed("PostgreSQL (initdb, pg_ctl) is not installed")
    folder = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    as_user: dict[str, Any] = {}
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        as_user = {"user": "postgres", "group": "postgres", "extra_groups": []}
    data, log, port = folder / "data", folder / "log", _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
    )

    def run(*command: str | Path) -> None:
        subprocess.run(
            [str(part) for part in command],
            check=True,
            capture_output=True,
            timeout=120,
            cwd=folder,
            **as_user,
        )

    try:
        try:
            run(bindir / "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "-N")
            run(bindir / "pg_ctl", "-D", data, "-l", log, "-o", options, "-w", "-t", "60", "start")
        except subprocess.SubprocessError as exc:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            stderr = getattr(exc, "stderr", b"") or b""
            raise ClusterFailed(
                f"the cluster did not start: {stderr.decode(errors='replace')} {tail}"
            ) from None
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        if (data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                run(bindir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "60", "stop")
        shutil.rmtree(folder, ignore_errors=True)
