"""Each run's cgroup: made, bound, read and removed, also when the run is interrupted."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import assay.sandbox._prepared as prepared_module
from assay.sandbox import Limits, Sandbox
from assay.sandbox._cgroup import CgroupError, Hierarchy, RunCgroup, hierarchy
from assay.sandbox._reading import kill_tree
from assay.sandbox._seccomp import SeccompUnsupported, denied_calls, program

pytestmark = pytest.mark.skipif(hierarchy() is None, reason="no writable cgroup here")


def _ours() -> list[Path]:
    where = hierarchy()
    assert where is not None
    folders = {where.memory, where.pids, *([where.cpu] if where.cpu else [])}
    return [p for f in folders for p in f.glob(f"assay-{os.getpid()}-*")]


def _wait_gone(seconds: float = 5) -> list[Path]:
    deadline = time.monotonic() + seconds
    while _ours() and time.monotonic() < deadline:
        time.sleep(0.05)
    return _ours()


def test_a_run_is_in_its_own_cgroup_and_it_is_removed() -> None:
    sandbox = Sandbox(backend="bwrap")
    result = sandbox.run(["/bin/sh", "-c", "cat /sys/fs/cgroup/memory/memory.limit_in_bytes"])
    # no /sys in the sandbox: the candidate can neither read nor write its cgroup
    assert result.exit_code != 0
    assert result.memory_limit in ("cgroup-v1", "cgroup-v2")
    assert _wait_gone() == []


def test_every_process_of_a_run_is_in_its_cgroup() -> None:
    """The first process joins alone (v1: ``0`` into ``tasks``, without the kernel's global
    lock: 10-13 ms cheaper per run); what it becomes and starts follows it."""
    where = hierarchy()
    assert where is not None
    with RunCgroup(where, 64 << 20, 8) as cgroup:
        script = cgroup.join_script()
        if where.version == "cgroup-v1":
            assert "echo 0 > " in script and "/tasks" in script and "cgroup.procs" not in script
        started = subprocess.Popen(
            ["/bin/sh", "-c", f"{script}; sleep 5 & sleep 5 & exec sleep 5"],
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 10
            while len(cgroup._members()) < 3 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert started.pid in cgroup._members()
            assert len(cgroup._members()) == 3
        finally:
            kill_tree(started)
            started.wait(timeout=10)


def test_the_memory_limit_is_the_runs_whole_memory() -> None:
    sandbox = Sandbox(backend="bwrap")
    code = "import os\nfor _ in range(40): os.write(os.memfd_create('x'), b'x' * (4 << 20))"
    result = sandbox.run(["/usr/bin/python3", "-c", code], limits=Limits(memory_mb=100))
    assert result.limit == "memory"
    roomy = sandbox.run(["/usr/bin/python3", "-c", code], limits=Limits(memory_mb=400))
    assert roomy.exit_code == 0 and roomy.limit is None
    assert _wait_gone() == []


def test_an_interrupted_run_is_killed_and_cleaned_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def interrupted(*args: object, **kwargs: object) -> object:
        time.sleep(0.5)
        raise KeyboardInterrupt

    monkeypatch.setattr(prepared_module, "collect", interrupted)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    sandbox = Sandbox(backend="bwrap")
    with pytest.raises(KeyboardInterrupt):
        sandbox.run(["/bin/sh", "-c", "sleep 30 & sleep 30"])
    assert _wait_gone() == []  # removed only once empty: every process of the run was killed
    assert str(tmp_path) not in Path("/proc/self/mountinfo").read_text()
    assert [p for p in tmp_path.iterdir() if not p.name.startswith(".assay-judge-")] == []


def test_a_spawned_process_gets_a_cgroup_removed_after_it_ends() -> None:
    sandbox = Sandbox(backend="bwrap")
    process = sandbox.spawn(["/bin/cat"], limits=Limits(memory_mb=64))
    assert _ours() != []
    kill_tree(process)
    process.wait(timeout=10)
    assert _wait_gone() == []


def test_the_seccomp_program_is_well_formed() -> None:
    code = program("x86_64")
    assert len(code) % 8 == 0 and len(code) // 8 < 4096
    assert program("aarch64") != code
    assert "ptrace" in denied_calls() and "io_uring_setup" in denied_calls()
    with pytest.raises(SeccompUnsupported):
        program("riscv64")


def test_the_filter_leaves_ordinary_work_alone() -> None:
    sandbox = Sandbox(backend="bwrap")
    script = (
        "mkdir /tmp/d && cd /tmp/d && printf 'x' > f && cat f && ls | wc -l && (sleep 0 &) && wait"
    )
    result = sandbox.run(["/bin/bash", "-c", script])
    assert result.exit_code == 0, result.output
    python = sandbox.run(
        ["/usr/bin/python3", "-c", "import subprocess, threading; subprocess.run(['true'])"]
    )
    assert python.exit_code == 0, python.output
    assert subprocess.run(["true"]).returncode == 0


@pytest.mark.parametrize("version", ["cgroup-v1", "cgroup-v2"])
def test_a_cgroup_that_cannot_be_made_is_a_cgroup_error(version: str, tmp_path: Path) -> None:
    gone = tmp_path / "removed-parent"  # its parent was removed (a cleaner, another process)
    where = Hierarchy(version, gone, gone, gone if version == "cgroup-v1" else None)  # type: ignore[arg-type]
    with pytest.raises(CgroupError, match="cannot set up the run's cgroup"):
        RunCgroup(where, 64 * 1024 * 1024, 10)
