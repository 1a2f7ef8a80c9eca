"""Local preflight runs the contract's sandbox stages that need no sealed input, exactly as the
platform would, on the participant's copy of the folder (sealed files absent); it records
nothing, spends no allowance, and says plainly that it is not verification."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay import Config
from assay._errors import InvalidInput
from assay.platform import Platform, preflight
from assay.status import Status
from tests.platform.conftest import PROTOCOL, SCHEMA, artifact, cli, make_problem, rows

SECRET = "SEALED-e1a9"
CONTRACT: dict[str, Any] = {
    "roles": [{"name": "doc", "max_bytes": 1000}],
    "references": [
        {"key": "schema", "path": "reference/schema.json"},
        {"key": "labels", "path": "reference/labels.json", "sealed_until": "2031-01-01T00:00:00Z"},
    ],
    "acceptance": "The document has the right shape and the sealed label.",
    "stages": [
        {
            "name": "shape",
            "type": "sandbox",
            "checks": [{"kind": "json_schema", "artifact": "doc", "schema": "schema"}],
        },
        {
            "name": "labels",
            "type": "sandbox",
            "checks": [{"kind": "json_schema", "artifact": "doc", "schema": "labels"}],
        },
        {"name": "people", "type": "review", "protocol": PROTOCOL},
        {"name": "outside", "type": "external", "mechanism": "party", "party": "lab"},
    ],
}
LABELS = json.dumps({"properties": {"x": {"const": SECRET}}})


def _author_folder(root: Path) -> Path:
    files = {"reference/schema.json": json.dumps(SCHEMA), "reference/labels.json": LABELS}
    return make_problem(root, contract=CONTRACT, files=files)


def _participant_copy(author: Path, root: Path) -> Path:
    copy = root / "mine"
    shutil.copytree(author, copy)
    (copy / "reference" / "labels.json").unlink()
    return copy


def test_runs_only_the_stages_without_sealed_input(tmp_path: Path) -> None:
    folder = _participant_copy(_author_folder(tmp_path / "author"), tmp_path)
    good = artifact(tmp_path, "good.json", '{"x": 1}')
    result = preflight(folder, {"doc": good}, None, Config())
    assert result.verification is False
    assert "not verification" in result.note and "nothing was recorded" in result.note
    assert [(s.name, s.status) for s in result.stages] == [
        ("shape", Status.VERIFIED),
        ("labels", None),
        ("people", None),
        ("outside", None),
    ]
    assert "sealed reference(s) labels" in result.stages[1].detail
    assert "runs only on the platform" in result.stages[2].detail
    bad = artifact(tmp_path, "bad.json", '{"x": "one"}')
    refuted = preflight(folder, {"doc": bad}, None, Config())
    assert [(s.name, s.status) for s in refuted.stages] == [("shape", Status.REFUTED)]
    assert "$.x" in refuted.stages[0].detail


def test_a_sealed_file_in_the_folder_is_still_not_read(tmp_path: Path) -> None:
    folder = _author_folder(tmp_path)
    doc = artifact(tmp_path, "good.json", '{"x": 1}')
    result = preflight(folder, {"doc": doc}, None, Config())
    assert result.stages[1].status is None
    assert SECRET not in json.dumps(result.to_json())


def test_records_nothing_and_spends_no_allowance(
    platform: Platform, config: Config, tmp_path: Path
) -> None:
    author = _author_folder(tmp_path / "author")
    text = (author / "problem.yaml").read_text()
    document = json.loads(text)
    document["policy"] = {"allowance": {"count": 1, "window_hours": 24}}
    (author / "problem.yaml").write_text(json.dumps(document))
    platform.publish(author, "alice")
    before = platform.ledger.find()
    blobs = sorted(p for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    doc = artifact(tmp_path, "good.json", '{"x": 1}')
    mine = _participant_copy(author, tmp_path)
    for _ in range(3):
        local = preflight(mine, {"doc": doc}, None, config)
        assert local.stages[0].status is Status.VERIFIED
    assert platform.ledger.find() == before
    assert sorted(p for p in (tmp_path / "blobs").rglob("*") if p.is_file()) == blobs
    run = platform.submit("demo", {"doc": doc}, None, "bob")  # the one slot is still free
    # the stage ran exactly as on the platform
    assert (run.stages[0].status, run.stages[0].detail) == (Status.VERIFIED, local.stages[0].detail)
    assert run.stages[0].checks[0]["detail"] == local.stages[0].checks[0]["detail"]
    assert rows(platform) > len(before)


def test_refuses_what_it_cannot_check(tmp_path: Path) -> None:
    folder = _author_folder(tmp_path)
    doc = artifact(tmp_path, "good.json", '{"x": 1}')
    with pytest.raises(InvalidInput, match="unknown role 'report'"):
        preflight(folder, {"report": doc}, None, Config())
    record_only = make_problem(tmp_path / "plain")
    with pytest.raises(InvalidInput, match="pins no contract"):
        preflight(record_only, {}, "42", Config())


@pytest.mark.slow
def test_the_cli_says_it_is_not_verification(tmp_path: Path) -> None:
    folder = _participant_copy(_author_folder(tmp_path / "author"), tmp_path)
    good = artifact(tmp_path, "good.json", '{"x": 1}')
    store = f"sqlite:///{tmp_path}/never.db"
    done = cli("preflight", str(folder), "--artifact", f"doc={good}", db=store, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "not verification" in done.stdout
    assert "shape (sandbox): Verified" in done.stdout
    assert "labels (sandbox): not run" in done.stdout
    assert not (tmp_path / "never.db").exists()
