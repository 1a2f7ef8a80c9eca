"""What kinds that run code share: the sandbox to use, the staged workspace, limit verdicts."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from assay.checks._context import CheckContext
from assay.sandbox import Limits, RunResult, Sandbox, StagingTooLarge, snapshot
from assay.status import Outcome


@lru_cache(maxsize=2)
def _default_sandbox(allow_unisolated: bool) -> Sandbox:
    return Sandbox(allow_unisolated=allow_unisolated)


def sandbox_for(ctx: CheckContext) -> Sandbox:
    """The context's sandbox, or the default one for its config."""
    return ctx.sandbox or _default_sandbox(ctx.config.allow_unisolated)


def staged_workspace(ctx: CheckContext, scratch: Path) -> Path | Outcome:
    """A read-only-to-the-sandbox snapshot of the workspace, or why there is none."""
    assert ctx.workspace is not None
    if not ctx.workspace.is_dir():
        return Outcome.inconclusive(f"the workspace {str(ctx.workspace)!r} is not a directory")
    target = scratch / "workspace"
    try:
        snapshot(ctx.workspace, target, ctx.config.max_staged_mb * 1024 * 1024)
    except StagingTooLarge as exc:
        return Outcome.inconclusive(f"the workspace is too large to stage ({exc})")
    return target


_LIMIT_WORDS = {
    "cpu": "the CPU-time limit",
    "memory": "the memory limit ({memory_mb} MiB)",
    "processes": "the process limit ({processes})",
    "output": "the output limit (a flood past {output_kb} KiB x 64)",
    "file_size": "the file-size limit ({file_mb} MiB)",
    "scratch": "the size of its scratch space ({scratch_mb} MiB)",
}


def limits_outcome(
    result: RunResult, limits: Limits, limits_are_rules: bool, evidence: dict[str, Any]
) -> Outcome | None:
    """The outcome for a run that hit a limit, or None when it did not."""
    if result.limit is None:
        return None
    evidence = {**evidence, "limit": result.limit}
    if result.limit == "time":
        return Outcome.inconclusive(
            f"timed out after {limits.timeout:g}s; the whole sandbox was killed", evidence
        )
    words = _LIMIT_WORDS[result.limit].format(**limits.model_dump())
    if limits_are_rules:
        return Outcome.refuted(
            f"the checked code hit {words}, which this check's rules forbid", evidence
        )
    return Outcome.inconclusive(f"the checked code hit {words}", evidence)
