"""Masking a wrong answer after the reply cap, the shell rule and template replacement (issue 7).

Found by the adversarial review of session 7's masking work (helper "adv-masking"). Each attack
is a wrong solution (the answer is 41, or a value that is not 42; the check wants 42) judged by a
check an honest author writes. A confirmed hole is a test asserting the correct status, marked
``xfail(strict=True)`` until it is closed; an attack that fails is an ordinary test.

Under the default policy a limit is inconclusive, so a candidate that merely stalls is masked by
design; what these tests hold assay to is its stated guarantee: a check that *concluded* its
failure on an answer it received is refuted whatever limit counters moved elsewhere, and taking
a value across is never what exhausts the run's memory.
"""

from __future__ import annotations

import textwrap
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Outcome, build_check
from assay.sandbox import Sandbox
from assay.sandbox._cgroup import hierarchy
from tests.adversarial.code_checks import workspace
from tests.helpers import I, R, V

CHECK = "from solution import answer\nassert answer() == 42"

needs_cgroup = pytest.mark.skipif(
    hierarchy() is None, reason="needs a writable cgroup (root): limits are read from it"
)


def found(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"adv-masking: {reason}")


@lru_cache(maxsize=2)
def _sandbox(zygote: bool) -> Sandbox:
    return Sandbox(backend="bwrap", zygote=zygote)


PATHS = pytest.mark.parametrize("zygote", [True, False], ids=["template", "bwrap"])


def run(root: Path, files: dict[str, str], spec: dict[str, Any], zygote: bool = True) -> Outcome:
    """One check for real, on the templates' path or with bubblewrap per check."""
    spec = {"timeout": 15, **spec}
    spec["code"] = textwrap.dedent(spec["code"])
    ws = workspace(root, files)
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=_sandbox(zygote)))


# 1. A MemoryError raised by candidate code skips the judge's "failed" report -----------------
#
# ``_runner.main``: ``except BaseException as exc: if not isinstance(exc, MemoryError):
# _found(...)``. A MemoryError may be the judge's own (a limit), so it is not reported as the
# check's conclusion. But ``_proxy._rebuild`` turns the candidate's ``raise MemoryError`` into a
# real builtin MemoryError raised in the check: the judge cannot tell it from its own. With a
# counter moved first (200 threads fill the task budget), the check's failure on the candidate's
# answer (an exception) becomes "inconclusive: the process limit". (Alone, without a counter, it
# is refuted: tests/adversarial/test_limit_masking.py ``raises_memory_error``.) Fix: rebuild a
# candidate's MemoryError as something the judge cannot confuse with its own (e.g. RuntimeError
# "candidate code raised MemoryError"), or have the proxy mark the exceptions it raised so the
# runner reports ``failed`` for them.
# Closed (masking-fix): the proxy marks the exceptions it raises for the candidate's
# (``_proxy.raised_for_candidate``); the runner reports ``failed`` for a marked MemoryError.

THREADS = """
import threading
def _sacrifice():
    stop = threading.Event()
    try:
        for _ in range(200):
            threading.Thread(target=stop.wait, daemon=True).start()
    except RuntimeError:
        pass
    stop.set()
"""
RAISES_MEMORY_ERROR = THREADS + "def answer():\n    _sacrifice()\n    raise MemoryError()\n"


@needs_cgroup
@PATHS
@pytest.mark.parametrize("kind", ["python", "hidden_python"])
def test_a_memory_error_from_candidate_code_after_a_sacrifice(
    kind: str, zygote: bool, tmp_path: Path
) -> None:
    spec = {"kind": kind, "code": CHECK, "memory_mb": 128}
    outcome = run(tmp_path, {"solution.py": RAISES_MEMORY_ERROR}, spec, zygote)
    assert outcome.status is R, outcome.detail


# 2. A shared value whose text is exponential: crossing is cheap, formatting it is not ---------
#
# A list seen again in a reply crosses as a back-reference (``r``), which the decoder's budget
# does not charge: 64 levels of ``v = [v, v]`` is 64 lists and a few hundred bytes, and its
# repr is 2**64 leaves. The value crosses, the comparison fails, and the honest check formats it
# for its message (``assert r == 42, f"got {r!r}"``, unittest's ``assertEqual``, a ``print``):
# the judge fills the run's memory before the AssertionError exists, so no "failed" is
# reported and the outcome is "inconclusive: the memory limit". This breaks "taking a value
# across can never be what exhausts the memory". Fix: charge a back-reference the size of what
# it names (its whole tree, as the decoder already knows each container's cost), so a value
# whose unshared form is over the budget is refused as too large to judge; or refuse
# back-references past a budget of expanded size.
# Closed (masking-fix): a back-reference is charged the whole of what it names, so a value
# is charged as its unshared form; this one is refused as too large to judge.

SHARED = """
def answer():
    value = [41]
    for _ in range(64):
        value = [value, value]
    return value
"""
FORMATS = {
    "assert_message": "from solution import answer\nr = answer()\nassert r == 42, f'got {r!r}'",
    "unittest": """\
        import unittest
        from solution import answer
        class T(unittest.TestCase):
            def test_answer(self):
                self.assertEqual(answer(), 42)
        unittest.main()
        """,
    "print": "from solution import answer\nprint(answer())\nassert answer() == 42",
}


@needs_cgroup
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_shared_value_the_check_formats(name: str, tmp_path: Path) -> None:
    spec = {"kind": "python", "code": FORMATS[name], "memory_mb": 128, "timeout": 10}
    outcome = run(tmp_path, {"solution.py": SHARED}, spec)
    assert outcome.status is R, outcome.detail


def test_a_shared_value_the_check_only_compares(tmp_path: Path) -> None:
    """The same value, compared without formatting it: refuted at once."""
    outcome = run(tmp_path, {"solution.py": SHARED}, {"kind": "python", "code": CHECK})
    assert outcome.status is R, outcome.detail


# 3. Kept replies between two reads of the judge's memory -------------------------------------
#
# ``Host.request`` reads its own RSS only once a quarter cap of reply *bytes* has crossed since
# the last read, and a reply of at most cap/16 bytes is decoded without a budget (it is assumed
# to build at most 64 bytes per byte). Empty sets cost 5 bytes each in a reply and 216 + 8 bytes
# here, so four replies of 520 KB (below cap/16 = 512 KiB at memory_mb 128) build ~90 MB kept
# by the check before the next read: the run's memory is exhausted between two reads and the
# wrong answer is "inconclusive: the memory limit". Fix: count what was *built* (the charge the
# decoder computes, always counted, not only past the budget threshold) towards the next read,
# or read RSS before every reply that could build more than the room left.
# Closed (masking-fix): every reply is decoded under a budget, and what it built counts
# towards the judge's memory, read again whenever the room left might not hold the next.

EMPTY_SETS = "def answer(i):\n    return [set() for _ in range(104_000)]\n"
KEPT = "from solution import answer\nkept = [answer(i) for i in range(12)]\nassert kept[0] == 42"


@needs_cgroup
@PATHS
def test_kept_replies_of_empty_sets(zygote: bool, tmp_path: Path) -> None:
    spec = {"kind": "python", "code": KEPT, "memory_mb": 128}
    outcome = run(tmp_path, {"solution.py": EMPTY_SETS}, spec, zygote)
    assert outcome.status is R, outcome.detail


# 4. The candidate kills the judge after moving a counter -------------------------------------
#
# The candidate's process may signal the judge (same uid, same PID namespace), and a shell
# check's ``solve.sh`` may signal bash (its parent, ``$PPID``). It moves a counter first (200
# threads fill the task budget; an OOM-killed child), then SIGKILLs the judge or bash: no
# "failed" is ever written (bash never reaches the check's last line), and the counter names a
# limit: inconclusive, on both paths. This is the class masking's report leaves open ("dying
# during a call after moving a counter"), except that here the process killed is assay's own
# judge (or the check's interpreter), not the candidate's. Alone (no counter) it is refuted
# ("kills_its_parent" in test_limit_masking.py; exit code 247 for bash). Fix: the candidate's
# processes should not be able to signal the judge or bash (a seccomp rule on kill, tkill,
# tgkill, pidfd_send_signal and rt_sigqueueinfo for pids outside the candidate's own tree, or
# the candidate's process in a PID namespace of its own), or the judge's death by a signal it
# did not get from the run's init is a finding (refuted), never a limit.
# Closed (judgekill): the candidate's process (and bash, with everything a shell check starts)
# is fenced by a second seccomp filter (``sandbox/_fence.py``) that refuses signals to the judge,
# bash, pid 1 and their process group; every other delivery path is in test_judge_signals.py.

KILLS_THE_JUDGE = THREADS + (
    "import os, signal\ndef answer():\n    _sacrifice()\n"
    "    os.kill(os.getppid(), signal.SIGKILL)\n    return 41\n"
)
KILLS_BASH = """#!/bin/bash
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))' 2>/dev/null
kill -9 $PPID
echo 41
"""
KILLERS = {
    "python": ({"solution.py": KILLS_THE_JUDGE}, CHECK),
    "shell": ({"solve.sh": KILLS_BASH}, 'out=$(./solve.sh); [ "$out" = 42 ]'),
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("kind", sorted(KILLERS))
def test_the_candidate_kills_the_judge_after_a_sacrifice(
    kind: str, zygote: bool, tmp_path: Path
) -> None:
    files, code = KILLERS[kind]
    spec = {"kind": kind, "code": code, "memory_mb": 200, "timeout": 10}
    outcome = run(tmp_path, files, spec, zygote)
    assert outcome.status is R, outcome.detail


# 5. Shell: the candidate breaks the report channel, then moves a counter ----------------------
#
# Bash's report socket (descriptor 99, ``_shellrun``) is one socket shared with the judge's own
# end (``theirs``, kept to send "stop") and inherited by every process the check starts.
# ``solve.sh`` shuts it down for writing (``socket.socket(fileno=99).shutdown(SHUT_WR)``: the
# state is the socket's, so it holds for bash and the judge too). Bash's report on the check's
# last line is then lost (EPIPE), and the judge's ``theirs.send(b"stop")`` raises (the runner
# dies with a traceback, exit 1; on the templates' path 71). So although bash ran the check's
# last line and it failed, neither "failed" nor "completed" is written; an OOM-killed child
# moved the memory counter, and the outcome is "inconclusive: the memory limit", on both paths,
# every time. Without the counter it is refuted (``test_a_broken_report_channel_alone``). The
# same works, racily (about 5 runs in 6), by setting O_NONBLOCK on descriptor 99 (the flag is
# the open file description's) and leaving a daemon that keeps the receiver's queue full
# (net.unix.max_dgram_qlen): the judge's send then raises BlockingIOError. Fix: the judge must
# not send "stop" through a socket the candidate holds (its own pipe or socketpair, or stop the
# drain thread by a bounded wait); and a report channel found broken once bash exits (its send
# fails, a datagram arrived from a pid other than bash's, O_NONBLOCK was set on it) is tampering
# with the judge's channel: refuted (``tampered``), never a limit.
# Closed (masking-fix): the judge stops its reader through its own end; once bash exits it
# probes bash's end (blocking? writable? still leading to the judge? written only by bash?).

BREAKS_THE_REPORT = r"""#!/bin/bash
python3 -c 'import socket; socket.socket(fileno=99).shutdown(socket.SHUT_WR)' >/dev/null 2>&1
SACRIFICE
echo 41
"""
OOM_CHILD = "python3 -c 'b = []\nwhile True: b.append(bytearray(16 << 20))' 2>/dev/null"
SHELL_CHECK = 'out=$(./solve.sh); [ "$out" = 42 ]'


# Other ways to break the same shared socket, each followed by the same sacrifice (closed in
# ``_shellrun``: after bash exits the judge probes its end of the channel, through a send that
# never blocks, and stops its reader through ``ours``, which only it holds).
BREAKS = {
    "shutdown": BREAKS_THE_REPORT,
    # connect(99, AF_UNSPEC): the shared socket no longer has a peer (bash's report: ENOTCONN)
    "disconnect": BREAKS_THE_REPORT.replace(
        "import socket; socket.socket(fileno=99).shutdown(socket.SHUT_WR)",
        "import ctypes; ctypes.CDLL(None).connect(99, (ctypes.c_char * 16)(), 16)",
    ),
    # pointed at a socket a leftover process of the candidate's holds: bash's report goes there
    "redirect": BREAKS_THE_REPORT.replace(
        "import socket; socket.socket(fileno=99).shutdown(socket.SHUT_WR)",
        "import os, socket, time\n"
        'r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind(chr(0) + "steal")\n'
        'socket.socket(fileno=99).connect(chr(0) + "steal")\n'
        "os.fork() or (os.setsid(), time.sleep(60))",
    ),
    # O_NONBLOCK on the shared description (with a daemon filling the queue, bash's report is
    # lost to EAGAIN; the flag alone is already tampering)
    "nonblocking": BREAKS_THE_REPORT.replace(
        "import socket; socket.socket(fileno=99).shutdown(socket.SHUT_WR)",
        "import os; os.set_blocking(99, False)",
    ),
    # a datagram from a process other than bash (a flood that keeps the queue full starts so)
    "foreign_datagram": BREAKS_THE_REPORT.replace(
        "import socket; socket.socket(fileno=99).shutdown(socket.SHUT_WR)",
        'import socket; socket.socket(fileno=99).send(b"41")',
    ),
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("how", sorted(BREAKS))
def test_a_broken_report_channel_after_a_sacrifice(how: str, zygote: bool, tmp_path: Path) -> None:
    script = BREAKS[how].replace("SACRIFICE", OOM_CHILD)
    spec = {"kind": "shell", "code": SHELL_CHECK, "memory_mb": 200, "timeout": 10}
    outcome = run(tmp_path, {"solve.sh": script}, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert "report channel was tampered with" in outcome.detail, outcome.detail


# Attacks that fail -----------------------------------------------------------------------------

CAP = (128 << 20) // 16  # reply_cap(128)
CROSSES = {
    # just under the cap: crosses, is compared, refuted
    "text_just_under_the_cap": f"def answer():\n    return 'x' * ({CAP} - 64)\n",
    # a big int, small in binary: crossing is fine; its decimal text is refused by Python
    "big_int": "def answer():\n    return 1 << (8 * (4 << 20))\n",
    # nesting at and past the judge's depth limit
    "nested_99": "def answer():\n    v = 41\n    for _ in range(99):\n        v = [v]\n    return v\n",
    "nested_101": "def answer():\n    v = 41\n    for _ in range(101):\n        v = [v]\n    return v\n",
    # a list that contains itself: the candidate's encoder recurses (RecursionError crosses)
    "cycle": "def answer():\n    v = [41]\n    v.append(v)\n    return v\n",
    # a generator: a handle; the check's comparison on it is refused
    "generator": "def answer():\n    yield 41\n",
    # a MemoryError alone, and an exception with a huge message (cut to 2000 characters)
    "memory_error_alone": "def answer():\n    raise MemoryError('x' * (1 << 20))\n",
    "huge_exception_text": "def answer():\n    raise ValueError('x' * (6 << 20))\n",
}
FORMATTING_CHECK = "from solution import answer\nr = answer()\nassert r == 42, f'got {r}'"


@needs_cgroup
@pytest.mark.parametrize("name", sorted(CROSSES))
def test_a_value_that_crosses_and_is_formatted(name: str, tmp_path: Path) -> None:
    spec = {"kind": "python", "code": FORMATTING_CHECK, "memory_mb": 128}
    outcome = run(tmp_path, {"solution.py": CROSSES[name]}, spec)
    assert outcome.status is R, outcome.detail


@needs_cgroup
@pytest.mark.slow
def test_a_shared_value_formatted_under_limits_are_rules(tmp_path: Path) -> None:
    """With limits as rules, the memory the check's repr fills refutes (no masking there)."""
    spec = {
        "kind": "python",
        "code": FORMATS["assert_message"],
        "memory_mb": 128,
        "timeout": 10,
        "limits_are_rules": True,
    }
    outcome = run(tmp_path, {"solution.py": SHARED}, spec)
    assert outcome.status is R, outcome.detail


BLOCKS_AFTER_REPLY = """
import os, signal, threading, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def _hold():
    if os.fork() == 0:
        os.setsid()
        time.sleep(3600)
def answer():
    threading.Thread(target=_hold).start()
    return 41
"""


@PATHS
def test_a_candidate_that_lingers_after_replying(zygote: bool, tmp_path: Path) -> None:
    """It ignores SIGTERM and leaves a child in its own session holding its output pipe: the
    check is refuted well before its timeout."""
    started = time.monotonic()
    spec = {"kind": "python", "code": CHECK, "timeout": 30}
    outcome = run(tmp_path, {"solution.py": BLOCKS_AFTER_REPLY}, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert time.monotonic() - started < 20


# Shell: ``expect_exit`` not 0 and the check's last command exits 0 after a sacrifice. The
# judge writes "failed" only for a non-zero status, but a run whose judge exited 0 has its
# counters unread, so the status decides (refuted) on both paths.
MEMORY_HOG = """\
#!/bin/bash
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))' 2>/dev/null
exit 0
"""
THREAD_HOG = """\
#!/bin/bash
python3 -c '
import threading
e = threading.Event()
try:
    for _ in range(200): threading.Thread(target=e.wait, daemon=True).start()
except RuntimeError: pass
e.set()' 2>/dev/null
exit 0
"""
SHELL_SACRIFICES = {"memory_hog": MEMORY_HOG, "thread_hog": THREAD_HOG}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("name", sorted(SHELL_SACRIFICES))
def test_a_shell_check_expecting_a_failure_gets_success(
    name: str, zygote: bool, tmp_path: Path
) -> None:
    spec = {"kind": "shell", "code": "./solve.sh --bad-input", "expect_exit": 1, "memory_mb": 200}
    outcome = run(tmp_path, {"solve.sh": SHELL_SACRIFICES[name]}, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert "expected 1" in outcome.detail, outcome.detail


@PATHS
def test_a_broken_report_channel_alone(zygote: bool, tmp_path: Path) -> None:
    """Without a counter moved, the judge's crash ends the run refuted (not an error)."""
    script = BREAKS_THE_REPORT.replace("SACRIFICE", "")
    spec = {"kind": "shell", "code": SHELL_CHECK, "timeout": 10}
    outcome = run(tmp_path, {"solve.sh": script}, spec, zygote)
    assert outcome.status is R, outcome.detail


# The templates: a candidate stops every process it can see but its own ancestors (and tries
# the run's init too); the template is not among them (it is outside the run's PID namespace),
# so the check is refuted and the next check on the same template runs at once.
STOPS_WHAT_IT_SEES = """
import os, signal
def answer():
    keep, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        with open(f"/proc/{pid}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        keep.add(pid)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in keep:
            try:
                os.kill(int(name), signal.SIGSTOP)
            except OSError:
                pass
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(1, sig)
        except OSError:
            pass
    return 41
"""


def test_a_candidate_cannot_stop_the_template(tmp_path: Path) -> None:
    outcome = run(
        tmp_path / "a", {"solution.py": STOPS_WHAT_IT_SEES}, {"kind": "python", "code": CHECK}
    )
    assert outcome.status is R, outcome.detail
    started = time.monotonic()
    right = "def answer():\n    return 42\n"
    outcome = run(tmp_path / "b", {"solution.py": right}, {"kind": "python", "code": CHECK})
    assert outcome.status is V, outcome.detail
    assert time.monotonic() - started < 5  # no wait on a hung template (ANSWER_WAIT)


# 6. A python check's own failure on the output of a program it started ------------------------
#
# The check never imports the candidate: it runs ``solve.py`` and compares what it printed. The
# program first moves a limit counter (a child of its own OOM-killed), then prints 41 and exits
# normally. The judge used to report the check's own exception by its exit code only, so the
# counter named a limit: inconclusive (adv-fence2). Closed (sbx3): the runner reports the check's
# own exception as ``failed`` unless it may be a limit's consequence (``_runner._cut_short``): a
# resource error in its chain, the judge's own MemoryError, the check's own subprocess timeout,
# or a program the judge waited for that ended as a limit ends a process (SIGKILL, SIGXCPU,
# SIGXFSZ, or a shell's 128 + one of them). Near misses keep those a limit.

OOM_CHILD = (
    "import subprocess, sys\n"
    "subprocess.run([sys.executable, '-c', 'b = []\\nwhile True: b.append(bytearray(16 << 20))'],"
    " stderr=subprocess.DEVNULL)\n"
)
PROGRAM_CHECKS = {
    "run": """
        import subprocess
        out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
        assert out.stdout.strip() == '42', out.stdout
    """,
    "check_output": """
        import subprocess
        assert subprocess.check_output(['python3', '-I', 'solve.py'], text=True).strip() == '42'
    """,
    "popen_unwaited": """
        import subprocess
        p = subprocess.Popen(['python3', '-I', 'solve.py'], stdout=subprocess.PIPE, text=True)
        assert p.stdout.read().strip() == '42'
    """,
    "sys_exit": """
        import subprocess, sys
        out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
        if out.stdout.strip() != '42':
            sys.exit(f'wrong: {out.stdout}')
    """,
    "json": """
        import json, subprocess
        out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
        assert json.loads(out.stdout) == {'answer': 42}
    """,
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("check", sorted(PROGRAM_CHECKS))
def test_a_checks_own_failure_on_a_programs_output(
    check: str, zygote: bool, tmp_path: Path
) -> None:
    solve = OOM_CHILD + "print(41)\n"
    if check == "json":
        solve = OOM_CHILD + "print('{\"answer\": 41')\n"  # and cut: not even JSON
    spec = {"kind": "python", "code": PROGRAM_CHECKS[check], "memory_mb": 200}
    outcome = run(tmp_path, {"solve.py": solve}, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert outcome.evidence.get("limit") is None, outcome.evidence


# Near misses: what may be a limit's consequence stays the limit (inconclusive by default).
HONEST_PROGRAM = "print(4, end='', flush=True)\nb = []\nwhile True: b.append(bytearray(16 << 20))\n"
LIMITS_IN_THE_CHECK = {
    # the program itself OOM-killed mid-answer: its output was cut short
    "program_oom_killed": ({"solve.py": HONEST_PROGRAM}, PROGRAM_CHECKS["run"]),
    "program_oom_killed_unwaited": ({"solve.py": HONEST_PROGRAM}, PROGRAM_CHECKS["popen_unwaited"]),
    # through a shell, which reports 128 + 9
    "program_oom_killed_in_sh": (
        {"solve.py": HONEST_PROGRAM},
        """
        import subprocess
        out = subprocess.run('python3 -I solve.py; exit $?', shell=True, capture_output=True,
                             text=True)
        assert out.stdout.strip() == '42', out.stdout
        """,
    ),
    "os_system": (
        {"solve.py": HONEST_PROGRAM},
        "import os\nassert os.system('python3 -I solve.py >/dev/null') == 0",
    ),
    # the judge's own MemoryError, after a counter moved
    "judges_memory_error": (
        {"solve.py": OOM_CHILD + "print(42)\n"},
        """
        import subprocess
        subprocess.run(['python3', '-I', 'solve.py'], capture_output=True)
        raise MemoryError()
        """,
    ),
    # the check's own subprocess timeout, after a counter moved
    "checks_own_timeout": (
        {"solve.py": OOM_CHILD + "import time\ntime.sleep(30)\n"},
        """
        import subprocess
        subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, timeout=2)
        """,
    ),
    # the check cannot start its next program: the first filled the task budget
    "checks_fork_refused": (
        {
            "solve.py": (
                "import subprocess\n"
                "for _ in range(200):\n"
                "    try:\n"
                "        subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
                "    except OSError:\n"
                "        break\n"
                "print(42)\n"
            )
        },
        """
        import subprocess
        subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, timeout=5)
        subprocess.run(['true'], check=True)
        """,
    ),
    # by design: a program that prints its wrong answer and then dies of SIGKILL looks like one
    # the OOM killer cut short (the kernel does not say who sent it), so with a counter moved
    # that stays the limit, as a call into a candidate's process that died does
    "program_killed_after_printing": (
        {"solve.py": OOM_CHILD + "import os\nprint(41, flush=True)\nos.kill(os.getpid(), 9)\n"},
        PROGRAM_CHECKS["run"],
    ),
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("case", sorted(LIMITS_IN_THE_CHECK))
def test_a_limits_consequence_in_the_check_stays_a_limit(
    case: str, zygote: bool, tmp_path: Path
) -> None:
    files, code = LIMITS_IN_THE_CHECK[case]
    spec = {"kind": "python", "code": code, "memory_mb": 200}
    outcome = run(tmp_path, files, spec, zygote)
    assert outcome.status is I, outcome.detail
    assert outcome.evidence.get("limit") in ("memory", "processes"), outcome.evidence
