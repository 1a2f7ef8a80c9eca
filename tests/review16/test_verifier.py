"""Verifier families: contracts naming one verifier are its versions, in publishing order, with
the revisions pinning each, the checker programs that conformed, and the revoked ones."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay._signed import canonical_digest
from assay.platform import Contract, Platform
from assay.platform._verifiers import verifier_view

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/problems/checker-program"


def _folder(tmp_path: Path, verifier: str | None) -> Path:
    folder = tmp_path / "checker-program"
    shutil.copytree(EXAMPLE, folder)
    if verifier is not None:
        text = (folder / "problem.yaml").read_text()
        text = text.replace("  acceptance: >-", f"  verifier: {verifier}\n  acceptance: >-", 1)
        (folder / "problem.yaml").write_text(text)
    return folder


def _edit(folder: Path, old: str, new: str) -> None:
    text = (folder / "problem.yaml").read_text()
    assert old in text
    (folder / "problem.yaml").write_text(text.replace(old, new, 1))


def test_a_contract_naming_no_verifier_keeps_its_id() -> None:
    contract = Contract.model_validate(
        {"acceptance": "a", "stages": [{"name": "s", "type": "sandbox", "checks": [{"kind": "x"}]}]}
    )
    data = contract.to_json()
    assert "verifier" not in data  # written only when named: the JSON from before families
    assert contract.id == canonical_digest(data)
    named = Contract.model_validate({**data, "verifier": "fam"})
    assert named.to_json()["verifier"] == "fam"
    assert named.id == canonical_digest(named.to_json()) != contract.id


@pytest.mark.slow
def test_two_contract_versions_their_revisions_implementations_and_revocations(
    platform: Platform, tmp_path: Path
) -> None:
    folder = _folder(tmp_path, "graph-colouring")
    first = platform.publish(folder, "alice")
    _edit(folder, "timeout: 20", "timeout: 30")  # a new contract, the same verifier
    second = platform.publish(folder, "alice")
    assert first.contract != second.contract
    view = verifier_view(platform.ledger, "graph-colouring")
    assert [v.version for v in view.versions] == [1, 2]
    assert [v.contract for v in view.versions] == [first.contract, second.contract]
    assert [[r.revision for r in v.revisions] for v in view.versions] == [
        [first.revision],
        [second.revision],
    ]
    (checker,) = {i.checker for v in view.versions for i in v.implementations}
    assert re.fullmatch(r"program:[0-9a-f]{64}", checker)
    assert all(i.conformed for v in view.versions for i in v.implementations)
    assert view.conformed == [checker] and view.revoked == []
    platform.revoke(checker, "accepts a fourth colour", "alice")
    view = verifier_view(platform.ledger, "graph-colouring")
    assert view.conformed == []
    assert [(r.checker, r.why, r.by) for r in view.revoked] == [
        (checker, "accepts a fourth colour", "alice")
    ]


def test_unknown_or_bad_verifier_names_are_refused(platform: Platform) -> None:
    with pytest.raises(InvalidInput, match="no contract names verifier 'nope'") as caught:
        verifier_view(platform.ledger, "nope")
    assert caught.value.where == "NAME"
    with pytest.raises(InvalidInput, match="not a verifier name"):
        verifier_view(platform.ledger, "a/b")


def test_a_bad_verifier_name_in_a_contract_is_refused_naming_the_field(tmp_path: Path) -> None:
    from assay.platform import FolderInvalid, load_folder

    with pytest.raises(FolderInvalid, match=r"contract\.verifier"):
        load_folder(_folder(tmp_path, "'no spaces allowed'"))
