"""A sandbox template that stops answering is killed and replaced (``_forked.Template.fork``).

Real templates: the test stops one with SIGSTOP, as a hang would leave it. Before the fix every
later check sent to it waited for its own timeout and ended in ``error``, forever after."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from assay import CheckContext, build_check
from assay.sandbox import _forked
from tests.helpers import V
from tests.sandbox.zygote_helpers import _is_template, descendants, template_pids, zygote_sandbox


def _gone(pid: int) -> bool:
    """Ended (no such process, or a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


@pytest.mark.slow
def test_a_stopped_template_is_killed_and_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = zygote_sandbox()
    monkeypatch.setattr(_forked, "ANSWER_WAIT", 2.0)
    _forked.TEMPLATES.close()  # retired: the only template left is this check's
    check = build_check({"kind": "python", "code": "assert sum([20, 22]) == 42", "timeout": 30})
    assert check.run(CheckContext(sandbox=sandbox)).status is V  # its template answered
    stopped = template_pids()
    assert stopped, "no template is running"
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        outcome = check.run(CheckContext(sandbox=sandbox))
        first = time.monotonic() - started
        assert outcome.status is V, outcome.detail  # made again, on a new template
        assert first < 25, first  # not the check's timeout
        started = time.monotonic()
        outcome = check.run(CheckContext(sandbox=sandbox))
        assert outcome.status is V, outcome.detail
        assert time.monotonic() - started < _forked.ANSWER_WAIT  # no more waiting on it
        fresh = template_pids()
        assert fresh and not set(fresh) & set(stopped), (fresh, stopped)
        deadline = time.monotonic() + 10
        while not all(_gone(pid) for pid in stopped) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(pid) for pid in stopped), "the stopped template was left running"
    finally:
        for pid in stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)


@pytest.mark.slow
def test_a_template_stopped_for_every_try_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both tries hang (the new template is stopped too): one ``error``, then checks run."""
    sandbox = zygote_sandbox()
    monkeypatch.setattr(_forked, "ANSWER_WAIT", 1.0)
    monkeypatch.setattr(_forked, "FIRST_ANSWER_WAIT", 1.0)
    check = build_check({"kind": "python", "code": "assert sum([20, 22]) == 42", "timeout": 30})
    _forked.TEMPLATES.close()
    assert check.run(CheckContext(sandbox=sandbox)).status is V
    real = _forked.Template

    class Stopped(real):  # a real template, stopped as soon as it is started
        def __init__(self, command: list[str]) -> None:
            super().__init__(command)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                found = [p for p in descendants(self.process.pid) if _is_template(p)]
                if found:
                    for pid in found:
                        os.kill(pid, signal.SIGSTOP)
                    return
                time.sleep(0.05)
            raise AssertionError("the template's interpreter never started")

    stopped = template_pids()
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        monkeypatch.setattr(_forked, "Template", Stopped)
        outcome = check.run(CheckContext(sandbox=sandbox))
        assert outcome.status.value == "error", outcome.detail
        assert "did not answer" in outcome.detail, outcome.detail
        monkeypatch.setattr(_forked, "Template", real)
        monkeypatch.setattr(_forked, "FIRST_ANSWER_WAIT", 60.0)
        assert check.run(CheckContext(sandbox=sandbox)).status is V
    finally:
        for pid in stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
