"""Staging and author inputs: no named file may hang assay or exhaust its memory.

A workspace pointing at ``/proc/self`` (files whose size reads 0, endless folders), a file that
grows while it is copied, FIFOs and devices inside a workspace, and ``/dev/zero`` or a FIFO
given as a withheld check, a proof obligation, an answer file or a task file: each ends quickly,
with a bounded copy or a clear error naming the file, never a hang, a RecursionError or memory
exhaustion.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from assay import Config
from assay._files import UnreadableFile, read_regular
from assay.sandbox import StagingTooLarge, snapshot
from assay.sandbox._folders import remove_tree
from tests.helpers import E, I, R, V, run_kind

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def _special(tmp_path: Path) -> dict[str, Path]:
    """/dev/zero itself, a FIFO, and a file over the cap."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2048)
    return {"dev_zero": Path("/dev/zero"), "fifo": fifo, "over_the_cap": big}


SMALL = Config(max_file_bytes=1024)


@pytest.mark.parametrize("which", ["dev_zero", "fifo", "over_the_cap"])
def test_read_regular_refuses_quickly(tmp_path: Path, which: str) -> None:
    path = _special(tmp_path)[which]
    start = time.monotonic()
    with pytest.raises(UnreadableFile) as caught:
        read_regular(path, 1024, "answer file")
    assert time.monotonic() - start < 2
    assert str(path) in str(caught.value) and "answer file" in str(caught.value)


@pytest.mark.parametrize("which", ["dev_zero", "fifo", "over_the_cap"])
def test_hidden_check_file(tmp_path: Path, which: str) -> None:
    path = _special(tmp_path)[which]
    outcome = run_kind("hidden_python", file=str(path), base_dir=tmp_path, config=SMALL)
    assert outcome.status is E and "cannot be read" in outcome.detail


@pytest.mark.parametrize("which", ["dev_zero", "fifo", "over_the_cap"])
@pytest.mark.parametrize("language", ["coq", "agda"])
def test_proof_obligation(tmp_path: Path, which: str, language: str) -> None:
    path = _special(tmp_path)[which]
    extra = {"statement": "1 + 1 = 2", "name": "two"} if language == "coq" else {}
    outcome = run_kind(
        language,
        answer="reflexivity.",
        obligation=str(path),
        base_dir=tmp_path,
        config=SMALL,
        **extra,
    )
    assert outcome.status is E and "cannot be read" in outcome.detail, outcome.detail


def _assay(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_MAX_FILE_BYTES": "1024"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize(
    ("which", "words"),
    [("dev_zero", "character device"), ("fifo", "FIFO"), ("over_the_cap", "larger than 1024")],
)
def test_answer_file_and_task_file(tmp_path: Path, which: str, words: str) -> None:
    path = _special(tmp_path)[which]
    answer = _assay("check", "examples/answer_number.json", "--answer-file", str(path))
    assert answer.returncode == 2 and words in answer.stderr, answer.stderr
    task = _assay("check", str(path))
    assert task.returncode == 2 and words in task.stderr, task.stderr
    assert "Traceback" not in answer.stderr + task.stderr


@pytest.mark.slow
def test_a_workspace_of_proc_self_does_not_hang() -> None:
    start = time.monotonic()
    outcome = run_kind("python", workspace=Path("/proc/self"), code="assert True", timeout=30)
    assert time.monotonic() - start < 60
    assert outcome.status in (V, I, R), outcome.detail  # R: an entry vanished mid-copy


def test_proc_self_staging_is_capped_by_bytes_read(tmp_path: Path) -> None:
    """Files in /proc say size 0; the cap counts what is read, so the copy stays under it."""
    start = time.monotonic()
    try:
        copied = snapshot(Path("/proc/self"), tmp_path / "copy", 1024 * 1024)
    except StagingTooLarge:
        copied = 0
    assert copied <= 1024 * 1024
    assert time.monotonic() - start < 30


def test_a_file_that_grows_while_copied_stops_at_the_cap(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    growing = workspace / "log.txt"
    growing.write_bytes(b"x" * 1024)
    stop = threading.Event()

    def grow() -> None:
        with open(growing, "ab") as handle:
            while not stop.is_set():
                handle.write(b"y" * 65536)
                handle.flush()

    writer = threading.Thread(target=grow)
    writer.start()
    try:
        time.sleep(0.2)
        with pytest.raises(StagingTooLarge):
            snapshot(workspace, tmp_path / "copy", 1024 * 1024)
    finally:
        stop.set()
        writer.join()
    copied = tmp_path / "copy" / "log.txt"
    assert not copied.exists() or copied.stat().st_size <= 1024 * 1024 + 1


def test_special_files_in_a_workspace_are_left_out(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "solution.py").write_text("X = 1\n")
    os.mkfifo(workspace / "pipe")
    (workspace / "zero").symlink_to("/dev/zero")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(workspace / "sock"))
    if os.geteuid() == 0:
        os.mknod(workspace / "devzero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    start = time.monotonic()
    outcome = run_kind(
        "python",
        workspace=workspace,
        code="import os\nprint(sorted(os.listdir('.')))\nfrom solution import X\nassert X == 1",
        timeout=20,
    )
    listener.close()
    assert time.monotonic() - start < 20
    assert outcome.status is V, outcome.detail
    copied = snapshot(workspace, tmp_path / "copy", 1 << 20)
    assert copied == len("X = 1\n")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["solution.py", "zero"]


def test_a_deeply_nested_workspace_is_inconclusive_not_a_crash(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    folder = workspace
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(1500):  # relative mkdirs: the full path is longer than PATH_MAX allows
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    try:
        outcome = run_kind("python", workspace=workspace, code="assert True", timeout=20)
    finally:
        remove_tree(workspace)  # pytest's own cleanup of tmp_path recurses
    assert outcome.status is R and "nested deeper" in outcome.detail, outcome.detail


def test_a_task_file_that_is_a_directory(tmp_path: Path) -> None:
    result = _assay("check", str(tmp_path))
    assert result.returncode == 2 and "directory" in result.stderr
