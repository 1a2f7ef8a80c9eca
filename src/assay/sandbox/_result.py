"""What a sandboxed run produced, as facts the caller interprets (it decides the status)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Isolation = Literal["bwrap", "none"]
LimitName = Literal["time", "cpu", "memory", "processes", "output", "file_size", "scratch"]


@dataclass(frozen=True)
class RunResult:
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
    """The limit that ended or broke the run, when one is known to have been hit."""
    started: bool = False
    """The runner reported (with the run's nonce) that it began the checked code."""
    completed: bool = False
    """The runner reported, over its private channel and with its nonce, that the code ran to the end."""
    runner_failed: bool = False
    """The runner itself failed after the checked code ran (assay's machinery, not the work)."""
    tampered: bool = False
    """The runner found ``sys.exit``, ``builtins.exit`` or another guarded function replaced."""

    @property
    def tail(self) -> str:
        """The last 300 characters of output, for failure details."""
        return self.output[-300:]
