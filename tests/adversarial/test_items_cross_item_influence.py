"""One item's answer changes the verdict of the next item judged in the same process.

``answer_math`` sends symbolic comparisons to one shared worker process per judging process
(``assay.checks._math._worker.WORKER``): every item of a ``/v1/verify`` request, every request the
service is judging at the same time, every sample of a verl/TRL reward batch. An answer whose
comparison runs past its time limit (``\\sin(5x)`` against its expansion) kills that worker; the
standby takes over, but when it is still importing sympy, the *next* item's check waits only its
own ``time_limit`` for it and ends ``inconclusive`` ("the symbolic worker is still starting").
So one pathological answer (itself merely masked, never penalised) turns the following correct
answers of other samples and other clients from ``verified`` into a masked reward, and a stream
of such answers keeps the worker "starting" for everyone.

A check must not be charged for a worker another item killed: wait for the standby's start (up
to ``STARTUP_LIMIT``) outside the check's own time limit, or keep enough warm workers.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from assay import Config, Status
from assay.episodes import EpisodeResult, judge_item

CONFIG = Config()
SLOW = {
    "checks": [{"kind": "answer_math", "value": "16\\sin^5 x - 20\\sin^3 x + 5\\sin x"}],
    "answer": "\\boxed{\\sin(5x)}",
}
HONEST: dict[str, dict[str, Any]] = {
    "trig identity": {
        "checks": [{"kind": "answer_math", "value": "1"}],
        "answer": "\\boxed{\\sin^2 x+\\cos^2 x}",
    },
    "double angle": {
        "checks": [{"kind": "answer_math", "value": "\\sin x\\cos x"}],
        "answer": "\\boxed{\\frac{\\sin 2x}{2}}",
    },
}


def _judged(name: str, body: dict[str, Any]) -> EpisodeResult:
    return judge_item({"id": name, **body}, root=None, config=CONFIG)


def _warm(body: dict[str, Any]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # ready, after any kill by an earlier test
        if _judged("warm", body).status is Status.VERIFIED:
            return
        time.sleep(0.2)
    pytest.fail("the symbolic worker never became ready")


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HONEST))
def test_a_slow_answer_never_changes_the_next_items_verdict(case: str) -> None:
    honest = HONEST[case]
    _warm(honest)
    for index in range(2):  # the second kill comes before the standby has imported sympy
        assert _judged(f"slow-{index}", SLOW).status is not Status.VERIFIED
    got = _judged("honest", honest)
    assert got.status is Status.VERIFIED, got.outcomes[0].detail
