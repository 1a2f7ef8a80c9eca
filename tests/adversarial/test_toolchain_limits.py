"""A limit's verdict is not a finding (issue 17, item 3).

A correct Coq proof run with too little memory (or stack, or time) is inconclusive, or refuted
only when the author declared ``limits_are_rules``; never cached. What decides it is what the
parent observes (the cgroup's OOM kill, its clock) or, where only the toolchain's text says so
(rlimit-only sandboxes; OCaml's "Stack overflow"), a re-run with larger limits that *checks*: a
wrong proof never becomes inconclusive by printing "Out of memory".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from assay.proofs import judge, plan_for
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

pytestmark = pytest.mark.slow

GOOD = "Theorem two : 1 + 1 = 2.\nProof. reflexivity. Qed.\n"
BAD = "Theorem two : 1 + 1 = 2.\nProof. exact I. Qed.\n"
DEEP = "Definition big := 200000.\nEval cbv in big.\n"
"""Printing a unary 200000 overflows OCaml's 8 MiB stack in coqc; a 1 GiB stack is enough."""
FORGED = {
    "out_of_memory": 'Goal True. idtac "Error: Out of memory.". exact I. Qed.\n',
    "stack_overflow": 'Goal True. idtac "Error: Stack overflow.". exact I. Qed.\n',
    "fatal_error": 'Goal True. idtac "Fatal error: out of memory.". exact I. Qed.\n',
    "heap_exhausted": 'Fail Check "Heap exhausted, stack overflow".\n',
}


def _coq(tmp_path: Path, solution: str, **spec: Any) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "Two.v").write_text(solution)
    return run_kind(
        "coq",
        file="Two.v",
        statement="1 + 1 = 2",
        name="two",
        workspace=ws,
        config=Config(judgment_cache=str(tmp_path / "cache")),
        **spec,
    )


def test_observed_out_of_memory_is_inconclusive_and_not_cached(tmp_path: Path) -> None:
    """The cgroup kills coqc at 30 MiB: inconclusive; then the default limit verifies."""
    need("coqc")
    if Sandbox(backend="bwrap").memory_limit == "rlimit-as":
        pytest.skip("no cgroup here: the rlimit case is tested below")
    small = _coq(tmp_path, GOOD, memory_mb=30)
    assert small.status is Status.INCONCLUSIVE and "memory" in small.detail, small.detail
    assert _coq(tmp_path, GOOD, memory_mb=30).status is Status.INCONCLUSIVE
    ruled = _coq(tmp_path, GOOD, memory_mb=30, limits_are_rules=True)
    assert ruled.status is Status.REFUTED and "rules forbid" in ruled.detail
    normal = _coq(tmp_path, GOOD)
    assert normal.status is Status.VERIFIED and not normal.evidence["cached"]


@pytest.fixture(scope="module")
def rlimit_only() -> Sandbox:
    return Sandbox(backend="bwrap", cgroups=False)


LIMITS_200 = Limits(timeout=120, memory_mb=200)


def test_text_out_of_memory_is_confirmed_by_a_larger_run(rlimit_only: Sandbox) -> None:
    """RLIMIT_AS at 200 MiB: coqc prints "Out of memory" (exit 1); at 800 MiB it checks."""
    need("coqc")
    plan = plan_for("coq", GOOD, statement="1 + 1 = 2", name="two")
    verdict = judge("coq", plan, rlimit_only, LIMITS_200).verdict
    assert verdict is not None and not verdict.green
    assert verdict.finding == "machinery" and verdict.limit == "memory", verdict
    assert "only the limits stopped it" in verdict.reason


def test_a_wrong_proof_out_of_memory_stays_refuted(rlimit_only: Sandbox) -> None:
    need("coqc")
    plan = plan_for("coq", BAD, statement="1 + 1 = 2", name="two")
    verdict = judge("coq", plan, rlimit_only, LIMITS_200).verdict
    assert verdict is not None and verdict.finding in ("does_not_check", "crashed"), verdict
    assert verdict.limit is None


@pytest.mark.parametrize("name", sorted(FORGED))
def test_printed_limit_words_never_make_a_wrong_proof_inconclusive(
    name: str, tmp_path: Path
) -> None:
    need("coqc")
    outcome = _coq(tmp_path, FORGED[name] + BAD)
    assert outcome.status is Status.REFUTED, outcome.detail
    low = _coq(tmp_path, FORGED[name] + BAD, memory_mb=60)
    assert low.status is Status.REFUTED, low.detail


def test_a_stack_overflow_of_a_correct_proof_is_a_limit(tmp_path: Path) -> None:
    need("coqc")
    outcome = _coq(tmp_path, DEEP + GOOD)
    assert outcome.status is Status.INCONCLUSIVE and "stack" in outcome.detail, outcome.detail
    assert outcome.evidence["limit"] == "stack" and not outcome.evidence["cached"]
    ruled = _coq(tmp_path, DEEP + GOOD, limits_are_rules=True)
    assert ruled.status is Status.REFUTED and "rules forbid" in ruled.detail


def test_a_stack_overflow_beside_a_wrong_proof_is_refuted(tmp_path: Path) -> None:
    need("coqc")
    outcome = _coq(tmp_path, DEEP + BAD)
    assert outcome.status is Status.REFUTED, outcome.detail


def test_time_is_inconclusive_unless_limits_are_rules(tmp_path: Path) -> None:
    need("coqc")
    slow = _coq(tmp_path, GOOD, timeout=0.05)
    assert slow.status is Status.INCONCLUSIVE and "did not finish" in slow.detail
    ruled = _coq(tmp_path, GOOD, timeout=0.05, limits_are_rules=True)
    assert ruled.status is Status.REFUTED and "rules forbid" in ruled.detail


def test_an_agda_limit_is_not_a_finding(tmp_path: Path) -> None:
    """The cgroup kills agda at 5 MiB: inconclusive (with rlimits only, GHC's runtime crashes
    under a tiny RLIMIT_AS and so does the canary: that is reported as the machine's error)."""
    need("agda")
    if Sandbox(backend="bwrap").memory_limit == "rlimit-as":
        pytest.skip("no cgroup here: agda's runtime cannot be limited by RLIMIT_AS alone")
    ws = tmp_path / "ws"
    ws.mkdir()
    header = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
    (ws / "Two.agda").write_text(f"module Two where\n\n{header}\n\ntwo : 1 + 1 ≡ 2\ntwo = refl\n")
    outcome = run_kind(
        "agda",
        file="Two.agda",
        statement="1 + 1 ≡ 2",
        name="two",
        header=header,
        stdlib=False,
        memory_mb=5,
        workspace=ws,
        config=Config(judgment_cache=str(tmp_path / "cache")),
    )
    assert outcome.status is Status.INCONCLUSIVE, outcome.detail
