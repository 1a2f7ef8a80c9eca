"""Several real processes open one fresh store at the same moment (so they race to migrate it)
and append at once: every entry lands, in one unbroken chain, with no "database is locked"."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from assay.ledger import NewEntry
from tests.ledger.helpers import open_ledger

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from assay import Config
    from assay.ledger import Ledger, NewEntry

    url, blobs, go, name, count = sys.argv[1:6]
    Path(go + "." + name).touch()  # imported: ready
    deadline = time.monotonic() + 120
    while not Path(go).exists():
        if time.monotonic() > deadline:
            sys.exit("never told to go")
        time.sleep(0.002)
    with Ledger.open(Config(db=url, blobs=blobs)) as ledger:
        for i in range(int(count)):
            entries = [NewEntry(kind="w", subject=f"{name}-{i}-{j}", body={"i": i, "j": j})
                       for j in range(1 + i % 3)]
            ledger.append(*entries)
    """
)
PROCESSES = 3
APPENDS = 40


@pytest.mark.slow
def test_processes_opening_and_appending_at_once_all_land(db_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    blobs = str(tmp_path / "blobs")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, db_url, blobs, str(go), f"p{n}", str(APPENDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        deadline = time.monotonic() + 120  # every writer has imported assay: start them at once
        while not all((tmp_path / f"go.p{n}").exists() for n in range(PROCESSES)):
            assert time.monotonic() < deadline, "the writers never got ready"
            time.sleep(0.01)
        go.touch()
        results = [writer.communicate(timeout=240) for writer in writers]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
    for writer, (_, err) in zip(writers, results, strict=True):
        assert writer.returncode == 0, err
        assert "locked" not in err
    expected = {
        f"p{n}-{i}-{j}" for n in range(PROCESSES) for i in range(APPENDS) for j in range(1 + i % 3)
    }
    with open_ledger(db_url, tmp_path) as ledger:
        stored = ledger.find()
        report = ledger.verify()
    assert sorted(e.subject for e in stored) == sorted(expected)
    assert [e.seq for e in stored] == list(range(1, len(expected) + 1))
    assert report.intact and report.rows == len(expected)


KILLED = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from assay import Config
    from assay.ledger import Ledger, NewEntry

    url, blobs, ready = sys.argv[1:4]
    with Ledger.open(Config(db=url, blobs=blobs)) as ledger:
        for i in range(100_000):
            ledger.append(*(NewEntry(kind="w", subject=f"{i}-{j}", body={"j": j})
                            for j in range(50)))
            if i == 2:
                Path(ready).touch()
    """
)


@pytest.mark.slow
def test_a_writer_killed_mid_append_leaves_whole_appends_only(db_url: str, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED, db_url, str(tmp_path / "blobs"), str(ready)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert writer.poll() is None, writer.communicate()[1]
            assert time.monotonic() < deadline, "the writer never appended"
            time.sleep(0.01)
        time.sleep(0.3)
    finally:
        writer.kill()  # SIGKILL, most likely in the middle of an append
        writer.wait(timeout=60)
    with open_ledger(db_url, tmp_path) as ledger:
        report = ledger.verify()
        (last,) = ledger.append(NewEntry(kind="after", subject="restart", body={}))
    assert report.intact, report.problem
    assert report.rows >= 150 and report.rows % 50 == 0  # 50-entry appends, whole or absent
    assert last.seq == report.rows + 1 and last.prev_hash == report.head
