"""Getting past the fence after fence-fix (adv-fence2, session 8): the kernel signals the judge
on the candidate's behalf, and neither seccomp nor Landlock sees it.

Found here (the first fixed in session 8 as suggested below, the second in session 9 (sbx3);
their tests now pass; attacks that fail are ordinary passing tests):

1. **The orphaned process group's SIGHUP.** Inside a run, pid 1, the judge and bash all sit in
   process group 1 of session 1, whose every member's parent is in the group (or outside the
   namespace): the group is orphaned already. A process of the same session (``solve.sh``, or a
   program a python check starts) makes a group of its own, forks a child that joins group 1
   (``setpgid`` within a session is allowed) and stops itself, then exits (or: a process of
   group 1 forks a child that stops itself, then moves to a group of its own and exits). Its child is
   reparented to pid 1, and the kernel (``kill_orphaned_pgrp``) sends SIGHUP then SIGCONT to
   group 1, which has a stopped member: the judge (default SIGHUP action) dies, exit code 129.
   After a moved limit counter (an OOM-killed child), a wrong answer ends ``inconclusive``.
   The python candidate's own process is in a session of its own (the zygote's ``setsid``), so
   it cannot join group 1: that path holds.
   A ``setpgid`` filter on the pgid would not fix it (``leave_group_1`` never names group 1). Fix
   (judgekill): the judge ``setpgid(0, 0)`` first thing, before it forks the zygote: a group of its
   own in session 1 whose leader's parent (pid 1) stays in group 1 of the same session, so the
   judge's group (which bash and the programs a check starts inherit) is never orphaned while the
   judge lives; group 1 keeps only pid 1, which ignores a kernel SIGHUP (SIGNAL_UNKILLABLE, default
   disposition). The fences already name ``os.getpgrp()``. (A ``setsid()`` of the judge would
   not do: its new group's leader's parent is then in another session, so it is orphaned at once.)
   Simulated (the check's own code moves the judge first): all three ways are then refuted.
2. **An honest ``os.setpgrp()`` is refuted.** The candidate's process of a python check *is* the
   zygote, a session leader (``setsid``), and ``setpgid`` on a session leader is EPERM. A right
   answer whose code makes itself a group leader (to ``killpg`` its helpers later) raises
   ``PermissionError``: refuted. (The zygote was a session leader before fence-fix too, from the
   ``setsid`` just before it ran ``_candidate``; fence-fix kept it.) Fixed (sbx3): the zygote
   forks the candidate's process once more and exits, and the judge (a child subreaper for that
   moment) adopts it: a member, not the leader, of the new session. Near misses: its own group
   still cannot reach the judge or join its group, and the judge still reads how it ended.

"""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from tests.adversarial.test_judge_signals import PATHS, SACRIFICE, needs_cgroup, run
from tests.helpers import R, V

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the fence is tested on x86-64"),
]

# A process of the judge's session orphans group 1 while one of its members is stopped. Two ways:
# a child joins group 1 from a group of its own, or (no ``setpgid`` into group 1 at all) a
# process of group 1 leaves it after forking a child that stays.
ORPHANS = {
    "join_group_1": """import os, signal, time
if os.fork() == 0:
    os.setpgid(0, 0)
    if os.fork() == 0:
        try:
            os.setpgid(0, 1)
        except OSError:
            os._exit(0)
        os.kill(os.getpid(), signal.SIGSTOP)
        os._exit(0)
    time.sleep(0.3)
    os._exit(0)
""",
    "leave_group_1": """import os, signal, time
if os.fork() == 0:
    if os.fork() == 0:
        os.kill(os.getpid(), signal.SIGSTOP)
        os._exit(0)
    os.setpgid(0, 0)
    time.sleep(0.3)
    os._exit(0)
""",
}
ORPHAN = ORPHANS["join_group_1"]


@needs_cgroup
@PATHS
@pytest.mark.parametrize("way", sorted(ORPHANS))
def test_solve_sh_cannot_orphan_the_judges_group(way: str, zygote: bool, tmp_path: Path) -> None:
    script = (
        f"#!/bin/bash\n{SACRIFICE}python3 -c '{ORPHANS[way]}' </dev/null >/dev/null 2>&1\n"
        "sleep 1\necho 41\n"
    )
    spec = {"kind": "shell", "code": 'out=$(./solve.sh); [ "$out" = 42 ]'}
    outcome = run(tmp_path, {"solve.sh": script}, spec, zygote)
    assert outcome.status is R, outcome.detail
    assert "exit code 1" in outcome.detail, outcome.detail


STARTED_CHECK = (
    "import subprocess\n"
    "out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)\n"
    "assert out.stdout.strip() == '42', out.stdout"
)
STARTED_SACRIFICE = (
    "import subprocess\n"
    "subprocess.run(['python3', '-c', 'b = []\\nwhile True: b.append(bytearray(16 << 20))'],"
    " stderr=subprocess.DEVNULL)\n"
)


@needs_cgroup
@PATHS
def test_a_program_the_check_starts_cannot_orphan_the_judges_group(
    zygote: bool, tmp_path: Path
) -> None:
    """Closed (sbx3): the judge survives the orphaning (its own group), and the check's own
    AssertionError is reported as its conclusion (``failed``) although a program it started
    moved a limit counter (its OOM-killed child) first: tests/adversarial/
    test_masking_attacks.py section 6 has the near misses."""
    solve = STARTED_SACRIFICE + ORPHAN + "time.sleep(1)\nprint(41)\n"
    outcome = run(tmp_path, {"solve.py": solve}, {"kind": "python", "code": STARTED_CHECK}, zygote)
    assert outcome.status is R, outcome.detail
    assert "AssertionError: 41" in outcome.detail, outcome.detail


# The candidate's own process (python check): a session of its own, so setpgid into group 1 is
# refused (EPERM) and the orphaning does nothing to the judge.
CANDIDATE = (
    "import os, signal, time\n"
    "def answer():\n"
    "    if os.fork() == 0:\n"
    "        os.execv('/usr/bin/env', ['env', 'python3', '-I', '-c', ORPHAN])\n"
    "    os.wait()\n"
    "    time.sleep(1)\n"
    "    return 41\n"
)


@needs_cgroup
@PATHS
def test_the_candidates_process_cannot_orphan_the_judges_group(
    zygote: bool, tmp_path: Path
) -> None:
    solution = f"ORPHAN = {ORPHAN!r}\n" + CANDIDATE
    code = "from solution import answer\nassert answer() == 42"
    outcome = run(tmp_path, {"solution.py": solution}, {"kind": "python", "code": code}, zygote)
    assert outcome.status is R, outcome.detail
    assert "AssertionError" in outcome.detail, outcome.detail


# 2. An honest candidate that makes itself a group leader, then signals its own group.
SETPGRP = {
    "setpgrp": "import os\ndef answer():\n    os.setpgrp()\n    return 42\n",
    "setpgid_0_0": "import os\ndef answer():\n    os.setpgid(0, 0)\n    return 42\n",
}


@PATHS
@pytest.mark.parametrize("case", sorted(SETPGRP))
def test_an_honest_candidate_that_makes_its_own_group(
    case: str, zygote: bool, tmp_path: Path
) -> None:
    """Closed (sbx3): the zygote forks the candidate's process after ``setsid``, so it is a
    member of the new session, not its leader."""
    code = "from solution import answer\nassert answer() == 42"
    files = {"solution.py": SETPGRP[case]}
    outcome = run(tmp_path, files, {"kind": "python", "code": code}, zygote)
    assert outcome.status is V, outcome.detail


# Near misses of that fix: the candidate's process is no longer the session's leader, but the
# session, the fence and the scope hold. Each answers 42 only if every expectation held, and
# prints what did not.
OWN_GROUP = """import os, signal, subprocess, sys
def group_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[2])  # its parent, its group
def answer():
    wrong = []
    judge = os.getppid()  # the zygote forked it and exited: the judge adopted it
    if os.getsid(0) in (os.getpid(), judge):
        wrong.append("a session's leader, or in the judge's session")
    judges_group, session = group_of(judge)[1], os.getsid(0)
    os.setpgrp()  # a group of its own: allowed now
    if os.getpgrp() != os.getpid() or os.getsid(0) != session:
        wrong.append("own group")
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    os.kill(0, signal.SIGUSR1)  # its own group
    signal.signal(signal.SIGTERM, lambda *a: None)  # handled here, default in its helper
    helper = subprocess.Popen(["sleep", "30"])  # in its group
    os.killpg(0, signal.SIGTERM)
    helper.wait()
    for target in (judge, -judges_group, 1, -1):
        try:
            os.kill(target, 0)
            wrong.append(f"reached {target}")
        except PermissionError:
            pass
    for group in (judges_group, 1):
        try:
            os.setpgid(0, group)
            wrong.append(f"joined group {group}")
        except OSError:
            pass
    child = os.fork()
    if child == 0:  # a session of its own, once more: allowed, and still fenced
        os.setsid()
        try:
            os.kill(judge, 0)
        except PermissionError:
            os._exit(0)
        os._exit(1)
    if os.waitpid(child, 0)[1] != 0:
        wrong.append("reached the judge from a new session")
    if wrong:
        print(wrong, file=sys.stderr)
        return wrong
    return 42
"""


@PATHS
def test_a_candidate_with_its_own_group_is_still_fenced(zygote: bool, tmp_path: Path) -> None:
    code = "from solution import answer\nassert answer() == 42"
    outcome = run(tmp_path, {"solution.py": OWN_GROUP}, {"kind": "python", "code": code}, zygote)
    assert outcome.status is V, outcome.detail


# The zygote that leads the session forks the candidate's process and exits; the judge adopts it
# (a child subreaper for that moment), so it is still the judge that reads how it ended.
DIES = "import os, signal\ndef answer():\n    os.kill(os.getpid(), signal.SIGKILL)\n"


@PATHS
def test_the_judge_reads_how_the_candidates_process_ended(zygote: bool, tmp_path: Path) -> None:
    code = "from solution import answer\nassert answer() == 42"
    outcome = run(tmp_path, {"solution.py": DIES}, {"kind": "python", "code": code}, zygote)
    assert outcome.status is R, outcome.detail
    assert "ended during a call (exit status -9)" in outcome.detail, outcome.detail
