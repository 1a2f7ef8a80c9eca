"""One sample's work is charged to another sample's time limit (cross-sample influence).

``answer_regex`` bounds a search with the ``regex`` package's ``timeout``, and that clock is the
*process's* CPU time, not the searching thread's: measured here, a search given 2 s timed out
after 0.49 s of its own CPU while three other threads searched. Every interface that judges
samples on threads of one process shares that clock: verl's ``compute_score_async`` and
verifiers' ``reward_async`` (a batch's samples gathered at once, each on a thread), inspect's
scorer, and the service (each request's pass on its own thread). So a policy's pathological
siblings (answers the operator's pattern backtracks on, each merely ``inconclusive`` itself)
use up the honest sample's budget: its correct answer, which verifies alone, comes back
``inconclusive`` -- masked under TRL, and 0.0 under verl and verifiers, which cannot mask.

Fix (src/assay/checks/_patterns.py ``search``): charge a search only its own thread's CPU. The
``regex`` timeout cannot be given a thread clock, so on ``TimeoutError`` compare
``time.thread_time()`` spent; if it is under the limit, search again (under a process-wide lock,
so no sibling runs meanwhile) with the remaining budget, and report a timeout only when this
search itself used its limit. (Or search in a worker process, as ``answer_math`` does.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from assay._config import Config
from assay.episodes import judge_item
from assay.integrations import verifiers, verl

PATTERN = "1+2"
"""An operator's pattern: linear on the usual answer, quadratic on a long run of 1s."""
HONEST = "1" * 16_000 + "3" + "12"
"""A correct answer (it holds a match) whose search takes ~0.4 s of CPU on this machine: under
the 1 s ``regex_timeout``, so it is ``verified`` alone."""
SIBLING = "1" * 60_000 + "3"
"""A sibling sample's answer: no match, and a search that runs to its limit."""
SIBLINGS = 6
TEMPLATE = {"checks": [{"kind": "answer_regex", "pattern": {"$label": "text"}}]}
CONFIG = Config()


def _item(answer: str, id: str) -> dict[str, Any]:
    return {"id": id, "checks": [{"kind": "answer_regex", "pattern": PATTERN}], "answer": answer}


def _threads(honest: Callable[[], str]) -> str:
    """``honest()``'s status while ``SIBLINGS`` threads judge pathological siblings."""
    results: list[str] = []

    def sibling(index: int) -> None:
        judge_item(_item(SIBLING, f"s{index}"), root=None, config=CONFIG)

    others = [threading.Thread(target=sibling, args=(i,)) for i in range(SIBLINGS)]
    for thread in others:
        thread.start()
    try:
        results.append(honest())
    finally:
        for thread in others:
            thread.join(60)
    return results[0]


def _library() -> str:
    return judge_item(_item(HONEST, "honest"), root=None, config=CONFIG).status.value


def _verl_async() -> str:
    reward = verl.make_reward(TEMPLATE, config=CONFIG)

    async def batch() -> list[dict[str, float | str]]:
        calls = [reward.compute_score_async("d", HONEST, PATTERN, {"index": 0})]
        calls += [
            reward.compute_score_async("d", SIBLING, PATTERN, {"index": i + 1})
            for i in range(SIBLINGS)
        ]
        return await asyncio.gather(*calls)

    return str(asyncio.run(batch())[0]["status"])


def _verifiers_async() -> str:
    reward = verifiers.make_reward(TEMPLATE, asynchronous=True, config=CONFIG)

    async def batch() -> list[float]:
        calls = [reward(HONEST, PATTERN)] + [reward(SIBLING, PATTERN) for _ in range(SIBLINGS)]
        return await asyncio.gather(*calls)

    return "verified" if asyncio.run(batch())[0] == 1.0 else "not verified"


def test_the_honest_answer_verifies_alone() -> None:
    """The control: without siblings, the honest answer is within its limit."""
    assert _library() == "verified"


@pytest.mark.slow
@pytest.mark.parametrize(
    "honest_under_load",
    [
        pytest.param(lambda: _threads(_library), id="library-threads"),
        pytest.param(_verl_async, id="verl-compute_score_async"),
        pytest.param(_verifiers_async, id="verifiers-reward_async"),
    ],
)
def test_siblings_cannot_spend_the_honest_samples_time_limit(
    honest_under_load: Callable[[], str],
) -> None:
    assert honest_under_load() == "verified"
