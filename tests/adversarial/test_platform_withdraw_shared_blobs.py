"""Withdrawing an artifact deletes bytes other records still need.

Blobs are content-addressed, so equal bytes are one blob: a withdrawal may delete only the bytes
nothing else still names (for a folder: each file its manifest lists, one by one).

Found here and fixed by the lead while this was written (kept as passing regression tests): a
participant submitted a folder holding a copy of the problem's public reference (or of another
participant's artifact, e.g. a published good example) and withdrew it: the reference's bytes
were gone, and every later run of everyone ended in ``error`` (BlobMissing), a re-check of the
other participant's verified submission too.

Found here and fixed by the lead while this was written (now passing): the live set ignores
external evidence: bob submits a document whose bytes equal the evidence a supplier recorded for
alice's run (``{"passed": true}`` is easy to guess) and withdraws it: the evidence alice's record
names is deleted.

Found by padv2 (fixed; kept as regression tests): a withdrawal racing a submission of the same bytes in
another process deletes them: the submission stores its blob before it records itself, and the
withdrawal's live set (read after its own record) cannot see it.

Refused correctly (passing): withdrawing a single file whose bytes equal a reference keeps the
reference; the withdrawn artifact's role, size and sha256 stay stated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.platform import RunView, Work
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    artifact,
    make_problem,
    opened,
    store,
)
from tests.platform.conftest import SCHEMA, SCHEMA_FILES

CONTRACT = {
    "roles": [{"name": "doc", "required": True, "max_bytes": 10_000}],
    "references": [{"key": "schema", "path": "reference/schema.json"}],
    "acceptance": "The document meets the schema.",
    "stages": [
        {
            "name": "shape",
            "type": "sandbox",
            "checks": [{"kind": "json_schema", "artifact": "doc", "schema": "schema"}],
        }
    ],
}
GOOD = '{"x": 1}'


@pytest.mark.parametrize("copied", ["reference", "other-artifact"])
def test_withdrawing_a_folder_keeps_bytes_others_still_name(
    db_url: str, tmp_path: Path, copied: str
) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=CONTRACT, files=SCHEMA_FILES), "mgr")
        bob = platform.submit("demo", {"doc": artifact(tmp_path, "bob.json", GOOD)}, None, "bob")
        assert bob.status is not None and bob.status.value == "verified"
        folder = tmp_path / "alice-folder"
        folder.mkdir()
        if copied == "reference":
            (folder / "copy.json").write_text(json.dumps(SCHEMA))
        else:
            (folder / "copy.json").write_text(GOOD)
        alice = platform.submit("demo", {"doc": folder}, None, "alice")
        platform.withdraw(alice.submission, "doc", "alice")
        reference = platform.problem("demo").references[0].sha256
        bobs = bob.stages[0].inputs["artifact:doc"]
        assert platform.ledger.blobs.has(reference), "the problem's reference bytes were deleted"
        assert platform.ledger.blobs.has(bobs), "bob's artifact bytes were deleted"
    with opened(config, Clock()) as fresh:  # a new process lays the references out again
        again = fresh.recheck(bob.submission, "bob")
        assert again.status is not None and again.status.value == "verified", again.detail


def test_withdrawing_a_file_equal_to_a_reference_keeps_the_reference(
    db_url: str, tmp_path: Path
) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=CONTRACT, files=SCHEMA_FILES), "mgr")
        copy = artifact(tmp_path, "copy.json", json.dumps(SCHEMA))
        alice = platform.submit("demo", {"doc": copy}, None, "alice")
        shown = platform.withdraw(alice.submission, "doc", "alice")
        reference = platform.problem("demo").references[0].sha256
        assert platform.ledger.blobs.has(reference)
        assert shown.artifacts[0].withdrawn and shown.artifacts[0].sha256 == reference
    with opened(config, Clock()) as fresh:
        run = fresh.submit("demo", {"doc": artifact(tmp_path, "c.json", GOOD)}, None, "carol")
        assert run.status is not None and run.status.value == "verified", run.detail


EVIDENCE = b'{"passed": true}'


def test_withdrawing_an_artifact_keeps_evidence_a_run_names(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    contract = {
        **CONTRACT,
        "stages": [
            *CONTRACT["stages"],
            {
                "name": "ci",
                "type": "external",
                "mechanism": "rule",
                "evidence_schema": {"type": "object", "required": ["passed"]},
                "supplied_by": ["ci"],
            },
        ],
    }
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=contract, files=SCHEMA_FILES), "mgr")
        alice = platform.submit("demo", {"doc": artifact(tmp_path, "a.json", GOOD)}, None, "alice")
        done = platform.record_external(alice.submission, "ci", "ci", evidence=EVIDENCE)
        evidence = done.stages[-1].inputs["evidence"]
        # bob's document happens to be (or is made to be) the same bytes as that evidence
        bob = platform.submit("demo", {"doc": artifact(tmp_path, "b.json", EVIDENCE)}, None, "bob")
        platform.withdraw(bob.submission, "doc", "bob")
        assert platform.ledger.blobs.has(evidence), "the evidence alice's run names was deleted"


def test_a_withdrawal_racing_a_submission_of_the_same_bytes_keeps_them(
    db_url: str, tmp_path: Path
) -> None:
    """The live set is read after the withdrawal is recorded, but a submission of the same bytes
    in another process stores its blob BEFORE it records the submission (for a batch: every
    item's blob before one append), so the withdrawal deletes bytes it cannot see are needed:
    the new run ends ``error`` (free) and its bytes are gone for good."""
    config = store(db_url, tmp_path)
    clock = Clock()
    with opened(config, clock) as platform, opened(config, clock) as other:
        platform.publish(make_problem(tmp_path, contract=CONTRACT, files=SCHEMA_FILES), "mgr")
        doc = artifact(tmp_path, "doc.json", GOOD)
        alice = platform.submit("demo", {"doc": doc}, None, "alice")
        real = platform.ledger.append
        fired: list[bool] = []

        def append(*entries: Any, guard: Any = None) -> Any:
            if guard is not None and not fired:  # bob's blob is stored, his record not yet
                fired.append(True)
                other.withdraw(alice.submission, "doc", "alice")
            return real(*entries, guard=guard)

        platform.ledger.append = append  # type: ignore[method-assign]
        bob = platform.submit_many("demo", [Work("bob", {"doc": doc})])[0]
        platform.ledger.append = real  # type: ignore[method-assign]
        assert isinstance(bob, RunView)
        assert bob.status is Status.VERIFIED, f"bob's run: {bob.label}: {bob.detail}"
        sha = bob.stages[0].inputs["artifact:doc"]
        assert platform.ledger.blobs.has(sha), "bob's artifact bytes were deleted"
