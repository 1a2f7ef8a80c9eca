"""What kinds that run code share: the sandbox to use, the staged workspace, limit verdicts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.checks._context import CheckContext
from assay.sandbox import (
    Limits,
    RunResult,
    Sandbox,
    StagingTooLarge,
    configured_sandbox,
    snapshot,
)
from assay.status import Outcome

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def sandbox_for(ctx: CheckContext) -> Sandbox:
    """The context's sandbox, or the one its config describes (``configured_sandbox``)."""
    return ctx.sandbox or configured_sandbox(ctx.config)


def staged_workspace(ctx: CheckContext, into: Path) -> Path | Outcome:
    """A read-only-to-the-sandbox snapshot of the workspace in ``into`` (an empty folder, which
    a prepared sandbox may already mount), or why there is none.

    Too deep, too many entries or too many bytes to stage is refuted, for every kind that
    stages a workspace (``limits_are_rules`` or not).
    """
    assert ctx.workspace is not None
    if not ctx.workspace.is_dir():
        return Outcome.inconclusive(f"the workspace {str(ctx.workspace)!r} is not a directory")
    staging = into.with_name(f"{into.name}.staging")
    try:
        snapshot(ctx.workspace, staging, ctx.config.max_staged_mb * 1024 * 1024)
    except StagingTooLarge as exc:
        # The workspace is the work: its size and shape are the candidate's doing, and an
        # inconclusive here would let any wrong answer mask itself by adding files.
        return Outcome.refuted(f"the workspace cannot be staged: {exc}")
    # Moved in whole, top-level entry by entry: the folder itself stays the one mounted.
    source, target = os.open(staging, _DIR), os.open(into, _DIR)
    try:
        for name in os.listdir(source):
            os.rename(name, name, src_dir_fd=source, dst_dir_fd=target)
    finally:
        os.close(source)
        os.close(target)
    os.rmdir(staging)
    return into


_LIMIT_WORDS = {
    "cpu": "the CPU-time limit",
    "memory": "the memory limit ({memory_mb} MiB)",
    "processes": "the process limit ({processes})",
    "output": "the output limit (a flood past {output_kb} KiB x 64)",
}


def limits_outcome(
    result: RunResult,
    limits: Limits,
    limits_are_rules: bool,
    evidence: dict[str, Any],
    expect_exit: int = 0,
) -> Outcome | None:
    """The outcome for a run that hit a limit, or None when it did not.

    ``result.limit`` is only ever what the sandbox's parent observed (its clock, the cgroup's
    counters, the output it counted), never what the run printed. With ``limits_are_rules``
    every limit refutes, the wall clock included: a policy that knows its answer is wrong would
    otherwise learn to stall or to blow a limit to have the episode masked. Without it, a limit
    is inconclusive (the work was not judged). A limit is not believed when the judge itself
    saw the check fail on answers the candidate's process gave (``check_failed``), or, for a
    shell check, bash itself reported a failing status for the check's last line
    (``completed`` with ``check_failed``, and not the ``expect_exit`` asked for): the check
    concluded, so the ordinary verdict (refuted) stands whatever the cgroup's counters say.
    """
    if result.limit is None:
        return None
    if result.check_failed and (not result.completed or result.exit_code != expect_exit):
        return None  # the check itself concluded it failed: a finding, not a limit
    evidence = {**evidence, "limit": result.limit, "memory_limit": result.memory_limit}
    if result.limit == "time":
        detail = f"timed out after {limits.timeout:g}s; the whole sandbox was killed"
    else:
        words = _LIMIT_WORDS[result.limit].format(**limits.model_dump())
        if result.limit == "memory":
            words += f", enforced by {result.memory_limit}"
        detail = f"the checked code hit {words}"
    if limits_are_rules:
        return Outcome.refuted(f"{detail}; this check's rules forbid hitting a limit", evidence)
    return Outcome.inconclusive(detail, evidence)
