"""``fill_hole``: the seed operation of the proof search loop, as a library function."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay._errors import InvalidInput
from assay.proofs._cache import JudgmentCache
from assay.proofs._canary import canary_checks
from assay.proofs._holes import HoleResult, classify, fill, hole_span, refused
from assay.proofs._judges import judge, plan_for, toolchain_for
from assay.proofs._paths import read_source
from assay.sandbox import Limits, Sandbox


def fill_hole(
    obligation: Path | str,
    line: int,
    column: int,
    candidate: str,
    *,
    sandbox: Sandbox | None = None,
    cache: JudgmentCache | None = None,
    stdlib: bool = True,
    options: Sequence[str] = (),
    limits: Limits | None = None,
) -> HoleResult:
    """Judge ``candidate`` in the Agda hole at ``line``:``column`` of ``obligation``.

    Raises HoleNotFound (no hole there), InvalidInput (the obligation is not a regular UTF-8
    file of at most 4 MiB) and ToolchainMissing; every other outcome, a refusal included, is a
    HoleResult. A check stopped by a limit is ``limit`` (which one in ``HoleResult.limit``) when
    the known-good canary still fits in the same limits, else ``error``: a candidate can cause a
    ``limit``, never an ``error``. The obligation file is only read.
    """
    try:
        text = read_source(Path(obligation)).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text", where=str(obligation)) from None
    span = hole_span(text, line, column)
    shapes = refused(candidate)
    if shapes:
        return HoleResult(
            candidate, "refused", 0, 0, False, None, [f"refused: {s}" for s in shapes]
        )
    patched = fill(text, span, candidate)
    plan = plan_for("agda", patched, stdlib=stdlib, options=options)
    box = sandbox or Sandbox()
    limits = limits or Limits(timeout=300, memory_mb=4096)
    judgment = judge("agda", plan, box, limits, cache)
    if judgment.verdict is None:  # the patched file itself carries a refused shape
        return HoleResult(
            candidate, "refused", 0, 0, False, None, [f"refused: {s}" for s in judgment.refusals]
        )
    verdict = judgment.verdict
    output = "\n".join(verdict.diagnostics)
    status, remaining = classify(verdict.exit_code, verdict.finding, output, verdict.limit)
    diagnostics = verdict.diagnostics
    if status == "limit" and not canary_checks("agda", toolchain_for("agda"), box, limits):
        status = "error"  # not the candidate's doing: a known-good proof does not fit either
        diagnostics = [
            *diagnostics,
            f"{verdict.reason}; a known-good proof fails within these limits too",
        ]
    elif status == "limit":
        diagnostics = [*diagnostics, f"stopped by the {verdict.limit} limit: {verdict.reason}"]
    return HoleResult(
        candidate,
        status,
        remaining,
        verdict.elapsed_ms,
        verdict.checked_from_source,
        verdict.to_json(),
        diagnostics,
        verdict.limit if status == "limit" else None,
    )
