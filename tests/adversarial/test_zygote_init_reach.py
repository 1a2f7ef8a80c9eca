"""Reaching a forked run's init (and the judge) through what the kernel grants to the same uid.

In a run forked from a sandbox template, the run's init (pid 1 of its PID namespace) drops to
the sandbox uid like the judge and the candidate (bubblewrap's init stays root). No signal from
inside reaches it and it is not dumpable, but the kernel lets a process change another's
resource limits whenever their uids match (``prlimit``), dumpable or not. With RLIMIT_CPU set
to one second and orphans for it to reap, the candidate had the init killed by the kernel: its
status never came, and a wrong answer under ``limits_are_rules`` ended ``error`` (assay's own
failure) instead of refuted. The filter now refuses ``prlimit64`` on any process but the caller.
Each instance runs in the judge and in the candidate's process, on both sandbox paths.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Status, build_check
from assay.sandbox import Sandbox
from tests.sandbox.zygote_helpers import zygote_sandbox

# (the target, as seen from the judge and from the candidate's process)
TARGETS = {"the run's init": "1", "the judge": "os.getppid() if CANDIDATE else os.getpid()"}
LIMITS = ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_STACK", "RLIMIT_NOFILE", "RLIMIT_NPROC")


def _probe(target: str, limit: str) -> str:
    """Lower ``limit`` on ``target``; return what happened (the change must be refused)."""
    return textwrap.dedent(f"""
        def probe(CANDIDATE):
            import os, resource
            pid = {target}
            if pid == os.getpid():
                return 'self'  # the judge itself: its own limits are its own
            soft, hard = resource.getrlimit(resource.{limit})
            low = {{'RLIMIT_CPU': 1, 'RLIMIT_NOFILE': 8}}.get('{limit}', 4096)
            try:
                resource.prlimit(pid, resource.{limit}, (low, low))
            except PermissionError:
                return 'refused'
            return 'changed'
    """)


@pytest.fixture(scope="module", params=["zygote", "bwrap per check"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "zygote":
        return zygote_sandbox()
    return Sandbox(backend="bwrap", zygote=False)


def _check(sandbox: Sandbox, tmp_path: Path, files: dict[str, str], spec: dict[str, Any]) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, text in files.items():
        (ws / name).write_text(textwrap.dedent(text))
    spec = {"timeout": 20, **spec, "code": textwrap.dedent(spec["code"])}
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=sandbox))


@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.parametrize("target", list(TARGETS))
def test_another_process_limits_cannot_be_changed(
    sandbox: Sandbox, tmp_path: Path, target: str, limit: str
) -> None:
    probe = _probe(TARGETS[target], limit)
    check = probe + (
        "import reach\n"
        "assert reach.probe(True) == 'refused', 'candidate: ' + reach.probe(True)\n"
        "assert probe(False) in ('refused', 'self'), 'judge: ' + probe(False)\n"
    )
    outcome = _check(sandbox, tmp_path, {"reach.py": probe}, {"kind": "python", "code": check})
    assert outcome.status is Status.VERIFIED, outcome.detail


def test_own_limits_still_work(sandbox: Sandbox, tmp_path: Path) -> None:
    """``setrlimit``/``ulimit`` (prlimit64 on pid 0) are untouched, in python and in shell."""
    check = """
        import resource, subprocess
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (64, 64)
        out = subprocess.run(['sh', '-c', 'ulimit -n 32 && ulimit -n'], capture_output=True)
        assert out.stdout.strip() == b'32', out
    """
    outcome = _check(sandbox, tmp_path, {}, {"kind": "python", "code": check})
    assert outcome.status is Status.VERIFIED, outcome.detail


KILL_THE_INIT = """
    import resource, subprocess, time
    def answer():
        try:
            resource.prlimit(1, resource.RLIMIT_CPU, (1, 1))
        except PermissionError:
            return 41  # refused: nothing to gain, the wrong answer as it is
        group = ' '.join([': &'] * 50)  # orphans, each reaped by the init, costing it CPU
        subprocess.Popen(['sh', '-c', f'while :; do ( {group} ) ; done'])
        time.sleep(120)
        return 41
"""


@pytest.mark.slow
def test_a_wrong_answer_that_kills_the_init_is_refuted(sandbox: Sandbox, tmp_path: Path) -> None:
    """Without the filter's rule, on the template path: `error` ("the sandbox template's run
    ended without a status") after about 45 s of orphans; with it, refuted at once."""
    files = {"solve.py": KILL_THE_INIT}
    code = "import solve\nassert solve.answer() == 42\n"
    spec = {"kind": "python", "code": code, "timeout": 90, "limits_are_rules": True}
    outcome = _check(sandbox, tmp_path, files, spec)
    assert outcome.status is Status.REFUTED, outcome.detail


SCHEDULING = {
    "its priority": "os.setpriority(os.PRIO_PROCESS, 1, 19)",
    "its CPUs": "os.sched_setaffinity(1, {0})",
    "its scheduling class": "os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0))",
}


@pytest.mark.parametrize("change", list(SCHEDULING))
def test_the_runs_init_cannot_be_rescheduled(sandbox: Sandbox, tmp_path: Path, change: str) -> None:
    """Starving the init (the last to report how the run ended) is refused too: it is not the
    checked code's uid."""
    attempt = textwrap.dedent(f"""
        def attempt():
            import os
            try:
                {SCHEDULING[change]}
            except PermissionError:
                return 'refused'
            return 'changed'
    """)
    check = attempt + (
        "import reach\nassert reach.attempt() == 'refused'\nassert attempt() == 'refused'\n"
    )
    outcome = _check(sandbox, tmp_path, {"reach.py": attempt}, {"kind": "python", "code": check})
    assert outcome.status is Status.VERIFIED, outcome.detail
