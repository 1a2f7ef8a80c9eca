"""A manager of an unrelated problem rewrites what ``assay verifier show`` says about another
team's verifier family: revokes the family's conformed checker program on their own problem
(a revocation covers only the problems its author manages), or publishes a contract naming the
family so that their own version (and checker) joins it.

Found (1): ``verifier_view`` (src/assay/platform/_verifiers.py) listed every revocation of a
program the family used and dropped it from ``conformed``, whatever problems the revocation
covered: mallory, managing only an unrelated problem, revoked ``program:<sha>`` (scoped to
mallory's problem, so no run of the family stopped counting) and the family then showed its
implementation as revoked by mallory, conformed by nobody. Fixed: a revocation touches the
family only where it covers a problem pinning one of its versions, and an implementation is
withdrawn from ``conformed`` only by a revocation covering the problem it conformed on.
Found (2): ``Platform.publish`` (the CLI's ``assay problem publish``) let any publisher name an
existing verifier, adding a version to another team's family; only the web's upload refused
it. Fixed: the rule is ``Platform.publish``'s own, so the CLI and the web share it (a new
family is anyone's to start; a version is added only by a manager of a problem in it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import verifier_view
from tests.platform.conftest import Clock, make_problem
from tests.review.helpers import sqlite_platform

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/problems/checker-program"
SANDBOX = {"name": "s", "type": "sandbox", "checks": [{"kind": "answer_equals", "value": "1"}]}


def _family(root: Path, problem: str, verifier: str, acceptance: str) -> Path:
    contract = {"acceptance": acceptance, "stages": [SANDBOX], "verifier": verifier}
    return make_problem(root, problem=problem, contract=contract)


@pytest.mark.slow
def test_another_manager_s_revocation_does_not_touch_the_family(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        folder = tmp_path / "checker-program"
        shutil.copytree(EXAMPLE, folder)
        text = (folder / "problem.yaml").read_text()
        text = text.replace("  acceptance: >-", "  verifier: graph-colouring\n  acceptance: >-", 1)
        (folder / "problem.yaml").write_text(text)
        platform.publish(folder, "alice")
        (checker,) = verifier_view(platform.ledger, "graph-colouring").conformed
        platform.publish(_family(tmp_path / "m", "mallorys", "other-family", "m"), "mallory")
        platform.revoke(checker, "I say it is broken", "mallory")  # covers mallory's problem only
        view = verifier_view(platform.ledger, "graph-colouring")
        assert view.conformed == [checker]
        assert view.revoked == []
        platform.revoke(checker, "accepts a fourth colour", "alice")  # the family's own
        view = verifier_view(platform.ledger, "graph-colouring")
        assert view.conformed == []
        assert [(x.checker, x.by) for x in view.revoked] == [(checker, "alice")]


def test_a_revocation_of_the_family_s_review_stage_elsewhere_is_not_listed(
    tmp_path: Path,
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        first = platform.publish(_family(tmp_path / "a", "fam-a", "fidelity", "v1"), "alice")
        platform.publish(_family(tmp_path / "m", "mallorys", "mine", "m"), "mallory")
        platform.revoke(f"rule:{first.contract}/s", "noise", "mallory")
        assert verifier_view(platform.ledger, "fidelity").revoked == []
        platform.revoke(f"rule:{first.contract}/s", "the family's own", "alice")
        assert [x.by for x in verifier_view(platform.ledger, "fidelity").revoked] == ["alice"]


def test_publishing_a_contract_naming_another_team_s_verifier_is_refused(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        platform.publish(_family(tmp_path / "a", "fam-a", "fidelity", "v1"), "alice")
        intruder = _family(tmp_path / "b", "fam-intruder", "fidelity", "an intruder's v2")
        with pytest.raises(InvalidInput, match="verifier 'fidelity'"):
            platform.publish(intruder, "mallory")
        assert len(verifier_view(platform.ledger, "fidelity").versions) == 1
