"""verl: ``custom_reward_function`` in each of verl's call shapes.

verl calls ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`` per sample
(reward managers ``naive``, ``dapo``, and the reward loop; an ``async def`` is awaited there),
``compute_score(data_sources=, solution_strs=, ground_truths=, extra_infos=)`` once per batch
(``batch``), and ``compute_score(data_source, solution_str, ground_truth, extra_info)``
positionally in worker processes, keeping only a number (``prime``). Config
``reward_kwargs`` arrive as extra keyword arguments: ``template=`` is read, the rest ignored.

verl cannot mask a sample: the value under ``"score"`` goes into the reward tensor. So an
``inconclusive`` or ``error`` verdict scores 0.0, and every dict carries the same keys, with the
same types, so verl can stack them and a user can filter the stand-ins::

    score     float  the reward (verified/refuted: the item's score); 0.0 when undecided
    status    str    verified | refuted | inconclusive | error
    verified  float  1.0 when verified, else 0.0
    decided   float  1.0 when verified or refuted; 0.0 marks a score that is a stand-in
    reason    str    why it is not verified ("" when it is)

The float-only variant (``prime``) has no room for the status; use it only where the dict
cannot go.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay._config import Config
from assay.episodes import EpisodeResult
from assay.integrations._core import Judge, TemplateSource, default_judge, make_judge, reason
from assay.status import Status

SCORE_KEYS = ("score", "status", "verified", "decided", "reason")
"""The keys of every dict the verl functions return, in order."""


def score_dict(result: EpisodeResult) -> dict[str, float | str]:
    """The verdict as verl's per-sample dict: the same keys and types on every call."""
    return {
        "score": float(result.reward) if result.reward is not None else 0.0,
        "status": result.status.value,
        "verified": 1.0 if result.status is Status.VERIFIED else 0.0,
        "decided": 1.0 if result.status.concluded else 0.0,
        "reason": reason(result),
    }


def _sample_id(data_source: Any, extra_info: Any) -> str:
    """``<data_source>/<index>`` when the dataset gives an index (verl's examples do), so a
    reason in the logs points back to its row."""
    index = extra_info.get("index") if isinstance(extra_info, dict) else None
    return f"{data_source}/{index}" if index is not None else str(data_source)


@dataclass(frozen=True)
class VerlReward:
    """The verl reward functions over one judge; each method is one of verl's call shapes.

    Picklable, so ``prime``'s process pool can take ``compute_score_float``.
    """

    judge: Judge

    def result(
        self, data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None
    ) -> EpisodeResult:
        """The full verdict on one sample (what the dicts are made from)."""
        return self.judge.judge(
            label=ground_truth, completion=solution_str, id=_sample_id(data_source, extra_info)
        )

    def compute_score(
        self,
        data_source: Any,
        solution_str: Any,
        ground_truth: Any,
        extra_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, float | str]:
        """verl's per-sample shape (``naive``, ``dapo``, reward loop): the ``SCORE_KEYS`` dict."""
        return score_dict(self.result(data_source, solution_str, ground_truth, extra_info))

    def compute_score_float(
        self,
        data_source: Any,
        solution_str: Any,
        ground_truth: Any,
        extra_info: Any = None,
        **kwargs: Any,
    ) -> float:
        """The reward alone, for ``prime`` (which keeps only a number): 0.0 when undecided."""
        result = self.result(data_source, solution_str, ground_truth, extra_info)
        return float(result.reward) if result.reward is not None else 0.0

    def compute_score_batch(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, float | str]]:
        """verl's ``batch`` shape: one ``SCORE_KEYS`` dict per sample, in order. Lists of
        different lengths are verl's bug, not a sample's: ValueError, before judging any."""
        count = len(solution_strs)
        infos: Sequence[Any] = [None] * count if extra_infos is None else extra_infos
        if not len(data_sources) == len(ground_truths) == len(infos) == count:
            raise ValueError(
                "data_sources, solution_strs, ground_truths and extra_infos differ in length: "
                f"{len(data_sources)}, {count}, {len(ground_truths)}, {len(infos)}"
            )
        return [
            self.compute_score(source, solution, truth, info)
            for source, solution, truth, info in zip(
                data_sources, solution_strs, ground_truths, infos, strict=True
            )
        ]

    async def compute_score_async(
        self,
        data_source: Any,
        solution_str: Any,
        ground_truth: Any,
        extra_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, float | str]:
        """The per-sample shape as a coroutine (verl's reward loop awaits it): judged in a
        thread, so a sandboxed check never blocks the event loop."""
        return await asyncio.to_thread(
            self.compute_score, data_source, solution_str, ground_truth, extra_info
        )


def make_reward(
    template: TemplateSource = None,
    *,
    root: str | os.PathLike[str] | None = None,
    config: Config | None = None,
) -> VerlReward:
    """The verl reward functions for one template (a file, a ``Template``, an inline object, or
    None: ``ASSAY_TEMPLATE``, else each label is its own JSON task). A template that does not
    load raises InvalidInput here, before training starts."""
    return VerlReward(make_judge(template, root=root, config=config))


def compute_score(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: Any = None,
    *,
    template: str | None = None,
    **kwargs: Any,
) -> dict[str, float | str]:
    """``custom_reward_function.name=compute_score``: the per-sample dict; ``template`` (from
    ``reward_kwargs``) or ``ASSAY_TEMPLATE`` names the template file."""
    return VerlReward(default_judge(template)).compute_score(
        data_source, solution_str, ground_truth, extra_info
    )


def compute_score_float(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: Any = None,
    *,
    template: str | None = None,
    **kwargs: Any,
) -> float:
    """``name=compute_score_float`` for the ``prime`` manager: the reward alone."""
    return VerlReward(default_judge(template)).compute_score_float(
        data_source, solution_str, ground_truth, extra_info
    )


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    *,
    template: str | None = None,
    **kwargs: Any,
) -> list[dict[str, float | str]]:
    """``name=compute_score_batch`` for the ``batch`` manager: one dict per sample."""
    return VerlReward(default_judge(template)).compute_score_batch(
        data_sources, solution_strs, ground_truths, extra_infos
    )


async def compute_score_async(
    data_source: Any,
    solution_str: Any,
    ground_truth: Any,
    extra_info: Any = None,
    *,
    template: str | None = None,
    **kwargs: Any,
) -> dict[str, float | str]:
    """``name=compute_score_async``: the per-sample dict as a coroutine (the reward loop)."""
    return await VerlReward(default_judge(template)).compute_score_async(
        data_source, solution_str, ground_truth, extra_info
    )
