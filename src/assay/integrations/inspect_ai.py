"""inspect_ai: the ``assay/check`` scorer.

Registered with inspect_ai's registry when this module is imported, which inspect does itself
through the ``inspect_ai`` entry point assay's package declares (``assay =
"assay.integrations.inspect_ai"``), so a task or ``inspect score --scorer assay/check`` names it
without importing anything.

``verified`` scores ``CORRECT``, ``refuted`` ``INCORRECT``; ``inconclusive`` and ``error`` are
``Score.unscored`` (NaN: kept in the log, left out of every metric) with the reason as the
explanation, ``reason`` ``"inconclusive"`` or inspect's own ``"scoring_failed"`` for ``error``.
Every score carries the whole assay result in ``metadata["assay"]``.

The label is the sample's target (one string; several targets are passed as a list, for a
``{"$label": "json"}`` template), or with ``metadata_key`` one key of the sample's metadata.
The answer is the model's final completion.
"""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from assay.episodes import EpisodeResult
from assay.integrations._core import make_judge, reason
from assay.status import Status


def to_score(result: EpisodeResult, answer: str) -> Score:
    """An assay verdict as an inspect ``Score`` (see the module docstring for the mapping)."""
    metadata = {"assay": result.to_json()}
    if result.status is Status.VERIFIED or result.status is Status.REFUTED:
        return Score(
            value=CORRECT if result.status is Status.VERIFIED else INCORRECT,
            answer=answer,
            explanation=reason(result) or "verified",
            metadata=metadata,
        )
    return Score.unscored(
        reason="inconclusive" if result.status is Status.INCONCLUSIVE else "scoring_failed",
        answer=answer,
        explanation=reason(result),
        metadata=metadata,
    )


def _label(state: TaskState, target: Target, metadata_key: str | None) -> Any:
    if metadata_key is not None:
        return state.metadata.get(metadata_key) if state.metadata else None
    return target.target[0] if len(target.target) == 1 else list(target.target)


@scorer(metrics=[accuracy(), stderr()])
def check(
    template: str | dict[str, Any] | None = None,
    metadata_key: str | None = None,
    root: str | None = None,
) -> Scorer:
    """Score each sample with assay: the template (a file path, an inline task object, or None:
    ``ASSAY_TEMPLATE``, else the label is its own JSON task) makes the checks from the label.
    A template that does not load raises InvalidInput when the scorer is made."""
    judge = make_judge(template, root=root)

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        label = _label(state, target, metadata_key)
        result = await asyncio.to_thread(
            judge.judge, label=label, completion=answer, id=str(state.sample_id)
        )
        return to_score(result, answer)

    return score
