"""Concurrent process budgets: one check's processes must never count against another's.

Every sandbox runs as the same unprivileged uid, and RLIMIT_NPROC counts per uid, so under load
checks used to hit "the process limit" because of *other* checks' processes (18 of 24 correct
checks came back inconclusive). Each run now has its own cgroup whose ``pids.max`` counts only
its own tasks. Several load shapes, each with every check verified in bounded time; and the
per-run budget still binds a run that exceeds it on its own.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assay.sandbox._cgroup import hierarchy
from tests.helpers import I, R, V, run_kind

pytestmark = pytest.mark.skipif(
    hierarchy() is None, reason="no writable cgroup here: the budget would be RLIMIT_NPROC per uid"
)

SLEEPS = """
import subprocess
children = [subprocess.Popen(["sleep", "{seconds}"]) for _ in range({count})]
assert all(child.wait() == 0 for child in children)
"""
THREADS = """
import threading, time
threads = [threading.Thread(target=time.sleep, args=({seconds},)) for _ in range({count})]
for t in threads: t.start()
for t in threads: t.join()
"""
SHELL = "for i in $(seq {count}); do sleep {seconds} & done; wait"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "template", "checks", "count"),
    [
        ("python", SLEEPS, 24, 20),  # the load, as written
        ("python", THREADS, 24, 40),
        ("shell", SHELL, 16, 30),
    ],
    ids=["24_checks_x_20_sleeps", "24_checks_x_40_threads", "16_shell_checks_x_30_sleeps"],
)
def test_every_concurrent_check_is_verified(
    kind: str, template: str, checks: int, count: int, tmp_path: Path
) -> None:
    (tmp_path / "solution.py").write_text("def add(a, b):\n    return a + b\n")
    code = template.format(seconds=1, count=count)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=checks) as pool:
        outcomes = list(
            pool.map(
                lambda _: run_kind(kind, workspace=tmp_path, code=code, timeout=90),
                range(checks),
            )
        )
    elapsed = time.monotonic() - start
    details = [o.detail for o in outcomes if o.status is not V]
    assert details == [], details
    assert elapsed < 120


@pytest.mark.parametrize("rules", [True, False])
def test_one_run_over_its_own_budget_is_still_a_process_limit(rules: bool) -> None:
    code = SLEEPS.format(seconds=5, count=100)
    outcome = run_kind("python", code=code, timeout=60, limits_are_rules=rules)
    assert outcome.status is (R if rules else I), outcome.detail
    assert outcome.evidence["limit"] == "processes"


def test_a_fork_bomb_is_contained_to_its_run() -> None:
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    with ThreadPoolExecutor(max_workers=2) as pool:
        bombing = pool.submit(run_kind, "python", code=bomb, timeout=5)
        time.sleep(1)
        neighbour = pool.submit(run_kind, "python", code=SLEEPS.format(seconds=0.5, count=20))
        assert neighbour.result().status is V, neighbour.result().detail
        assert bombing.result().status is not V
