"""``assay hole fill`` and the proof kinds' hole form are one path: a limit means the same in both.

A limit is never a finding about the candidate: the kind says inconclusive, ``hole fill`` says
``limit``, or ``error`` when even the known-good canary does not fit in the same limits (the
limits or the toolchain are broken). A candidate that alone stalls is ``limit`` / inconclusive
(``tests/adversarial/test_adv_agda_found.py``).
"""

from __future__ import annotations

from pathlib import Path

from assay import Config, Status
from assay.proofs import fill_hole
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

OBLIGATION = (
    "module Plus where\n\nopen import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n\n"
    "right : 1 + 1 ≡ 2\nright = {! !}\n"
)


def test_limits_no_proof_fits_in_are_no_finding_from_either_face(tmp_path: Path) -> None:
    need("agda")
    obligation = tmp_path / "Plus.agda"
    obligation.write_text(OBLIGATION)
    filled = fill_hole(
        obligation,
        7,
        9,
        "refl",
        sandbox=Sandbox(backend="bwrap"),
        stdlib=False,
        limits=Limits(timeout=0.05, memory_mb=2048),
    )
    assert (filled.status, filled.limit) == ("error", None), filled.diagnostics
    outcome = run_kind(
        "agda",
        answer="refl",
        obligation="Plus.agda",
        stdlib=False,
        timeout=0.05,
        memory_mb=2048,
        base_dir=tmp_path,
        config=Config(judgment_cache="off"),
    )
    assert outcome.status is Status.INCONCLUSIVE, outcome.detail
    assert "did not finish within 0.05s" in outcome.detail, outcome.detail
    assert outcome.evidence is not None and outcome.evidence["limit"] == "time"
    assert obligation.read_text() == OBLIGATION  # only ever read


def test_the_same_answer_solves_the_hole_in_both_faces(tmp_path: Path) -> None:
    need("agda")
    obligation = tmp_path / "Plus.agda"
    obligation.write_text(OBLIGATION)
    filled = fill_hole(obligation, 7, 9, "refl", sandbox=Sandbox(backend="bwrap"), stdlib=False)
    assert filled.status == "solved", filled.diagnostics
    assert filled.verdict is not None and filled.verdict.green
    assert filled.to_json()["schema"] == "assay.hole/1"
    assert filled.to_json()["verdict"]["schema"] == "assay.verdict/1"
    outcome = run_kind(
        "agda",
        answer="refl",
        obligation="Plus.agda",
        stdlib=False,
        base_dir=tmp_path,
        config=Config(judgment_cache="off"),
    )
    assert outcome.status is Status.VERIFIED, outcome.detail
    assert outcome.evidence is not None
    assert outcome.evidence["files"] == filled.verdict.files  # the very same bytes were judged
