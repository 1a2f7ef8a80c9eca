"""What the candidate or a checker wrote can neither crash a report nor drive the terminal.

Issue 17, item 2: a workspace JSON file holding a lone surrogate made ``assay check`` fail with
an internal error and lose every report on the command line. Outcomes are now cleaned when they
are built (a lone surrogate becomes U+FFFD; evidence becomes plain JSON), printed JSON escapes
what a terminal would act on, each task is caught on its own, and ``--human`` strips escape
sequences and control characters from details.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import Outcome, combine

GOOD = {"checks": [{"kind": "answer_number", "value": 1}], "answer": "1"}


def _assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, cwd=cwd, timeout=60
    )


def _write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data))  # ensure_ascii: "\ud800" is written as its JSON escape


def _reports(stdout: bytes) -> list[dict[str, Any]]:
    lines = stdout.decode("utf-8").splitlines()  # strict: the output is valid UTF-8
    return [json.loads(line) for line in lines]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "v.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (s TEXT)")
        connection.execute("INSERT INTO t VALUES ('a')")
    return path


SURROGATE_TASKS: list[dict[str, Any]] = [
    # a workspace file (the example), as the whole document and as a key
    {"checks": [{"kind": "file_json", "path": "f.json", "value": {"ok": "x"}}]},
    {"checks": [{"kind": "file_json", "path": "k.json", "value": {"ok": 1}}]},
    {"checks": [{"kind": "file_contains", "path": "f.json", "value": "zzz"}]},
    # the answer, in several kinds
    {"checks": [{"kind": "answer_equals", "value": "x"}], "answer": "\ud800"},
    {"checks": [{"kind": "answer_one_of", "values": ["x"]}], "answer": "a\udfff b"},
    {"checks": [{"kind": "answer_number", "value": 1}], "answer": "\ud800 2"},
    {"checks": [{"kind": "web_receipt"}], "answer": "ftp://x.org/\ud800"},
    {
        "checks": [{"kind": "answer_key", "key": {"t": 1}}],
        "answer": '{"outputs": {"\\ud800": 1}}',
    },
    # SQL: the agent's value and the agent's query
    {
        "checks": [
            {
                "kind": "sql_query",
                "database": "v.sqlite",
                "query": "SELECT s FROM t",
                "compare": "answer_value",
            }
        ],
        "answer": "\ud800",
    },
    {
        "checks": [
            {
                "kind": "sql_query",
                "database": "v.sqlite",
                "query": "SELECT s FROM t",
                "compare": "answer_query",
            }
        ],
        "answer": "SELECT '\ud800'",
    },
]


@pytest.mark.parametrize("task", SURROGATE_TASKS)
def test_a_lone_surrogate_never_costs_a_report(
    tmp_path: Path, db: Path, task: dict[str, Any]
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.json").write_text('{"ok": "\\ud800"}')
    (tmp_path / "ws" / "k.json").write_text('{"\\udc80": 1}')
    _write(tmp_path / "a.json", {**task, "workspace": "ws"})
    _write(tmp_path / "b.json", GOOD)
    result = _assay("check", "a.json", "b.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    first, second = _reports(result.stdout)
    assert first["status"] == "refuted", first
    assert second["status"] == "verified"
    human = _assay("check", "--human", "a.json", "b.json", cwd=tmp_path)
    assert human.returncode == 0, human.stderr
    human.stdout.decode("utf-8")


def test_a_task_file_name_that_is_not_utf8_does_not_lose_the_others(tmp_path: Path) -> None:
    odd = os.fsdecode(b"\xff\xfe.json")
    _write(tmp_path / odd, GOOD)
    _write(tmp_path / "b.json", GOOD)
    result = _assay("check", odd, "b.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [r["status"] for r in _reports(result.stdout)] == ["verified", "verified"]
    human = _assay("check", "--human", odd, "b.json", cwd=tmp_path)
    assert human.returncode == 0, human.stderr


@pytest.mark.parametrize(
    "evidence",
    [
        {"\ud800": "\udfff"},
        {"rows": [("\ud800", b"\x00\xff", float("nan"))]},
        {"deep": [[[[["\ud800"]]]]], "n": float("inf")},
        {"key": {1: object()}},
    ],
)
def test_any_checker_summary_or_evidence_encodes(evidence: dict[str, Any]) -> None:
    report = combine([Outcome.refuted("summary \ud800 from a checker", evidence)])
    text = json.dumps(report.to_json(), ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    assert "\ufffd" in text or "object" in text


HOSTILE = [
    "\x1b[2J\x1b[31mVERIFIED\x1b[0m",
    "\x1b]0;pwned\x07title",
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "wrong\rVerified    ",
    "abc\b\b\bVerified",
    "\u202everified\u202c",
    "\x9b31mc1-csi",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_human_output_strips_terminal_controls(tmp_path: Path, db: Path, text: str) -> None:
    tasks = {
        # a submission's task ids are listed in the detail as written
        "key.json": {
            "checks": [{"kind": "answer_key", "key": {"t": 1}}],
            "answer": json.dumps({"outputs": {"t": 1, text: 2}}),
        },
        # sqlite quotes the agent's query in its error message
        "sql.json": {
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "v.sqlite",
                    "query": "SELECT s FROM t",
                    "compare": "answer_query",
                }
            ],
            "answer": f"SELECT {text}",
        },
    }
    for name, task in tasks.items():
        _write(tmp_path / name, task)
    human = _assay("check", "--human", *tasks, cwd=tmp_path)
    assert human.returncode == 0, human.stderr
    out = human.stdout.decode("utf-8")
    assert "Did not satisfy the verifier" in out
    for control in ("\x1b", "\r", "\b", "\x07", "\x9b", "\u202e"):
        assert control not in out, (control, out)
    plain = _assay("check", *tasks, cwd=tmp_path)
    for report in _reports(plain.stdout):
        assert report["status"] == "refuted"
    for raw in (b"\x1b", b"\r", b"\x08", b"\xc2\x9b", "\u202e".encode()):
        assert raw not in plain.stdout
