"""What a sandboxed run produced, as facts the caller interprets (it decides the status)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay.sandbox._cgroup import MemoryMechanism

Isolation = Literal["bwrap", "none"]
LimitName = Literal["time", "cpu", "memory", "processes", "output"]


@dataclass(frozen=True)
class RunResult:
    """What a run did, as the verifier's parent process observed it (never as the run described itself)."""

    exit_code: int | None
    """The exit status, or None when the process was killed by a signal."""
    signal: int | None
    """The signal that ended the run, if one did."""
    output: str
    """stdout and stderr interleaved, at most ``output_kb`` of it (decoded leniently)."""
    output_bytes: int
    """How much was written in all; more than was kept when ``truncated``."""
    truncated: bool
    elapsed: float
    """Wall-clock seconds from start to the end of the whole sandbox."""
    isolation: Isolation
    limit: LimitName | None = None
    """The limit that ended or broke the run, only ever from what the parent observed itself:
    its wall clock, the output it counted, the cgroup's OOM-kill and task-refusal counters, the
    CPU time it measured. Never from the run's output or a signal the run could have sent
    itself."""
    memory_limit: MemoryMechanism = "rlimit-as"
    """What bound the run's memory: its own cgroup (v1 or v2), or only RLIMIT_AS per process."""
    cpu_seconds: float | None = None
    """CPU time of every process of the run together, as the parent measured it."""
    started: bool = False
    """The runner reported (with the run's nonce) that it began the checked code."""
    completed: bool = False
    """The runner reported, over its private channel and with its nonce, that the code ran to the end."""
    runner_failed: bool = False
    """The runner itself failed after the checked code ran (assay's machinery, not the work)."""
    tampered: bool = False
    """The runner found ``sys.exit``, ``builtins.exit`` or another guarded function replaced."""
    check_failed: bool = False
    """The runner saw the check fail (an assertion, an exception, a failed test) on answers
    the candidate's live process gave: a finding about the work, whatever limit counters moved
    elsewhere in the sandbox."""

    channel: bytes | None = None
    """What arrived on the run's private result channel (``RESULT_ARG``), at most its limit plus
    one byte; None when the run had none (or it could not be read to its end)."""

    @property
    def tail(self) -> str:
        """The last 300 characters of output, for failure details."""
        return self.output[-300:]
