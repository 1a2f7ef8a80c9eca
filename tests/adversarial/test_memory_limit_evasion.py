"""Memory-limit evasion: memory the old per-process RLIMIT_AS never counted must still be bound.

Each solution returns the right value (42) after spending about 480 MiB in a way RLIMIT_AS does
not see (memfds, MAP_NORESERVE pages touched later, many threads, several processes each under
the per-process limit, the scratch /tmp). With ``memory_mb: 200`` the run's cgroup must stop it:
the parent reads the cgroup's OOM-kill counter, so the outcome names the memory limit (refuted
under ``limits_are_rules``, inconclusive otherwise) and is never verified; the host never runs
out of memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.sandbox import Limits, Sandbox, runner_control
from assay.sandbox._cgroup import hierarchy
from tests.helpers import I, R, V, run_kind

pytestmark = pytest.mark.skipif(
    hierarchy() is None, reason="no writable cgroup here (run as root where cgroups are mounted)"
)

CHECK = "from solution import answer\nassert answer() == 42"
MIB = 1 << 20

EVASIONS = {
    "memfd": """
import os
def answer():
    fds = []
    for _ in range(48):
        fd = os.memfd_create("x")
        os.write(fd, b"x" * (10 << 20))
        fds.append(fd)
    return 42
""",
    "map_noreserve_then_touch": """
import mmap
def answer():
    size = 480 << 20
    area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000)
    for offset in range(0, size, 4096):
        area[offset] = 1
    return 42
""",
    "many_threads": """
import threading
kept = []
def grab():
    kept.append(bytearray(b"x" * (10 << 20)))
def answer():
    threads = [threading.Thread(target=grab) for _ in range(48)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert len(kept) == 48
    return 42
""",
    "processes_each_under_the_old_limit": """
import os
def answer():
    children = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            block = bytearray(b"x" * (120 << 20))
            import time; time.sleep(1)
            os._exit(0)
        children.append(pid)
    assert all(os.waitpid(pid, 0)[1] == 0 for pid in children)
    return 42
""",
    "shared_anonymous_mapping": """
import mmap
def answer():
    area = mmap.mmap(-1, 480 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    for offset in range(0, 480 << 20, 4096):
        area[offset] = 1
    return 42
""",
}


SURVIVES_ITS_CHILDREN = {"processes_each_under_the_old_limit"}
"""Evasions where the memory is used by children the candidate's own process outlives."""


@pytest.mark.parametrize("rules", [True, False], ids=["limits_are_rules", "default"])
@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_memory_evasion_is_a_memory_limit(name: str, rules: bool, tmp_path: Path) -> None:
    (tmp_path / "solution.py").write_text(EVASIONS[name])
    outcome = run_kind(
        "python",
        workspace=tmp_path,
        code=CHECK,
        memory_mb=200,
        timeout=60,
        limits_are_rules=rules,
    )
    assert outcome.status is not V, outcome.detail
    if name in SURVIVES_ITS_CHILDREN:
        # The candidate's own process stays alive and reports the failure its killed children
        # caused; the judge then saw the check fail on what a live candidate gave, and no limit
        # hit elsewhere in the sandbox may turn that into a masked result (a sacrificial child).
        assert outcome.status is R, outcome.detail
        return
    assert outcome.status is (R if rules else I), outcome.detail
    assert outcome.evidence["limit"] == "memory", outcome.evidence
    assert outcome.evidence["memory_limit"] in ("cgroup-v1", "cgroup-v2")
    assert "memory limit (200 MiB)" in outcome.detail


def test_the_same_solution_passes_with_room(tmp_path: Path) -> None:
    """Control: the evasions are correct work; only the limit stops them."""
    (tmp_path / "solution.py").write_text(EVASIONS["memfd"])
    outcome = run_kind("python", workspace=tmp_path, code=CHECK, memory_mb=1024, timeout=60)
    assert outcome.status is V, outcome.detail


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("dev_shm", "open('/dev/shm/big', 'wb').write(b'x' * (300 << 20))"),
        ("tmp_fill", "f = open('/tmp/big', 'wb')\nwhile True: f.write(b'x' * (1 << 20))"),
        ("tmp_many_files", "i = 0\nwhile True:\n    open(f'/tmp/f{i}', 'w').close(); i += 1"),
    ],
)
@pytest.mark.parametrize("rules", [True, False], ids=["limits_are_rules", "default"])
def test_filling_shared_memory_or_tmp_is_never_verified(name: str, code: str, rules: bool) -> None:
    outcome = run_kind(
        "python", code=code + "\nassert False", memory_mb=200, timeout=60, limits_are_rules=rules
    )
    assert outcome.status is not V, outcome.detail
    # /tmp's and /dev/shm's pages are the run's memory: filling one is the memory limit, observed
    assert outcome.evidence.get("limit") == "memory", outcome.detail
    assert outcome.status is (R if rules else I)


def test_without_a_cgroup_the_result_says_rlimit(tmp_path: Path) -> None:
    sandbox = Sandbox(backend="bwrap", cgroups=False)
    control, nonce = runner_control("python", "x = bytearray(300 << 20)", "<t>", "/tmp")
    result = sandbox.run(
        sandbox.python_argv(), control=control, nonce=nonce, limits=Limits(memory_mb=200)
    )
    assert result.memory_limit == "rlimit-as"
    assert not result.completed
    assert result.limit is None  # a MemoryError under RLIMIT_AS is not something the parent saw


def test_tmpfs_pages_count_against_memory() -> None:
    """/tmp's pages are charged to the run: the cgroup, not the tmpfs size, stops the writer."""
    sandbox = Sandbox(backend="bwrap")
    code = "f = open('/tmp/big', 'wb')\nfor _ in range(100): f.write(b'x' * (1 << 20))"
    control, nonce = runner_control("python", code, "<t>", "/tmp")
    result = sandbox.run(
        sandbox.python_argv(),
        control=control,
        nonce=nonce,
        limits=Limits(memory_mb=64, scratch_mb=512, timeout=60),
    )
    assert not result.completed
    assert result.limit == "memory", result
