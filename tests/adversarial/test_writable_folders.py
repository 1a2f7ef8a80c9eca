"""Folders a candidate or a checker can write: size-capped, walked without recursion, removed.

An external checker's /output used to be a plain host folder: 300 MiB landed on the host's
disk, and 1,500 nested folders made assay fail with a RecursionError and leave the folder
behind. The sandbox's /tmp is the same kind of folder for checked code. Each case here must end
with the folder capped, the run's result readable (or a clear problem), and nothing left in the
scratch area: no folder and no mount.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.sandbox import Limits, Sandbox, _protocol, run_checker
from assay.sandbox._cgroup import hierarchy
from assay.sandbox._folders import CappedFolder, remove_tree
from assay.sandbox._protocol import OUTPUT_MB
from tests.helpers import I, R, V, run_kind

BIG = """
import json, os
os.makedirs("/output/evidence", exist_ok=True)
written = 0
try:
    with open("/output/evidence/big.bin", "wb") as handle:
        for _ in range(300):
            handle.write(b"x" * (1 << 20))
            written += 1
except OSError:
    os.remove("/output/evidence/big.bin")
with open("/output/result.json", "w") as handle:
    json.dump({"result": "verified", "summary": f"wrote {written} MiB"}, handle)
"""
NESTED = """
import json, os
fd = os.open("/output{under}", os.O_RDONLY)
for _ in range(1500):
    os.mkdir("d", dir_fd=fd)
    inner = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
with open(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as handle:
    handle.write("bottom")
with open("/output/result.json", "w") as handle:
    json.dump({{"result": "verified", "summary": "nested"}}, handle)
"""
MANY = """
import json, os
os.makedirs("/output/evidence")
for i in range(5000):
    try:
        open(f"/output/evidence/f{i}", "w").close()
    except OSError:
        break
with open("/output/result.json", "w") as handle:
    json.dump({"result": "verified", "summary": "many"}, handle)
"""


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every scratch folder of the run under test goes here; it must be empty afterwards."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    left = [name for name in os.listdir(folder) if not name.startswith(".assay-judge-")]
    assert left == [], "scratch left behind"  # (the judge's compiled-helper cache may stay)
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(folder) not in mounts, "a scratch mount left behind"


def _checker(tmp_path: Path, code: str) -> Path:
    path = tmp_path / "check.py"
    path.write_text(code)
    return path


@pytest.mark.slow
def test_300_mib_into_output_is_capped(tmp_path: Path, scratch: Path) -> None:
    run = run_checker(
        Sandbox(backend="bwrap"),
        None,
        _checker(tmp_path, BIG),
        {},
        {},
        Limits(timeout=60, memory_mb=1024),
        1 << 20,
    )
    if os.geteuid() == 0:  # a tmpfs of OUTPUT_MB: the write stops there
        assert run.failure is None, run.failure
        written = int(run.report.summary.split()[1])
        assert written <= OUTPUT_MB
        assert run.report.evidence == ()


@pytest.mark.parametrize("under", ["", "/evidence"])
def test_1500_nested_folders_in_output(tmp_path: Path, scratch: Path, under: str) -> None:
    code = ("import os\nos.makedirs('/output/evidence')\n" if under else "") + NESTED.format(
        under=under
    )
    run = run_checker(
        Sandbox(backend="bwrap"),
        None,
        _checker(tmp_path, code),
        {},
        {},
        Limits(timeout=60),
        1 << 20,
    )
    assert run.failure is None, (run.failure, run.run.output)
    assert run.report.result == "verified"
    assert run.report.evidence == ()  # deeper than the evidence walk goes


def test_many_evidence_files_are_read_within_bounds(tmp_path: Path, scratch: Path) -> None:
    run = run_checker(
        Sandbox(backend="bwrap"),
        None,
        _checker(tmp_path, MANY),
        {},
        {},
        Limits(timeout=60),
        1 << 20,
    )
    assert run.failure is None, run.failure
    assert run.report.result == "verified"
    assert len(run.report.evidence) == 1000  # the first thousand, in order; the rest unread


@pytest.mark.parametrize("rules", [True, False])
def test_filling_tmp_is_a_limit_and_leaves_nothing(scratch: Path, rules: bool) -> None:
    code = "f = open('/tmp/big', 'wb')\nwhile True: f.write(b'x' * (1 << 20))"
    outcome = run_kind("python", code=code, timeout=30, memory_mb=256, limits_are_rules=rules)
    assert outcome.status is not V
    if hierarchy() is not None:  # /tmp's pages are the run's memory: an OOM kill, observed
        assert outcome.status is (R if rules else I) and outcome.evidence["limit"] == "memory"


def test_a_correct_check_using_tmp_passes(scratch: Path) -> None:
    code = "open('/tmp/x', 'w').write('hi')\nassert open('/tmp/x').read() == 'hi'"
    assert run_kind("python", code=code).status is V


@pytest.mark.parametrize("name_length", [1, 200])
def test_remove_tree_takes_any_depth(tmp_path: Path, name_length: int) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    name = "d" * name_length
    for i in range(1500):
        os.mkdir(name, dir_fd=fd)
        if i % 100 == 0:
            os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
            os.symlink("/etc/passwd", "link", dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    remove_tree(root)
    assert not root.exists()
    assert Path("/etc/passwd").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the capped /output is a tmpfs only as root")
def test_what_a_killed_verifier_left_is_removed_by_the_next(tmp_path: Path, scratch: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = scratch / f"assay-checker-{dead.pid}-stale"
    left.mkdir(mode=0o700)  # as mkdtemp makes it: the sweep takes only such folders
    CappedFolder(left / "output", 1 << 20, 100, os.getuid())  # mounted, never closed
    assert str(left / "output") in Path("/proc/self/mountinfo").read_text()
    _protocol._sweep_once.cache_clear()
    run = run_checker(
        Sandbox(backend="bwrap"), None, _checker(tmp_path, MANY), {}, {}, Limits(), 1 << 20
    )
    assert run.failure is None
    assert not left.exists()  # and the scratch fixture checks no mount is left under it
