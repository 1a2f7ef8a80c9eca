"""Regressions: what a result's ``reward`` means, and which items a service must not judge inline.

A trainer adds ``reward`` up. It must be null whenever nothing was decided (``inconclusive``,
``error``), so the sample is masked rather than taught 0.0, and equal to ``score`` when a
finding decided the item (in ``weighted`` mode the verified share of weights, never more than
the checks that passed). ``runs_code`` tells a service which items go to its bounded sandbox
pool: a kind that runs code in the sandbox and says it does not would be judged on the event
loop's thread, seconds per item.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from assay.checks import all_kinds
from assay.episodes import EpisodeResult, judge_item, parse_episode

CONFIG = Config()
TEN = {"kind": "answer_number", "value": 10}
HAS_X = {"kind": "answer_contains", "value": "x"}
NO_WORKSPACE = {"kind": "file_exists", "path": "out.txt"}  # inconclusive without a workspace


def _result(body: dict[str, Any]) -> EpisodeResult:
    return judge_item({"id": "r", **body}, root=None, config=CONFIG)


CASES: dict[str, tuple[dict[str, Any], Status, float | None]] = {
    "all verified": ({"checks": [TEN, HAS_X], "answer": "10 x"}, Status.VERIFIED, 1.0),
    "all refuted": ({"checks": [TEN, HAS_X], "answer": "10"}, Status.REFUTED, 0.0),
    "all inconclusive": (
        {"checks": [TEN, NO_WORKSPACE], "answer": "10"},
        Status.INCONCLUSIVE,
        None,
    ),
    "all no answer": ({"checks": [TEN]}, Status.INCONCLUSIVE, None),
    "weighted refuted": (
        {"checks": [{**TEN, "weight": 3}, HAS_X], "answer": "10", "mode": "weighted"},
        Status.REFUTED,
        0.75,
    ),
    "weighted refuted and inconclusive": (
        {"checks": [TEN, HAS_X, NO_WORKSPACE], "answer": "10", "mode": "weighted"},
        Status.REFUTED,
        1 / 3,
    ),
    "weighted verified and inconclusive": (
        {"checks": [TEN, NO_WORKSPACE], "answer": "10", "mode": "weighted"},
        Status.INCONCLUSIVE,
        None,
    ),
    "task mode overridden": (
        {"task": {"checks": [TEN, HAS_X], "mode": "weighted"}, "answer": "10", "mode": "all"},
        Status.REFUTED,
        0.0,
    ),
    "invalid item": ({"checks": [{"kind": "answer_number"}], "answer": "10"}, Status.ERROR, None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_reward_is_the_score_of_a_finding_and_null_otherwise(case: str) -> None:
    body, status, reward = CASES[case]
    got = _result(body)
    assert got.status is status
    if reward is None:
        assert got.reward is None and got.score is None
    else:
        assert got.reward == pytest.approx(reward) and got.score == got.reward
    assert got.to_json()["reward"] == got.reward


SANDBOXED = {"shell", "python", "hidden_python", "program", "agda", "coq", "lean"}


def test_every_sandboxed_kind_says_it_runs_code() -> None:
    marked = {kind.name for kind in all_kinds() if kind.spec.runs_code}
    assert marked == SANDBOXED
    for kind in all_kinds():
        module = sys.modules[kind.function.__module__]
        if hasattr(module, "sandbox_for"):  # the one way a kind reaches the sandbox
            assert kind.spec.runs_code, f"{kind.name} runs in the sandbox but says it does not"


@pytest.mark.parametrize(
    "checks",
    [
        [TEN, {"kind": "python", "code": "pass"}],
        [{"kind": "hidden_python", "code": "pass"}],
        [{"kind": "program", "command": ["true"]}],
        [{"kind": "agda", "obligation": "Ob.agda"}],
    ],
    ids=["python among answers", "hidden_python", "program", "agda"],
)
def test_an_item_with_one_sandboxed_check_goes_to_the_pool(tmp_path: Path, checks: Any) -> None:
    episode = parse_episode({"id": "p", "checks": checks}, root=tmp_path, config=CONFIG)
    assert episode.runs_code
