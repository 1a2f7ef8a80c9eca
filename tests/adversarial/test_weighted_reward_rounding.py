"""Weights chosen so that floating point hides a failed check, or poisons the reward.

In ``weighted`` mode the score is the verified share of the weights, computed as
``passed / total`` in floats. A check with a weight 1e300 times smaller than the others rounds
away: the result is ``refuted`` with ``reward`` 1.0, full reward for work that failed a check.
Weights near the float maximum overflow the sum: two passing checks give ``score`` NaN (printed
as the non-JSON token ``NaN``), and a half-passing pair scores 0.0. Found through the MCP
``check`` tool, where the caller chooses the weights; an author's task file can do the same.

Expected, and now so (``combine`` sums shares of the largest weight exactly and never lets a
refuted score reach 1.0): a refuted result's reward is below 1.0, a verified one's is exactly
1.0, and every score is finite.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from assay import Config
from assay.episodes import judge_item

CONFIG = Config()


def _weighted(*checks: tuple[str, float]) -> dict[str, Any]:
    body = {
        "id": "w",
        "mode": "weighted",
        "answer": "a",
        "checks": [
            {"kind": "answer_equals", "value": value, "weight": weight} for value, weight in checks
        ],
    }
    return judge_item(body, root=None, config=CONFIG).to_json()


@pytest.mark.parametrize("tiny", [1e-300, 1e-17, 5e-324])
def test_a_refuted_result_never_gets_the_full_reward(tiny: float) -> None:
    result = _weighted(("a", 1.0), ("b", tiny))
    assert result["status"] == "refuted"
    assert result["reward"] < 1.0


@pytest.mark.parametrize(
    ("checks", "status"),
    [
        ((("a", 1e308), ("a", 1e308)), "verified"),
        ((("a", 1e308), ("b", 1e308)), "refuted"),
    ],
)
def test_huge_weights_give_a_finite_share(
    checks: tuple[tuple[str, float], ...], status: str
) -> None:
    result = _weighted(*checks)
    assert result["status"] == status
    assert math.isfinite(result["reward"])
    assert result["reward"] == (1.0 if status == "verified" else 0.5)
