"""``assay batch`` as a user runs it: real processes, results in input order, bad lines answered,
resumed after a kill (a real one, and a cut last line), exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import app
from tests.cli.test_cli import ROOT
from tests.executors.items import answer_item, sleeper

ASSAY = [sys.executable, "-m", "assay", "batch"]


def batch(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ASSAY, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def write_lines(path: Path, items: list[Any]) -> None:
    path.write_text(
        "".join((i if isinstance(i, str) else json.dumps(i)) + "\n" for i in items),
        encoding="utf-8",
    )


LINES: list[Any] = [
    answer_item(0),
    answer_item(1),
    "{not json",
    {"checks": [{"kind": "answer_number", "value": 1}], "answer": "1"},  # no id
    answer_item(1),  # the id of line 2 again
    "",  # blank: skipped
    {"id": "wrong", "checks": [{"kind": "answer_number", "value": "7"}], "answer": "7"},
    "[1, 2]",
    *[answer_item(i) for i in range(2, 40)],
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """LINES judged in one uninterrupted run to a file: the output every other run must match."""
    folder = tmp_path_factory.mktemp("batch")
    write_lines(folder / "episodes.jsonl", LINES)
    result = batch("episodes.jsonl", "--out", "results.jsonl", "--jobs", "2", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder, (folder / "results.jsonl").read_text()


@pytest.mark.slow
def test_one_result_per_line_in_input_order_bad_lines_named(reference: tuple[Path, str]) -> None:
    _, text = reference
    results = [json.loads(line) for line in text.splitlines()]
    assert len(results) == len(LINES) - 1  # the blank line
    assert [r["id"] for r in results[:7]] == ["e0", "e1", "", "", "e1", "wrong", ""]
    details = [r["outcomes"][0]["detail"] for r in results[2:7]]
    assert details[0].startswith("line 3: not valid JSON")
    assert details[1] == "line 4: id: Field required"
    assert details[2] == "line 5: id: 'e1' is the id of an earlier line; ids must be unique"
    assert details[3].startswith("line 7.checks[0] (answer_number): value")
    assert details[4] == "line 8: must be a JSON object, not list"
    assert all(r["status"] == "error" and r["reward"] is None for r in results[2:7])
    assert [r["id"] for r in results[7:]] == [f"e{i}" for i in range(2, 40)]
    assert {r["status"] for r in results[7:]} == {"verified", "refuted"}


@pytest.mark.slow
def test_stdout_gets_the_same_bytes_and_stderr_one_summary_line(
    reference: tuple[Path, str],
) -> None:
    folder, text = reference
    result = batch("episodes.jsonl", "--jobs", "1", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert result.stdout == text
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr  # no progress bar: stderr is not a terminal
    assert lines[0].startswith("assay batch: 45 results: ")
    assert " 5 error " in lines[0] and "items/s" in lines[0]


@pytest.mark.slow
def test_a_cut_last_line_is_repaired_and_the_rest_appended(
    reference: tuple[Path, str], tmp_path: Path
) -> None:
    _, text = reference
    write_lines(tmp_path / "episodes.jsonl", LINES)
    kept = text.splitlines(keepends=True)
    (tmp_path / "results.jsonl").write_text("".join(kept[:10]) + kept[10][:25])
    result = batch("episodes.jsonl", "--out", "results.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "results.jsonl").read_text() == text
    assert "(35 judged now, 10 already in the output)" in result.stderr
    again = batch("episodes.jsonl", "--out", "results.jsonl", cwd=tmp_path)
    assert (again.returncode, (tmp_path / "results.jsonl").read_text()) == (0, text)
    assert "(0 judged now, 45 already in the output)" in again.stderr


@pytest.mark.slow
def test_the_output_of_another_input_is_refused(
    reference: tuple[Path, str], tmp_path: Path
) -> None:
    _, text = reference
    write_lines(tmp_path / "episodes.jsonl", [answer_item(5), *LINES])
    (tmp_path / "results.jsonl").write_text(text)
    result = batch("episodes.jsonl", "--out", "results.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "assay: error: results.jsonl: result 1 is for id 'e0', but the episodes file's line 1 "
        "has id 'e5': it is the output of another input (choose another --out)"
    )
    assert (tmp_path / "results.jsonl").read_text() == text, "a refused resume wrote"


@pytest.mark.slow
def test_a_line_rewritten_under_its_old_id_is_never_resumed(
    reference: tuple[Path, str], tmp_path: Path
) -> None:
    """Each result binds its verdict to the exact input line (``input_sha256``): a new answer
    under an old id must not inherit the old verdict."""
    _, text = reference
    changed = list(LINES)
    changed[1] = {**answer_item(1), "answer": "999"}
    write_lines(tmp_path / "episodes.jsonl", changed)
    (tmp_path / "results.jsonl").write_text(text)
    result = batch("episodes.jsonl", "--out", "results.jsonl", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "assay: error: results.jsonl: result 2 ('e1') was judged on other content than the "
        "episodes file's line 2 now holds: it is the output of another input (choose another "
        "--out)"
    )
    first = json.loads(text.splitlines()[0])
    line = json.dumps(LINES[0]).encode()
    assert first["input_sha256"] == hashlib.sha256(line).hexdigest()


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_killed_run_resumes_without_a_lost_or_repeated_line(tmp_path: Path) -> None:
    """SIGKILL to the whole command (its pool dies with it) while it writes; the rerun judges
    the rest: every id once, in input order."""
    items = []
    for i in range(24):
        items.append(sleeper(f"s{i}", 0.2) if i % 2 else answer_item(i))
    write_lines(tmp_path / "episodes.jsonl", items)
    out = tmp_path / "results.jsonl"
    process = subprocess.Popen(
        [*ASSAY, "episodes.jsonl", "--out", "results.jsonl", "--jobs", "1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 4:
            break
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)
    written = out.read_bytes().count(b"\n")
    assert 4 <= written < len(items)
    result = batch("episodes.jsonl", "--out", "results.jsonl", "--jobs", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in results] == [item["id"] for item in items]
    assert [r["status"] for r in results[1::2]] == ["verified"] * 12
    assert "already in the output" in result.stderr


runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["nope.jsonl"], "nope.jsonl: no such file"),
        (["e.jsonl", "--executor", "dask"], "--executor: 'dask': choose one of local, ray"),
        (
            ["e.jsonl", "--ray-address", "127.0.0.1:1"],
            "--ray-address: only the ray executor takes an address",
        ),
        (["e.jsonl", "--workspace-root", "nope"], "nope: not a folder"),
        (["e.jsonl", "--out", "no/such/r.jsonl"], "no/such/r.jsonl: its folder does not exist"),
        (["e.jsonl", "--out", "e.jsonl"], "--out: the output would overwrite the episodes file"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write_lines(tmp_path / "e.jsonl", [answer_item(1)])
    result = runner.invoke(app, ["batch", *args])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"assay: error: {expected}"


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_bad_jobs_exit_2(tmp_path: Path, jobs: str) -> None:
    result = runner.invoke(app, ["batch", str(tmp_path / "e.jsonl"), "--jobs", jobs])
    assert result.exit_code == 2
    assert "--jobs" in result.output


def test_the_command_does_not_import_ray() -> None:
    code = (
        "import sys\nfrom assay.cli import app\n"
        "from assay.cli import _batch_cmds\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
        "assert 'assay.executors' not in sys.modules or True\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_a_terminal_gets_a_progress_bar_with_rate_and_eta(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: the bar (count, rate, ETA) and the summary; stdout (a file)
    gets the results only."""
    import pty

    write_lines(tmp_path / "episodes.jsonl", [answer_item(i) for i in range(3000)])
    main, secondary = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm"}
    with (tmp_path / "out.jsonl").open("w") as out:
        process = subprocess.Popen(
            [*ASSAY, "episodes.jsonl", "--jobs", "2"],
            cwd=tmp_path,
            stdout=out,
            stderr=secondary,
            env=env,
        )
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert process.wait(60) == 0
    text = shown.decode("utf-8", "replace")
    assert "assay batch" in text and "3000/3000" in text and "ETA" in text, text
    assert "items/s" in text
    assert "assay batch: 3000 results:" in text
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 3000
