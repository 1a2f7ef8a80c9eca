"""TRL: a ``reward_funcs`` entry for ``GRPOTrainer`` (and the trainers sharing its contract).

TRL calls each reward function with keyword arguments: ``prompts``, ``completions`` (strings, or
for conversational datasets lists of messages), ``completion_ids``, every dataset column but
``prompt`` as a list (the label column among them), and ``trainer_state``, ``log_extra``,
``log_metric``. It returns one reward per completion, and TRL turns ``None`` into NaN and leaves
it out of the reward and the advantage baseline. So an ``inconclusive`` or ``error`` verdict is
``None``: the sample is masked, never taught 0.0.

Each call also logs an ``assay_status`` column to TRL's completions table (through
``log_extra``, always the same column, as TRL asks of distributed runs).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay.integrations._core import Judge, TemplateSource, default_judge, make_judge

DEFAULT_LABEL_COLUMN = "ground_truth"
"""The dataset column read as the label unless the reward function is told another."""


class RewardFunc:
    """A TRL reward function: ``(prompts, completions, **columns) -> list[float | None]``.

    ``__name__`` is what TRL logs the reward under (``rewards/<name>/mean``).
    """

    def __init__(
        self, judge: Judge | None, *, label_column: str = DEFAULT_LABEL_COLUMN, name: str = "assay"
    ) -> None:
        """``judge`` None: the module default (``ASSAY_TEMPLATE``), resolved at the first call."""
        self.judge = judge
        self.label_column = label_column
        self.__name__ = name

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        """One reward per completion: the verdict's reward, None when nothing was decided."""
        labels = kwargs.get(self.label_column)
        if labels is None:
            columns = sorted(k for k in kwargs if k not in _TRL_KWARGS)
            raise InvalidInput(
                f"no dataset column {self.label_column!r} reached the reward function "
                f"(columns: {columns}); name the label column with label_column=",
                where="label_column",
            )
        if len(labels) != len(completions):
            raise ValueError(
                f"{len(completions)} completions but {len(labels)} labels in "
                f"{self.label_column!r}: TRL passes one label per completion"
            )
        judge = self.judge if self.judge is not None else default_judge()
        results = [
            judge.judge(label=label, completion=completion, id=f"{self.__name__}-{index}")
            for index, (label, completion) in enumerate(zip(labels, completions, strict=True))
        ]
        log_extra = kwargs.get("log_extra")
        if callable(log_extra):
            log_extra("assay_status", [result.status.value for result in results])
        return [result.reward for result in results]


_TRL_KWARGS = frozenset(
    {"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"}
)
"""What TRL passes beside the dataset's columns."""


def make_reward_func(
    template: TemplateSource = None,
    *,
    label_column: str = DEFAULT_LABEL_COLUMN,
    name: str = "assay",
    root: str | os.PathLike[str] | None = None,
    config: Config | None = None,
) -> RewardFunc:
    """A reward function for one template (a file, a ``Template``, an inline object, or None:
    ``ASSAY_TEMPLATE``, else each label is its own JSON task), reading the label from the dataset
    column ``label_column``. A template that does not load raises InvalidInput here."""
    return RewardFunc(
        make_judge(template, root=root, config=config), label_column=label_column, name=name
    )


reward_func = RewardFunc(None)
"""Ready to pass as ``reward_funcs=reward_func``: labels from the ``ground_truth`` column, the
template from ``ASSAY_TEMPLATE`` (else each label is its own JSON task)."""
