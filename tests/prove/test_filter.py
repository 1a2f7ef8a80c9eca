"""The fast-lane filter cuts only what the judge could never accept (``assay.prove._filter``).

Each case is asked of the real lane *and* judged by the real batch Agda, on every installed
toolchain: whenever the lane objects, the judge rejects. The cases a naive cut gets wrong are
here on purpose: a definitional unfolding (``suc n + m`` is ``suc (n + m)``), a leading
implicit argument, an instance argument, binder names (``(n : Nat) → …`` for a goal printed
``(m : Nat) → …``: the former filter compared printed types and cut it), and an overloaded
constructor (its inferred type is a bare meta, yet it checks).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import AgdaLane, Judging, Terms, agda_toolchain, judge_hole
from assay.prove import Meta, Move, Settings, prove_text
from assay.prove._filter import askable, checkable, has_unknowns
from assay.prove._fixture import holes, position
from assay.sandbox import Sandbox
from tests.proofs.conftest import need

PRELUDE = """open import Agda.Builtin.Nat
open import Agda.Builtin.Equality
open import Agda.Builtin.Bool

sym : {A : Set} {x y : A} → x ≡ y → y ≡ x
sym refl = refl

cong : {A B : Set} (f : A → B) {x y : A} → x ≡ y → f x ≡ f y
cong f refl = refl

data _≤_ : Nat → Nat → Set where
  z≤n : {n : Nat} → zero ≤ n
  s≤s : {m n : Nat} → m ≤ n → suc m ≤ suc n

≤-refl : {n : Nat} → n ≤ n
≤-refl {zero} = z≤n
≤-refl {suc n} = s≤s ≤-refl

idr : (n : Nat) → n + 0 ≡ n
idr zero = refl
idr (suc n) = cong suc (idr n)

record Default (A : Set) : Set where
  field default : A
open Default {{...}}

instance
  defaultNat : Default Nat
  defaultNat = record { default = 0 }

pick : {A : Set} {{d : Default A}} → A
pick = default

module L where
  data List (A : Set) : Set where
    [] : List A

module V where
  data Vec (A : Set) : Nat → Set where
    [] : Vec A zero

open L
open V
"""
GOALS = {
    "unfold": "unfold : (n m : Nat) → suc n + m ≡ suc (n + m)\nunfold n m = {! !}\n",
    "stuck": "stuck : (n m : Nat) → n + suc m ≡ suc (n + m)\nstuck n m = {! !}\n",
    "le": "le : (n : Nat) → n ≤ n\nle n = {! !}\n",
    "nat": "nat : Nat\nnat = {! !}\n",
    "bool": "bool : Bool\nbool = {! !}\n",
    "binders": "binders : (m : Nat) → m + 0 ≡ m\nbinders = {! !}\n",
    "nil": "nil : List Nat\nnil = {! !}\n",
    "back": "back : (m n : Nat) → m ≡ n → n ≡ m\nback m n p = {! !}\n",
}
FILE = "module Filter where\n\n" + PRELUDE + "\n" + "\n".join(GOALS.values())
KEPT = [  # (goal, term, accepted by the judge): Agda has no objection, so the filter keeps them
    ("unfold", "refl", True),  # definitional: suc n + m reduces to suc (n + m)
    ("le", "≤-refl", True),  # Agda inserts the leading implicit
    ("nat", "pick", True),  # Agda finds the instance
    ("binders", "idr", True),  # (n : Nat) → n + 0 ≡ n is the goal, whatever the binder's name
    ("nil", "[]", True),  # overloaded: inference says only "_82", checking picks List's
    ("back", "sym p", True),
    ("back", "sym _", False),  # an unsolved meta is the judge's to refuse, not an objection
    ("unfold", "cong suc _", False),
]
CUT = [  # Agda objects: the judge rejects them too
    ("stuck", "refl"),  # n + suc m does not reduce: not definitionally suc (n + m)
    ("le", "refl"),
    ("bool", "pick"),  # no instance Default Bool
    ("binders", "refl"),
    ("back", "sym"),  # a function where an equation is due
    ("back", "p"),
    ("nat", "m"),  # not in scope there
    ("nat", "suc"),
    ("nil", "zero"),
]
TOOLCHAINS = [
    pytest.param("debian", id="debian"),
    pytest.param("pypi", id="pypi", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(
    ("printed", "unknown"),
    [
        ("_x_18 ≡ _x_18", True),
        ("_15", True),
        ("suc ?0 ≡ n", True),
        ("Set _ℓ_3", True),
        ("{A : Set} → _A_7", True),
        ("foldr (λ _ → suc) 0 xs ≡ length xs", False),  # a binder, not a meta
        ("_+_ m ≡ _+_ n", False),  # an operator's name
        ("m + n ≡ n + m", False),
        ("(m : ℕ) → m + 0 ≡ m", False),
        ("x? ≡ y", False),
    ],
)
def test_unknowns_are_metas_and_interaction_points(printed: str, unknown: bool) -> None:
    assert has_unknowns(printed) is unknown


@pytest.mark.parametrize(
    ("term", "ask"),
    [
        ("sym p", True),
        ("+-comm _ _", True),
        ("sym ?", False),  # a hole: the judge reads it as progress
        ("{! refl !}", False),
        ("x) (y", False),  # the scan refuses it: the judge refuses it without a judgment
        ("refl -- a comment", False),
    ],
)
def test_the_lane_is_asked_only_about_what_the_judge_would_judge(term: str, ask: bool) -> None:
    assert askable(term) is ask


def _installed(toolchain: str) -> Config:
    need("agda")
    config = Config.model_validate({"agda_toolchain": toolchain, "judgment_cache": "off"})
    if agda_toolchain(config) is None:
        pytest.skip(f"the {toolchain} Agda is not installed here (scripts/agda-toolchain)")
    return config


def _hole(goal: str) -> tuple[tuple[int, int], int, int]:
    start = FILE.index(GOALS[goal].splitlines()[1])
    span = next(s for s in holes(FILE) if s[0] > start)
    return (span, *position(FILE, span[0]))


@pytest.mark.agda
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
def test_an_objection_is_always_a_rejection_and_a_naive_cut_would_lose_proofs(
    toolchain: str, tmp_path: Path
) -> None:
    config = _installed(toolchain)
    judging = Judging(Sandbox(backend="bwrap"), config=config)
    file = tmp_path / "Filter.agda"
    file.write_text(FILE)
    seen: dict[tuple[str, str], tuple[str | None, str]] = {}
    with AgdaLane(stdlib=False, timeout=120, config=config) as lane:
        for goal, term in [*((g, t) for g, t, _ in KEPT), *CUT]:
            span, line, column = _hole(goal)
            assert checkable(lane.goal(file, line, column)), goal
            objection = lane.objection(file, line, column, term)
            attempt = judge_hole("agda", FILE, span, term, Terms(stdlib=False), judging)
            seen[goal, term] = (objection, attempt.status)
    for goal, term, accepted in KEPT:
        objection, status = seen[goal, term]
        assert objection is None, (goal, term, objection)
        assert (status == "progress") is accepted, (goal, term, status)
    for goal, term in CUT:
        objection, status = seen[goal, term]
        assert objection is not None, (goal, term)
        assert status == "type_error", (goal, term, status)


@pytest.mark.agda
def test_a_goal_with_an_unknown_is_never_filtered(tmp_path: Path) -> None:
    """A meta in the goal could be solved differently while the judge checks the clause: the
    filter then asks nothing and keeps every candidate."""
    config = _installed("debian")
    text = f"module Unknown where\n\n{PRELUDE}\nsome : Nat\nsome = _\n\nodd : some ≡ some\nodd = {{! !}}\n"
    file = tmp_path / "Unknown.agda"
    file.write_text(text)
    line, column = position(text, holes(text)[0][0])
    with AgdaLane(stdlib=False, timeout=120, config=config) as lane:
        goal = lane.goal(file, line, column)
    assert has_unknowns(goal.type) and not checkable(goal), goal.type


@pytest.mark.agda
@pytest.mark.slow
def test_the_filter_keeps_the_proofs_a_printed_type_comparison_lost(tmp_path: Path) -> None:
    """The loop, with and without the filter: byte-identical proofs, fewer judgments. The
    former filter (printed types compared) cut ``idr`` here (binder names) and lost that
    proof."""
    config = _installed("debian")
    judging = Judging(Sandbox(backend="bwrap"), config=config)
    files = {
        name: f"module {name.title()} where\n\n{PRELUDE}\n{GOALS[name]}"
        for name in ("binders", "nil", "le", "stuck")
    }
    terms = ["refl", "sym", "m", "idr", "[]", "≤-refl", "sym _"]

    def proposer(context: list[str], lemmas: object) -> list[Move]:
        return [Move(term, "fixture") for term in terms]

    rows = {}
    for flag in (True, False):
        settings = Settings(judging, filter=flag, proposer=proposer)
        rows[flag] = [
            prove_text(f"{name.title()}.agda", text, Meta(), settings)
            for name, text in files.items()
        ]
    proofs = {flag: [(r.status, r.proof) for r in rows[flag]] for flag in rows}
    assert proofs[True] == proofs[False]
    assert [p[0] for p in proofs[True]] == ["solved", "solved", "solved", "unsolved"]
    assert [[s.term for s in r.proof or []] for r in rows[True]] == [
        ["idr"],
        ["[]"],
        ["≤-refl"],
        [],
    ]
    on, off = (sum(r.judgments for r in rows[flag]) for flag in (True, False))
    assert on < off, (on, off)
    assert sum(r.filtered for r in rows[True]) > 0
