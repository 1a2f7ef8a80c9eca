"""Attacks on the proof judges after the one-path refactor, by the review ``adv-proofs``.

The refactor (each language one ``ProofLanguage`` module; ``assay hole fill`` and the kinds'
hole form one path, ``judge_source`` / ``judge_hole``) moved the refusals, the audits, the limit
reading and the cache key without losing one (sections 5 to 7 pin what held). The review found
four classes, all older than the refactor and all closed here:

1. **Candidate text that makes assay itself fail.** A wrong proof's refutation masked as
   ``error``: a Coq or Lean hole answer (or a task file's ``"answer"``) holding a lone
   surrogate (JSON ``"\\ud800"``; ``surrogateescape`` makes one of every byte that is not UTF-8)
   could not be written as a source file (``UnicodeEncodeError``), and a Lean file with
   interpolated strings nested a few hundred deep (``s!"{s!"{...}"}"``) overflowed the lexer's
   recursion (``RecursionError``). Both now refuse before judging.
2. **Refusal scans quadratic in the file** (the verifier's own time, with no limit around it).
   The Coq pre-filter looked for the sentence around every ``Extraction`` from the start of the
   file, and for ``Print Universes "file"`` with a regular expression that re-scanned to the
   sentence's end from every occurrence: 320 KB of ``Require Extraction.`` took 94 s, 128 KB
   of ``Print Universes`` 28 s (16 MB, the read limit: days). The Agda candidate scan and the
   Lean scan compared each shape found with every earlier one (a 450 KB candidate of ``import
   A1 import A2 ...``: 74 s; a Lean file of 60 000 imports: 50 s), and the Lean scan read every
   ``@[``, ``attribute [`` and ``aesop (`` to its closing bracket (80 KB of ``@[``: 363 s). Now
   one pass, a binary search, a set, and a table of where each group ends.
3. **A Lean solution's exit 3 read as a trusted step's failure.** Exit 3 is what the trusted
   scripts exit with when their own side fails (never a finding), but it was read so in every
   step, the solution's own compilation included, whose code may run (the kind assumes so): a
   solution that got its compiler to exit 3 was ``error``, not refuted. Now only a trusted step
   (after the first) is read so; the first step's exit 3 is a crash the canary settles.
4. **Library faces that judge nothing the caller meant.** ``Terms(statement=..., name=None)``
   judged the solution alone, with no wrapper tying a green verdict to the statement; and
   ``fill_hole(language="coq")`` raised a bare ``ValueError``. Both are ``InvalidInput`` now.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from assay import CheckContext, Config, Status, build_check
from assay._errors import InvalidInput, InvalidSpec
from assay.proofs import Terms, fill_hole
from assay.proofs._agda_scan import agda_candidate_refusals
from assay.proofs._batch import Batch
from assay.proofs._coq_scan import coq_refusals
from assay.proofs._lean import lean_plan
from assay.proofs._lean_scan import refusals as lean_refusals
from assay.proofs._reading import read_batch
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, RunResult, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

ROOT = Path(__file__).resolve().parents[2]
OFF = Config(judgment_cache="off")
AGDA_HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
AGDA_HOLE = f"module Hole where\n\n{AGDA_HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = {{! !}}\n"
COQ_HOLE = "Theorem wrong : 1 + 1 = 3.\nProof. {! !} Qed.\n"
LEAN_HOLE = "theorem wrong : 1 + 1 = 3 := by\n  {! !}\n"
HOLES = {
    "agda": ("Hole.agda", AGDA_HOLE),
    "coq": ("Hole.v", COQ_HOLE),
    "lean": ("Hole.lean", LEAN_HOLE),
}


def _hole_kind(tmp_path: Path, language: str, answer: str, **spec: object) -> Status:
    name, text = HOLES[language]
    (tmp_path / name).write_text(text)
    fields: dict[str, object] = {"obligation": name, **spec}
    if language == "agda":
        fields["stdlib"] = False
    else:
        fields.update(statement="1 + 1 = 3", name="wrong")
    check = build_check({"kind": language, **fields})
    outcome = check.run(CheckContext(answer=answer, base_dir=tmp_path, config=OFF))
    assert outcome.status is not Status.ERROR, outcome.detail
    return outcome.status


# ---- 1. candidate text that makes assay itself fail ---------------------------------------

SURROGATES = {
    "coq_lone_high": ("coq", "exact I. \ud800"),
    "coq_lone_low_in_a_comment": ("coq", "(* \udcff *) reflexivity."),
    "coq_escaped_byte": ("coq", b"exact I. \xff".decode("utf-8", "surrogateescape")),
    "lean_lone_high": ("lean", "exact rfl \ud800"),
    "lean_escaped_byte": ("lean", b"rfl \xc3".decode("utf-8", "surrogateescape")),
    "agda_lone_high": ("agda", "refl\ud800"),
}


@pytest.mark.parametrize("case", sorted(SURROGATES))
def test_a_hole_answer_that_is_not_unicode_text_is_refused(case: str, tmp_path: Path) -> None:
    """Refused before judging (no toolchain runs), in every language; never assay's error."""
    language, answer = SURROGATES[case]
    assert _hole_kind(tmp_path, language, answer) is Status.REFUTED


def test_a_task_files_answer_with_a_lone_surrogate_is_refuted(tmp_path: Path) -> None:
    """The route a policy has: JSON ``"\\ud800"`` in the task file's answer, through the CLI."""
    (tmp_path / "Hole.v").write_text(COQ_HOLE)
    check = {"kind": "coq", "obligation": "Hole.v", "statement": "1 + 1 = 3", "name": "wrong"}
    (tmp_path / "task.json").write_text(
        '{"checks": [' + json.dumps(check) + '], "answer": "exact I. \\ud800"}'
    )
    done = subprocess.run(
        [str(ROOT / ".venv/bin/assay"), "check", str(tmp_path / "task.json")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ASSAY_JUDGMENT_CACHE": "off"},
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["outcomes"][0]["status"] == "refuted", report


def _interpolated(depth: int) -> str:
    return 's!"{' * depth + "1" + '}"' * depth


LEAN_NESTINGS = {
    "whole_file_2000": (
        "file",
        f"theorem wrong : 1 + 1 = 3 := by\n  have h := {_interpolated(2000)}\n  sorry\n",
    ),
    "whole_file_400": (
        "file",
        f"def x := {_interpolated(400)}\ntheorem wrong : 1 + 1 = 3 := sorry\n",
    ),
    "hole_answer_1000": ("hole", f"have h := {_interpolated(1000)}; sorry"),
    "hole_answer_in_a_term_600": ("hole", f"exact (fun _ => sorry) {_interpolated(600)}"),
}


@pytest.mark.parametrize("case", sorted(LEAN_NESTINGS))
def test_deeply_nested_lean_interpolation_is_refused(case: str, tmp_path: Path) -> None:
    """The scan runs before any toolchain, so this holds where ``lake`` is missing too."""
    form, text = LEAN_NESTINGS[case]
    if form == "hole":
        assert _hole_kind(tmp_path, "lean", text) is Status.REFUTED
        return
    (tmp_path / "Solution.lean").write_text(text)
    outcome = run_kind(
        "lean",
        workspace=tmp_path,
        file="Solution.lean",
        statement="1 + 1 = 3",
        name="wrong",
        config=OFF,
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "nested more than" in outcome.detail


def test_a_lean_header_nested_too_deep_is_a_spec_error_not_a_crash() -> None:
    with pytest.raises(InvalidSpec, match="header") as raised:
        build_check(
            {
                "kind": "lean",
                "file": "S.lean",
                "statement": "True",
                "name": "t",
                "header": f"import Init\n#check {_interpolated(2000)}",
            }
        )
    assert "RecursionError" not in repr(raised.value)


# ---- 2. refusal scans quadratic in the file -------------------------------------------------

PADDINGS = {
    "require_extraction": "Require Extraction.\n",
    "require_import_extraction": "Require Import Extraction. ",
    "print_universes_without_an_end": "Print Universes ",
    "print_sorted_universes": "Print Sorted Universes\n",
}


@pytest.mark.parametrize("case", sorted(PADDINGS))
def test_the_coq_scan_is_not_quadratic(case: str) -> None:
    """320 KB of padding: was 28 to 94 s (and days at the 16 MB read limit); one pass now."""
    padding = PADDINGS[case] * (320_000 // len(PADDINGS[case]))
    start = time.monotonic()
    shapes = coq_refusals(padding + "\nTheorem wrong : 1 + 1 = 3.\nAdmitted.\n")
    assert time.monotonic() - start < 10
    assert "`Admitted`" in shapes


OPEN_GROUPS = {
    "attribute_lists_never_closed": "@[" * 40_000,
    "attribute_commands_never_closed": "attribute [" * 10_000,
    "aesop_clauses_never_closed": "aesop (" * 10_000,
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(OPEN_GROUPS))
def test_the_lean_scan_is_not_quadratic_in_open_groups(case: str) -> None:
    """Each ``@[`` / ``attribute [`` / ``aesop (`` scanned to its closing bracket, here the end
    of the file: 80 KB of ``@[`` took 363 s, 110 KB of ``attribute [`` 21 s, 70 KB of
    ``aesop (`` 28 s. Where each group ends is found once now."""
    start = time.monotonic()
    shapes = lean_refusals(OPEN_GROUPS[case] + "\ntheorem t : 1 + 1 = 3 := sorry\n", ())
    assert time.monotonic() - start < 12
    assert any("sorry" in shape for shape in shapes)


ATTRIBUTES = {
    "@[simp, ext] theorem t : True := trivial": False,
    "@[simp (config := {})] theorem t : True := trivial": False,
    "@[(x) simp] theorem t : True := trivial": True,
    "@[simp, [x]] theorem t : True := trivial": True,
    "@[simp, evil] theorem t : True := trivial": True,
    "@[local simp, scoped ext, -simp] theorem t : True := trivial": False,
    "@[simp (x @[evil] y), instance] theorem t : True := trivial": True,
    "theorem t : True := by aesop (config := {}) (add safe x)": True,
    "theorem t : True := by aesop (config := {(a)}) (rule_sets := [A])": False,
    "@[simp (unclosed theorem t : True := trivial": True,
}


@pytest.mark.parametrize("source", sorted(ATTRIBUTES))
def test_the_faster_lean_scan_reads_attributes_and_aesop_as_before(source: str) -> None:
    shapes = [s for s in lean_refusals(source, ()) if "attribute" in s or "aesop" in s.lower()]
    assert bool(shapes) is ATTRIBUTES[source], shapes


LONG_SENTENCES = {
    "one_require_of_many_extractions": ("Require ", "Extraction "),
    "many_print_universes_without_an_end": ("", "Print Universes "),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(LONG_SENTENCES))
def test_the_coq_scan_is_not_quadratic_in_one_long_sentence(case: str) -> None:
    """4 to 6 MB of one sentence: 166 and 92 s when each occurrence sliced or searched the
    sentence again; a binary search into positions found once now."""
    first, repeated = LONG_SENTENCES[case]
    text = first + repeated * 400_000 + ".\nTheorem wrong : 1 + 1 = 3.\nAdmitted.\n"
    start = time.monotonic()
    shapes = coq_refusals(text)
    assert time.monotonic() - start < 30
    assert "`Admitted`" in shapes


def _agda_imports() -> str:
    return "".join(f"import A{i} " for i in range(33_000))


def _lean_imports() -> str:
    return "".join(f"import A{i}\n" for i in range(60_000)) + "theorem t : 1 + 1 = 3 := sorry\n"


MANY_SHAPES = {
    "agda_candidate_of_many_imports": lambda: agda_candidate_refusals(_agda_imports()),
    "agda_candidate_of_many_imports_and_keywords": lambda: agda_candidate_refusals(
        _agda_imports() + "module " * 5_000
    ),
    "lean_file_of_many_imports": lambda: lean_refusals(_lean_imports(), ()),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(MANY_SHAPES))
def test_a_scan_that_finds_many_shapes_is_not_quadratic(case: str) -> None:
    """A shape per line: the Agda candidate scan took 85 s at its 512 K cap and the Lean scan
    30 s on 570 KB, each shape compared with every earlier one; a set now."""
    start = time.monotonic()
    shapes = MANY_SHAPES[case]()
    assert time.monotonic() - start < 12
    assert shapes and len(shapes) == len(set(shapes))


SENTENCES = {
    'Print Universes "AssayGoal.v".': True,
    'Print Sorted Universes "x".': True,
    'Print Universes Subgraph(Coq.Init.Logic.eq.u0) "AssayGoal.v".': True,
    'Print Universes.\nDefinition s := "x".': False,
    "Print Universes.": False,
    'Require Extraction.\nExtraction "f.ml" nat.': True,
    "Require Import Extraction.": False,
    "From Coq Require Extraction.": False,
    "Require Extraction. Recursive Extraction nat.": True,
    "  Require\n  Extraction.": False,
    "From Coq Require Import Extraction.": False,
    'Print Universes. Print Universes "x".': True,
    'Print Universes (* "x" *).': False,
    'Print Universes.\nRequire Extraction. Extraction "f.ml" nat.': True,
}


@pytest.mark.parametrize("sentence", sorted(SENTENCES))
def test_the_faster_scan_refuses_the_same_sentences(sentence: str) -> None:
    padding = "Require Extraction.\nPrint Universes.\n" * 2000
    refused = {s for s in coq_refusals(padding + sentence) if "Universes" in s or "extraction" in s}
    assert bool(refused) is SENTENCES[sentence], refused


@pytest.mark.slow
def test_the_coq_kind_refutes_a_padded_wrong_proof_in_bounded_time(tmp_path: Path) -> None:
    (tmp_path / "Solution.v").write_text(
        "Require Extraction.\n" * 40_000 + "Theorem wrong : 1 + 1 = 3.\nAdmitted.\n"
    )
    start = time.monotonic()
    outcome = run_kind(
        "coq",
        workspace=tmp_path,
        file="Solution.v",
        statement="1 + 1 = 3",
        name="wrong",
        config=OFF,
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert time.monotonic() - start < 30


# ---- 3. a Lean solution's exit 3 --------------------------------------------------------


def _run(exit_code: int, output: str = "") -> RunResult:
    return RunResult(
        exit_code=exit_code,
        signal=None,
        output=output,
        output_bytes=len(output),
        truncated=False,
        elapsed=0.1,
        isolation="bwrap",
    )


LEAN_PLAN = lean_plan(
    Toolchain("lean", "/opt/lean/bin/lean", "4.9.0", "core@0", search_path=()),
    "theorem wrong : 1 + 1 = 3 := by decide",
    statement="1 + 1 = 3",
    name="wrong",
    header="",
)


@pytest.mark.parametrize("output", ["", "uncaught exception", "assay: trusted step failed"])
def test_the_lean_solutions_own_exit_3_is_no_trusted_failure(output: str) -> None:
    """Read as a crash (the canary then decides: refuted when it checks), never as the trusted
    side's failure, which the kind can only call ``error``."""
    reading = read_batch("lean", LEAN_PLAN, Batch([_run(3, output)], 1, True, {}), (), Limits())
    assert reading.broke and reading.finding == "machinery", reading.reason
    assert "trusted" not in reading.reason


@pytest.mark.parametrize("steps", [2, 3, 4])
def test_a_trusted_lean_steps_exit_3_is_still_the_trusted_sides(steps: int) -> None:
    runs = [_run(0)] * (steps - 1) + [_run(3)]
    reading = read_batch("lean", LEAN_PLAN, Batch(runs, 1, True, {}), (), Limits())
    assert not reading.broke and "a trusted step, failed" in reading.reason


# ---- 4. library faces ---------------------------------------------------------------------


@pytest.mark.parametrize(("statement", "name"), [("1 + 1 ≡ 3", None), (None, "wrong")])
def test_terms_need_both_the_statement_and_the_name(
    statement: str | None, name: str | None
) -> None:
    with pytest.raises(InvalidInput, match="go together"):
        Terms(statement=statement, name=name)


@pytest.mark.parametrize("language", ["coq", "lean"])
def test_fill_hole_in_a_language_that_needs_a_statement_is_invalid_input(
    language: str, tmp_path: Path
) -> None:
    name, text = HOLES[language]
    (tmp_path / name).write_text(text)
    with pytest.raises(InvalidInput, match="trusted statement"):
        fill_hole(tmp_path / name, 2, 3, "exact I.", sandbox=Sandbox(), language=language)  # type: ignore[arg-type]


# ---- 5. what held: early closes in the Coq hole form, limits as rules ------------------------

COQ_ESCAPES = {
    "abort_then_an_easier_theorem": "Abort. Theorem wrong : 1 + 1 = 2. reflexivity.",
    "shadow_in_a_module_named_solution": (
        "Abort. Module Solution. Theorem wrong : 1 + 1 = 3. Abort. End Solution. "
        "Theorem wrong : True. exact I."
    ),
    "a_transparent_definition_of_another_type": (
        "Abort. Definition wrong : 1 + 1 = 2 := eq_refl. Goal True. exact I."
    ),
    "qed_then_admitted_behind_a_comment": "exact I. Qed. Theorem w : True. Admitted. (*",
    "a_hole_marker_inside_the_answer": "{! exact I !}",
    "a_marker_close_inside_the_answer": "!} exact I.",
    "an_unguarded_fixpoint": (
        "Abort. Fixpoint f (n : nat) : 1 + 1 = 3 := f n. Definition wrong := f 0. Goal True. exact I."
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(COQ_ESCAPES))
def test_an_answer_that_closes_the_coq_proof_early_is_refuted(case: str, tmp_path: Path) -> None:
    need("coqc")
    assert _hole_kind(tmp_path, "coq", COQ_ESCAPES[case]) is Status.REFUTED


STALLS = {
    "computes_two_hundred_million_steps": (
        "Abort. Require Import NArith. Compute N.iter 2000000000%N (fun x => x) 0%N."
    ),
    "iterates_in_a_proof": (
        "Abort. Require Import PArith. Goal True. "
        "assert (Pos.iter (fun x => x) 1%positive 3000000000%positive = 1%positive) "
        "by vm_compute; reflexivity. exact I."
    ),
}
"""Agda's stalling candidates are pinned in ``test_adv_agda_found.py`` (the Church tower)."""


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(STALLS))
def test_a_stalling_answer_is_refuted_when_limits_are_rules(case: str, tmp_path: Path) -> None:
    """The kinds skip the canary for limits (``settle_limits=False``): a limit is never
    ``error`` there, and with ``limits_are_rules`` it refutes, in the hole form too."""
    need("coqc")
    assert _hole_kind(tmp_path, "coq", STALLS[case], timeout=3, limits_are_rules=True) is (
        Status.REFUTED
    )


# ---- 6. what held: a spec cannot choose the language or the library ------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "agda", "file": "S.agda", "statement": "T", "name": "t", "language": "coq"},
        {"kind": "coq", "file": "S.v", "statement": "T", "name": "t", "language": "agda"},
        {"kind": "agda", "file": "S.agda", "statement": "T", "name": "t", "agda_stdlib": "/tmp"},
        {"kind": "lean", "file": "S.lean", "statement": "T", "name": "t", "lean_project": "/"},
        {"kind": "isabelle", "file": "S.thy", "statement": "T", "name": "t"},
    ],
)
def test_a_spec_cannot_pick_a_language_or_a_library(spec: dict[str, object]) -> None:
    with pytest.raises(InvalidSpec):
        build_check(spec).run(CheckContext(config=OFF))


# ---- 7. what held: the cache key after the move -------------------------------------------

AGDA_RIGHT = f"module Solution where\n\n{AGDA_HEADER}\n\nright : 1 + 1 ≡ 2\nright = refl\n"
AGDA_SPEC = {
    "file": "Solution.agda",
    "statement": "1 + 1 ≡ 2",
    "name": "right",
    "header": AGDA_HEADER,
    "stdlib": False,
}
CHANGES: dict[str, tuple[dict[str, object], dict[str, object]]] = {
    "stdlib": ({"stdlib": True}, {}),
    "timeout": ({"timeout": 299.0}, {}),
    "memory": ({"memory_mb": 4000}, {}),
    "allowed_axioms": ({"allowed_axioms": ["funext"]}, {}),
    "agda_stdlib_folder": ({"stdlib": True}, {"agda_stdlib": "/nonexistent/agda-stdlib"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_cached_verdict_is_served_only_for_the_same_judgment(change: str, tmp_path: Path) -> None:
    """Every part that can change a verdict is in the key: changing one is a miss."""
    need("agda")
    (tmp_path / "Solution.agda").write_text(AGDA_RIGHT)
    folder = str(tmp_path / "cache")
    spec_change, config_change = CHANGES[change]

    def cached(spec: dict[str, object], config: dict[str, object]) -> bool:
        ctx = CheckContext(
            workspace=tmp_path,
            config=Config.model_validate(
                {
                    "judgment_cache": folder,
                    "key_file": str(tmp_path / "key"),
                    "agda_toolchain": "debian",  # agda_stdlib is Debian's Agda's library
                    **config,
                }
            ),
        )
        outcome = build_check({"kind": "agda", **AGDA_SPEC, **spec}).run(ctx)
        assert outcome.status is Status.VERIFIED, outcome.detail
        assert outcome.evidence is not None
        return bool(outcome.evidence["cached"])

    assert not cached({}, {})
    assert cached({}, {})  # the same judgment again is a hit: the test can fail
    assert not cached(spec_change, config_change)


def test_the_code_that_judges_proofs_is_in_every_cache_key() -> None:
    """``judging_code`` hashes whole folders and named files: every language module, the one
    hole path, the reading and the kind must lie inside them (moving one out would let a fix
    to it serve verdicts cached before the fix)."""
    import inspect

    import assay
    from assay._signed import JUDGING_CODE
    from assay.checks._kinds import _proofs as kind
    from assay.proofs import LANGUAGES, _fill, _judges, _reading, _verdict

    package = Path(assay.__file__).resolve().parent
    covered = [package / part for part in JUDGING_CODE]
    languages = [inspect.getsourcefile(type(language)) for language in LANGUAGES.values()]
    generic = [inspect.getsourcefile(m) for m in (_fill, _judges, _reading, _verdict, kind)]
    for found in [*languages, *generic]:
        assert found is not None
        source = Path(found).resolve()
        assert any(source == part or part in source.parents for part in covered), source
