"""Publishing: contracts and revisions are content-addressed; publishing an unchanged folder again
stores nothing and prints the same ids; a changed reference or stage is a new revision; earlier
submissions keep the revision they were made under; a record-only revision never verifies."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay._signed import canonical_digest
from assay.platform import Platform
from assay.status import Status
from tests.platform.conftest import (
    ANSWER_CONTRACT,
    PROTOCOL,
    SCHEMA,
    SCHEMA_CONTRACT,
    SCHEMA_FILES,
    artifact,
    make_problem,
    rows,
    write,
)


def test_ids_are_the_sha256_of_the_canonical_documents(platform: Platform, tmp_path: Path) -> None:
    published = platform.publish(
        make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES), "alice"
    )
    assert published.new
    contract = platform.ledger.find(kind="contract.published", subject=published.contract)
    revision = platform.ledger.find(kind="revision.published", subject=published.revision)
    assert len(contract) == 1 and len(revision) == 1
    assert published.contract == canonical_digest(contract[0].body)
    assert published.revision == canonical_digest(revision[0].body)
    # the revision binds the reference to its exact bytes, stored by their hash
    data = json.dumps(SCHEMA).encode()
    binding = revision[0].body["references"]["schema"]
    assert binding["sha256"] == hashlib.sha256(data).hexdigest()
    assert binding["size"] == len(data)
    assert platform.ledger.blobs.read(binding["sha256"]) == data


def test_the_same_folder_elsewhere_has_the_same_ids(platform: Platform, tmp_path: Path) -> None:
    folder = make_problem(tmp_path / "one", contract=SCHEMA_CONTRACT, files=SCHEMA_FILES)
    copy_ = tmp_path / "two" / "elsewhere"
    shutil.copytree(folder, copy_)
    first = platform.publish(folder, "alice")
    second = platform.publish(copy_, "alice")
    assert (second.problem, second.revision, second.contract) == (
        first.problem,
        first.revision,
        first.contract,
    )


def test_republishing_unchanged_stores_nothing_new(platform: Platform, tmp_path: Path) -> None:
    folder = make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES)
    first = platform.publish(folder, "alice")
    before = rows(platform)
    blobs = sorted(p.name for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    again = platform.publish(folder, "alice")
    assert again.new is False
    assert (again.revision, again.contract) == (first.revision, first.contract)
    assert rows(platform) == before
    assert sorted(p.name for p in (tmp_path / "blobs").rglob("*") if p.is_file()) == blobs


def test_a_changed_reference_is_a_new_revision_of_the_same_contract(
    platform: Platform, tmp_path: Path
) -> None:
    folder = make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES)
    first = platform.publish(folder, "alice")
    write(folder, "reference/schema.json", json.dumps({**SCHEMA, "required": ["x", "y"]}))
    second = platform.publish(folder, "alice")
    assert second.new
    assert second.revision != first.revision
    assert second.contract == first.contract  # the process is the same; its data changed
    assert platform.problem("demo").revision == second.revision
    assert platform.problem("demo").revisions == 2


def test_a_changed_stage_is_a_new_contract_and_revision(platform: Platform, tmp_path: Path) -> None:
    folder = make_problem(tmp_path, contract=ANSWER_CONTRACT)
    first = platform.publish(folder, "alice")
    changed = copy.deepcopy(ANSWER_CONTRACT)
    changed["stages"][0]["checks"][0]["value"] = "43"
    second = platform.publish(make_problem(tmp_path, contract=changed), "alice")
    assert second.new
    assert second.contract != first.contract
    assert second.revision != first.revision


def test_earlier_submissions_keep_their_revision(platform: Platform, tmp_path: Path) -> None:
    folder = make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES)
    first = platform.publish(folder, "alice")
    doc = artifact(tmp_path, "doc.json", '{"x": 1}')
    early = platform.submit("demo", {"doc": doc}, None, "bob")
    assert early.status is Status.VERIFIED
    # the new revision demands "y": the early submission would fail it
    write(folder, "reference/schema.json", json.dumps({**SCHEMA, "required": ["x", "y"]}))
    second = platform.publish(folder, "alice")
    late = platform.submit("demo", {"doc": doc}, None, "bob")
    assert late.status is Status.REFUTED
    assert platform.show(early.submission, "bob").revision == first.revision
    assert platform.show(late.submission, "bob").revision == second.revision
    # a re-check judges the early submission under its own revision, not the current one
    again = platform.recheck(early.submission, "bob")
    assert again.status is Status.VERIFIED


def test_a_record_only_revision_never_verifies(platform: Platform, tmp_path: Path) -> None:
    published = platform.publish(make_problem(tmp_path), "alice")
    assert published.contract is None
    run = platform.submit("demo", {}, "42", "bob")
    assert run.status is Status.INCONCLUSIVE
    assert "never called verified" in run.detail
    view = platform.show(run.submission, "bob")
    assert view.verdict.standing is not Status.VERIFIED
    assert platform.recheck(run.submission, "bob").status is Status.INCONCLUSIVE
    assert platform.problem("demo").contract is None


def test_only_a_manager_publishes_a_new_revision(platform: Platform, tmp_path: Path) -> None:
    folder = make_problem(tmp_path, contract=ANSWER_CONTRACT)
    platform.publish(folder, "alice")
    before = rows(platform)
    write(folder, "statement.md", "Solve it, says mallory.")
    with pytest.raises(InvalidInput, match="does not manage"):
        platform.publish(folder, "mallory")
    assert rows(platform) == before


def test_who_published_each_revision_is_recorded(platform: Platform, tmp_path: Path) -> None:
    """The revision's body is the revision (its id is its digest), so the publisher is the
    entry's indexed name, shown with the problem; publishing an earlier revision again records
    who made it current again."""
    folder = make_problem(tmp_path, contract=ANSWER_CONTRACT)
    first = platform.publish(folder, "alice")
    assert platform.problem("demo").published_by == "alice"
    write(folder, "statement.md", "Solve it, again.")
    platform.publish(folder, "alice")
    write(folder, "statement.md", "Solve it.")
    again = platform.publish(folder, "alice")
    assert again.revision == first.revision and again.current_again
    entries = platform.ledger.find(kind="revision.published", subject=first.revision)
    assert [e.participant for e in entries] == ["alice", "alice"]
    assert platform.problem("demo").to_json()["published_by"] == "alice"


def test_problem_show_states_the_process(platform: Platform, tmp_path: Path) -> None:
    contract = copy.deepcopy(SCHEMA_CONTRACT)
    contract["stages"][0]["establishes"] = "The document has an integer x."
    contract["stages"].append({"name": "people", "type": "review", "protocol": PROTOCOL})
    folder = make_problem(
        tmp_path,
        contract=contract,
        files={**SCHEMA_FILES, "skills/local.md": "Run assay preflight."},
        skills=["skills/local.md"],
    )
    platform.publish(folder, "alice")
    view = platform.problem("demo")
    assert [s.name for s in view.stages] == ["shape", "people"]
    assert view.stages[0].establishes == "The document has an integer x."
    assert "review" in view.stages[1].establishes
    assert view.roles == [{"name": "doc", "required": True, "max_bytes": 1000}]
    assert [r.key for r in view.references] == ["schema"]
    skill = view.skills[0]
    assert skill["path"] == "skills/local.md"
    assert skill["sha256"] == hashlib.sha256(b"Run assay preflight.").hexdigest()
