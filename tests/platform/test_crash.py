"""Crash safety and concurrency with real processes: ``kill -9`` of an ``assay submit`` in the
middle of its run leaves no half-written run; the next command records that run as ``error``
("interrupted"), the submission is still there, and it can be re-checked. Two ``assay submit``
processes against one SQLite file both land.

SQLite only: the file store is where "database is locked" and a killed writer can bite; the
platform's transactions are the same on PostgreSQL (tested in the other files)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from assay import Config
from assay.ledger import Ledger
from assay.platform import Platform
from assay.status import Status
from tests.platform.conftest import ANSWER_CONTRACT, ASSAY, artifact, cli, make_problem

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)]

SLOW_CONTRACT = {
    "roles": [{"name": "solution.py", "max_bytes": 10_000}],
    "acceptance": "add(a, b) returns a + b (checked slowly).",
    "stages": [
        {
            "name": "slow",
            "type": "sandbox",
            "checks": [
                {
                    "kind": "python",
                    "timeout": 60,
                    "code": "import time\ntime.sleep(4)\nfrom solution import add\n"
                    "assert add(2, 3) == 5\n",
                }
            ],
        }
    ],
}


def _env(db_url: str, user: str) -> dict[str, str]:
    return {**os.environ, "ASSAY_DB": db_url, "ASSAY_USER": user}


def test_kill_9_mid_run_is_recorded_as_interrupted(db_url: str, tmp_path: Path) -> None:
    config = Config(db=db_url)
    with Platform.open(config) as platform:
        platform.publish(make_problem(tmp_path, contract=SLOW_CONTRACT), "alice")
    solution = artifact(tmp_path, "solution.py", "def add(a, b):\n    return a + b\n")
    process = subprocess.Popen(
        [str(ASSAY), "submit", "demo", "--artifact", f"solution.py={solution}", "--json"],
        env=_env(db_url, "bob"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        with Ledger.open(config) as ledger:
            deadline = time.monotonic() + 90
            while not ledger.find(kind="run.started") and time.monotonic() < deadline:
                assert process.poll() is None, process.communicate()
                time.sleep(0.05)
            (started,) = ledger.find(kind="run.started")
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            assert not ledger.find(kind=("run.finished", "stage.concluded"))  # nothing half-written
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # its sandbox, if it outlived it
            os.killpg(process.pid, signal.SIGKILL)
    submission = started.subject

    shown = cli("show", submission, "--json", db=db_url, cwd=tmp_path, user="bob")
    assert shown.returncode == 0, shown.stderr
    view = json.loads(shown.stdout)
    (run,) = view["runs"]
    assert run["run"] == started.body["run"]
    assert run["status"] == "error"
    assert "interrupted" in run["detail"]
    assert view["artifacts"][0]["role"] == "solution.py" and not view["artifacts"][0]["withdrawn"]

    with Platform.open(config) as platform:
        assert platform.sweep() == []  # recorded once, not again
        again = platform.recheck(submission, "bob")
        assert again.status is Status.VERIFIED, again.detail
        assert platform.show(submission, "bob").verdict.text == "Verified"
        assert platform.ledger.verify().intact


def test_a_live_run_is_not_declared_interrupted(db_url: str, tmp_path: Path) -> None:
    config = Config(db=db_url)
    with Platform.open(config) as platform:
        platform.publish(make_problem(tmp_path, contract=SLOW_CONTRACT), "alice")
    solution = artifact(tmp_path, "solution.py", "def add(a, b):\n    return a + b\n")
    process = subprocess.Popen(
        [str(ASSAY), "submit", "demo", "--artifact", f"solution.py={solution}", "--json"],
        env=_env(db_url, "bob"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with Ledger.open(config) as ledger:
            deadline = time.monotonic() + 90
            while not ledger.find(kind="run.started") and time.monotonic() < deadline:
                time.sleep(0.05)
        with Platform.open(config) as platform:  # sweeps while the submit is still running
            assert platform.ledger.find(kind="run.started")
            assert not platform.ledger.find(kind="run.finished")
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert json.loads(out)["status"] == "verified"


def test_concurrent_submits_both_land(db_url: str, tmp_path: Path) -> None:
    config = Config(db=db_url)
    with Platform.open(config) as platform:
        platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT), "alice")
    processes = [
        subprocess.Popen(
            [str(ASSAY), "submit", "demo", "--summary", "42", "--json"],
            env=_env(db_url, user),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for user in ("bob", "carol", "dave")
    ]
    results = [p.communicate(timeout=180) for p in processes]
    for process, (out, err) in zip(processes, results, strict=True):
        assert process.returncode == 0, err
        assert "locked" not in err
        assert json.loads(out)["status"] == "verified"
    submissions = {json.loads(out)["submission"] for out, _ in results}
    assert len(submissions) == 3
    with Platform.open(config) as platform:
        made = platform.ledger.find(kind="submission.made")
        assert {e.subject for e in made} == submissions
        assert len(platform.ledger.find(kind="run.finished")) == 3
        assert platform.ledger.verify().intact
