"""Attacks on the Coq judge found by the adversarial review ``adv-coq`` (see ``notes/adv-coq.md``).

Every test states the property assay promises; a test is ``xfail(strict=True)`` while its attack
works, so it turns red (and the mark must go) the day the class is closed. Classes 1 and 2 are
closed (helper ``coq-fix``: ``_coq_lex`` reads Coq as Coq does and the scan fails closed; an
output flood is a finding, ``misbehaved``); class 3 by helper ``agda-fix`` (a workspace file
over the read limit refutes). Section 4
holds the review's recommendation: the trusted steps byte-check the files assay wrote.

1. **The Coq scan lexes strings and comments differently from Coq.** In Coq a ``"`` inside a
   string is written ``""`` and ``\\`` is an ordinary character, so ``"\\"`` is a whole string;
   the scan treats ``\\"`` as an escaped quote and blanks everything up to the next ``"``. And
   Coq reads string literals *inside* comments (a ``*)`` in such a string does not end the
   comment: ``(* " *) " *)`` is one comment); the scan ends the comment at the first ``*)`` and
   then reads ``" *)`` as the start of a string that runs to the end of the file. Either way one
   line hides ``Admitted``, ``Axiom``, ``Declare ML Module``, ``Print Universes "AssayGoal.v"``,
   ``Redirect`` and ``Unset Guard Checking`` from the pre-filter, in the whole-file and the hole
   form alike (coqchk still catches the axioms; the file-writing and plugin-loading commands
   the scan exists to refuse then run).
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

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from assay import Config, Status
from assay.proofs import judge, plan_for
from assay.proofs._batch import Batch
from assay.proofs._coq import TRUSTED_FILE_CHANGED
from assay.proofs._coq_lex import code_only
from assay.proofs._holes import fill, marker_holes, only_hole
from assay.proofs._judges import refusals_for
from assay.proofs._plan import Plan
from assay.proofs._reading import read_batch
from assay.sandbox import Limits, RunResult, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

# ---- 1. the scan and Coq's strings ------------------------------------------------------

WRAPPERS = {
    # a complete Coq string holding one backslash; the second one ends the scan's "string"
    "backslash_in_a_string": ('Comments "\\".\n', 'Comments "".\n'),
    # one Coq comment (its string holds the first "*)"); the scan reads a string to the end
    "comment_terminator_in_a_string": ('(* " *) " *)\n', ""),
}
HIDDEN = {
    "admitted": "Theorem wrong : 1 + 1 = 3.\nProof. Admitted.\n",
    "axiom": "Axiom cheat : 1 + 1 = 3.\n",
    "declare_ml_module": 'Declare ML Module "coq-core.plugins.ltac2".\n',
    "print_universes_to_a_trusted_file": 'Print Universes "AssayGoal.v".\n',
    "redirect": 'Redirect "AssayGoal" Print nat.\n',
    "unset_guard_checking": "Unset Guard Checking.\n",
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_the_scan_reads_coq_strings_as_coq_does(name: str, wrapper: str) -> None:
    assert refusals_for("coq", HIDDEN[name]), "the shape itself must be refused"
    before, after = WRAPPERS[wrapper]
    assert refusals_for("coq", before + HIDDEN[name] + after), (name, wrapper)


def test_a_hole_answer_cannot_hide_a_command_in_a_string() -> None:
    obligation = "Theorem wrong : 1 + 1 = 3.\nProof. {! !} Qed.\n"
    answer = 'Abort.\nComments "\\".\nTheorem wrong : 1 + 1 = 3. Proof. Admitted.\nComments "".'
    source = fill(obligation, only_hole(marker_holes(obligation)), answer, parenthesize=False)
    assert refusals_for("coq", source), source


PROOF = "Theorem two : 1 + 1 = 2.\nProof. reflexivity. Qed.\n"
FILE_COMMANDS = {
    "load": 'Load "AssayGoal".',
    "load_verbose": "Load Verbose Other.",
    "separate_extraction": "Require Extraction.\nSeparate Extraction nat.",
    "recursive_extraction": "Require Extraction.\nRecursive Extraction nat.",
    "recursive_extraction_library": "Require Extraction.\nRecursive Extraction Library Datatypes.",
    "extraction_output_directory": 'Require Extraction.\nSet Extraction Output Directory "x".',
    "extraction_test_compile": "Require Extraction.\nExtraction TestCompile nat.",
    "extraction_after_an_attribute": '#[local] Set Extraction Output Directory "x".',
    "locate_file": 'Locate File "AssayGoal.vo".',
    "add_loadpath": 'Add LoadPath "/tmp" as Other.',
    "add_ml_path": 'Add ML Path "/tmp".',
    "native_compute_profile": 'Set NativeCompute Profile Filename "AssayGoal".',
    "write_state": 'Write State "AssayGoal".',
    "print_universes_after_a_doubled_quote": 'Comments """".\nPrint Universes "AssayGoal.v".',
}


@pytest.mark.parametrize("name", sorted(FILE_COMMANDS))
def test_commands_that_read_or_write_files_are_refused(name: str) -> None:
    assert refusals_for("coq", f"{FILE_COMMANDS[name]}\n{PROOF}"), name


UNLEXABLE = {
    "unterminated_string": f'{PROOF}Definition s := "abc.\n',
    "unterminated_comment": f"{PROOF}(* Axiom cheat : False.\n",
    "unterminated_string_in_a_comment": f'{PROOF}(* " *)\n',
    "unterminated_nested_comment": f"(* (* *)\n{PROOF}",
}


@pytest.mark.parametrize("name", sorted(UNLEXABLE))
def test_text_coqs_lexer_refuses_is_refused(name: str) -> None:
    """coqc runs every sentence before the lexer error at the end: the scan never guesses."""
    assert any("never ends" in shape for shape in refusals_for("coq", UNLEXABLE[name])), name


HONEST = {
    "require_extraction": "Require Extraction.\n",
    "from_require_extraction": "From Coq Require Import Extraction.\n",
    "doubled_quotes": 'Definition s := "say ""Admitted"" (* no comment".\n',
    "backslash": 'Definition s := "\\".\n',
    "a_comment_terminator_in_a_string_in_a_comment": '(* "*)" Admitted *)\n',
    "nested_comments": "(* (* Axiom *) Admitted *)\n",
    "comment_opener_that_closes": "(*) Axiom *)\n",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_strings_and_comments_are_not_refused(name: str) -> None:
    assert refusals_for("coq", HONEST[name] + PROOF) == [], name


LEAK = "Definition leak := 0."
LEXINGS = [
    f'(* "\\" *) {LEAK} (* *)',
    f'(* " *) " *) {LEAK}',
    f'Comments "\\". {LEAK} Comments "".',
    f'Comments "a"" {LEAK}".',
    f"(* (* *) {LEAK} *)",
    f"(*) {LEAK} *)",
    f'(* "*)" {LEAK} *)',
    f'Comments "(*". {LEAK}',
    f'(* *" *) " *) {LEAK}',
    f'Comments """". {LEAK}',
    f'(* "a""*)" {LEAK} *)',
]


@pytest.mark.slow
def test_the_scan_and_coqc_agree_on_what_is_code(tmp_path: Path) -> None:
    """Differential, against the real coqc: ``leak`` is defined (``Check leak`` passes) exactly
    when the scan's reading (``_coq_lex``) keeps its definition as code."""
    need("coqc")
    coqc = shutil.which("coqc")
    assert coqc is not None
    for index, text in enumerate(LEXINGS):
        source = tmp_path / f"L{index}.v"
        source.write_text(f"{text}\nCheck leak.\n")
        run = subprocess.run(
            [coqc, "-q", source.name], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert "Unterminated" not in run.stderr + run.stdout, (text, run.stderr)
        assert ("Definition leak" in code_only(text)) == (run.returncode == 0), (text, run.stderr)


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
    assert "output exceeded 16 MiB" in outcome.detail, outcome.detail
    assert "memory_mb" not in outcome.detail, outcome.detail


def _run(output: str, exit_code: int | None = 0, limit: str | None = None) -> RunResult:
    return RunResult(
        exit_code=exit_code,
        signal=None if exit_code is not None else 9,
        output=output,
        output_bytes=len(output),
        truncated=limit == "output",
        elapsed=0.1,
        isolation="bwrap",
        limit=limit,  # type: ignore[arg-type]
    )


def _reading(language: str, runs: list[RunResult], steps: int) -> tuple[str, str, str | None]:
    plan = Plan({}, [[f"tool{i}"] for i in range(steps)], [], "", "")
    batch = Batch(runs, 1, True, {})
    read = read_batch(language, plan, batch, (), Limits(output_kb=256))  # type: ignore[arg-type]
    return read.finding, read.reason, read.limit


@pytest.mark.parametrize(("language", "steps"), [("agda", 1), ("coq", 5), ("lean", 4)])
def test_a_flood_is_a_finding_in_every_language(language: str, steps: int) -> None:
    """The candidate's step floods (Agda's only step; Coq's and Lean's solution step): refuted."""
    runs = ([_run(DIGEST)] if language == "coq" else []) + [_run("x", None, "output")]
    finding, reason, limit = _reading(language, runs, steps)
    assert (finding, limit) == ("misbehaved", None)
    assert "exceeded 16 MiB" in reason and "never needs" in reason, reason


def test_a_flood_of_the_trusted_statement_alone_is_not_the_candidates() -> None:
    """Coq's step 1 reads only the author's header and statement: the author's error (no limit,
    so not inconclusive either), never a finding about the work."""
    finding, reason, limit = _reading("coq", [_run("x", None, "output")], 5)
    assert (finding, limit) == ("machinery", None) and "trusted statement" in reason


# ---- 3. a file padded past the read limit ------------------------------------------------


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


# ---- 4. the trusted steps byte-check the files assay wrote -----------------------------------

DIGEST = "0" * 64 + "  AssayStatement.vo"


@pytest.mark.parametrize(
    ("runs", "changed"),
    [
        ([DIGEST, "", f"{'1' * 64}  AssayStatement.vo\nok"], "AssayStatement.vo"),
        ([DIGEST, "", "Error: ..."], "AssayStatement.vo"),
        ([DIGEST, "", f"{DIGEST}\nok", "bogus"], "AssayStatement.vo, found before step 4"),
        ([DIGEST, "", ""], "a trusted source"),
    ],
)
def test_a_changed_trusted_file_is_the_candidates_finding(runs: list[str], changed: str) -> None:
    results = [_run(output) for output in runs]
    if changed == "a trusted source":
        results[-1] = _run("", TRUSTED_FILE_CHANGED)
    finding, reason, _ = _reading("coq", results, 5)
    assert finding == "misbehaved" and "modified a trusted file" in reason and changed in reason


@pytest.mark.slow
@pytest.mark.parametrize("target", ["AssayGoal.v", "AssayAudit.v", "AssayStatement.vo"])
def test_a_solution_that_overwrites_a_trusted_file_is_refuted(target: str) -> None:
    """With the scan bypassed, ``Print Universes "file"`` (the one Coq 8.16 command that writes a
    chosen file name) overwrites a trusted file beside a *correct* proof: the trusted steps find
    it before they read it, and the finding names it."""
    need("coqc")
    solution = f'Print Universes "{target}".\n{PROOF}'
    plan = plan_for("coq", solution, statement="1 + 1 = 2", name="two")
    assert plan.refusals, "the scan refuses the command; bypassed below"
    limits = Limits(timeout=120, memory_mb=4096)
    sandbox = Sandbox(backend="bwrap")
    verdict = judge("coq", dataclasses.replace(plan, refusals=[]), sandbox, limits).verdict
    assert verdict is not None and not verdict.green, verdict
    assert verdict.finding == "misbehaved", (verdict.finding, verdict.reason)
    assert "modified a trusted file" in verdict.reason, verdict.reason
