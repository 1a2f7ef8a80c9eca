"""Every problem folder in examples/problems works end to end with the real ``assay`` command, so
the examples the documentation points at can never rot.

For each folder: ``problem publish``, ``problem show``, ``submit`` of every sample submission
(and ``external record`` where its run waits, or the CLI reviewers' ``review seats`` /
``claim`` / ``respond`` where it waits at a review stage), ``preflight`` of every sample, ``show``
and ``ledger verify``. Each sample's ``submission.json`` says what it submits and what every
step must conclude; a sample named ``good*`` must end ``verified``, and one named ``bad*`` must
end ``refuted``. SQLite only: the store is not what is tested here.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from assay.cli._app import app
from assay.platform._folder import load_folder
from tests.platform.conftest import cli

PROBLEMS = Path(__file__).resolve().parents[2] / "examples" / "problems"
FOLDERS = sorted(p.parent for p in PROBLEMS.glob("*/problem.yaml"))
AUTHOR = "author"
PARTICIPANT = "alice"


def _samples(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    found = sorted(p.parent for p in (folder / "submissions").glob("*/submission.json"))
    return [(s, json.loads((s / "submission.json").read_text())) for s in found]


def _authored(folder: Path) -> dict[str, Any]:
    document = yaml.safe_load((folder / "problem.yaml").read_text())
    assert isinstance(document, dict)
    return document


class Store:
    """The ``assay`` command line against one SQLite store in a temporary folder, read as
    ``--json``: in this process (the same Typer app the ``assay`` script runs; a process per
    command costs seconds of imports on a busy machine), and once per test as the real script."""

    def __init__(self, tmp_path: Path) -> None:
        self.db = f"sqlite:///{tmp_path / 'assay.db'}"
        self.cwd = tmp_path
        self.seen: list[str] = []
        """Everything printed to the participant (checked for sealed bytes)."""

    def _invoke(self, args: list[str], user: str) -> tuple[int, str, str]:
        env = {"ASSAY_DB": self.db, "ASSAY_USER": user}
        done = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
        return done.exit_code, done.stdout, done.stderr

    def run(self, *args: str, user: str = PARTICIPANT) -> Any:
        code, out, err = self._invoke([*args, "--json"], user)
        assert code == 0, (args, out, err)
        if user == PARTICIPANT:
            self.seen.append(out)
        return json.loads(out)

    def refused(self, *args: str, user: str) -> str:
        code, out, err = self._invoke(list(args), user)
        assert code == 2, (args, out, err)
        assert err.startswith("assay: error: ") and err.count("\n") == 1, err
        return err

    def script(self, *args: str, user: str = AUTHOR) -> Any:
        """The installed ``assay`` script, in its own process."""
        done = cli(*args, "--json", db=self.db, cwd=self.cwd, user=user)
        assert done.returncode == 0 and not done.stderr, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)


def _submit_args(sample: Path, manifest: dict[str, Any]) -> list[str]:
    args = []
    for role, name in manifest["artifacts"].items():
        args += ["--artifact", f"{role}={sample / name}"]
    if "summary" in manifest:
        args += ["--summary", (sample / manifest["summary"]).read_text(encoding="utf-8")]
    return args


def _review(store: Store, submission: str, review: dict[str, Any]) -> Any:
    """The sample's reviewers, each through the CLI: list the open seats, claim one of the
    named node, answer citing the submission's first material. Returns the run as the last
    response left it."""
    for user, group in review["users"].items():
        store.run("user", "add", user, "--group", group, user=AUTHOR)
    run = None
    for i, response in enumerate(review["responses"]):
        user = response["as"]
        seats = store.run("review", "seats", user=user)["open"]
        seat = next(s["seat"] for s in seats if s["node"] == response["node"])
        if i == 0:  # the submitter never reviews their own work
            store.refused("review", "claim", seat, user=PARTICIPANT)
        claimed = store.run("review", "claim", seat, user=user)
        document = {
            "verdict": response["verdict"],
            "rationale": response["rationale"],
            "citations": [claimed["materials"][0]["uri"]],
            "confidence": 0.8,
            "assistance": [],
        }
        answer_file = Path(store.cwd) / f"response-{submission}-{i}.json"
        answer_file.write_text(json.dumps(document))
        answered = store.run("review", "respond", seat, "--file", str(answer_file), user=user)
        run = answered["run"] or run
    shown = store.run("review", "show", submission)
    assert shown["reviews"][0]["concluded"] is not None, shown
    return run


def _stages(document: dict[str, Any]) -> dict[str, str | None]:
    return {s["name"]: s["status"] for s in document["stages"]}


def _sealed_lines(folder: Path, authored: dict[str, Any]) -> list[str]:
    """Lines of the sealed references' bytes that must never reach a participant."""
    lines = []
    for ref in authored.get("contract", {}).get("references", []):
        if ref.get("sealed_until"):
            text = (folder / ref["path"]).read_text(encoding="utf-8")
            lines += [x.strip() for x in text.splitlines() if len(x.strip()) >= 6]
    return lines


def _withheld_stages(authored: dict[str, Any]) -> set[str]:
    """Stages with a check naming a reference that is still sealed now: a participant must see
    their status, never their checks' details."""
    now = datetime.now(UTC)
    sealed = {
        r["key"]
        for r in authored["contract"].get("references", [])
        if r.get("sealed_until") and now < datetime.fromisoformat(r["sealed_until"])
    }
    return {
        stage["name"]
        for stage in authored["contract"]["stages"]
        for check in stage.get("checks", [])
        if set(map(str, check.values())) & sealed
    }


def _participant_copy(folder: Path, authored: dict[str, Any], dest: Path) -> Path:
    """The folder as a participant has it: the sealed references' files are not there."""
    shutil.copytree(folder, dest)
    for ref in authored.get("contract", {}).get("references", []):
        if ref.get("sealed_until"):
            path = dest / PurePosixPath(ref["path"])
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    return dest


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_example_folder_is_complete(folder: Path) -> None:
    """Fast: the folder loads, and its samples name only declared roles and existing files,
    with a good one and a bad one labelled as the module docstring says."""
    draft = load_folder(folder)
    assert draft.contract is not None
    roles = {r.name for r in draft.contract.roles}
    samples = _samples(folder)
    names = [s.name for s, _ in samples]
    assert any(n.startswith("good") for n in names) and any(n.startswith("bad") for n in names)
    for sample, manifest in samples:
        assert set(manifest["artifacts"]) <= roles, sample
        for name in [*manifest["artifacts"].values(), manifest.get("summary")]:
            assert name is None or (sample / name).is_file(), (sample, name)
        status = manifest["expect"]["status"]
        assert status == ("refuted" if sample.name.startswith("bad") else "verified"), sample


@pytest.mark.slow
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_example_end_to_end(folder: Path, tmp_path: Path) -> None:
    store = Store(tmp_path)
    authored = _authored(folder)
    problem = authored["id"]

    published = store.run("problem", "publish", str(folder), user=AUTHOR)
    assert published["problem"] == problem and published["new"] is True
    assert all(c["passed"] for c in published["conformance"]), published["conformance"]
    assert len(published["conformance"]) == len(authored["contract"].get("conformance", {}))

    shown = store.run("problem", "show", problem)
    assert shown["revision"] == published["revision"]
    assert [s["name"] for s in shown["stages"]] == [
        s["name"] for s in authored["contract"]["stages"]
    ]
    sealed = {r["key"] for r in authored["contract"].get("references", []) if r.get("sealed_until")}
    assert {r["key"] for r in shown["references"] if r["sealed_until"]} == sealed
    assert [s["path"] for s in shown["skills"]] == authored.get("skills", [])

    withheld = _withheld_stages(authored)
    last = None
    for sample, manifest in _samples(folder):
        expect = manifest["expect"]
        run = store.run("submit", problem, *_submit_args(sample, manifest))
        external = manifest.get("external")
        if external is not None:
            assert run["status"] is None, run  # pending: the run waits at the external stage
            assert _stages(run)[external["stage"]] is None
            how = (
                ["--evidence", str(sample / external["evidence"])]
                if "evidence" in external
                else ["--result", external["result"], "--reason", external["reason"]]
            )
            if "result" in external:  # only the named party may record a party stage
                store.refused(
                    "external", "record", run["submission"], "--stage", external["stage"], *how,
                    user=PARTICIPANT,
                )  # fmt: skip
            run = store.run(
                "external", "record", run["submission"], "--stage", external["stage"], *how,
                user=external["as"],
            )  # fmt: skip
        if "review" in manifest:
            assert run["status"] is None, run  # pending: the run waits at the review stage
            run = _review(store, run["submission"], manifest["review"])
        assert run["status"] == expect["status"], (sample.name, run)
        assert _stages(run) == {**_stages(run), **expect["stages"]}, (sample.name, run)
        assert expect.get("detail", "") in run["detail"], (sample.name, run["detail"])
        for stage in run["stages"]:
            if stage["name"] in withheld and stage["status"] is not None:
                assert "withheld until" in stage["detail"], stage

        checked = store.run("preflight", str(folder), *_submit_args(sample, manifest))
        assert checked["verification"] is False and "not verification" in checked["note"]
        assert _stages(checked) == manifest["preflight"], (sample.name, checked)
        if sealed and last is None:  # once: the folder as a participant has it
            copy = _participant_copy(folder, authored, tmp_path / f"copy-{sample.name}")
            again_checked = store.run("preflight", str(copy), *_submit_args(sample, manifest))
            assert _stages(again_checked) == manifest["preflight"]
        last = run["submission"]

    assert last is not None
    view = store.run("show", last)
    assert view["verdict"]["standing"] == run["status"]
    for line in _sealed_lines(folder, authored):
        assert all(line not in out for out in store.seen), f"sealed bytes shown: {line!r}"
    assert store.script("ledger", "verify")["intact"] is True


@pytest.mark.slow
def test_readme_walk_through(tmp_path: Path) -> None:
    """The README's walk-through on sat-small, step by step: a verified submission, a refusal
    over the allowance naming the next slot, a re-check, a revocation and a detected tamper."""
    store = Store(tmp_path)
    folder = PROBLEMS / "sat-small"
    good = ["--artifact", f"assignment={folder / 'submissions/good/assignment.txt'}"]
    bad = ["--artifact", f"assignment={folder / 'submissions/bad/assignment.txt'}"]
    store.run("problem", "publish", str(folder), user=AUTHOR)
    first = store.run("submit", "sat-small", *good)
    assert first["status"] == "verified"
    for _ in range(4):  # the allowance is 5 per 24 h
        assert store.run("submit", "sat-small", *bad)["status"] == "refuted"
    refusal = store.refused("submit", "sat-small", *good, user=PARTICIPANT)
    assert "allowance of 5 submissions per 24 h is used; the next slot frees at" in refusal

    again = store.run("recheck", first["submission"])
    assert again["status"] == "verified" and again["run"] != first["run"]
    assert store.run("show", first["submission"])["verdict"]["text"] == "Verified"

    checker = first["stages"][0]["checkers"][0]
    assert checker.startswith("assay:sat_assignment@")
    revoked = store.run("revoke", "--checker", checker, "--why", "a test", user=AUTHOR)
    assert {first["run"], again["run"]} <= set(revoked["runs"])
    view = store.run("show", first["submission"])
    assert view["verdict"]["standing"] is None and all(r["revoked"] for r in view["runs"])

    assert store.script("ledger", "verify")["intact"] is True
    with sqlite3.connect(tmp_path / "assay.db") as db:
        db.execute("DROP TRIGGER history_no_update")
        db.execute(
            "UPDATE history SET body = replace(body, '\"refuted\"', '\"verified\"') "
            "WHERE kind = 'run.finished' AND body LIKE '%refuted%'"
        )
    done = cli("ledger", "verify", db=store.db, cwd=tmp_path)
    assert done.returncode == 1 and "was edited" in done.stdout, (done.stdout, done.stderr)
