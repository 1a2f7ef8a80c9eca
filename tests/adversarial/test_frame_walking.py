"""Class: candidate code searches the interpreter or the judge for the completion token
(issue 7, item 7; issue 15, item 2, the python half).

Eight lines of ``sys._getframe()`` once found the nonce and the done pipe, because the solution
ran in the judge's process. It now runs in its own process, forked before the nonce existed, and
the judge is non-dumpable: frames, the garbage collector and ``/proc/PID/mem`` of every process
it can see hold nothing to find. Each attack returns the wrong answer plus what it found; the
check is refuted and nothing was found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

HELPERS = """
import gc, os, re, sys

TOKEN = re.compile(rb"[0-9a-f]{32} (completed|started)")
found = []

def spray(message):
    found.append(message[:40])
    for fd in range(3, 256):
        try:
            os.write(fd, message)
        except OSError:
            pass
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for fd in range(3, 64):
                try:
                    with open(f"/proc/{pid}/fd/{fd}", "wb") as out:
                        out.write(message)
                except OSError:
                    pass
"""

ATTACKS = {
    "getframe": """
def attack():
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, (bytes, str)) and TOKEN.search(value if isinstance(value, bytes) else value.encode()):
                spray(value if isinstance(value, bytes) else value.encode())
        frame = frame.f_back
""",
    "gc_objects": """
def attack():
    for obj in gc.get_objects():
        for value in (obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()):
            if isinstance(value, bytes) and TOKEN.search(value):
                spray(value)
""",
    "proc_mem_of_every_process": """
def attack():
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            mem = open(f"/proc/{pid}/mem", "rb")
            maps = open(f"/proc/{pid}/maps").read().splitlines()
        except OSError:
            continue
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            try:
                mem.seek(start)
                data = mem.read(min(end - start, 1 << 26))
            except (OSError, OverflowError, ValueError):
                continue
            for match in TOKEN.finditer(data):
                spray(match.group(0).replace(b"started", b"completed") + b"\\n")
""",
    "own_memory": """
def attack():
    maps = open("/proc/self/maps").read().splitlines()
    mem = open("/proc/self/mem", "rb")
    for line in maps:
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        try:
            mem.seek(start)
            data = mem.read(min(end - start, 1 << 26))
        except (OSError, OverflowError, ValueError):
            continue
        for match in TOKEN.finditer(data):
            if b"TOKEN" not in data[match.start() - 40 : match.start()]:
                spray(match.group(0) + b"\\n")
""",
}


def _solution(attack: str, when: str) -> str:
    call = "attack()\n" if when == "import" else ""
    body = "    attack()\n" if when == "call" else ""
    return (
        HELPERS
        + ATTACKS[attack]
        + call
        + f"def answer():\n{body}    return 'FOUND' if found else 'NOTHING'\n"
    )


CHECK = "from solution import answer\nresult = answer()\nassert result == 42, result\n"


@pytest.mark.slow
@pytest.mark.parametrize("when", ["import", "call"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_candidate_finds_no_token_and_is_refuted(
    tmp_path: Path, attack: str, when: str
) -> None:
    files = {"solution.py": _solution(attack, when)}
    outcome = run(tmp_path, files, {"kind": "python", "code": CHECK})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "AssertionError: NOTHING" in outcome.detail


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_solution_run_as_a_subprocess_of_a_hidden_check_finds_nothing(
    tmp_path: Path, attack: str
) -> None:
    """Issue 15: ``python3 solve.py`` started by the hidden check reads the judge's memory."""
    solve = _solution(attack, "import") + "print(answer())\n"
    check = (
        "import subprocess\n"
        "out = subprocess.run(['python3', 'solve.py'], capture_output=True, text=True).stdout\n"
        "assert out.strip() == '42', out\n"
    )
    outcome = run(tmp_path, {"solve.py": solve}, {"kind": "python", "code": check})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "NOTHING" in outcome.detail
    hidden = run(tmp_path / "h", {"solve.py": solve}, {"kind": "hidden_python", "code": check})
    assert hidden.status is Status.REFUTED


def test_the_judge_is_non_dumpable_and_passes_no_descriptor_on(tmp_path: Path) -> None:
    check = """
        import ctypes, os, subprocess, sys
        assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0, "the judge is dumpable"
        child = "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))"
        fds = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout
        assert fds.strip() == "[0, 1, 2, 3]", fds
        from solution import fds as candidate_fds
        assert len(candidate_fds()) == 6, candidate_fds()  # 0-2, listdir, its two pipes
    """
    solution = (
        "import os\ndef fds():\n    return sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
    )
    outcome = run(tmp_path, {"solution.py": solution}, {"kind": "python", "code": check})
    assert outcome.status is Status.VERIFIED, outcome.detail
