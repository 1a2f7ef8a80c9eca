"""Attacks on the sandbox template itself: a check cannot reach, stop or change it.

The template (``assay.sandbox._template``) is a long-lived root process with the capabilities
to make sandboxes; every python and shell check's judge is forked from it. Each instance here
tries, from the judge's process and from the candidate's, to reach it (signals, ptrace,
``/proc``, inherited descriptors, the privileges it had) and then shows that it is untouched:
the same process still serves, and a wrong answer is still refuted and a right one verified.
A template that dies anyway (killed from outside) costs the runs in progress an ``error``
(assay's own failure, never a verdict), and the next check gets a new template.
"""

from __future__ import annotations

import contextlib
import os
import signal
import textwrap
import threading
import time
from pathlib import Path

import pytest

from assay import CheckContext, Status, build_check
from assay.sandbox import Sandbox
from tests.sandbox.zygote_helpers import judge_run, template_pids, zygote_sandbox


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return zygote_sandbox()


ATTACKS = {
    "SIGKILL to every process it can signal": "import os, signal\nos.kill(-1, signal.SIGKILL)",
    "SIGSTOP to every process it can signal": "import os, signal\nos.kill(-1, signal.SIGSTOP)",
    "a signal to every pid number": """
        import os, signal
        for pid in range(1, 70000):
            if pid != os.getpid():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    """,
    "ptrace of every visible process": """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:
            if pid != os.getpid():
                assert libc.ptrace(16, pid, None, None) != 0, pid  # PTRACE_ATTACH
    """,
    "another process's memory through /proc": """
        import os
        for pid in {1, os.getppid()} - {os.getpid()}:  # the init, and the judge (from the candidate)
            for name in ('mem', 'environ'):
                try:
                    open(f'/proc/{pid}/{name}', 'rb').read(1)
                except OSError:
                    continue
                raise AssertionError(f'read /proc/{pid}/{name}')
    """,
    "privileges back": """
        import os, ctypes
        for call in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: os.setgroups([0])):
            try:
                call()
            except PermissionError:
                continue
            raise AssertionError('privilege regained')
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.unshare(0x20000000) != 0 and libc.unshare(0x00020000) != 0
        assert libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) != 0
        status = open('/proc/self/status').read()
        for key in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
            assert f'{key}:\\t0000000000000000' in status, key
        assert 'NoNewPrivs:\\t1' in status and 'Seccomp:\\t2' in status
    """,
    "descriptors it did not open": """
        import os
        for fd in os.listdir('/proc/self/fd'):
            try:
                target = os.readlink(f'/proc/self/fd/{fd}')
            except OSError:
                continue
            assert not target.startswith('socket:'), (fd, target)
            assert target.startswith(('pipe:', '/dev/null', '/proc/')), (fd, target)
    """,
    "any process of another sandbox or the host": """
        import os
        for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
            try:
                status = dict(line.split(':', 1) for line in open(f'/proc/{pid}/status'))
            except OSError:
                continue
            if pid == '1':  # the run's init: root holding nothing, filtered, as bubblewrap's
                assert status['Uid'].split() == ['0'] * 4, status['Uid']
                for key in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
                    assert int(status[key], 16) == 0, key
                assert status['NoNewPrivs'].strip() == '1' and status['Seccomp'].strip() == '2'
            else:
                assert status['Uid'].split()[0] == '65534', (pid, status['Uid'])
    """,
    "the run's init: limits, priority, affinity, signals": """
        import os, resource, signal
        for attempt in (
            lambda: resource.prlimit(1, resource.RLIMIT_CPU, (1, 1)),
            lambda: resource.prlimit(1, resource.RLIMIT_AS, (1 << 20, 1 << 20)),
            lambda: os.setpriority(os.PRIO_PROCESS, 1, 19),
            lambda: os.sched_setaffinity(1, {0}),
            lambda: os.kill(1, signal.SIGSTOP),
            lambda: os.kill(1, signal.SIGKILL),
            lambda: os.kill(1, signal.SIGINT),
        ):
            try:
                attempt()
            except PermissionError:
                continue
            raise AssertionError('reached the init')
    """,
}


def _attack(body: str) -> tuple[str, str]:
    """The attack run in the judge (the check) and in the candidate's process (``attack.run``)."""
    body = textwrap.dedent(body)
    module = "def run():\n" + textwrap.indent(body, "    ") + "\n"
    check = "import attack\ntry:\n    attack.run()\nexcept Exception:\n    pass\n" + body
    return check, module


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_check_cannot_reach_the_template(sandbox: Sandbox, attack: str) -> None:
    judge_run(sandbox, "pass")
    before = template_pids()
    assert before
    check, module = _attack(ATTACKS[attack])
    result = judge_run(sandbox, check, {"attack.py": module})
    if attack in (
        "the run's init: limits, priority, affinity, signals",
        "ptrace of every visible process",
        "another process's memory through /proc",
        "privileges back",
        "descriptors it did not open",
        "any process of another sandbox or the host",
    ):
        assert result.completed, result.output  # every assertion of the attack held
    assert template_pids() == before  # the same template, alive
    _still_judges(sandbox)


def _still_judges(sandbox: Sandbox) -> None:
    """A right answer verified and a wrong one refuted, on the template that was attacked."""
    right = judge_run(sandbox, "import solution\nassert solution.add(2, 3) == 5", _SOLUTION)
    wrong = judge_run(sandbox, "import solution\nassert solution.add(2, 2) == 5", _SOLUTION)
    assert right.completed and right.exit_code == 0, right.output
    assert not wrong.completed and wrong.exit_code == 1, wrong.output


_SOLUTION = {"solution.py": "def add(a, b):\n    return a + b\n"}


def _kill_templates() -> None:
    pids = template_pids()
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["python", "shell"])
def test_a_template_killed_mid_run_is_an_error_never_a_verdict(tmp_path: Path, kind: str) -> None:
    zygote_sandbox()
    sandbox = Sandbox(backend="bwrap", zygote=True)
    code = {"python": "import time\ntime.sleep(4)\nassert False", "shell": "sleep 4; false"}[kind]
    context = CheckContext(workspace=tmp_path, sandbox=sandbox)
    assert (
        build_check({"kind": kind, "code": "true" if kind == "shell" else "pass"})
        .run(context)
        .status
        is Status.VERIFIED
    )
    outcomes = []
    thread = threading.Thread(
        target=lambda: outcomes.append(build_check({"kind": kind, "code": code}).run(context))
    )
    thread.start()
    time.sleep(1.5)
    _kill_templates()
    thread.join()
    assert outcomes[0].status is Status.ERROR, outcomes[0]
    # the next check gets a new template
    right = build_check({"kind": kind, "code": "true" if kind == "shell" else "pass"})
    assert right.run(context).status is Status.VERIFIED


def test_a_template_killed_between_runs_is_replaced(sandbox: Sandbox) -> None:
    judge_run(sandbox, "pass")
    before = template_pids()
    _kill_templates()
    time.sleep(0.2)
    _still_judges(sandbox)
    assert template_pids() and template_pids() != before


@pytest.mark.slow
def test_a_retired_template_finishes_its_runs(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A template that served its last run exits only once its runs have ended."""
    import assay.sandbox._forked as forked

    judge_run(sandbox, "pass")
    monkeypatch.setattr(forked, "MAX_SERVED", 1)
    results = []
    thread = threading.Thread(
        target=lambda: results.append(judge_run(sandbox, "import time\ntime.sleep(2)"))
    )
    thread.start()
    thread.join()
    assert results[0].completed, results[0].output
    _still_judges(sandbox)


@pytest.mark.slow
def test_a_stalled_template_is_replaced_never_a_verdict(tmp_path: Path) -> None:
    """A template that takes no run (stopped here from outside) does not answer the run's
    request: it is killed and replaced, and the check runs on the new one (refuted here, as
    it should be: never a verdict from the stopped one); checks go on after."""
    zygote_sandbox()
    sandbox = Sandbox(backend="bwrap", zygote=True)
    context = CheckContext(workspace=tmp_path, sandbox=sandbox)
    assert build_check({"kind": "python", "code": "pass"}).run(context).status is Status.VERIFIED
    pids = template_pids()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        wrong = build_check({"kind": "python", "code": "assert False", "timeout": 2})
        assert wrong.run(context).status is Status.REFUTED
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):  # killed and reaped by then
                os.kill(pid, signal.SIGCONT)
    assert build_check({"kind": "python", "code": "pass"}).run(context).status is Status.VERIFIED
