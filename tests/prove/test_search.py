"""The loop on small builtin-only files (Agda 0.25-0.5 s a judgment): what it may claim.

- a solve needs every hole closed and a green batch check of the whole file (``Proved``): a file
  with two holes is never solved when one closes;
- false statements (canaries) are never solved;
- the fast-lane filter changes the cost, never the proofs (byte-identical with and without);
- a run's ledger is reproducible byte for byte, timings aside;
- assay's own failure is ``error``, counted neither solved nor unsolved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import Judging, Terms, judge_source
from assay.prove import (
    Meta,
    Proved,
    ProveReport,
    Settings,
    Step,
    prove_folder,
    prove_text,
    replay,
)
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

HEADER = (
    "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"
    "open import Agda.Builtin.Unit\n"
)
SYM = "sym : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym refl = refl\n"
EASY = f"module Easy where\n\n{HEADER}\n{SYM}\nback : (m n : Nat) → m ≡ n → n ≡ m\nback m n p = {{! !}}\n"
TWO = (
    f"module Two where\n\n{HEADER}\n{SYM}\nboth : Nat → Nat\nboth n = {{! !}}\n\n"
    "unit : ⊤\nunit = {! !}\n\none : 1 + 1 ≡ 2\none = {! !}\n"
)
HALF = (
    f"module Half where\n\n{HEADER}\n{SYM}\nfine : 2 + 2 ≡ 4\nfine = {{! !}}\n\n"
    "never : (m n : Nat) → m ≡ n\nnever m n = {! !}\n"
)
IMPLICIT = (
    f"module Implicit where\n\n{HEADER}\n"
    "data _≤_ : Nat → Nat → Set where\n  z≤n : {n : Nat} → zero ≤ n\n"
    "  s≤s : {m n : Nat} → m ≤ n → suc m ≤ suc n\n\n"
    "≤-refl : {n : Nat} → n ≤ n\n≤-refl {zero} = z≤n\n≤-refl {suc n} = s≤s ≤-refl\n\n"
    "tr : {A : Set} {x y z : A} → x ≡ y → y ≡ z → x ≡ z\ntr refl q = q\n\n"
    "le : (m : Nat) → m ≤ m\nle m = {! !}\n\n"
    "h : {A : Set} {a b c d : A} → a ≡ b → b ≡ c → c ≡ d → a ≡ d\n"
    "h p q r = tr p {! !}\n"
)
"""Found by running the benchmark: a lemma with a leading implicit argument (``≤-refl``: Agda
infers ``{n : Nat} → n ≤ n`` and inserts the argument when checking) was cut by the filter, and
hidden variables (A, a, b, c, d: listed in the context, not in scope) crowded ``tr q r`` out of
the saturations. Both must be solved, with and without the filter."""
CANARIES = {
    "FalseArith": f"module FalseArith where\n\n{HEADER}\n{SYM}\nbad : 1 + 1 ≡ 3\nbad = {{! !}}\n",
    "FalseAll": f"module FalseAll where\n\n{HEADER}\n{SYM}\nbad : (m n : Nat) → m ≡ n\nbad m n = {{! !}}\n",
    "FalseSym": (
        f"module FalseSym where\n\n{HEADER}\n{SYM}\nbad : (m n : Nat) → m ≡ n → suc m ≡ n\n"
        "bad m n p = {! !}\n"
    ),
}


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / f"{name}.agda").write_text(text)
    return tmp_path


def test_a_file_with_three_holes_is_solved_only_when_all_close(judging: Judging) -> None:
    row = prove_text("Two.agda", TWO, Meta(), _settings(judging))
    assert row.status == "solved", row.reason
    assert row.proof is not None and [s.term for s in row.proof] == ["n", "tt", "refl"]
    assert row.holes == 3


def test_one_closed_hole_of_two_is_never_a_solve(judging: Judging) -> None:
    """The predecessor's bug in the seed: a lemma with two obligations counted proved when one
    closed. Here the first hole closes (progress) and the second cannot: unsolved."""
    row = prove_text("Half.agda", HALF, Meta(), _settings(judging))
    assert row.status == "unsolved"
    assert row.proof is None
    assert "fine = (refl)" in (row.last_state or "")
    assert any(t.outcome == "progress" for t in row.tried)


def test_proved_demands_no_open_hole_and_a_green_check_of_that_text(judging: Judging) -> None:
    """``Proved``'s one constructor: it refuses a state with a hole left, a red verdict, a
    verdict of other bytes, and a text that is not the original with holes filled."""
    spans = _holes(HALF)
    first = Step(spans[0], 6, 8, "refl")
    half = replay(HALF, (first,))
    partial = judge_source("agda", half, Terms(stdlib=False), judging)
    assert partial.status == "progress" and partial.verdict is not None
    with pytest.raises(ValueError, match="still open"):
        Proved(HALF, (first,), half, partial.verdict)
    easy_steps = (Step(_holes(EASY)[0], 9, 14, "sym p"),)
    green = judge_source("agda", replay(EASY, easy_steps), Terms(stdlib=False), judging)
    assert green.status == "solved" and green.verdict is not None
    assert Proved(EASY, easy_steps, replay(EASY, easy_steps), green.verdict)
    unbracketed = judge_source("agda", EASY.replace("{! !}", "sym p"), Terms(stdlib=False), judging)
    assert unbracketed.status == "solved" and unbracketed.verdict is not None
    with pytest.raises(ValueError, match="not a check of the final text"):
        Proved(EASY, easy_steps, replay(EASY, easy_steps), unbracketed.verdict)  # other bytes
    with pytest.raises(ValueError, match="still open"):
        Proved(HALF, (first,), half, green.verdict)  # someone else's green verdict
    closed = HALF.replace("{! !}", "(refl)", 1).replace("{! !}", "m", 1)
    with pytest.raises(ValueError, match="not the original"):
        Proved(HALF, (first,), closed, green.verdict)  # a text the steps do not make
    edited = EASY.replace("n ≡ m\n", "n ≡ n\n")  # the statement changed
    with pytest.raises(ValueError, match="not the original"):
        Proved(EASY, easy_steps, replay(edited, easy_steps), green.verdict)


@pytest.mark.parametrize("name", sorted(CANARIES))
def test_a_false_statement_is_never_solved(name: str, judging: Judging) -> None:
    row = prove_text(f"{name}.agda", CANARIES[name], Meta(canary=True), _settings(judging))
    assert row.status == "unsolved", row
    assert row.proof is None
    assert all(t.outcome != "solved" for t in row.tried)


def test_the_filter_changes_the_cost_never_the_proofs(judging: Judging, tmp_path: Path) -> None:
    folder = _folder(
        tmp_path, {"Easy": EASY, "Two": TWO, "Half": HALF, "Implicit": IMPLICIT, **CANARIES}
    )
    on = prove_folder(folder, judging, filter=True, jobs=2)
    off = prove_folder(folder, judging, filter=False, jobs=2)
    assert _proofs(on) == _proofs(off)
    assert [r.status for r in on.obligations] == [r.status for r in off.obligations]
    assert on.controls.filtered > 0 and off.controls.filtered == 0
    assert on.controls.judgments < off.controls.judgments
    assert on.solved == 3 and on.canaries_solved == 0
    easy = next(r for r in on.obligations if r.file == "Easy.agda")
    assert ("sym", "cut") in [(t.term, t.outcome) for t in easy.tried]  # a function, never n ≡ m
    implicit = next(r for r in on.obligations if r.file == "Implicit.agda")
    assert implicit.proof is not None
    assert [s.term for s in implicit.proof] == ["≤-refl", "tr q r"]


def test_a_run_is_reproducible_byte_for_byte_timings_aside(
    judging: Judging, tmp_path: Path
) -> None:
    folder = _folder(tmp_path, {"Easy": EASY, "Half": HALF})
    first = prove_folder(folder, judging, jobs=1)
    second = prove_folder(folder, judging, jobs=2)
    assert _bytes(first) == _bytes(second)
    assert first.obligations[0].timing.wall_ms > 0


def test_an_error_is_counted_neither_solved_nor_unsolved(tmp_path: Path) -> None:
    """Limits no proof fits in: the known-good canary fails too, so the machinery is at fault:
    ``error``, never ``unsolved`` (a finding) and never ``solved``."""
    need("agda")
    tight = Judging(
        Sandbox(backend="bwrap"),
        limits=Limits(timeout=0.05, memory_mb=512),
        config=Config(judgment_cache="off"),
    )
    report = prove_folder(_folder(tmp_path, {"Easy": EASY}), tight)
    (row,) = report.obligations
    assert row.status == "error", row
    assert report.solved == 0 and report.errors == 1 and report.total == 1


def _settings(judging: Judging) -> Settings:
    return Settings(judging)


def _holes(text: str) -> list[tuple[int, int]]:
    from assay.prove._fixture import holes

    return holes(text)


def _proofs(report: ProveReport) -> list[object]:
    return [(r.file, None if r.proof is None else r.to_json()["proof"]) for r in report.obligations]


def _bytes(report: ProveReport) -> str:
    return json.dumps(report.reproducible(), sort_keys=True, ensure_ascii=False)
