"""The limits a check's code meets are the same on both sandbox paths.

A run forked from a sandbox template (``Sandbox(zygote=True)``, the default) and one started
by bubblewrap (``zygote=False``, the old path) must bind the checked code alike: whatever the
fork path grants beyond the old one is more than the check's author set. Each instance measures,
from the candidate's process, one limit on both paths.
"""

from __future__ import annotations

import textwrap

import pytest

from assay.sandbox import Limits, Mount, RunResult, Sandbox, runner_control
from assay.sandbox._judge_files import judge_mounts
from tests.sandbox.zygote_helpers import WORKSPACE, zygote_sandbox

PROBES = {
    "processes it can start": """
        import os, time
        def measure():
            started = 0
            while True:
                try:
                    pid = os.fork()
                except OSError:
                    return started
                if pid == 0:
                    time.sleep(10)
                    os._exit(0)
                started += 1
    """,
    "its resource limits": """
        def measure():
            return open('/proc/self/limits').read()
    """,
    "the size of /tmp": """
        import os
        def measure():
            info = os.statvfs('/tmp')
            return info.f_blocks * info.f_frsize
    """,
    "its open descriptors": """
        import os
        def measure():
            held = [os.open('/proc/self/fd', os.O_RDONLY | os.O_DIRECTORY)]
            kinds = []
            for fd in os.listdir(held[0]):
                try:
                    kinds.append(os.readlink(f'/proc/self/fd/{fd}').split(':[')[0])
                except OSError:
                    kinds.append('gone')
            return sorted(kinds)
    """,
}


def _measure(sandbox: Sandbox, probe: str) -> str:
    code = "import probe\nprint('measured', repr(probe.measure()))\n"
    with sandbox.prepare(
        sandbox.python_argv(),
        cwd=WORKSPACE,
        mounts=judge_mounts(shell=False),
        limits=Limits(timeout=20, processes=16),
        folder_at=WORKSPACE,
        waits=True,
    ) as prepared:
        (prepared.folder / "probe.py").write_text(textwrap.dedent(probe))
        cwd = sandbox.inside_path(WORKSPACE, [Mount(prepared.folder, WORKSPACE)])
        control, nonce = runner_control("python", code, "<check>", cwd)
        result: RunResult = prepared.run(control, nonce)
    assert result.completed, result.output
    return result.output.split("measured ", 1)[1].split("\n", 1)[0]


@pytest.mark.parametrize(
    "probe",
    list(PROBES),  # "processes it can start" was one more on forked runs (adv-zygote F3)
)
def test_a_limit_is_the_same_on_both_paths(probe: str) -> None:
    forked = _measure(zygote_sandbox(), PROBES[probe])
    started = _measure(Sandbox(backend="bwrap", zygote=False), PROBES[probe])
    assert forked == started
