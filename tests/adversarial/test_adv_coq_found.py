"""Attacks on the Coq judge found by the adversarial review ``adv-coq`` (see ``notes/adv-coq.md``).

Every test states the property assay promises and is ``xfail(strict=True)`` while the attack
works, so it turns red (and the mark must go) the day the class is closed.

1. **The Coq scan reads string literals with backslash escapes; Coq does not.** In Coq a ``"``
   inside a string is written ``""`` and ``\\`` is an ordinary character, so ``"\\"`` is a whole
   string. The scan treats ``\\"`` as an escaped quote and blanks everything up to the next
   ``"``: one ``Comments "\\".`` hides ``Admitted``, ``Axiom``, ``Declare ML Module``,
   ``Print Universes "AssayGoal.v"``, ``Redirect`` and ``Unset Guard Checking`` from the
   pre-filter (coqchk still catches the axioms; the file-writing and plugin-loading commands
   the scan exists to refuse then run, in the whole-file and the hole form alike).
2. **A wrong proof masked as ``inconclusive`` by flooding the output.** Output beyond
   ``output_kb * 64`` is a limit the parent observes, and a proof judgment reads any observed
   limit as inconclusive. A proof of ``1 + 1 = 3`` that first prints 20 MB (``do 100000
   idtac``), or one resting on a top-level ``Hypothesis`` whose compiled library makes coqchk
   list 20 MB of axiom names (25 ``Declare Module``s with 4000-character names over a module
   type of 200 hypotheses), ends ``inconclusive`` in about two seconds instead of ``refuted``;
   no stalling and no memory are needed. Checking a proof never needs megabytes of output.
3. **A wrong proof padded past the workspace read limit is ``inconclusive``** (the class the
   ``adv-agda`` review found for Agda, ``workspace_text``; here for Coq): ``Solution.v`` made a
   sparse file one byte past ``max_file_bytes`` after a proof of ``1 + 1 = 3`` is
   "larger than the read limit", so no judgment runs and nothing is refuted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Config, Status
from assay.proofs._holes import fill, only_hole
from assay.proofs._judges import refusals_for
from tests.helpers import run_kind
from tests.proofs.conftest import need

# ---- 1. the scan and Coq's strings ------------------------------------------------------

OPEN = 'Comments "\\".\n'  # a complete Coq string holding one backslash
CLOSE = 'Comments "".\n'  # ends the string the scan thinks is still open
HIDDEN = {
    "admitted": "Theorem wrong : 1 + 1 = 3.\nProof. Admitted.\n",
    "axiom": "Axiom cheat : 1 + 1 = 3.\n",
    "declare_ml_module": 'Declare ML Module "coq-core.plugins.ltac2".\n',
    "print_universes_to_a_trusted_file": 'Print Universes "AssayGoal.v".\n',
    "redirect": 'Redirect "AssayGoal" Print nat.\n',
    "unset_guard_checking": "Unset Guard Checking.\n",
}


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: the Coq scan lexes strings with backslash escapes "
    '(Coq doubles quotes: "\\" is a whole string), so one string hides any command',
)
@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_the_scan_reads_coq_strings_as_coq_does(name: str) -> None:
    assert refusals_for("coq", HIDDEN[name]), "the shape itself must be refused"
    assert refusals_for("coq", OPEN + HIDDEN[name] + CLOSE), name


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a hole answer hides Admitted behind a Coq string",
)
def test_a_hole_answer_cannot_hide_a_command_in_a_string() -> None:
    obligation = "Theorem wrong : 1 + 1 = 3.\nProof. {! !} Qed.\n"
    answer = 'Abort.\nComments "\\".\nTheorem wrong : 1 + 1 = 3. Proof. Admitted.\nComments "".'
    source = fill(obligation, only_hole(obligation, agda=False), answer, parenthesize=False)
    assert refusals_for("coq", source), source


# ---- 2. output floods ---------------------------------------------------------------------


def _idtac_flood() -> str:
    line = "x" * 200
    return (
        f'Goal True.\n do 100000 idtac "{line}".\nAbort.\n'
        "Theorem wrong : 1 + 1 = 3.\nProof. reflexivity. Qed.\n"
    )


def _coqchk_flood() -> str:
    long = "x" * 4000
    hypotheses = "\n".join(f"  Hypothesis p{i} : 1 + 1 = 3." for i in range(200))
    modules = "\n".join(f"Declare Module D{i}_{long} : T." for i in range(25))
    return (
        f"Module Type T.\n{hypotheses}\nEnd T.\n{modules}\n"
        f"Definition wrong : 1 + 1 = 3 := D0_{long}.p0.\n"
    )


FLOODS = {"idtac_in_the_solution_step": _idtac_flood, "coqchk_lists_axioms": _coqchk_flood}


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a wrong Coq proof that floods the output (its own "
    "printing, or coqchk listing its axioms) is inconclusive (output limit), not refuted",
)
@pytest.mark.parametrize("name", sorted(FLOODS))
def test_flooding_the_output_does_not_mask_a_wrong_proof(name: str, tmp_path: Path) -> None:
    need("coqc")
    (tmp_path / "Solution.v").write_text(FLOODS[name]())
    outcome = run_kind(
        "coq",
        file="Solution.v",
        statement="1 + 1 = 3",
        name="wrong",
        workspace=tmp_path,
        config=Config(judgment_cache="off"),
    )
    assert outcome.status is Status.REFUTED, (name, outcome.detail)


# ---- 3. a file padded past the read limit ------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a wrong Coq proof padded past max_file_bytes is "
    "inconclusive (workspace_text) instead of refuted",
)
def test_a_wrong_proof_padded_past_the_read_limit_is_refuted(tmp_path: Path) -> None:
    config = Config(judgment_cache="off")
    path = tmp_path / "Solution.v"
    path.write_text("Theorem wrong : 1 + 1 = 3. Proof. reflexivity. Qed.\n(* ")
    with path.open("r+b") as handle:
        handle.truncate(config.max_file_bytes + 1)  # sparse: costs no disk
    outcome = run_kind(
        "coq",
        file="Solution.v",
        statement="1 + 1 = 3",
        name="wrong",
        workspace=tmp_path,
        config=config,
    )
    assert outcome.status is Status.REFUTED, outcome.detail
