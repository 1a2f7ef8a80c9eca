"""Agda as a batch judge, for real: the cheat corpus, canaries, statement fidelity, holes, cache."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import JudgmentCache, agda_toolchain, fill_hole, judge, plan_for
from assay.proofs._plan import Plan
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
PRELUDE = f"module Solution where\n\n{HEADER}\n\n"
LIMITS = Limits(timeout=120, memory_mb=4096)
SUITE = Config.from_env()
"""What the tests without a toolchain of their own judge with: ``ASSAY_AGDA_TOOLCHAIN`` (and the
other ``ASSAY_*`` settings) reach them, e.g. ``ASSAY_AGDA_TOOLCHAIN=pypi ./scripts/test -m agda``."""

# Each cheat "proves" a false canary. The scan refuses it; with the scan bypassed, the real
# toolchain under the judge's own flags must still not call it green.
CHEATS = {
    "postulate": "postulate wrong : 1 + 1 ≡ 3\n",
    "let_postulate": "wrong : 1 + 1 ≡ 3\nwrong = let postulate cheat : 1 + 1 ≡ 3 in cheat\n",
    "type_in_type_option": "{-# OPTIONS --type-in-type #-}\n"
    + "wrong : 1 + 1 ≡ 3\nwrong = wrong\n",
    "terminating_pragma": "{-# TERMINATING #-}\nwrong : 1 + 1 ≡ 3\nwrong = wrong\n",
    "non_terminating_pragma": "{-# NON_TERMINATING #-}\nwrong : 1 + 1 ≡ 3\nwrong = wrong\n",
    "no_positivity_pragma": (
        "data ⊥ : Set where\n{-# NO_POSITIVITY_CHECK #-}\ndata Bad : Set where\n  c : (Bad → ⊥) → Bad\n"
        "self : Bad → ⊥\nself (c f) = f (c f)\nabsurd : ⊥\nabsurd = self (c self)\n"
        "elim : ⊥ → 1 + 1 ≡ 3\nelim ()\nwrong : 1 + 1 ≡ 3\nwrong = elim absurd\n"
    ),
    "prim_trust_me": ("open import Agda.Builtin.TrustMe\nwrong : 1 + 1 ≡ 3\nwrong = primTrustMe\n"),
    "hole_left_open": "wrong : 1 + 1 ≡ 3\nwrong = {! !}\n",
}


# Every installed Agda runs the cheat corpus and the canaries (Config.agda_toolchain); one that
# is not installed here skips, saying so. The PyPI one's cases are slow-marked.
TOOLCHAINS = [
    pytest.param(Config(agda_toolchain="debian"), id="debian"),
    pytest.param(Config(agda_toolchain="pypi"), id="pypi", marks=pytest.mark.slow),
]


def _installed(config: Config) -> None:
    need("agda")
    if agda_toolchain(config) is None:
        pytest.skip(f"the {config.agda_toolchain} Agda is not installed (scripts/agda-toolchain)")


def _plan(
    solution: str,
    statement: str = "1 + 1 ≡ 3",
    name: str = "wrong",
    config: Config = SUITE,
) -> Plan:
    return plan_for(
        "agda",
        PRELUDE + solution,
        statement=statement,
        name=name,
        header=HEADER,
        stdlib=False,
        config=config,
    )


@pytest.mark.parametrize("config", TOOLCHAINS)
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheats_are_refused_and_the_toolchain_agrees(
    name: str, config: Config, sandbox: Sandbox
) -> None:
    _installed(config)
    plan = _plan(CHEATS[name], config=config)
    refused = judge("agda", plan, sandbox, LIMITS, config=config)
    assert refused.verdict is None or not refused.verdict.green
    if name != "hole_left_open":
        assert refused.refusals, name
    bypassed = judge("agda", dataclasses.replace(plan, refusals=[]), sandbox, LIMITS, config=config)
    assert bypassed.verdict is not None
    assert not bypassed.verdict.green, (name, bypassed.verdict.diagnostics)
    assert bypassed.verdict.finding == "does_not_check"
    assert bypassed.verdict.exit_code == 42


def test_a_real_proof_is_green_and_reproducible(sandbox: Sandbox, cache: JudgmentCache) -> None:
    need("agda")
    debian = Config(agda_toolchain="debian")  # the command names Debian's binary
    plan = _plan("two : 1 + 1 ≡ 2\ntwo = refl\n", statement="1 + 1 ≡ 2", name="two", config=debian)
    verdict = judge("agda", plan, sandbox, LIMITS, cache, config=debian).verdict
    assert verdict is not None and verdict.green and verdict.exit_code == 0
    assert verdict.checked_from_source
    assert verdict.command == "/usr/bin/agda --safe --no-libraries -i . AssayGoal.agda"
    assert verdict.version.startswith("Agda version")
    assert set(verdict.files) == {"Solution.agda", "AssayGoal.agda"}
    assert "--safe" in verdict.flags and verdict.cwd == "/proof"
    again = judge("agda", plan, sandbox, LIMITS, cache, config=debian).verdict
    assert again is not None and again.cached and again.green


def test_redefined_plus_cannot_pass_the_trusted_statement(sandbox: Sandbox) -> None:
    need("agda")
    solution = (
        "module Solution where\n\nopen import Agda.Builtin.Nat using (Nat)\n"
        "open import Agda.Builtin.Equality\n\n"
        "_+_ : Nat → Nat → Nat\n_ + _ = 0\n\n"
        "comm : ∀ (m n : Nat) → m + n ≡ n + m\ncomm m n = refl\n"
    )
    plan = plan_for(
        "agda",
        solution,
        statement="∀ (m n : Nat) → m + n ≡ n + m",
        name="comm",
        header=HEADER,
        stdlib=False,
        config=SUITE,
    )
    verdict = judge("agda", plan, sandbox, LIMITS, config=SUITE).verdict
    assert verdict is not None and not verdict.green
    assert verdict.finding == "does_not_check"


CANARIES = ["1 + 1 ≡ 3", "∀ (n : Nat) → n ≡ 0"]
CANDIDATES = ["refl", "λ n → refl", "{! !}", "let postulate c : _ in c", "primTrustMe", "_"]


@pytest.mark.parametrize("config", TOOLCHAINS)
@pytest.mark.parametrize("statement", CANARIES)
def test_canaries_are_never_proved(
    statement: str, config: Config, sandbox: Sandbox, tmp_path: Path
) -> None:
    _installed(config)
    obligation = tmp_path / "Canary.agda"
    obligation.write_text(
        f"module Canary where\n\n{HEADER}\n\ncanary : {statement}\ncanary = {{! !}}\n"
    )
    for candidate in CANDIDATES:
        result = fill_hole(
            obligation, 7, 10, candidate, sandbox=sandbox, stdlib=False, config=config
        )
        assert result.status != "solved", (statement, candidate)
    for body in ("canary = refl", "canary = canary", "postulate canary : _"):
        plan = _plan(
            f"canary : {statement}\n{body}\n", statement=statement, name="canary", config=config
        )
        for judged in (
            judge("agda", plan, sandbox, LIMITS, config=config),
            judge("agda", dataclasses.replace(plan, refusals=[]), sandbox, LIMITS, config=config),
        ):
            assert judged.verdict is None or not judged.verdict.green


def test_hole_filling_never_changes_the_obligation(sandbox: Sandbox, tmp_path: Path) -> None:
    need("agda")
    obligation = tmp_path / "Sym.agda"
    text = (
        "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
        "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' refl = {! !}\n"
    )
    obligation.write_text(text)
    assert (
        fill_hole(obligation, 6, 13, "refl", sandbox=sandbox, stdlib=False, config=SUITE).status
        == "solved"
    )
    progress = fill_hole(obligation, 6, 13, "{! !}", sandbox=sandbox, stdlib=False, config=SUITE)
    assert (progress.status, progress.remaining_holes) == ("progress", 1)
    wrong = fill_hole(obligation, 6, 13, "sym'", sandbox=sandbox, stdlib=False, config=SUITE)
    assert wrong.status == "type_error"
    refused = fill_hole(
        obligation, 6, 13, "let postulate c : _ in c", sandbox=sandbox, stdlib=False, config=SUITE
    )
    assert refused.status == "refused"
    assert obligation.read_text() == text
    assert not list(tmp_path.glob("*.agdai"))


SEED = """module Nat-plus-comm where

open import Relation.Binary.PropositionalEquality using (_≡_; refl)
open import Data.Nat using (ℕ; _+_)
import Data.Nat.Properties

+-comm : ∀ (m n : ℕ) → m + n ≡ n + m
+-comm m n = {! !}
"""


@pytest.mark.slow
def test_the_seed_example_with_the_standard_library(sandbox: Sandbox, tmp_path: Path) -> None:
    """(+-comm _ _) is not yet a term: UnsolvedConstraints; +-comm m n solves; {!!} is progress."""
    need("agda")
    obligation = tmp_path / "Nat-plus-comm.agda"
    obligation.write_text(SEED)
    blocked = fill_hole(
        obligation, 8, 14, "Data.Nat.Properties.+-comm _ _", sandbox=sandbox, config=SUITE
    )
    assert blocked.status == "type_error"
    assert any("Failed to solve the following constraints" in d for d in blocked.diagnostics)
    assert blocked.verdict is not None and blocked.verdict.exit_code == 42
    solved = fill_hole(
        obligation, 8, 14, "Data.Nat.Properties.+-comm m n", sandbox=sandbox, config=SUITE
    )
    assert (solved.status, solved.remaining_holes, solved.checked_from_source) == (
        "solved",
        0,
        True,
    )
    refined = fill_hole(
        obligation, 8, 14, "Data.Nat.Properties.+-comm {! !} n", sandbox=sandbox, config=SUITE
    )
    assert refined.status == "progress"


def test_a_cache_hit_spawns_nothing(
    sandbox: Sandbox, cache: JudgmentCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    need("agda")
    plan = _plan("two : 1 + 1 ≡ 2\ntwo = refl\n", statement="1 + 1 ≡ 2", name="two")
    first = judge("agda", plan, sandbox, LIMITS, cache, config=SUITE).verdict
    assert first is not None and not first.cached

    def no_spawn(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cache hit spawned a process")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_spawn)
    hit = judge("agda", plan, sandbox, LIMITS, cache, config=SUITE).verdict
    assert hit is not None and hit.cached and hit.green
    assert hit.model_copy(update={"cached": False}) == first
    changed = dataclasses.replace(
        plan, files={**plan.files, "Solution.agda": plan.files["Solution.agda"] + b"\n"}
    )
    with pytest.raises(AssertionError, match="spawned"):
        judge("agda", changed, sandbox, LIMITS, cache, config=SUITE)


def test_the_verdict_alone_reproduces_the_claim(sandbox: Sandbox, tmp_path: Path) -> None:
    """Write the verdict's sources into a folder, run its command there: same exit code."""
    import subprocess

    need("agda")
    plan = _plan("two : 1 + 1 ≡ 2\ntwo = refl\n", statement="1 + 1 ≡ 2", name="two")
    verdict = judge("agda", plan, sandbox, LIMITS, config=SUITE).verdict
    assert verdict is not None and set(verdict.sources) == set(verdict.files)
    for name, text in verdict.sources.items():
        (tmp_path / name).write_text(text)
    rerun = subprocess.run(
        verdict.command, shell=True, cwd=tmp_path, capture_output=True, timeout=120
    )
    assert rerun.returncode == verdict.exit_code == 0
