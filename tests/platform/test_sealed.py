"""Sealed references: key, size, sha256 and unseal date are public; the bytes reach only sandbox
checks and the problem's managers until the unseal date. No view, CLI output or error message a
participant gets holds them (each test greps for the sealed bytes); managers see the details;
after the unseal date (or an earlier label release) participants do too; a score release never
reveals them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.status import Status
from tests.platform.conftest import Clock, artifact, cli, cli_many, dump, make_problem

SECRET = "LABEL-7f3a9c-SEALED"
"""The sealed bytes' tell: a check's failure message quotes it, so a leak would show it."""
SEALED_SCHEMA = json.dumps(
    {
        "type": "object",
        "required": ["answer"],
        "properties": {"answer": {"const": SECRET}},
    }
)
UNSEAL = "2099-06-01T00:00:00Z"
"""Far ahead, so the CLI test (on the wall clock) stays sealed for decades."""


def _contract(**sealed: Any) -> dict[str, Any]:
    return {
        "roles": [{"name": "doc", "max_bytes": 1000}],
        "references": [
            {"key": "labels", "path": "reference/labels.json", "sealed_until": UNSEAL, **sealed}
        ],
        "acceptance": "The document names the sealed label.",
        "stages": [
            {
                "name": "labels",
                "type": "sandbox",
                "checks": [{"kind": "json_schema", "artifact": "doc", "schema": "labels"}],
            }
        ],
    }


def _publish(platform: Platform, tmp_path: Path, policy: dict[str, Any] | None = None) -> None:
    folder = make_problem(
        tmp_path,
        contract=_contract(),
        files={"reference/labels.json": SEALED_SCHEMA},
        policy=policy,
    )
    platform.publish(folder, "alice")


def _wrong(tmp_path: Path) -> dict[str, Path]:
    return {"doc": artifact(tmp_path, "wrong.json", '{"answer": "guess"}')}


def _right(tmp_path: Path) -> dict[str, Path]:
    return {"doc": artifact(tmp_path, "right.json", json.dumps({"answer": SECRET}))}


def _participant_sees(platform: Platform, submission: str) -> str:
    return dump(platform.show(submission, "bob"))


def test_participants_never_see_sealed_bytes(platform: Platform, tmp_path: Path) -> None:
    _publish(platform, tmp_path)
    problem = dump(platform.problem("demo"))
    assert SECRET not in problem
    (reference,) = platform.problem("demo").references
    assert reference.key == "labels"
    assert reference.size == len(SEALED_SCHEMA)
    assert reference.sha256 == hashlib.sha256(SEALED_SCHEMA.encode()).hexdigest()
    assert reference.sealed_until == datetime.fromisoformat(UNSEAL)

    wrong = platform.submit("demo", _wrong(tmp_path), None, "bob")
    assert wrong.status is Status.REFUTED  # the status is a participant's; the why is sealed
    assert SECRET not in dump(wrong)
    assert "withheld until 2099-06-01T00:00:00Z" in wrong.detail
    check = wrong.stages[0].checks[0]
    assert check["evidence"] is None and "withheld" in check["detail"]
    assert SECRET not in _participant_sees(platform, wrong.submission)
    assert SECRET not in dump(platform.recheck(wrong.submission, "bob"))

    right = platform.submit("demo", _right(tmp_path), None, "carol")
    assert right.status is Status.VERIFIED
    # carol's own artifact holds the label; nothing else she is shown does
    assert SECRET not in dump(right)


def test_managers_see_the_details(platform: Platform, tmp_path: Path) -> None:
    _publish(platform, tmp_path)
    wrong = platform.submit("demo", _wrong(tmp_path), None, "bob")
    seen = platform.show(wrong.submission, "alice")
    assert SECRET in dump(seen)
    assert "withheld" not in seen.runs[0].detail


def test_details_show_after_the_unseal_date(
    platform: Platform, clock: Clock, tmp_path: Path
) -> None:
    _publish(platform, tmp_path)
    wrong = platform.submit("demo", _wrong(tmp_path), None, "bob")
    clock.now = datetime.fromisoformat(UNSEAL)
    seen = platform.show(wrong.submission, "bob")
    assert SECRET in dump(seen)
    assert seen.runs[0].stages[0].checks[0]["evidence"] is not None


def test_label_release_unseals_earlier(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    _publish(platform, tmp_path, {"release": {"label_release": "2030-03-01T00:00:00Z"}})
    wrong = platform.submit("demo", _wrong(tmp_path), None, "bob")
    assert SECRET not in _participant_sees(platform, wrong.submission)
    assert platform.problem("demo").references[0].sealed_until == datetime.fromisoformat(
        "2030-03-01T00:00:00Z"
    )
    clock.now = datetime.fromisoformat("2030-03-01T00:00:00Z")
    assert SECRET in _participant_sees(platform, wrong.submission)


def test_score_release_does_not_unseal(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    _publish(
        platform,
        tmp_path,
        {"release": {"results": "held", "score_release": "2030-02-01T00:00:00Z"}},
    )
    wrong = platform.submit("demo", _wrong(tmp_path), None, "bob")
    assert wrong.status is None and SECRET not in dump(wrong)
    clock.now = datetime.fromisoformat("2030-02-01T00:00:00Z")
    seen = platform.show(wrong.submission, "bob")
    assert seen.verdict.standing is Status.REFUTED  # scores are out
    assert SECRET not in dump(seen)  # labels are not
    clock.now = datetime.fromisoformat(UNSEAL)
    assert SECRET in _participant_sees(platform, wrong.submission)


def test_errors_shown_to_participants_hold_no_sealed_bytes(
    platform: Platform, tmp_path: Path
) -> None:
    _publish(platform, tmp_path)
    wrong = platform.submit("demo", _wrong(tmp_path), None, "bob")
    attempts: list[Callable[[], object]] = [
        lambda: platform.submit("demo", {"labels": _wrong(tmp_path)["doc"]}, None, "bob"),
        lambda: platform.submit("demo", {}, SECRET[:5], "bob"),
        lambda: platform.withdraw(wrong.submission, "labels", "bob"),
        lambda: platform.record_external(wrong.submission, "labels", "bob", evidence=b"{}"),
        lambda: platform.show(wrong.submission, "mallory name"),
    ]
    for attempt in attempts:
        with pytest.raises(InvalidInput) as caught:
            attempt()
        assert SECRET not in str(caught.value)


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # CLI output, not the database
def test_cli_output_holds_no_sealed_bytes(db_url: str, tmp_path: Path) -> None:
    folder = make_problem(
        tmp_path, contract=_contract(), files={"reference/labels.json": SEALED_SCHEMA}
    )
    wrong = _wrong(tmp_path)["doc"]
    assert cli("problem", "publish", str(folder), db=db_url, cwd=tmp_path).returncode == 0
    outputs = []
    submitted = cli(
        "submit",
        "demo",
        "--artifact",
        f"doc={wrong}",
        "--json",
        db=db_url,
        cwd=tmp_path,
        user="bob",
    )
    assert submitted.returncode == 0, submitted.stderr
    submission = json.loads(submitted.stdout)["submission"]
    outputs.append(submitted)
    commands = [
        ["show", submission],
        ["show", submission, "--json"],
        ["problem", "show", "demo", "--json"],
        ["submit", "demo", "--artifact", f"labels={wrong}"],
    ]
    outputs += cli_many(commands, db=db_url, cwd=tmp_path, user="bob")
    for done in outputs:
        assert "Traceback" not in done.stderr
        assert SECRET not in done.stdout + done.stderr, done.args
    manager = cli("show", submission, "--json", db=db_url, cwd=tmp_path, user="alice")
    assert SECRET in manager.stdout
