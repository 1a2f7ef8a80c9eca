"""Regressions: labels a dataframe hands an adapter (NaN, None, numpy scalars and arrays, bools,
infinity) against a numeric template. None of them may score the completion ``verified`` (a
missing label must never make any answer right); each is an ``error`` the trainer masks (TRL:
None) or a stand-in 0.0 (verl, verifiers), and verl gets the same keys with the same types on
every sample, so it can stack them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from assay.integrations import trl, verifiers, verl

TEMPLATES = {
    "number": {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]},
    "json": {"checks": [{"kind": "answer_number", "value": {"$label": "json"}}]},
    "text": {"checks": [{"kind": "answer_equals", "value": {"$label": "text"}}]},
}
LABELS: dict[str, Any] = {
    "nan": float("nan"),
    "np-nan": np.float64("nan"),
    "inf": float("inf"),
    "none": None,
    "NaN-text": "NaN",
    "bool": True,
    "np-bool": np.bool_(True),
    "np-array": np.array([42]),
    "list": [42],
    "dict": {"value": 42},
}
COMPLETIONS = ["42", "NaN", "None", "", "[42]"]
TYPES = {"score": float, "status": str, "verified": float, "decided": float, "reason": str}


@pytest.mark.parametrize("template", sorted(TEMPLATES))
@pytest.mark.parametrize("label", sorted(LABELS))
def test_a_missing_or_odd_label_never_verifies(template: str, label: str) -> None:
    value = LABELS[label]
    if (template, label) == ("text", "NaN-text"):
        pytest.skip("the text 'NaN' is a label like any other: answering 'NaN' is right there")
    verl_reward = verl.make_reward(TEMPLATES[template])
    trl_reward = trl.make_reward_func(TEMPLATES[template])
    vf_reward = verifiers.make_reward(TEMPLATES[template])
    for completion in COMPLETIONS:
        scored = verl_reward.compute_score("d", completion, value, {"index": 0})
        assert list(scored) == list(verl.SCORE_KEYS)
        assert {key: type(scored[key]) for key in scored} == TYPES
        assert scored["status"] != "verified", (completion, scored)
        assert trl_reward(prompts=["p"], completions=[completion], ground_truth=[value]) != [1.0]
        assert vf_reward(completion, value) == 0.0
