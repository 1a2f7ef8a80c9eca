"""Limit masking: wrong work must not pass itself off as a limit (which would be inconclusive).

A limit is named only from what the sandbox's parent observed itself. A solution that prints
"MemoryError", "Killed" or "No space left on device", raises MemoryError or an ENOSPC/EAGAIN
error, or sends itself SIGXCPU, SIGXFSZ or SIGKILL, and returns a wrong value, is refuted, with
or without ``limits_are_rules``. A real wall-clock timeout is a limit: inconclusive by default,
refuted when the author declared limits to be rules.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from assay.sandbox import Limits, Sandbox, runner_control
from assay.sandbox._cgroup import hierarchy
from tests.helpers import I, R, run_kind

CHECK = "from solution import answer\nassert answer() == 42"

MASKS = {
    "prints_memory_error": "import sys\ndef answer():\n    print('MemoryError', file=sys.stderr)\n    return 41",
    "prints_killed": "def answer():\n    print('Killed')\n    return 41",
    "prints_no_space": "import sys\ndef answer():\n    print('OSError: [Errno 28] No space left on device', file=sys.stderr)\n    return 41",
    "prints_cannot_fork": "def answer():\n    print('fork: retry: Resource temporarily unavailable')\n    raise SystemExit(1)",
    "raises_memory_error": "def answer():\n    raise MemoryError()",
    "raises_enospc": "import errno, os\ndef answer():\n    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))",
    "raises_eagain": "import errno, os\ndef answer():\n    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))",
    "raises_efbig": "import errno, os\ndef answer():\n    raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))",
    "sends_itself_sigxcpu": "import os, signal\ndef answer():\n    os.kill(os.getpid(), signal.SIGXCPU)",
    "sends_itself_sigxfsz": "import os, signal\ndef answer():\n    os.kill(os.getpid(), signal.SIGXFSZ)",
    "sends_itself_sigkill": "import os, signal\ndef answer():\n    print('Killed')\n    os.kill(os.getpid(), signal.SIGKILL)",
    "kills_its_parent": "import os, signal\ndef answer():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 41",
}


@pytest.mark.parametrize("rules", [True, False], ids=["limits_are_rules", "default"])
@pytest.mark.parametrize("name", sorted(MASKS))
def test_a_fake_limit_is_refuted(name: str, rules: bool, tmp_path: Path) -> None:
    (tmp_path / "solution.py").write_text(MASKS[name] + "\n")
    outcome = run_kind("python", workspace=tmp_path, code=CHECK, timeout=20, limits_are_rules=rules)
    assert outcome.status is R, outcome.detail
    assert "limit" not in outcome.evidence, outcome.evidence


@pytest.mark.parametrize(
    "code",
    [
        "echo MemoryError >&2; echo 'No space left on device'; exit 1",
        "echo Killed; kill -KILL $$",
        "kill -XCPU $$; exit 1",
        "kill -XFSZ $$; exit 1",
    ],
)
def test_a_shell_check_faking_a_limit_is_refuted(code: str) -> None:
    outcome = run_kind("shell", code=code, timeout=20)
    assert outcome.status is R, outcome.detail
    assert "limit" not in outcome.evidence


@pytest.mark.slow
@pytest.mark.parametrize(("rules", "status"), [(True, R), (False, I)])
def test_a_real_timeout(rules: bool, status: object) -> None:
    outcome = run_kind(
        "python", code="import time\ntime.sleep(60)", timeout=1, limits_are_rules=rules
    )
    assert outcome.status is status, outcome.detail
    assert outcome.evidence["limit"] == "time"
    assert "timed out after 1s" in outcome.detail


@pytest.mark.parametrize("rules", [True, False])
def test_a_shell_that_stalls_when_wrong(rules: bool) -> None:
    outcome = run_kind("shell", code="sleep 60; false", timeout=1, limits_are_rules=rules)
    assert outcome.status is (R if rules else I), outcome.detail


def _run(code: str, limits: Limits) -> tuple[bool, str | None]:
    sandbox = Sandbox(backend="bwrap")
    control, nonce = runner_control("python", code, "<t>", "/tmp")
    result = sandbox.run(sandbox.python_argv(), control=control, nonce=nonce, limits=limits)
    return result.completed, result.limit


def test_a_real_cpu_limit_is_observed_and_a_self_sent_sigxcpu_is_not() -> None:
    limits = Limits(timeout=30, cpu_seconds=1)
    assert _run("while True: pass", limits) == (False, "cpu")
    fake = f"import os\nos.kill(os.getpid(), {int(signal.SIGXCPU)})"
    assert _run(fake, limits) == (False, None)


@pytest.mark.skipif(hierarchy() is None, reason="no writable cgroup here")
def test_a_real_process_limit_is_observed_and_a_printed_one_is_not() -> None:
    forks = "import subprocess\nchildren = [subprocess.Popen(['sleep', '5']) for _ in range(40)]\n"
    assert _run(forks, Limits(processes=10, timeout=30)) == (False, "processes")
    fake = "print('fork: retry: Resource temporarily unavailable')\nraise SystemExit(1)"
    assert _run(fake, Limits(processes=10, timeout=30)) == (False, None)
