"""One sandboxed run, started and waiting for its control message (``Sandbox.prepare``).

Splitting a run in two lets its fixed cost (the sandbox, the interpreter, the judge's setup) be
paid before the caller has the run's input ready: a code check stages its workspace while its
sandbox starts, and a warm sandbox (``_warm``) starts the next run while the current one runs.
``Prepared.run`` sends the control message and reads how the run ended; the clock starts then.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path

from assay._errors import SandboxUnavailable
from assay.sandbox._cgroup import RunCgroup
from assay.sandbox._forked import Forked
from assay.sandbox._limits import Limits
from assay.sandbox._reading import (
    collect,
    events_of,
    kill_tree,
    observed_limit,
    read_channel,
    read_done,
    write_all,
)
from assay.sandbox._result import Isolation, RunResult

CHANNEL_LIMIT = 64 * 1024
"""What a run's result channel keeps (``RunResult.channel``), plus one byte to see more came."""
JOIN_FAILED = 125
"""Exit status of the joining shell when it could not enter the run's cgroup."""


class Prepared:
    """One run, started and waiting for its control message (``Sandbox.prepare``).

    Its first process, cgroup, pipes and folder are its own; ``run`` may be called once.
    Closing it (``with``) kills every process of the run and removes its cgroup and folder.
    """

    def __init__(
        self,
        isolation: Isolation,
        stack: contextlib.ExitStack,
        process: subprocess.Popen[bytes] | Forked,
        cgroup: RunCgroup | None,
        limits: Limits,
        folder: Path | None,
    ) -> None:
        self.isolation = isolation
        self.process = process
        self.limits = limits
        self._stack = stack
        self._cgroup = cgroup
        self._folder = folder
        self.control = self.done = -1
        self.channel: int | None = None

    @property
    def folder(self) -> Path:
        """The private folder mounted at ``folder_at`` (empty until the caller fills it)."""
        assert self._folder is not None, "prepared without folder_at"
        return self._folder / "mounted"

    def alive(self) -> bool:
        """Still waiting, as it was started (nothing of it has exited)."""
        return self.control >= 0 and self.process.poll() is None

    def kill(self) -> None:
        """Kill every process of the run, through its cgroup when it has one (a run a template
        forked always has one, and no process group of this process's)."""
        if not isinstance(self.process, Forked):
            kill_tree(self.process)
        if self._cgroup is not None:
            self._cgroup.kill(wait=False)  # its close waits for the last of them

    def close_fds(self) -> None:
        """Close the run's pipes (idempotent)."""
        for fd in (self.control, self.done, self.channel):
            if fd is not None and fd >= 0:
                os.close(fd)
        self.control = self.done = -1
        self.channel = None
        if isinstance(self.process, Forked):
            self.process.close()
        elif self.process.stdout is not None:
            self.process.stdout.close()  # ``run`` read it; a run never sent, nobody did

    def close(self) -> None:
        """Kill what is left of the run and remove its cgroup and private folder."""
        self._stack.close()

    def __enter__(self) -> Prepared:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, control: bytes | None = None, nonce: str | None = None) -> RunResult:
        """Send ``control`` and wait for the run to end (``Sandbox.run``): its timeout and
        elapsed time count from now. Raises only when it could not run at all."""
        process, cgroup, limits = self.process, self._cgroup, self.limits
        assert self.control >= 0, "a prepared run runs once"
        start = time.monotonic()
        control_fd, done_fd, channel_fd = self.control, self.done, self.channel
        self.control = self.done = -1
        self.channel = None
        writer = threading.Thread(target=write_all, args=(control_fd, control or b""), daemon=True)
        writer.start()
        received = bytearray()
        reader = None
        if channel_fd is not None:
            reader = threading.Thread(
                target=read_channel, args=(channel_fd, CHANNEL_LIMIT, received), daemon=True
            )
            reader.start()
        cpu_usage = cgroup.cpu_usage if cgroup is not None and cgroup.accounts_cpu else None
        seen = collect(process, limits, start, self.kill, cpu_usage)
        done = read_done(done_fd)
        writer.join(timeout=1)
        self.kill()  # what the run left behind (daemons outside the PID namespace, locally)
        if reader is not None:
            reader.join(timeout=5)  # every holder of the other end is dead: it ends now
        elapsed = time.monotonic() - start
        returncode = process.returncode
        exit_code = returncode if returncode is not None and returncode >= 0 else None
        sig = -returncode if returncode is not None and returncode < 0 else None
        counters = cgroup.counters() if cgroup is not None else None
        if exit_code == JOIN_FAILED and cgroup is not None and not cgroup.joined():
            raise SandboxUnavailable("the run could not join its cgroup")
        # Nothing in the sandbox can kill a forked run's init (pid 1: no signal from inside
        # reaches it): its status is missing only when assay's own machinery failed (the
        # template died, or never started the run: nothing ran in the run's cgroup), unless
        # this parent ended the run or the OOM killer did.
        if isinstance(process, Forked) and process.lost:
            unexplained = seen.limit is None and (counters is None or counters.oom_kills == 0)
            if unexplained or (cgroup is not None and not cgroup.joined()):
                raise SandboxUnavailable(
                    "the sandbox template's run ended without a status (the template died)"
                )
        cpu = counters.cpu_seconds if counters is not None else seen.cpu_seconds
        limit = observed_limit(
            ended_by_parent=seen.limit,
            failed=exit_code != 0,
            counters=counters,
            cpu_seconds=cpu,
            limits=limits,
            cpu_enforced=cpu_usage is not None,
        )
        events = events_of(done, nonce)
        return RunResult(
            exit_code=exit_code,
            signal=sig,
            output=seen.output.decode("utf-8", errors="replace"),
            output_bytes=seen.total,
            truncated=seen.truncated,
            elapsed=elapsed,
            isolation=self.isolation,
            limit=limit,
            memory_limit=cgroup.version if cgroup is not None else "rlimit-as",
            cpu_seconds=round(cpu, 3),
            started=["started"] in events,
            completed=["completed"] in events,
            tampered=["tampered"] in events,
            runner_failed=["runner_error"] in events,
            check_failed=["failed"] in events,
            channel=(bytes(received) if reader is not None and not reader.is_alive() else None),
        )
