"""Resource limits for one sandboxed run; every limit has a default and can be set per check."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """What one run may use. Hitting a limit is reported as such, never as a pass."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True
    )

    timeout: float = Field(10.0, gt=0, le=3600)
    """Wall-clock seconds before the whole sandbox (every process in it) is killed."""
    cpu_seconds: int | None = Field(None, gt=0)
    """CPU seconds of the whole run, every process together; defaults to the timeout rounded
    up, plus two. With a cgroup the parent reads the run's CPU time every 0.1 s and kills the
    run once it is over (the one case reported as the CPU limit); RLIMIT_CPU is then only a
    backstop two seconds higher. Without a cgroup it is RLIMIT_CPU, per process, reported when
    a failed run's measured CPU time reached it."""
    memory_mb: int = Field(1024, gt=0)
    """Memory of the whole run, in MiB: every page its processes use (anonymous, memfd, tmpfs,
    page cache, kernel stacks), bound by the run's own cgroup, with no swap. Where no cgroup can
    be made (not root), address space per process (RLIMIT_AS) instead."""
    processes: int = Field(64, gt=0)
    """Processes and threads the run may have at once (its cgroup's pids.max; without a cgroup,
    RLIMIT_NPROC, which counts every process of the sandbox uid)."""
    file_mb: int = Field(64, gt=0)
    """Largest file a process may write (RLIMIT_FSIZE), in MiB, when no cgroup can be made (with
    one, every writable folder is a tmpfs charged to the run's memory). Never reported as a
    limit: the parent cannot tell a real SIGXFSZ from one the run sent itself."""
    open_files: int = Field(256, gt=0)
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    output_kb: int = Field(256, gt=0)
    """Output kept (stdout and stderr together); the rest is counted and dropped."""
    scratch_mb: int = Field(64, gt=0)
    """Size of the private writable /tmp (a tmpfs) when no cgroup can be made. With a cgroup,
    /tmp's pages are the run's memory: ``memory_mb`` bounds them, and filling /tmp is the memory
    limit, observed by the parent."""

    @property
    def cpu(self) -> int:
        """CPU seconds for the whole run: the given limit, else the wall-clock timeout plus 2 s."""
        return self.cpu_seconds or int(self.timeout) + 2


MAX_REPLY = 64 << 20
"""The largest value a python check's candidate process may send back, whatever the memory."""
REPLY_SHARE = 16
"""A reply may be at most ``memory_mb / REPLY_SHARE``: with the objects built from it (at most
four times that, ``_proxy.BUILT_SHARE``) it stays well inside the run's memory."""


def reply_cap(memory_mb: int) -> int:
    """Bytes one reply from the candidate's process may have (``_proxy`` refuses more, as
    "too large to judge"): a sixteenth of the run's memory, at least 64 KiB, at most 64 MiB."""
    return max(64 << 10, min(MAX_REPLY, (memory_mb << 20) // REPLY_SHARE))


FLOOD_FACTOR = 64
"""Output beyond ``output_kb * FLOOD_FACTOR`` is a flood: the run is killed, the limit reported."""
