"""Getting past the fence (``sandbox/_fence.py``): killing, stopping or OOM-killing the judge
after a limit counter moved, and honest work the fence now fails (adv-fence, session 8).

The fence names pids (pid 1, the judge, bash) and their process group. Found here:

1. ``kill(2)``, ``rt_sigqueueinfo(2)`` (and so bash's ``kill``) also take a *thread* id, and
   deliver to that thread's whole process. The judge has threads (the proxy's output drain in a
   python check, the report drain in a shell check), whose ids the fence does not name, and
   ``/proc/JUDGE/task`` lists them. SIGKILL or SIGSTOP there: a wrong answer ``inconclusive``.
2. The OOM killer: a candidate that answered 41 leaves a process filling ``/tmp`` (tmpfs pages
   are charged to the run's cgroup and to nobody's RSS), so the judge, the largest process, is
   killed while it verifies the answer: ``inconclusive``.
3. ``kill(0)`` is refused everywhere in a run: an honest python candidate that signals its own
   group (``os.killpg(0, …)``) is refuted, and coreutils ``timeout`` in ``solve.sh`` can no
   longer end its child's children (its second ``kill(0)``), so a right answer times out.
4. Not the fence's: ``/dev/shm`` is not writable, so process pools and ``multiprocessing``
   queues raise EACCES (``sem_open``): a right answer refuted.

Each finding is a strict xfail asserting the right status; attacks the fence stops pass.
"""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from assay import Outcome
from tests.adversarial.test_judge_signals import PATHS, PRELUDE, SACRIFICE, needs_cgroup, run
from tests.helpers import R, V

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        platform.machine() != "x86_64", reason="the attacks make raw x86-64 system calls"
    ),
]
PYTHON_CHECK = "from solution import answer\nassert answer() == 42"


def _signal_scoping() -> bool:
    """Whether this kernel has Landlock signal scoping (what keeps the candidate off the threads
    a check starts; the pid fence cannot name them)."""
    import ctypes

    from assay.sandbox import _fence

    abi = ctypes.CDLL(None).syscall(_fence.LANDLOCK_CREATE_RULESET, None, 0, 1)
    return int(abi) >= _fence.LANDLOCK_SIGNAL_ABI


SHELL_CHECK = 'out=$(./solve.sh); [ "$out" = 42 ]'


def _solution(attack: str) -> str:
    return PRELUDE + f"def attack(judge):\n    if True:\n        {attack}\n"


def _refuted_on_the_answer(outcome: Outcome, words: str) -> None:
    """Refuted on the compared answer (``words`` in the detail), not a limit or a stall."""
    assert outcome.status is R, (outcome.status, outcome.detail)
    assert words in outcome.detail, outcome.detail


# 1. A judge thread's id. Every task of the judge's thread group but its main thread.
THREADS = (
    "threads = [int(t) for t in os.listdir(f'/proc/{judge}/task') if int(t) != judge]\n"
    "        assert threads, 'the judge has no thread'\n"
)
SIGQUEUE = (
    "        info = ctypes.create_string_buffer(128); info[0:4] = (9).to_bytes(4, 'little')\n"
    "        info[8:12] = (-1 & 0xFFFFFFFF).to_bytes(4, 'little')\n"
    "        for t in threads: call('rt_sigqueueinfo', t, signal.SIGKILL, info)"
)
THREAD_ATTACKS = {
    "kill_a_judge_thread": THREADS + "        for t in threads: os.kill(t, signal.SIGKILL)",
    "stop_a_judge_thread": THREADS + "        for t in threads: os.kill(t, signal.SIGSTOP)",
    "sigqueue_a_judge_thread": THREADS + SIGQUEUE,
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("attack", sorted(THREAD_ATTACKS))
def test_the_candidate_cannot_signal_a_judge_thread(
    attack: str, zygote: bool, tmp_path: Path
) -> None:
    files = {"solution.py": _solution(THREAD_ATTACKS[attack])}
    outcome = run(tmp_path, files, {"kind": "python", "code": PYTHON_CHECK}, zygote)
    _refuted_on_the_answer(outcome, "AssertionError")


# A check that calls the candidate from a thread of its own: that thread's id reaches the judge
# too (naming assay's own drain threads in the fence would not cover it). The newest task of the
# judge is the check's worker.
POOL_CHECK = """from concurrent.futures import ThreadPoolExecutor
from solution import answer
with ThreadPoolExecutor(1) as pool:
    x = pool.submit(answer).result()
assert x == 42
"""


@needs_cgroup
@pytest.mark.skipif(
    not _signal_scoping(),
    reason="needs Landlock signal scoping (Linux >= 6.12, ABI >= 6): without it a thread the "
    "check starts can be signalled by the candidate (a documented limit)",
)
def test_the_candidate_cannot_signal_the_checks_own_thread(tmp_path: Path) -> None:
    attack = THREADS + "        os.kill(max(threads), signal.SIGKILL)"
    files = {"solution.py": _solution(attack)}
    outcome = run(tmp_path, files, {"kind": "python", "code": POOL_CHECK}, True)
    _refuted_on_the_answer(outcome, "AssertionError")


# A program the python check starts is the judge's child, outside the zygote's Landlock domain:
# the judge's fence names its drain thread's id (started before the fence, parked). The check
# imported the candidate first, so the drain runs. No counter moves (see test_judge_signals's
# program test): killed, the judge's detail would be a signal's exit code, not the assertion.
STARTED_KILLS_THREADS = """import os, signal
judge = os.getppid()
for t in os.listdir(f"/proc/{judge}/task"):
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(int(t), sig)
        except OSError:
            pass
print(41)
"""
STARTED_CHECK = (
    "from solution import answer\n"
    "import subprocess\n"
    "assert answer() == 42\n"
    "out = subprocess.run(['python3', '-I', 'solve.py'], capture_output=True, text=True)\n"
    "assert out.stdout.strip() == '42', out.stdout"
)


@PATHS
def test_a_program_the_check_starts_cannot_signal_the_judges_drain(
    zygote: bool, tmp_path: Path
) -> None:
    files = {"solve.py": STARTED_KILLS_THREADS, "solution.py": "def answer():\n    return 42\n"}
    outcome = run(tmp_path, files, {"kind": "python", "code": STARTED_CHECK}, zygote)
    _refuted_on_the_answer(outcome, "AssertionError: 41")


SHELL_THREADS = (
    "judge=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
    "for t in /proc/$judge/task/*; do\n"
    '  [ "${{t##*/}}" != "$judge" ] && kill -{sig} "${{t##*/}}"\n'
    "done\n"
)
SHELL_THREAD_ATTACKS = {"kill_a_judge_thread": "9", "stop_a_judge_thread": "STOP"}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("attack", sorted(SHELL_THREAD_ATTACKS))
def test_solve_sh_cannot_signal_a_judge_thread(attack: str, zygote: bool, tmp_path: Path) -> None:
    attempt = SHELL_THREADS.format(sig=SHELL_THREAD_ATTACKS[attack])
    script = f"#!/bin/bash\n{SACRIFICE}{{\n{attempt}}} 2>/dev/null\nsleep 1\necho 41\n"
    outcome = run(tmp_path, {"solve.sh": script}, {"kind": "shell", "code": SHELL_CHECK}, zygote)
    _refuted_on_the_answer(outcome, "exit code 1")


# 2. The OOM killer. The answer 41 is delivered; 0.3 s later a small process fills /tmp while
# the check still verifies it (a verification that takes 2 s).
FILL = "head -c 400M /dev/zero > /tmp/fill"
OOM_PYTHON = f"""import subprocess, threading, time
def _fill():
    time.sleep(0.3)
    subprocess.run({FILL!r}, shell=True)
def answer():
    threading.Thread(target=_fill, daemon=True).start()
    return 41
"""
SLOW_CHECK = """from solution import answer
import time
x = answer()
end = time.monotonic() + 2
while time.monotonic() < end:  # a verification that takes a while
    sum(i * i for i in range(1000))
assert x == 42
"""
OOM_SHELL = f"#!/bin/bash\n(sleep 0.3; {FILL}) >/dev/null 2>&1 &\necho 41\n"
SLOW_SHELL_CHECK = (
    "out=$(./solve.sh)\n"
    "end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done  # a slow verification\n"
    '[ "$out" = 42 ]'
)
OOM_CASES = {
    "python": ({"solution.py": OOM_PYTHON}, {"kind": "python", "code": SLOW_CHECK}, "Assertion"),
    "shell": ({"solve.sh": OOM_SHELL}, {"kind": "shell", "code": SLOW_SHELL_CHECK}, "exit code"),
}


@pytest.mark.xfail(
    strict=True,
    reason="adv-fence: tmpfs pages count in the cgroup but in nobody's RSS, so the OOM killer "
    "picks the judge (the largest process) while it verifies a wrong answer. Open (sbx3, "
    "session 9): oom_score_adj cannot do it (lowering needs CAP_SYS_RESOURCE, children inherit "
    "the judge's value and /proc is read-only in a run, so nothing can raise theirs back; a run "
    "whose processes are all -1000 cannot be OOM-killed at all); it needs the candidate's "
    "processes (zygote, bash and all it starts, programs a python check starts: the judge's "
    "children, which inherit its cgroup) in a nested memory cgroup below the judge's, joined "
    "through descriptors the verifier opens, on both run paths and cgroup v1 (this machine) and "
    "v2; in a shell check bash is then the OOM killer's pick inside that group",
)
@needs_cgroup
@PATHS
@pytest.mark.parametrize("case", sorted(OOM_CASES))
def test_the_oom_killer_does_not_pick_the_judge(case: str, zygote: bool, tmp_path: Path) -> None:
    files, spec, words = OOM_CASES[case]
    outcome = run(tmp_path, files, spec, zygote)
    _refuted_on_the_answer(outcome, words)


# 3. Honest work and kill(0). The answer is right; each must be verified.
HONEST_PYTHON = {
    "killpg_0": (
        "import os, signal\n"
        "def answer():\n"
        "    signal.signal(signal.SIGUSR1, lambda *a: None)\n"
        "    os.killpg(0, signal.SIGUSR1)  # wake this group's workers\n"
        "    return 42\n"
    ),
    "kill_0": (
        "import os, signal\n"
        "def answer():\n"
        "    signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
        "    os.kill(0, signal.SIGUSR1)\n"
        "    return 42\n"
    ),
    "timeout_in_python": (
        "import subprocess\n"
        "def answer():\n"
        "    run = subprocess.run(['timeout', '1', 'sh', '-c', 'sleep 30 & wait'],\n"
        "                         capture_output=True)\n"
        "    return 42 if run.returncode == 124 else run.returncode\n"
    ),
}
HONEST_SHELL = {
    "timeout_leaves_a_grandchild": "#!/bin/bash\ntimeout 1 bash -c 'sleep 30 & wait'\necho 42\n",
    "trap_kill_0": "#!/bin/bash\ntrap 'kill 0' EXIT\nsleep 30 &\necho 42\n",
}
KILL_0 = pytest.mark.xfail(
    strict=True,
    reason="by design (fence-fix): a shell check's processes share bash's process group, which "
    "holds bash and the judge, so kill(0) stays refused there (the filter cannot read the "
    "caller's group): coreutils timeout in solve.sh cannot end its child's children",
)


@needs_cgroup
@pytest.mark.parametrize("case", sorted(HONEST_PYTHON))
def test_an_honest_candidate_that_signals_its_own_group(case: str, tmp_path: Path) -> None:
    files = {"solution.py": HONEST_PYTHON[case]}
    outcome = run(tmp_path, files, {"kind": "python", "code": PYTHON_CHECK}, True)
    assert outcome.status is V, (outcome.status, outcome.detail)


@needs_cgroup
@pytest.mark.parametrize("case", [pytest.param(c, marks=KILL_0) for c in sorted(HONEST_SHELL)])
def test_an_honest_solve_sh_that_ends_its_group(case: str, tmp_path: Path) -> None:
    files = {"solve.sh": HONEST_SHELL[case]}
    outcome = run(tmp_path, files, {"kind": "shell", "code": SHELL_CHECK, "timeout": 6}, True)
    assert outcome.status is V, (outcome.status, outcome.detail)


# Not the fence's doing, found on the way: Python's process pools and multiprocessing locks
# and queues need POSIX semaphores (sem_open, a file in /dev/shm), which the sandbox user could
# not create (EACCES): a right answer refuted. Fixed (fence-fix): a size-capped tmpfs per run.
HONEST_PROCESS_POOLS = {
    "process_pool": (
        "from concurrent.futures import ProcessPoolExecutor\n"
        "def square(x): return x * x\n"
        "def answer():\n"
        "    with ProcessPoolExecutor(2) as pool:\n"
        "        return sum(pool.map(square, [1, 2, 3, 4])) + 12\n"
    ),
    "multiprocessing_queue": (
        "import multiprocessing\n"
        "def _put(q): q.put(42)\n"
        "def answer():\n"
        "    q = multiprocessing.Queue()\n"
        "    p = multiprocessing.Process(target=_put, args=(q,)); p.start()\n"
        "    x = q.get(); p.join()\n"
        "    return x\n"
    ),
}


@needs_cgroup
@PATHS
@pytest.mark.parametrize("case", sorted(HONEST_PROCESS_POOLS))
def test_an_honest_candidate_with_a_process_pool(case: str, zygote: bool, tmp_path: Path) -> None:
    files = {"solution.py": HONEST_PROCESS_POOLS[case]}
    outcome = run(tmp_path, files, {"kind": "python", "code": PYTHON_CHECK}, zygote)
    assert outcome.status is V, (outcome.status, outcome.detail)


HONEST_STILL_WORKS = {
    "asyncio_subprocess": (
        "import asyncio\n"
        "async def _main():\n"
        "    p = await asyncio.create_subprocess_exec('sleep', '30')\n"
        "    p.terminate(); await p.wait()\n"
        "    p = await asyncio.create_subprocess_exec('echo', '42', stdout=asyncio.subprocess.PIPE)\n"
        "    out, _ = await p.communicate()\n"
        "    return int(out)\n"
        "def answer():\n"
        "    return asyncio.run(_main())\n"
    ),
    "timeout_without_a_grandchild": (
        "import subprocess\n"
        "def answer():\n"
        "    run = subprocess.run(['timeout', '0.5', 'sleep', '30'])\n"
        "    return 42 if run.returncode == 124 else run.returncode\n"
    ),
}


@needs_cgroup
@pytest.mark.parametrize("case", sorted(HONEST_STILL_WORKS))
def test_honest_signalling_still_verified(case: str, tmp_path: Path) -> None:
    files = {"solution.py": HONEST_STILL_WORKS[case]}
    outcome = run(tmp_path, files, {"kind": "python", "code": PYTHON_CHECK}, True)
    assert outcome.status is V, (outcome.status, outcome.detail)


# Attacks the fence (or the sandbox's own filter) stops: each attempt fails, the answer is
# compared and refuted.
HELD = {
    # x32 ABI: the same kill, numbered from 0x40000000 (the sandbox's filter refuses x32).
    "x32_kill": "call_nr(0x40000000 | 62, judge, signal.SIGKILL)",
    "x32_tgkill": "call_nr(0x40000000 | 234, judge, judge, signal.SIGKILL)",
    # kill's pid with its upper 32 bits set: the kernel reads an int, the filter the low word.
    "kill_high_bits": "call_nr(62, (1 << 32) | judge, signal.SIGKILL)",
    # A raw clone(CLONE_PARENT) whose child exits: the judge's new child gets the candidate's
    # own exit signal (SIGCHLD), whatever exit_signal asked for.
    "clone_parent_exit_signal": (
        "pid = libc.syscall(56, 0x8000 | signal.SIGKILL, 0, 0, 0, 0)  # CLONE_PARENT\n"
        "        if pid == 0: os._exit(0)\n"
        "        time.sleep(0.5)"
    ),
    "prlimit_cpu_of_the_judge": (
        "import resource; resource.prlimit(judge, resource.RLIMIT_CPU, (0, 0))"
    ),
    "setpgid_into_the_judges_group": "os.setpgid(0, os.getpgid(judge))",
    "oom_score_adj_of_the_judge": ("open(f'/proc/{judge}/oom_score_adj', 'w').write('1000')"),
}
CALL_NR = """
def call_nr(nr, *args):
    if libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args]) < 0:
        raise OSError(ctypes.get_errno(), str(nr))
"""


@needs_cgroup
@pytest.mark.parametrize("attack", sorted(HELD))
def test_attacks_the_fence_holds(attack: str, tmp_path: Path) -> None:
    files = {"solution.py": CALL_NR + _solution(HELD[attack])}
    outcome = run(tmp_path, files, {"kind": "python", "code": PYTHON_CHECK}, True)
    _refuted_on_the_answer(outcome, "AssertionError")
