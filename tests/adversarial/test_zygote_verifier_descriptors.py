"""The verifier's side of a run works whatever its own descriptor numbers are.

A busy verifier (a service or a batch running many checks at once, each holding a few pipes,
plus its clients' connections) has descriptors numbered from 1024 on, where ``select`` refuses
them: every code check then ended ``error`` ("filedescriptor out of range in select()"), on both
sandbox paths. Each instance runs a check while this process holds more than 1024 descriptors,
so the run's pipes get numbers above them.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Status, build_check
from assay.sandbox import Sandbox
from tests.sandbox.zygote_helpers import zygote_sandbox

HELD = 1100


@pytest.fixture
def many_descriptors() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < HELD + 256:
        pytest.skip(f"this process may not hold {HELD} descriptors (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, HELD + 256), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(HELD)]
    try:
        assert max(held) >= 1024
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


CHECKS: dict[str, tuple[dict[str, Any], Status]] = {
    "a right python check": ({"kind": "python", "code": "assert 2 + 3 == 5"}, Status.VERIFIED),
    "a wrong python check": ({"kind": "python", "code": "assert 2 + 2 == 5"}, Status.REFUTED),
    "a right shell check": ({"kind": "shell", "code": "test 5 -eq 5"}, Status.VERIFIED),
    "a wrong shell check": ({"kind": "shell", "code": "test 4 -eq 5"}, Status.REFUTED),
    "a check whose output ends before it does": (
        {
            "kind": "python",
            "code": "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(30)",
            "timeout": 2,
        },
        Status.INCONCLUSIVE,
    ),
}


@pytest.mark.parametrize("path", ["zygote", "bwrap per check"])
@pytest.mark.parametrize("check", list(CHECKS))
def test_a_check_is_judged_with_descriptors_above_1023(
    many_descriptors: None, tmp_path: Path, path: str, check: str
) -> None:
    sandbox = zygote_sandbox() if path == "zygote" else Sandbox(backend="bwrap", zygote=False)
    spec, expected = CHECKS[check]
    outcome = build_check(spec).run(CheckContext(workspace=tmp_path, sandbox=sandbox))
    assert outcome.status is expected, outcome.detail


ANSWERS: dict[str, tuple[str, Status]] = {  # identities only the symbolic worker decides
    "sin(x)**2 + cos(x)**2": ("1", Status.VERIFIED),
    "sin(x)**2 - cos(x)**2": ("1", Status.REFUTED),
}


@pytest.mark.parametrize("expected", list(ANSWERS))
def test_a_math_answer_is_judged_with_descriptors_above_1023(
    many_descriptors: None, expected: str
) -> None:
    """The symbolic worker's pipe is read with ``poll`` too (it was ``select``: every
    ``answer_math`` check of a busy verifier would have been ``error``)."""
    from assay.checks._math._worker import WORKER

    WORKER.close()  # the next check starts a worker whose pipes get numbers past 1023
    answer, status = ANSWERS[expected]
    spec = {"kind": "answer_math", "value": expected}
    outcome = build_check(spec).run(CheckContext(answer=answer))
    assert outcome.status is status, outcome.detail
