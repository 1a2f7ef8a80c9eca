"""Answers built to stall a grader or exhaust its memory: exponent towers, huge factorials,
deep nesting, long inputs, expansions, and symbolic work that runs past its time limit. Each
must end within its limit, as inconclusive ("too large to decide") or refuted, never verified;
a symbolic step past its limit kills the warm worker and the next check still works."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assay.checks._math import _worker
from tests.helpers import I, R, V, run_kind

PATHOLOGICAL = [
    ("\\boxed{9^{9^{9^9}}}", "1"),
    ("\\boxed{9^{9^{9^9}} - 9^{9^{9^9}}}", "0"),
    ("\\boxed{10^{10^{10}}}", "10^{10^{10}}+1"),
    ("\\boxed{2^{2^{2^{2^{2}}}}}", "65536"),
    ("\\boxed{\\frac{1}{10^{10^{10}}}}", "0"),
    ("\\boxed{100000!}", "1"),
    ("\\boxed{(10^{10})!}", "1"),
    ("\\boxed{\\binom{10^{9}}{5}}", "1"),
    ("\\boxed{\\pi^{\\pi^{\\pi^{\\pi}}}}", "1"),
    ("\\boxed{e^{e^{e^{e}}}}", "1"),
    ("\\boxed{e^{10^{100}}}", "1"),
    ("\\boxed{\\sin(10^{400})}", "0"),
    ("\\boxed{(x+1)^{100000}}", "1"),
    ("\\boxed{(x+y+z+w)^{30}}", "1"),
    ("\\boxed{x^{1000000}}", "x"),
    ("\\boxed{" + "(" * 300 + "1" + ")" * 300 + "}", "1"),
    ("\\boxed{" + "\\sqrt{" * 100 + "2" + "}" * 100 + "}", "1"),
    ("\\boxed{" + "-" * 500 + "1}", "1"),
    ("\\boxed{" + "1+" * 2000 + "1}", "2001"),
    ("\\boxed{" + "9" * 5000 + "}", "1"),
    ("\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}", "1"),
    ("x" * 1_000_000, "1"),
    ("\\boxed{1}" * 20_000, "2"),
]


@pytest.mark.parametrize(("answer", "value"), PATHOLOGICAL, ids=lambda x: str(x)[:30])
def test_pathological_answers_end_fast_and_never_verify(answer: str, value: str) -> None:
    start = time.monotonic()
    outcome = run_kind("answer_math", answer=answer, value=value, time_limit=1.0)
    assert time.monotonic() - start < 3.0, "stalled"
    assert outcome.status in (I, R), outcome.detail
    assert outcome.status is not V


@pytest.mark.slow
def test_symbolic_timeout_kills_the_worker_and_the_next_check_still_works() -> None:
    hard = ("\\boxed{\\sin(5x)}", "16\\sin^5 x - 20\\sin^3 x + 5\\sin x")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # warm, and ready after any kill by an earlier test
        warm = run_kind("answer_math", answer="\\boxed{\\sin^2 x+\\cos^2 x}", value="1")
        if warm.status is V:
            break
        time.sleep(0.2)
    started = _worker.WORKER.started
    outcome = run_kind("answer_math", answer=hard[0], value=hard[1], time_limit=0.001)
    assert outcome.status is I
    assert "longer than 0.001 s" in outcome.detail
    assert _worker.WORKER.started > started  # killed and replaced
    # the standby takes over; its start is waited for outside this check's limit, so the very
    # next honest answer is verified (it never pays for the kill with an inconclusive)
    outcome = run_kind("answer_math", answer="\\boxed{2\\sin x\\cos x}", value="\\sin(2x)")
    assert outcome.status is V, outcome.detail


@pytest.mark.slow
def test_the_worker_is_warm_reused_and_memory_bounded() -> None:
    run_kind("answer_math", answer="\\boxed{\\sin^2 x+\\cos^2 x}", value="1")
    started = _worker.WORKER.started
    for _ in range(5):
        outcome = run_kind("answer_math", answer="\\boxed{e^{\\ln 3}}", value="3")
        assert outcome.status is V, outcome.detail
    assert _worker.WORKER.started == started
    active = _worker.WORKER._active
    assert active is not None
    limits = Path(f"/proc/{active.popen.pid}/limits").read_text()
    line = next(x for x in limits.splitlines() if x.startswith("Max address space"))
    assert str(_worker.MEMORY_LIMIT) in line
