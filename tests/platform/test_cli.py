"""The README's walk through, with the real ``assay`` command in a subprocess: publish (twice:
same ids, nothing new), a verified submission, an over-allowance refusal with its next slot
(exit 2), a re-check, a revocation, and a tamper with raw SQL that ``assay ledger verify`` names
(exit 1). Bad input is exit 2 with one line per defect and never a traceback.

SQLite only: the commands are the same on PostgreSQL (the platform tests run on both), and each
command is a new process, which is slow on a busy machine."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.ledger.helpers import tamper
from tests.platform.conftest import (
    SCHEMA_CONTRACT,
    SCHEMA_FILES,
    cli,
    cli_many,
    make_problem,
)

Done = subprocess.CompletedProcess[str]

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)]


def _one_line(done: Done, code: int = 2) -> str:
    """The command failed with ``code`` and said why in exactly one line, no traceback."""
    assert done.returncode == code, (done.args, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("assay: error: ")
    assert "Traceback" not in done.stderr
    return lines[0]


def test_readme_walk_through(db_url: str, tmp_path: Path) -> None:
    folder = make_problem(
        tmp_path,
        contract=SCHEMA_CONTRACT,
        files=SCHEMA_FILES,
        policy={"allowance": {"count": 2, "window_hours": 24}},
    )
    good = tmp_path / "good.json"
    good.write_text('{"x": 1}')

    def run(*args: str, user: str = "alice") -> Done:
        return cli(*args, db=db_url, cwd=tmp_path, user=user)

    published = run("problem", "publish", str(folder), "--json")
    assert published.returncode == 0, published.stderr
    ids = json.loads(published.stdout)
    assert ids["new"] is True and ids["problem"] == "demo"
    again = run("problem", "publish", str(folder), "--json")
    assert {k: json.loads(again.stdout)[k] for k in ("revision", "contract")} == {
        k: ids[k] for k in ("revision", "contract")
    }
    assert json.loads(again.stdout)["new"] is False

    shown = run("problem", "show", "demo")
    assert "stage 1 shape (sandbox)" in shown.stdout and "role doc (required" in shown.stdout

    submitted = run("submit", "demo", "--artifact", f"doc={good}", "--json", user="bob")
    assert submitted.returncode == 0, submitted.stderr
    first = json.loads(submitted.stdout)
    assert first["status"] == "verified"
    assert [s["name"] for s in first["stages"]] == ["shape"]
    second = run("submit", "demo", "--artifact", f"doc={good}", user="bob")
    assert "Verified" in second.stdout

    before = datetime.now(UTC)
    refused = run("submit", "demo", "--artifact", f"doc={good}", user="bob")
    line = _one_line(refused)
    slot = re.search(r"next slot frees at (\S+Z)", line)
    assert slot is not None, line
    frees = datetime.fromisoformat(slot.group(1))
    assert before + timedelta(hours=23) < frees <= before + timedelta(hours=24)

    rechecked = json.loads(run("recheck", first["submission"], "--json", user="bob").stdout)
    assert rechecked["run"] != first["run"] and rechecked["status"] == "verified"

    checker = first["stages"][0]["checkers"][0]
    revoked = run("revoke", "--checker", checker, "--why", "accepts bad documents", "--json")
    assert revoked.returncode == 0, revoked.stderr
    assert set(json.loads(revoked.stdout)["runs"]) >= {first["run"], rechecked["run"]}
    view = json.loads(run("show", first["submission"], "--json", user="bob").stdout)
    assert all(r["revoked"] for r in view["runs"])
    assert view["verdict"]["text"].startswith("No verdict: every concluded run was revoked")

    intact = run("ledger", "verify")
    assert intact.returncode == 0, intact.stderr
    rows = int(re.search(r"intact: (\d+) rows", intact.stdout).group(1))  # type: ignore[union-attr]
    assert rows > 10

    tamper(db_url, "UPDATE history SET participant = 'mallory' WHERE seq = 8")
    broken = run("ledger", "verify")
    assert broken.returncode == 1
    assert "NOT intact: row 8 was edited" in broken.stdout


def test_bad_input_is_one_line_and_exit_2(db_url: str, tmp_path: Path) -> None:
    broken = make_problem(tmp_path / "broken", problem="broken", contract={"stages": []}, colour=1)

    def run(*args: str, db: str = db_url) -> Done:
        return cli(*args, db=db, cwd=tmp_path, user="bob")

    cases = {
        ("submit", "nope", "--summary", "42"): "no problem 'nope'",
        ("submit", "demo", "--artifact", "nonsense"): "give ROLE=PATH",
        ("show", "s-0000", "--as", "bob smith"): "not a user name",
        ("show", "s-0000"): "no submission 's-0000'",
        ("problem", "publish", str(tmp_path / "nowhere")): "is not a folder",
        ("withdraw", "s-0000", "doc"): "no submission 's-0000'",
        ("nominate", "s-0000", "--json"): "no submission 's-0000'",
        ("external", "record", "s-0", "--stage", "x", "--result", "maybe"): "--result",
        ("revoke", "--checker", "x", "--why", " "): "--why",
    }
    commands = [list(args) for args in cases] + [["problem", "publish", str(broken)]]
    *done, many = cli_many(commands, db=db_url, cwd=tmp_path, user="bob")
    for (args, words), result in zip(cases.items(), done, strict=True):
        assert words in _one_line(result), args
    _one_line(run("ledger", "verify", db="mysql://localhost/x"))

    assert many.returncode == 2
    lines = many.stderr.strip().splitlines()
    assert len(lines) >= 3 and all(x.startswith("assay: error: problem.yaml: ") for x in lines)
    assert "Traceback" not in many.stderr


def test_publish_takes_the_folder_packed_as_an_archive(db_url: str, tmp_path: Path) -> None:
    """The CLI twin of the web upload: a .tar.gz or .zip of the folder gives the same ids as the
    folder; a file that is neither, or a hostile member, is exit 2 in one line, nothing stored."""
    import tarfile
    import zipfile

    folder = make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES)
    packed = tmp_path / "demo.tar.gz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    zipped = tmp_path / "evil.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder)}")
        archive.writestr("../escaped.txt", "outside")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not an archive at all")

    def run(*args: str) -> Done:
        return cli(*args, db=db_url, cwd=tmp_path, user="alice")

    from_archive = run("problem", "publish", str(packed), "--json")
    assert from_archive.returncode == 0, from_archive.stderr
    from_folder = run("problem", "publish", str(folder), "--json")
    first, second = json.loads(from_archive.stdout), json.loads(from_folder.stdout)
    assert first["new"] is True and second["new"] is False
    assert first["revision"] == second["revision"] and first["contract"] == second["contract"]
    assert "archive" in _one_line(run("problem", "publish", str(junk)))
    assert "'../escaped.txt'" in _one_line(run("problem", "publish", str(zipped)))
    assert not (tmp_path.parent / "escaped.txt").exists()
