"""verifiers (Prime Intellect): a reward function for a ``Rubric``.

A ``Rubric`` reads each reward function's signature and calls it with keyword arguments by name
(``prompt``, ``completion``, ``answer``, ``state``, ``info``, ``task``, ``parser``, and every one
when it takes ``**kwargs``); ``completion`` is text or a list of messages (dicts or message
objects). It turns the result into a float and treats an exception as 0.0. A parameter named
like a group (``completions``, ``answers``, ``infos``...) would make it a group function, so these
take the singular names.

verifiers cannot mask a rollout, so ``inconclusive`` and ``error`` score 0.0. The label is the
dataset's ``answer`` (or, with ``info_key``, one key of its ``info``).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from assay._config import Config
from assay.episodes import EpisodeResult
from assay.integrations._core import Judge, TemplateSource, default_judge, make_judge


class RewardFunction:
    """``(completion, answer, info) -> float`` for ``vf.Rubric(funcs=[...])``."""

    def __init__(self, judge: Judge | None, *, info_key: str | None = None, name: str = "assay"):
        """``judge`` None: the module default (``ASSAY_TEMPLATE``), resolved at the first call;
        ``info_key``: read the label from ``info[info_key]`` instead of ``answer``."""
        self.judge = judge
        self.info_key = info_key
        self.__name__ = name

    def result(self, completion: Any, answer: Any, info: Any = None) -> EpisodeResult:
        """The full verdict on one rollout."""
        judge = self.judge if self.judge is not None else default_judge()
        if self.info_key is None:
            label = answer
        elif isinstance(info, dict) and self.info_key in info:
            label = info[self.info_key]
        else:
            return EpisodeResult.invalid(self.__name__, f"info.{self.info_key}: missing")
        return judge.judge(label=label, completion=completion, id=self.__name__)

    def __call__(self, completion: Any, answer: Any, info: Any = None, **kwargs: Any) -> float:
        """The reward: the verdict's score when it is decided, else 0.0."""
        reward = self.result(completion, answer, info).reward
        return 0.0 if reward is None else float(reward)


class AsyncRewardFunction(RewardFunction):
    """The same reward as a coroutine: verifiers awaits it, and the check runs in a thread, so
    a sandboxed check never holds up the rollouts sharing the event loop."""

    async def __call__(  # type: ignore[override]
        self, completion: Any, answer: Any, info: Any = None, **kwargs: Any
    ) -> float:
        """The reward: the verdict's score when it is decided, else 0.0."""
        return await asyncio.to_thread(RewardFunction.__call__, self, completion, answer, info)


def make_reward(
    template: TemplateSource = None,
    *,
    info_key: str | None = None,
    asynchronous: bool = False,
    name: str = "assay",
    root: str | os.PathLike[str] | None = None,
    config: Config | None = None,
) -> RewardFunction:
    """A reward function for one template (a file, a ``Template``, an inline object, or None:
    ``ASSAY_TEMPLATE``, else each label is its own JSON task); a coroutine with
    ``asynchronous=True``. A template that does not load raises InvalidInput here."""
    kind = AsyncRewardFunction if asynchronous else RewardFunction
    return kind(make_judge(template, root=root, config=config), info_key=info_key, name=name)


reward = RewardFunction(None)
"""Ready for ``vf.Rubric(funcs=[reward])``: the label is ``answer``, the template
``ASSAY_TEMPLATE`` (else each label is its own JSON task)."""

reward_async = AsyncRewardFunction(None)
"""``reward`` as a coroutine (see ``AsyncRewardFunction``)."""
