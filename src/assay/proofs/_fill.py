"""``fill_hole``: the seed operation of the proof search loop, as a library function."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay._errors import InvalidInput
from assay.proofs._cache import JudgmentCache
from assay.proofs._holes import HoleResult, classify, fill, hole_span, refused
from assay.proofs._judges import judge, plan_for
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
    HoleResult. The obligation file is only read.
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
    judgment = judge(
        "agda", plan, sandbox or Sandbox(), limits or Limits(timeout=300, memory_mb=4096), cache
    )
    if judgment.verdict is None:  # the patched file itself carries a refused shape
        return HoleResult(
            candidate, "refused", 0, 0, False, None, [f"refused: {s}" for s in judgment.refusals]
        )
    verdict = judgment.verdict
    status, remaining = classify(verdict.exit_code, verdict.finding, "\n".join(verdict.diagnostics))
    return HoleResult(
        candidate,
        status,
        remaining,
        verdict.elapsed_ms,
        verdict.checked_from_source,
        verdict.to_json(),
        verdict.diagnostics,
    )
