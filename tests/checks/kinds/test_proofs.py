"""The agda, coq and lean kinds through the engine: both forms, all four statuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, InvalidSpec, Status, build_check
from assay.sandbox import Sandbox

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR
HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"


@pytest.fixture
def task(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "Two.agda").write_text(f"module Two where\n\n{HEADER}\n\ntwo : 1 + 1 ≡ 2\ntwo = refl\n")
    (ws / "Bad.agda").write_text(f"module Bad where\n\n{HEADER}\n\ntwo : 1 + 1 ≡ 2\ntwo = two\n")
    (ws / "Comm.v").write_text(
        "Theorem comm : forall n : nat, n + 0 = n.\nProof. intros. rewrite <- plus_n_O. reflexivity. Qed.\n"
    )
    (ws / "Admit.v").write_text("Theorem comm : forall n : nat, n + 0 = n.\nProof. Admitted.\n")
    (tmp_path / "Hole.agda").write_text(
        f"module Hole where\n\n{HEADER}\n\ntwo : 1 + 1 ≡ 2\ntwo = {{! !}}\n"
    )
    (tmp_path / "Hole.v").write_text("Theorem two : 1 + 1 = 2.\nProof. {! !} Qed.\n")
    return tmp_path


def run(task: Path, spec: dict[str, Any], answer: str | None = None) -> Any:
    ctx = CheckContext(
        answer=answer,
        workspace=task / "ws",
        base_dir=task,
        sandbox=Sandbox(backend="bwrap"),
        config=Config(judgment_cache=str(task / "cache")),
    )
    return build_check(spec).run(ctx)


AGDA = {"kind": "agda", "stdlib": False, "header": HEADER, "statement": "1 + 1 ≡ 2", "name": "two"}
COQ = {"kind": "coq", "statement": "forall n : nat, n + 0 = n", "name": "comm"}


@pytest.mark.parametrize(
    ("spec", "answer", "status", "message"),
    [
        ({**AGDA, "file": "Two.agda"}, None, V, "agda checked the proof"),
        ({**AGDA, "file": "Bad.agda"}, None, R, "agda rejected the proof"),
        ({**AGDA, "file": "Missing.agda"}, None, R, "does not exist"),
        ({**AGDA, "file": "Two.agda", "timeout": 0.001}, None, I, "did not finish"),
        ({"kind": "agda", "obligation": "Hole.agda", "stdlib": False}, "refl", V, ""),
        ({"kind": "agda", "obligation": "Hole.agda", "stdlib": False}, "two", R, "rejected"),
        (
            {"kind": "agda", "obligation": "Hole.agda", "stdlib": False},
            "refl\npostulate x : ⊥",
            R,
            "refused before judging",
        ),
        ({"kind": "agda", "obligation": "Hole.agda", "stdlib": False}, None, I, "no final answer"),
        ({"kind": "agda", "obligation": "Nope.agda", "stdlib": False}, "refl", E, "cannot be read"),
        ({**COQ, "file": "Comm.v"}, None, V, "coq checked the proof"),
        ({**COQ, "file": "Admit.v"}, None, R, "`Admitted`"),
        (
            {"kind": "coq", "obligation": "Hole.v", "statement": "1 + 1 = 2", "name": "two"},
            "reflexivity.",
            V,
            "",
        ),
        (
            {"kind": "coq", "obligation": "Hole.v", "statement": "1 + 1 = 2", "name": "two"},
            "Abort. Theorem two : True. exact I.",
            R,
            "",
        ),
        (
            {"kind": "coq", "obligation": "Hole.v", "statement": "1 + 1 = 2", "name": "two"},
            "admit. Admitted. (*",
            R,
            "refused",
        ),
    ],
)
def test_proof_kinds(
    task: Path, spec: dict[str, Any], answer: str | None, status: Status, message: str
) -> None:
    outcome = run(task, spec, answer)
    assert outcome.status is status, outcome.detail
    assert message in outcome.detail


def test_the_verdict_travels_with_the_outcome(task: Path) -> None:
    outcome = run(task, {**AGDA, "file": "Two.agda"})
    verdict = outcome.evidence
    assert verdict["exit_code"] == 0 and verdict["checked_from_source"] and verdict["green"]
    assert verdict["command"].endswith("AssayGoal.agda") and verdict["cwd"] == "/proof"
    again = run(task, {**AGDA, "file": "Two.agda"})
    assert again.evidence["cached"] and "(cached verdict)" in again.detail


def test_the_lean_kind_is_complete_but_inconclusive_without_lake(task: Path) -> None:
    import shutil

    (task / "ws" / "T.lean").write_text("theorem t : 1 = 1 := rfl\n")
    outcome = run(task, {"kind": "lean", "file": "T.lean", "statement": "1 = 1", "name": "t"})
    if shutil.which("lake") is None:
        assert outcome.status is I and "lake is not installed" in outcome.detail
    else:
        assert outcome.status is V


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "agda"}, "exactly one of 'file'"),
        ({"kind": "agda", "file": "a", "obligation": "b"}, "exactly one of"),
        ({"kind": "agda", "file": "a.agda"}, "needs the trusted 'statement'"),
        ({"kind": "agda", "file": "a.agda", "statement": "T"}, "go together"),
        ({"kind": "coq", "obligation": "a.v"}, "'statement' and 'name' are required"),
        ({"kind": "lean", "file": "a.lean", "name": "t"}, "go together"),
    ],
)
def test_proof_specs(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        build_check(spec)
