"""Signalling, stopping or starving the judge (or a shell check's bash) after moving a counter.

The candidate's process runs as the judge's uid in the judge's PID namespace. Killed or stopped
after a limit counter moved (200 threads fill the task budget; an OOM-killed child), the judge
never writes the check's conclusion and the counter names a limit: a wrong answer masked as
``inconclusive`` (adv-masking's F4, test_masking_attacks.py section 4). The fence
(``sandbox/_fence.py``) refuses every way of delivering a signal to the judge, bash, pid 1 or
their process group; each way is one case here, on both run paths, and each must be refuted
(the check compares the wrong answer once the attempt failed). A case that got through would
end ``inconclusive`` (the judge killed, or stopped until the timeout).
"""

from __future__ import annotations

import platform
import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Outcome, build_check
from assay.sandbox import Sandbox
from assay.sandbox._cgroup import hierarchy
from tests.adversarial.code_checks import workspace
from tests.helpers import R, V

needs_cgroup = pytest.mark.skipif(
    hierarchy() is None, reason="needs a writable cgroup (root): limits are read from it"
)
PATHS = pytest.mark.parametrize("zygote", [True, False], ids=["template", "bwrap"])
pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks make raw x86-64 system calls"
)


@lru_cache(maxsize=2)
def _sandbox(zygote: bool) -> Sandbox:
    return Sandbox(backend="bwrap", zygote=zygote)


def run(root: Path, files: dict[str, str], spec: dict[str, Any], zygote: bool) -> Outcome:
    spec = {"timeout": 8, "memory_mb": 200, **spec}
    ws = workspace(root, files)
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=_sandbox(zygote)))


# Python: the candidate fills the task budget, tries one way to reach the judge (its parent),
# then answers 41. ``judge`` is the judge's pid, ``libc`` a way to make raw system calls.
PRELUDE = """
import ctypes, fcntl, os, signal, socket, threading, time
libc = ctypes.CDLL(None, use_errno=True)
NR = {"tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
      "pidfd_open": 434, "pidfd_send_signal": 424}
def call(name, *args):
    if libc.syscall(NR[name], *args) < 0:
        raise OSError(ctypes.get_errno(), name)
def _sacrifice():
    stop = threading.Event()
    try:
        for _ in range(200):
            threading.Thread(target=stop.wait, daemon=True).start()
    except RuntimeError:
        pass
    stop.set()
def answer():
    judge = os.getppid()
    _sacrifice()
    try:
        attack(judge)
        time.sleep(1)  # a signal that was let through lands before the answer
    except OSError:
        pass
    return 41
"""
ATTACKS = {
    "sigkill": "os.kill(judge, signal.SIGKILL)",
    "sigstop": "os.kill(judge, signal.SIGSTOP)",
    "sigterm": "os.kill(judge, signal.SIGTERM)",
    "everyone": "os.kill(-1, signal.SIGKILL)",
    "judge_group": "os.killpg(os.getpgid(judge), signal.SIGKILL)",
    "pid_1": "os.kill(1, signal.SIGKILL)",
    "join_the_judges_group": "os.setpgid(0, os.getpgid(judge)); os.kill(0, signal.SIGKILL)",
    "tkill": "call('tkill', judge, signal.SIGKILL)",
    "tkill_every_thread": (
        "for t in range(2, 400):\n"
        "            if t != os.getpid():\n"
        "                try: call('tkill', t, signal.SIGKILL)\n"
        "                except OSError: pass"
    ),
    "tgkill": "call('tgkill', judge, judge, signal.SIGKILL)",
    "rt_sigqueueinfo": (
        "info = ctypes.create_string_buffer(128); info[0:4] = (9).to_bytes(4, 'little')\n"
        "        info[8:12] = (-1 & 0xFFFFFFFF).to_bytes(4, 'little')\n"
        "        call('rt_sigqueueinfo', judge, signal.SIGKILL, info)"
    ),
    "rt_tgsigqueueinfo": (
        "info = ctypes.create_string_buffer(128); info[0:4] = (9).to_bytes(4, 'little')\n"
        "        info[8:12] = (-1 & 0xFFFFFFFF).to_bytes(4, 'little')\n"
        "        call('rt_tgsigqueueinfo', judge, judge, signal.SIGKILL, info)"
    ),
    "pidfd": "call('pidfd_send_signal', os.pidfd_open(judge), signal.SIGKILL, None, 0)",
    "proc_folder_as_pidfd": (
        "fd = os.open(f'/proc/{judge}', os.O_RDONLY | os.O_DIRECTORY)\n"
        "        call('pidfd_send_signal', fd, signal.SIGKILL, None, 0)"
    ),
    "sigio_owner": (
        "r, w = os.pipe()\n"
        "        fcntl.fcntl(r, fcntl.F_SETOWN, judge)\n"
        "        fcntl.fcntl(r, fcntl.F_SETSIG, signal.SIGKILL)\n"
        "        fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\n"
        "        os.write(w, b'x')"
    ),
    "sigio_owner_ex": (
        "a, b = socket.socketpair()\n"
        "        owner = (1).to_bytes(4, 'little') + judge.to_bytes(4, 'little')  # F_OWNER_PID\n"
        "        fcntl.fcntl(a, 15, owner)  # F_SETOWN_EX\n"
        "        fcntl.fcntl(a, fcntl.F_SETFL, os.O_ASYNC)\n"
        "        b.send(b'x')"
    ),
    "sigio_ioctl_owner": (
        "import struct\n"
        "        a, b = socket.socketpair()\n"
        "        fcntl.ioctl(a, 0x8901, struct.pack('i', judge))  # FIOSETOWN\n"
        "        fcntl.fcntl(a, fcntl.F_SETFL, os.O_ASYNC)\n"
        "        b.send(b'x')"
    ),
    "setsid_grandchild": (
        "time.sleep(1)  # the sacrifice's threads end: room for two processes\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            os.setsid()\n"
        "            if os.fork() == 0:\n"
        "                try: os.kill(judge, signal.SIGKILL)\n"
        "                finally: os._exit(0)\n"
        "            os._exit(0)\n"
        "        os.waitpid(pid, 0)"
    ),
}


def _solution(attack: str) -> str:
    return PRELUDE + f"def attack(judge):\n    if True:\n        {attack}\n"


@needs_cgroup
@PATHS
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_candidate_cannot_reach_the_judge(attack: str, zygote: bool, tmp_path: Path) -> None:
    if not zygote and attack not in ("sigkill", "tkill", "sigio_owner", "setsid_grandchild"):
        pytest.skip("the bubblewrap path runs the same fence: a sample of the attacks")
    files = {"solution.py": _solution(ATTACKS[attack])}
    spec = {"kind": "python", "code": "from solution import answer\nassert answer() == 42"}
    outcome = run(tmp_path, files, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert "AssertionError" in outcome.detail, outcome.detail


# Shell: ``solve.sh`` starts an OOM-killed child, tries one way to reach bash or the judge
# (bash's parent), then prints 41. The check wants 42.
SACRIFICE = "python3 -c 'b = []\nwhile True: b.append(bytearray(16 << 20))' 2>/dev/null\n"
JUDGE = "judge=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
SHELL_ATTACKS = {
    "kill_bash": "kill -9 $PPID",
    "stop_bash": "kill -STOP $PPID",
    "kill_the_judge": JUDGE + "kill -9 $judge",
    "stop_the_judge": JUDGE + "kill -STOP $judge",
    "own_group": "kill -9 0",
    "everyone": "kill -9 -1",
    "setsid_grandchild": "setsid sh -c 'kill -9 $1' sh $PPID; sleep 1",
    "from_python": "python3 -c 'import os, sys; os.kill(int(sys.argv[1]), 9)' $PPID",
    "sigio_owner": (
        "python3 -c 'import os, fcntl, sys; b = int(sys.argv[1]); r, w = os.pipe()\n"
        "fcntl.fcntl(r, fcntl.F_SETOWN, b); fcntl.fcntl(r, fcntl.F_SETSIG, 9)\n"
        "fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC); os.write(w, bytes(1))' $PPID"
    ),
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("attack", sorted(SHELL_ATTACKS))
def test_solve_sh_cannot_reach_bash_or_the_judge(attack: str, zygote: bool, tmp_path: Path) -> None:
    if not zygote and attack not in ("kill_bash", "own_group", "kill_the_judge"):
        pytest.skip("the bubblewrap path runs the same fence: a sample of the attacks")
    script = f"#!/bin/bash\n{SACRIFICE}{SHELL_ATTACKS[attack]} 2>/dev/null\necho 41\n"
    spec = {"kind": "shell", "code": 'out=$(./solve.sh); [ "$out" = 42 ]'}
    outcome = run(tmp_path, {"solve.sh": script}, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert "exit code 1" in outcome.detail, outcome.detail


# Every call the fence refuses, as the candidate's process sees it: the errno of each attempt.
ERRNOS = PRELUDE.replace("def answer():", "def _unused():") + textwrap.dedent(
    """
    import errno
    def attempts():
        judge, seen = os.getppid(), {}
        def attempt(name, f):
            try:
                f()
                seen[name] = "allowed"
            except OSError as exc:
                seen[name] = errno.errorcode.get(exc.errno, str(exc.errno))
        attempt("kill", lambda: os.kill(judge, 0))
        attempt("kill_1", lambda: os.kill(1, 0))
        attempt("kill_everyone", lambda: os.kill(-1, 0))
        attempt("tkill", lambda: call("tkill", judge, 0))
        attempt("tgkill", lambda: call("tgkill", judge, judge, 0))
        pidfd = os.pidfd_open(judge)
        attempt("pidfd_send_signal", lambda: call("pidfd_send_signal", pidfd, 0, None, 0))
        attempt("F_SETOWN", lambda: fcntl.fcntl(os.pipe()[0], fcntl.F_SETOWN, judge))
        attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, judge, 19))
        attempt("sched_setaffinity", lambda: os.sched_setaffinity(judge, {0}))
        idle = os.sched_param(0)
        attempt("sched_setscheduler", lambda: os.sched_setscheduler(judge, os.SCHED_IDLE, idle))
        attempt("nice_the_uid", lambda: os.setpriority(os.PRIO_USER, 0, 19))
        attempt("ptrace", lambda: call_ptrace(judge))
        attempt("own_process", lambda: os.kill(os.getpid(), 0))
        attempt("own_group", lambda: os.killpg(os.getpgrp(), 0))
        attempt("kill_0", lambda: os.kill(0, 0))
        attempt("pidfd_open", lambda: os.close(os.pidfd_open(judge)))
        attempt("own_priority", lambda: os.setpriority(os.PRIO_PROCESS, 0, 1))
        return seen
    def call_ptrace(pid):
        if libc.ptrace(16, pid, None, None) < 0:  # PTRACE_ATTACH
            raise OSError(ctypes.get_errno(), "ptrace")
    """
)
EXPECTED = {
    "kill": "EPERM",
    "kill_1": "EPERM",
    "kill_everyone": "EPERM",
    "tkill": "EPERM",
    "tgkill": "EPERM",
    "pidfd_send_signal": "ENOSYS",
    "F_SETOWN": "EPERM",
    "setpriority": "EPERM",
    "sched_setaffinity": "EPERM",
    "sched_setscheduler": "EPERM",
    "nice_the_uid": "EPERM",
    "ptrace": "EPERM",
    "own_process": "allowed",
    "own_group": "allowed",
    "kill_0": "allowed",  # its own session's group (fence-fix): the judge is not in it
    "pidfd_open": "allowed",
    "own_priority": "allowed",
}


@PATHS
def test_what_the_candidates_process_is_refused(zygote: bool, tmp_path: Path) -> None:
    code = f"from solution import attempts\nassert attempts() == {EXPECTED!r}, attempts()"
    outcome = run(tmp_path, {"solution.py": ERRNOS}, {"kind": "python", "code": code}, zygote)
    assert outcome.status is V, outcome.detail


# A python check that runs the candidate's program itself: the program is the judge's child.
# Its failing output is no finding when a counter moved (the program may have been cut short by
# the limit: inconclusive by design), so no counter moves here: what is tested is that the judge
# lives to compare (killed, its detail would be a signal's exit code, not the AssertionError).
STARTED = """import os, signal
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass
print(41)
"""


@PATHS
def test_a_program_the_check_starts_cannot_reach_the_judge(zygote: bool, tmp_path: Path) -> None:
    code = (
        "import subprocess\n"
        "out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)\n"
        "assert out.stdout.strip() == '42', out.stdout"
    )
    outcome = run(tmp_path, {"solve.py": STARTED}, {"kind": "python", "code": code}, zygote)
    assert outcome.status is R, outcome.detail
    assert "AssertionError: 41" in outcome.detail, outcome.detail
