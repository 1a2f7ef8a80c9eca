"""``Sandbox(warm=True)``: the next run started ahead of time, each run still alone in its own.

A warm sandbox starts the next run of the same shape while the current one runs. These tests pin
what must not change: every check sees its own workspace (staged after its run was started),
nothing a previous check left (files in /tmp, processes), a clock that starts when the check is
sent, and no run left behind once the sandbox is closed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import CheckContext, Status, build_check
from assay.sandbox import Sandbox
from assay.sandbox._prepared import Prepared

# A check that fails if anything of an earlier check is visible: a file in /tmp, a process
# in its PID namespace other than the sandbox's init, the judge and the judge's zygote, a
# workspace other than the one staged for it. It then leaves traces of its own for the next.
TRACES = """
import os, subprocess
from pathlib import Path
assert open("n.txt").read() == "{n}", "a workspace staged for another check"
assert not list(Path("/tmp").iterdir()), sorted(os.listdir("/tmp"))
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
assert len(pids) <= 3, pids  # bwrap's init, the judge, the zygote (idle: no workspace import)
Path("/tmp/left-by-{n}").write_text("x")
subprocess.Popen(["sleep", "60"], start_new_session=True)
print("check {n} ran")
"""


@pytest.fixture
def warm() -> Iterator[Sandbox]:
    sandbox = Sandbox(backend="bwrap", warm=True)
    yield sandbox
    sandbox.close()


def _waiting(sandbox: Sandbox, at_least: int = 1, seconds: float = 20) -> list[Prepared]:
    """The runs waiting in ``sandbox`` (after the background thread has started some)."""
    pool = sandbox._warm
    assert pool is not None
    deadline = time.monotonic() + seconds
    while True:
        runs = [run for waiting in pool._waiting.values() for _, run in waiting]
        if len(runs) >= at_least or time.monotonic() > deadline:
            return runs
        time.sleep(0.02)


def test_each_check_has_a_sandbox_no_other_check_used(warm: Sandbox, tmp_path: Path) -> None:
    for n in range(4):
        (tmp_path / "n.txt").write_text(str(n))
        check = build_check({"kind": "python", "code": TRACES.format(n=n), "value": "ran"})
        outcome = check.run(CheckContext(workspace=tmp_path, sandbox=warm))
        assert outcome.status is Status.VERIFIED, outcome.detail
        assert _waiting(warm), "the next run was not started ahead of time"


def test_a_waiting_run_sees_the_workspace_staged_for_its_check(
    warm: Sandbox, tmp_path: Path
) -> None:
    (tmp_path / "solution.py").write_text("def answer():\n    return 1\n")
    first = build_check({"kind": "python", "code": "from solution import answer\nassert answer()"})
    assert first.run(CheckContext(workspace=tmp_path, sandbox=warm)).status is Status.VERIFIED
    assert _waiting(warm)  # started before the workspace below existed
    (tmp_path / "solution.py").write_text("def answer():\n    return 0\n")
    outcome = first.run(CheckContext(workspace=tmp_path, sandbox=warm))
    assert outcome.status is Status.REFUTED, outcome.detail


def test_a_waiting_runs_clock_starts_when_its_check_is_sent(warm: Sandbox) -> None:
    spec = {"kind": "python", "code": "import time\ntime.sleep(1)", "timeout": 2}
    check = build_check(spec)
    assert check.run(CheckContext(sandbox=warm)).status is Status.VERIFIED
    assert _waiting(warm)
    time.sleep(2.5)  # longer than the timeout: the waiting run's clock has not started
    outcome = check.run(CheckContext(sandbox=warm))
    assert outcome.status is Status.VERIFIED, outcome.detail
    endless = build_check({"kind": "python", "code": "while True: pass", "timeout": 2})
    started = time.monotonic()
    outcome = endless.run(CheckContext(sandbox=warm))
    assert outcome.status is Status.INCONCLUSIVE, outcome.detail
    assert time.monotonic() - started < 8


def test_a_waiting_run_that_died_is_replaced(warm: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("0")
    check = build_check({"kind": "python", "code": "assert open('n.txt').read() == '0'"})
    assert check.run(CheckContext(workspace=tmp_path, sandbox=warm)).status is Status.VERIFIED
    for run in _waiting(warm):
        run.kill()
        run.process.wait(timeout=10)
    outcome = check.run(CheckContext(workspace=tmp_path, sandbox=warm))
    assert outcome.status is Status.VERIFIED, outcome.detail


def test_closing_the_sandbox_ends_its_waiting_runs(tmp_path: Path) -> None:
    sandbox = Sandbox(backend="bwrap", warm=True)
    check = build_check({"kind": "shell", "code": "test -f n.txt", "timeout": 5})
    (tmp_path / "n.txt").write_text("0")
    assert check.run(CheckContext(workspace=tmp_path, sandbox=sandbox)).status is Status.VERIFIED
    waiting = _waiting(sandbox)
    assert waiting
    folders = [run.folder.parent for run in waiting]
    assert all(folder.is_dir() for folder in folders)
    sandbox.close()
    for run in waiting:
        assert run.process.poll() is not None
    assert not any(folder.exists() for folder in folders)


def test_only_commands_that_wait_for_their_control_start_ahead(warm: Sandbox) -> None:
    """A plain ``run`` (a checker, a proof judge) is never started twice or ahead of time."""
    for _ in range(2):
        result = warm.run(["/bin/true"])
        assert result.exit_code == 0
    assert warm._warm is not None and not warm._warm._waiting
