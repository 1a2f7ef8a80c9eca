"""A python check's own conclusion, and the adopted candidate process (session 9, adv-sbx3).

Attacks on sbx3's two changes to ``sandbox/_runner.py``:

- A check that never started the candidate's process (it ran a program and compared what it
  printed) now reports its own exception or ``sys.exit`` as ``failed``, unless it may be a
  limit's consequence (``_cut_short``). Whatever the candidate can make look like one of those
  exceptions, with a limit counter moved (a child of its own OOM-killed), turns a wrong answer
  into "inconclusive: the memory limit".
- The zygote forks the candidate's process and exits; the judge, a child subreaper for that
  window only, adopts it, so the candidate can ``os.setpgrp()``.

A confirmed hole is a test asserting the right status, ``xfail(strict=True)``; an attack that
fails is an ordinary test. Fixed by the lead in session 9, as adv-sbx3 suggested: a SIGKILL
the check sent itself (``os.kill``, ``os.killpg``, ``Popen.kill``) is not a limit's, and only the
exact ``RuntimeError("can't start new thread")`` is a refused thread. Every wrong answer here is
41 (or a text that is not 42).
"""

from __future__ import annotations

import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Outcome, build_check
from assay.sandbox import Sandbox
from assay.sandbox._cgroup import hierarchy
from tests.adversarial.code_checks import workspace
from tests.helpers import I, R, V

needs_cgroup = pytest.mark.skipif(
    hierarchy() is None, reason="needs a writable cgroup (root): limits are read from it"
)
PATHS = pytest.mark.parametrize("zygote", [True, False], ids=["template", "bwrap"])


def found(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"adv-sbx3: {reason}")


@lru_cache(maxsize=2)
def _sandbox(zygote: bool) -> Sandbox:
    return Sandbox(backend="bwrap", zygote=zygote)


def run(root: Path, files: dict[str, str], code: str, zygote: bool = True) -> Outcome:
    """One python check for real (memory_mb 200), on the templates' path or bwrap per check."""
    spec: dict[str, Any] = {
        "kind": "python",
        "timeout": 15,
        "memory_mb": 200,
        "code": textwrap.dedent(code),
    }
    ws = workspace(root, files)
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=_sandbox(zygote)))


# A limit counter moved: a child of the program (or of the candidate's process) OOM-killed.
OOM_CHILD = (
    "import subprocess, sys\n"
    "subprocess.run([sys.executable, '-c', 'b = []\\nwhile True: b.append(bytearray(16 << 20))'],"
    " stderr=subprocess.DEVNULL)\n"
)
RUN = """
    import subprocess
    out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
    assert out.stdout.strip() == '42', out.stdout
"""

# 1. An exit status the program chose ----------------------------------------------------------
#
# ``_watch_children.note`` counts a program that *exited* with 128 + 9, 24 or 25 as one a limit
# ended (meant for a shell's report of its child's death). A program that prints 41 and calls
# ``sys.exit(137)`` was killed by nothing: the kernel reports a normal exit, yet the check's
# failure on its output is not reported, and the OOM-killed child's counter makes it
# "inconclusive: memory". The candidate's own doing, not a limit. (The same class as
# ``program_killed_after_printing`` in test_masking_attacks.py, which sbx3 keeps by design; this
# instance does not even need a signal.) Fix: count a waited child only by what the kernel says
# ended it (``WIFSIGNALED``), never by an exit code; at least require the rusage of the wait
# (``os.wait4``'s ``ru_maxrss`` / CPU time, which include the child's own waited children) to be
# at the memory or CPU limit's scale before a SIGKILL / 128+9 counts as the limit's.


@needs_cgroup
@PATHS
@pytest.mark.parametrize("status", [137, 152, 153])
@found(
    "a program's own exit(128+N) after a wrong answer reads as a limit's kill (kept: a shell's "
    "report of its child's death under os.system is the same status, and an honest program cut "
    "short there must stay a limit)"
)
def test_a_program_that_exits_128_plus_a_limit_signal(
    status: int, zygote: bool, tmp_path: Path
) -> None:
    solve = OOM_CHILD + f"print(41, flush=True)\nsys.exit({status})\n"
    outcome = run(tmp_path, {"solve.py": solve}, RUN, zygote)
    assert outcome.status is R, outcome.detail


# 1b. A program the check itself killed ----------------------------------------------------------
#
# A check that reads a program's first line and then ends it (``p.kill()``, which is SIGKILL, or
# ``os.kill(p.pid, 9)``; the usual way to stop a program that streams or stalls after its answer)
# waits for a child that died of SIGKILL. ``_watch_children`` notes it as a limit's kill, so the
# check's failure on that (wrong) first line is not reported, and the program's OOM-killed child
# makes it "inconclusive: memory". The candidate does not even kill anything: it prints 41 and
# sleeps. Fix: note only deaths the judge did not cause: wrap ``os.kill`` / ``os.killpg`` (which
# ``Popen.send_signal`` calls) and ignore a SIGKILL death of a pid (or group) the check itself
# sent SIGKILL to (or SIGTERM/SIGINT: any signal the check sent); the kernel's SIGKILL then
# counts only when the check never signalled that child.

KILLED_BY_THE_CHECK = {
    "popen_kill": "p.kill()",
    "os_kill": "os.kill(p.pid, 9)",
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("how", sorted(KILLED_BY_THE_CHECK))
def test_a_program_the_check_killed_after_its_answer(
    how: str, zygote: bool, tmp_path: Path
) -> None:
    solve = OOM_CHILD + "import time\nprint(41, flush=True)\ntime.sleep(10)\n"
    check = f"""
    import os, subprocess
    p = subprocess.Popen(['python3', '-I', 'solve.py'], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    {KILLED_BY_THE_CHECK[how]}
    p.wait()
    assert line.strip() == '42', line
    """
    outcome = run(tmp_path, {"solve.py": solve}, check, zygote)
    assert outcome.status is R, outcome.detail


# 1c. A thread error's text, printed by the program ---------------------------------------------
#
# ``_cut_short`` takes any ``RuntimeError`` whose text *contains* "can't start new thread" for the
# judge's thread refused by the task budget. A check that reports bad output in a RuntimeError
# (``raise RuntimeError(f"bad output: {out!r}")``) puts the program's text there: a program that
# prints that phrase (and moves a counter) is "inconclusive: memory". This contradicts
# ``_ended_by_the_check``'s "nothing here reads what the checked code wrote". Fix: do not read
# the message; wrap ``_thread.start_new_thread`` (and ``threading._start_new_thread``) as the
# waits are wrapped, note when it raised, and count a RuntimeError only when it is that noted
# object (``is``) in the chain; at least require ``type(step) is RuntimeError and step.args ==
# ("can't start new thread",)``.

BAD_OUTPUT_CHECK = """
    import subprocess
    out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True).stdout
    if out.strip() != '42':
        raise RuntimeError(f'bad output: {out!r}')
"""


@needs_cgroup
@PATHS
def test_a_program_that_prints_the_thread_error(zygote: bool, tmp_path: Path) -> None:
    solve = OOM_CHILD + 'print("41 can\'t start new thread")\n'
    outcome = run(tmp_path, {"solve.py": solve}, BAD_OUTPUT_CHECK, zygote)
    assert outcome.status is R, outcome.detail


# 2. A MemoryError the candidate's text makes, with no memory short ----------------------------
#
# CPython's parser raises ``MemoryError`` (no allocation failed: its stack overflowed) on a
# deeply nested expression such as ``'-' * 200_000 + '1'``. A check that reads a program's
# answer with ``ast.literal_eval`` (or ``compile``/``eval`` of a literal) then ends with the
# judge's "own" MemoryError, which ``_cut_short`` (and, once the candidate's process was started,
# the old rule) takes for the memory limit: with a counter moved, "inconclusive: memory", a
# wrong answer masked. Fix: count a judge's MemoryError as a limit only when the judge was near
# the run's memory at that moment (its VmRSS / the run cgroup's usage against ``memory_mb``, read
# when the exception is caught), else it is the check's conclusion (``failed``).

NESTED = "'-' * 200_000 + '1'"
LITERAL_OF_A_PROGRAM = """
    import ast, subprocess
    out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
    assert ast.literal_eval(out.stdout) == 42
"""
LITERAL_OF_AN_ANSWER = """
    import ast
    from solution import answer
    assert ast.literal_eval(answer()) == 42
"""


@needs_cgroup
@PATHS
@found("a parser's MemoryError on the candidate's text reads as the judge's memory limit")
def test_a_nested_literal_from_a_program(zygote: bool, tmp_path: Path) -> None:
    solve = OOM_CHILD + f"print({NESTED})\n"
    outcome = run(tmp_path, {"solve.py": solve}, LITERAL_OF_A_PROGRAM, zygote)
    assert outcome.status is R, outcome.detail


@needs_cgroup
@found("a parser's MemoryError on a returned text reads as the judge's memory limit")
def test_a_nested_literal_from_the_candidates_process(tmp_path: Path) -> None:
    solution = "def answer():\n" + textwrap.indent(OOM_CHILD, "    ") + f"    return {NESTED}\n"
    outcome = run(tmp_path, {"solution.py": solution}, LITERAL_OF_AN_ANSWER)
    assert outcome.status is R, outcome.detail


@needs_cgroup
def test_a_nested_literal_without_a_counter_is_refuted(tmp_path: Path) -> None:
    """Control: with no counter moved the same failure is refuted."""
    solve = f"print({NESTED})\n"
    outcome = run(tmp_path, {"solve.py": solve}, LITERAL_OF_A_PROGRAM)
    assert outcome.status is R, outcome.detail


# 2b. Test-style checks on a program's output --------------------------------------------------
#
# sbx3's rule reaches only plain checks: a unittest / pytest-style check (``_tests``) that runs
# the program and fails its test keeps the old rule (a failed test is reported ``failed`` only
# once the candidate's process was started), so the program's OOM-killed child still masks the
# wrong output as "inconclusive: memory" (sbx3's report, "not done"). Fix: have ``_tests`` hand
# the failing tests' exceptions (``result.failures`` / ``errors``, their ``exc_info`` values)
# to ``_ended_by_the_check`` (``failed`` unless one of them is ``_cut_short``).

TEST_STYLE = {
    "unittest": """
        import subprocess, unittest

        class TestSolve(unittest.TestCase):
            def test_answer(self):
                out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
                self.assertEqual(out.stdout.strip(), '42')

        unittest.main()
    """,
    "pytest_style": """
        import subprocess

        def test_answer():
            out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
            assert out.stdout.strip() == '42'
    """,
}


@needs_cgroup
@pytest.mark.parametrize("style", sorted(TEST_STYLE))
@found("a test-style check's failed test on a program's output is masked by a moved counter")
def test_a_test_style_check_on_a_programs_output(style: str, tmp_path: Path) -> None:
    solve = OOM_CHILD + "print(41)\n"
    outcome = run(tmp_path, {"solve.py": solve}, TEST_STYLE[style])
    assert outcome.status is R, outcome.detail


# 2c. A right program cut short, judged after the candidate's process was started --------------
#
# The rule depends on the order of the check's lines. A check that runs the program and then
# imports a helper of the candidate's (``from solution import parse``) has started the
# candidate's process, so the old rule reports its failure ``failed`` even though the program
# the judge waited for was OOM-killed mid-answer (``_watch_children`` saw it): the honest answer,
# cut short by the memory limit, is refuted, where the same check without that import is
# "inconclusive: memory" (test_masking_attacks.py ``program_oom_killed``). Fix: in
# ``_ended_by_the_check``'s started branch, when the exception was not raised for the candidate
# (``not candidate_raised(exc)``) and a waited program was noted killed (``_STATE["cut_short"]``),
# apply ``_cut_short`` as in the other branch.

HONEST_PROGRAM = "print(4, end='', flush=True)\nb = []\nwhile True: b.append(bytearray(16 << 20))\n"
PARSE_AFTER_THE_PROGRAM = """
    import subprocess
    out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)
    from solution import parse
    assert parse(out.stdout) == 42
"""


@needs_cgroup
@found("a program cut short by the memory limit is refuted once the candidate's process started")
def test_a_program_cut_short_then_a_candidate_helper(tmp_path: Path) -> None:
    files = {"solve.py": HONEST_PROGRAM, "solution.py": "def parse(s):\n    return int(s)\n"}
    outcome = run(tmp_path, files, PARSE_AFTER_THE_PROGRAM)
    assert outcome.status is I, outcome.detail
    assert outcome.evidence.get("limit") == "memory", outcome.evidence


# 3. What the candidate's process raises through the check (failed attacks) -------------------
#
# Once the candidate's process was started the old rule holds: everything it raised is the
# check's conclusion, whatever its class or errno (``_proxy`` marks what it raised), and a
# ``SystemExit(0)`` it raises does not end the check as a success.

RAISES = {
    "oserror_enomem": "raise OSError(12, 'no memory')",
    "blocking_io": "raise BlockingIOError(11, 'again')",
    "memory_error_subclass": "class E(MemoryError): pass\n    raise E()",
    "thread_runtime_error": 'raise RuntimeError("can\'t start new thread")',
    "system_exit_0": "raise SystemExit(0)",
    "system_exit_none": "raise SystemExit()",
    "keyboard_interrupt": "raise KeyboardInterrupt()",
    "timeout_expired": "import subprocess\n    raise subprocess.TimeoutExpired('x', 1)",
}


@needs_cgroup
@pytest.mark.parametrize("name", sorted(RAISES))
def test_what_the_candidate_raises_after_a_counter(name: str, tmp_path: Path) -> None:
    solution = "def answer():\n" + textwrap.indent(OOM_CHILD, "    ") + "    " + RAISES[name] + "\n"
    check = "from solution import answer\nassert answer() == 42\n"
    outcome = run(tmp_path, {"solution.py": solution}, check)
    assert outcome.status is R, outcome.detail


# 3b. A shared stdout made non-blocking ---------------------------------------------------------
#
# A program the check runs without capturing its output shares the judge's stdout: one open
# file description, so its ``fcntl(1, F_SETFL, O_NONBLOCK)`` makes the *judge's* stdout
# non-blocking. The program writes a long wrong answer to a file and exits; the check prints it
# before asserting (``print('answer:', ans)``), the pipe fills faster than the verifier drains
# it, and the judge's write raises ``BlockingIOError`` (EAGAIN): a "resource error" to
# ``_cut_short``, so with a counter moved the wrong answer is "inconclusive: memory". (Without the
# O_NONBLOCK the same run is refuted every time.) It is a race with the drain, won 70-100 % of
# runs here, so the test makes 5 attempts and needs every one refuted. Fix, either or both:
# (1) count an EAGAIN only where it is a limit's (a refused fork or thread): wrap ``os.fork``,
# ``_posixsubprocess.fork_exec`` and ``_thread.start_new_thread`` as the waits are, record the
# exception objects they raised, and match those (``is``) in the chain, never an EAGAIN of a
# read or write; (2) give the judge's ``sys.stdout`` / ``sys.stderr`` an open file description
# of their own (``os.open('/proc/self/fd/1', os.O_WRONLY)`` on a pipe opens a new description
# of the same pipe; the runner must do it before ``_nondumpable()``: from the check it is EACCES,
# tried), so flags a program sets on its inherited fds 1/2 never reach the judge's. (1) suffices.

NONBLOCKING_STDOUT = """
import fcntl, os
open('/tmp/answer.txt', 'w').write('41' + ' ' * (4 << 20))
fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK)
"""
PRINTS_BEFORE_ASSERTING = """
    import subprocess
    subprocess.run(['python3', '-I', 'solve.py'])
    ans = open('/tmp/answer.txt').read()
    print('answer:', ans)
    assert ans.strip() == '42'
"""


@needs_cgroup
@PATHS
@found("a program that makes the judge's shared stdout non-blocking turns its print into EAGAIN")
def test_a_program_that_makes_the_shared_stdout_non_blocking(zygote: bool, tmp_path: Path) -> None:
    solve = OOM_CHILD + NONBLOCKING_STDOUT
    for attempt in range(5):
        outcome = run(tmp_path / str(attempt), {"solve.py": solve}, PRINTS_BEFORE_ASSERTING, zygote)
        assert outcome.status is R, (attempt, outcome.detail)


# 4. The adopted candidate process -------------------------------------------------------------
#
# The judge is a child subreaper only until it has adopted the candidate's process: the
# candidate's own orphans must go to the run's init, never to the judge (which would collect
# them as its zombies, and in a test-style check count them as its children). Its orphan's
# parent is not the judge; the candidate's process's own parent is.

ORPHAN = """
import os, time

def answer():
    judge = os.getppid()
    r, w = os.pipe()
    if os.fork() == 0:
        if os.fork() == 0:
            time.sleep(0.3)  # its parent has exited: it is an orphan now
            os.write(w, str(os.getppid()).encode())
            os._exit(0)
        os._exit(0)
    os.close(w)
    os.wait()
    return judge, int(os.read(r, 32) or 0), os.getpgrp() != os.getpid()
"""
ORPHAN_CHECK = """
import os
from solution import answer
judge, orphans_parent, in_a_group_it_does_not_lead = answer()
assert judge == os.getpid(), (judge, os.getpid())
assert orphans_parent not in (0, os.getpid()), orphans_parent
assert in_a_group_it_does_not_lead
"""


@PATHS
def test_the_candidates_orphans_are_not_the_judges(zygote: bool, tmp_path: Path) -> None:
    outcome = run(tmp_path, {"solution.py": ORPHAN}, ORPHAN_CHECK, zygote)
    assert outcome.status is V, outcome.detail
