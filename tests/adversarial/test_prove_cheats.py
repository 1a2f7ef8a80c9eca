"""Getting a canary (a false statement) "solved" by the search loop: every shape tried fails.

Class: cheating a checker-driven proof search. A candidate is judged by a whole-file ``agda
--safe`` batch check after assay's refusal scan, and a solve is claimed only through ``Proved``
(no hole left, a green check of exactly the final bytes, the original with only its holes
filled). Tried here, as a hostile proposer would: ``let postulate`` (Agda's let admits a postulate
block; 2.8.0 accepts it under --safe), a pragma or an option in the candidate, a candidate that
closes the hole and then edits or adds a declaration (line breaks, comments, a ``where``), absurd
patterns, the unsafe primitives, a hole or an unknown left in place, and fixtures that cheat
themselves (a postulate, ``--type-in-type``). Each is run against every installed toolchain.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import Judging
from assay.prove import Lemma, Meta, Move, Settings, prove_text
from assay.sandbox import Sandbox
from tests.proofs.conftest import need

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"
CANARY = f"module Canary where\n\n{HEADER}\nbad : (m n : Nat) → m ≡ n\nbad m n = {{! !}}\n"
CHEATS = {
    "let-postulate": "let postulate p : m ≡ n in p",
    "let-postulate-unicode-space": "let\u00a0postulate p : m ≡ n in p",
    "pragma": "{-# TERMINATING #-} refl",
    "options": "{-# OPTIONS --type-in-type #-} refl",
    "newline-new-declaration": "refl\npostulate cheat : (m n : Nat) → m ≡ n",
    "close-and-redefine": "refl)\nbad′ : Nat\nbad′ = (zero",
    "line-comment": "refl -- )",
    "block-comment": "{- -} refl",
    "where-clause": "p where p = refl",
    "absurd-lambda": "λ ()",
    "absurd-pattern-lambda": "λ { () }",
    "trust-me": "primTrustMe",
    "erase-equality": "primEraseEquality refl",
    "a-hole": "?",
    "a-nested-hole": "{! refl !}",
    "an-unknown": "_",
    "self-reference": "bad m n",
    "statement-swap": "refl) where\nbad : (m n : Nat) → m ≡ m\nbad m n = (refl",
}
FIXTURES = {
    "postulate-in-the-fixture": (
        f"module Canary where\n\n{HEADER}\npostulate cheat : (m n : Nat) → m ≡ n\n\n"
        "bad : (m n : Nat) → m ≡ n\nbad m n = {! !}\n"
    ),
    "type-in-type": (
        "{-# OPTIONS --type-in-type #-}\n"
        f"module Canary where\n\n{HEADER}\nbad : (m n : Nat) → m ≡ n\nbad m n = {{! !}}\n"
    ),
    "trust-me-import": (
        f"module Canary where\n\n{HEADER}open import Agda.Builtin.TrustMe\n\n"
        "bad : (m n : Nat) → m ≡ n\nbad m n = {! !}\n"
    ),
}
TOOLCHAINS = ("debian", "pypi")


def _judging(toolchain: str) -> Judging:
    need("agda")
    config = Config.model_validate({"agda_toolchain": toolchain, "judgment_cache": "off"})
    from assay.proofs import agda_toolchain

    if agda_toolchain(config) is None:
        pytest.skip(f"the {toolchain} Agda is not installed here (scripts/agda-toolchain)")
    return Judging(Sandbox(backend="bwrap"), config=config)


def _hostile(terms: list[str]) -> Callable[[list[str], list[Lemma]], list[Move]]:
    def propose(context: list[str], lemmas: list[Lemma]) -> list[Move]:
        return [Move(term, "retrieved") for term in terms]

    return propose


@pytest.mark.slow
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
def test_no_cheating_candidate_solves_a_canary(toolchain: str) -> None:
    judging = _judging(toolchain)
    settings = Settings(judging, filter=False, proposer=_hostile(list(CHEATS.values())))
    row = prove_text("Canary.agda", CANARY, Meta(canary=True), settings)
    assert row.status == "unsolved", row
    outcomes = {t.term: t.outcome for t in row.tried}
    assert set(outcomes) == set(CHEATS.values())
    assert "solved" not in outcomes.values()
    # a hole in the hole is "progress" to the judge, and closes nothing: never committed
    assert {t for t, o in outcomes.items() if o == "progress"} <= {"?", "{! refl !}"}
    for name in ("let-postulate", "pragma", "options", "newline-new-declaration", "trust-me"):
        assert outcomes[CHEATS[name]] == "refused", name
    assert row.last_state == CANARY  # nothing was committed


@pytest.mark.slow
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_cheating_fixture_solves_nothing(name: str, toolchain: str) -> None:
    """A fixture that postulates its goal or turns off the universe check: every candidate is
    refused with the file (the scan reads the whole file each time), so nothing is solved."""
    judging = _judging(toolchain)
    settings = Settings(judging, filter=False, proposer=_hostile(["cheat m n", "refl"]))
    row = prove_text("Canary.agda", FIXTURES[name], Meta(canary=True), settings)
    assert row.status != "solved", row
    assert row.judgments == 0 and row.refused == 2, row


def test_the_loop_only_writes_private_copies(tmp_path: Path) -> None:
    """The obligation file is never changed (the search works on a copy in its own folder)."""
    need("agda")
    file = tmp_path / "Canary.agda"
    file.write_text(CANARY)
    from assay.prove import prove_folder

    judging = Judging(Sandbox(backend="bwrap"), config=Config(judgment_cache="off"))
    prove_folder(tmp_path, judging, filter=True)
    assert file.read_text() == CANARY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Canary.agda"]
