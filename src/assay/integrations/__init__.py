"""Reward functions in the RL frameworks' own call shapes: one module per framework.

- ``assay.integrations.verl``: ``compute_score`` (a dict with the same keys on every call), its
  float-only, batch and ``async`` twins, and ``make_reward`` for a chosen template;
- ``assay.integrations.trl``: a ``GRPOTrainer`` reward function (``None`` masks a sample);
- ``assay.integrations.inspect_ai``: the ``assay/check`` scorer (imports inspect_ai);
- ``assay.integrations.verifiers``: a reward function for a ``vf.Rubric``.

Each maps a sample's label to an item through an ``assay.episodes.Template`` (a file, chosen by
argument or by ``ASSAY_TEMPLATE``; without one, the label is its own JSON task) and judges the
completion as that item's answer. No framework is imported here: each module imports only what
its own framework needs, and only the inspect_ai one imports its framework at all. See
docs/integrations.md.
"""

from assay.integrations._core import (
    ROOT_ENV,
    TEMPLATE_ENV,
    Judge,
    TemplateSource,
    completion_text,
    make_judge,
    reason,
)

__all__ = [
    "Judge",
    "ROOT_ENV",
    "TEMPLATE_ENV",
    "TemplateSource",
    "completion_text",
    "make_judge",
    "reason",
]
